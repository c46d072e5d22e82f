"""The image's HEALTHCHECK: exit 0 when this container's process is healthy.

Which process runs is read from PID 1's command line (``python -m gateway`` or
``python -m services.<game>.service``), or given as the first argument
(``gateway`` or a game name). The gateway must answer ``GET /healthz`` with 200
(it pings Redis); a game service must answer the standard gRPC health check
with SERVING. Ports follow the processes' own rules: ``GATEWAY_PORT`` (else
8000) for the gateway; ``GRPC_PORT``, else the gRPC port the game declares
(``GAME.ports``, found by ``services.kit.game.discover()`` in the packages of
``GAME_PACKAGES``), for a game. Kubernetes ignores HEALTHCHECK (the manifests
declare their own probes); this serves ``docker run`` and Compose.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

TIMEOUT_SECONDS = 3.0


def _module(cmdline: Path) -> str | None:
    """``python -m gateway`` → gateway; ``python -m services.yatzy.service`` → yatzy."""
    try:
        args = cmdline.read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
    if module == "gateway":
        return module
    if module.startswith("services.") and module.endswith(".service"):
        return module.split(".")[1]
    return None


def component(argv: list[str]) -> str:
    """The first argument, else PID 1's module, else (PID 1 being an init
    such as tini) the first process running one."""
    if len(argv) > 1:
        return argv[1]
    first = Path("/proc/1/cmdline")
    others = sorted(Path("/proc").glob("[0-9]*/cmdline"), key=lambda p: int(p.parent.name))
    for cmdline in (first, *others):
        found = _module(cmdline)
        if found:
            return found
    return "unknown"


def check_gateway() -> bool:
    port = os.environ.get("GATEWAY_PORT") or "8000"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=TIMEOUT_SECONDS) as reply:
        return bool(reply.status == 200)


def game_grpc_port(game: str) -> int:
    """Where the game's service listens: GRPC_PORT as the service reads it
    (empty = unset), else the port the game declares."""
    configured = os.environ.get("GRPC_PORT", "").strip()
    if configured:
        return int(configured)
    from services.kit.game import discover, packages_from

    games = discover(packages_from(os.environ.get("GAME_PACKAGES", "")))
    if game not in games:
        raise LookupError(f"no game {game!r} (games: {', '.join(games) or 'none'})")
    return games[game].ports[0]


def check_game(game: str) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    port = game_grpc_port(game)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_SECONDS
        )
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def main(argv: list[str]) -> int:
    name = component(argv)
    try:
        healthy = check_gateway() if name == "gateway" else check_game(name)
    except Exception as exc:
        print(f"unhealthy: {name}: {exc}", file=sys.stderr)
        return 1
    if not healthy:
        print(f"unhealthy: {name}", file=sys.stderr)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
