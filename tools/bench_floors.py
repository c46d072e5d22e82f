"""The floors of ``make bench``, measured in the same run as the paths: what
the cheapest possible server on each of our stacks spends per call, so that
every path's server CPU per move reads as a multiple of what its transport
alone costs.

- **gRPC**: a bare grpc.aio unary echo (a generic handler, bytes in, bytes
  out, no interceptor), on uvloop with the game services' server options.
- **ASGI**: a bare ASGI app answering ``{}`` on uvicorn with the gateway's
  flags (the same HTTP and WebSocket implementations).
- **Redis**: an ``EVALSHA`` of ``return 1`` (redis-server's CPU per call).
- **gRPC + Redis**: the gRPC echo awaiting one such ``EVALSHA`` the way a
  move's commit goes out (a coalesced script on the services' own client,
  ``services.core.store.connect``) before it answers: the least a move can
  cost on the gRPC path, which makes one round trip to Redis (its commit).
  Its server CPU counts the echo's process and redis-server's, as the gRPC
  path's does.

Each floor is driven by ``bench/rodada/floor.js`` (the same lean Node
clients and window as the drivers: one connection per caller, one call in
flight each). ``python -m tools.bench_floors grpc|asgi PORT`` (``grpc+redis PORT REDIS_PORT``)
serves a floor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.redis_server import RedisServer, free_port, wait_for_port

if TYPE_CHECKING:
    from tools.bench import Row

CALLERS = 50
FLOORS = ("grpc", "asgi", "redis", "grpc+redis")
# Which floor each process of a path is held against: the gateway serves the
# web path over HTTP and the platform path over gRPC.
FLOOR_OF = {"yatzy": "grpc", "gateway": "asgi", "redis": "redis"}
PLATFORM_FLOOR_OF = {**FLOOR_OF, "gateway": "grpc"}


async def serve_grpc(port: int, redis_port: int | None = None) -> None:
    """The gRPC echo; with ``redis_port``, each call first awaits one
    ``EVALSHA`` there."""
    import grpc

    from services.core.pipelining import CoalescedScript
    from services.core.server import SERVER_OPTIONS
    from services.core.store import connect

    if redis_port is None:

        async def echo(request: bytes, context: Any) -> bytes:
            return request

    else:
        script = CoalescedScript(connect(f"redis://127.0.0.1:{redis_port}/0"), "return 1")

        async def echo(request: bytes, context: Any) -> bytes:
            await script(keys=[], args=[])
            return request

    handler = grpc.method_handlers_generic_handler(
        "floor.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b"{}"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def serve_asgi(port: int) -> None:
    import uvicorn

    from gateway.__main__ import uvicorn_config
    from gateway.settings import GatewaySettings

    settings = GatewaySettings(gateway_host="127.0.0.1", gateway_port=port)
    await uvicorn.Server(uvicorn_config(bare_app, settings)).serve()


def _spawn(kind: str, port: int, root: Path, redis_port: int | None) -> subprocess.Popen[bytes]:
    log = (root / f"floor-{kind}.log").open("ab")
    command = [sys.executable, "-m", "tools.bench_floors", kind, str(port)]
    if redis_port is not None:
        command.append(str(redis_port))
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    wait_for_port(port, timeout=30)
    return process


def measure(root: Path, seconds: float, warmup: float, callers: int = CALLERS) -> dict[str, dict[str, Any]]:
    """Each floor's calls/s and server CPU ms per call (and the driver's)."""
    from tools.bench import DRIVERS, per_move, run_driver

    root.mkdir(parents=True, exist_ok=True)
    floors: dict[str, dict[str, Any]] = {}
    for kind in FLOORS:
        port = free_port()
        redis = RedisServer(root / f"redis-{kind}", free_port()).start() if "redis" in kind else None
        process = None
        try:
            if kind == "redis":
                assert redis is not None
                process, target = redis.process, f"127.0.0.1:{redis.port}"
            else:
                process = _spawn(kind, port, root, redis.port if redis is not None else None)
                target = f"127.0.0.1:{port}"
            assert process is not None
            pids = {"server": process.pid}
            if redis is not None and redis.process is not process:
                pids["redis"] = redis.process.pid  # type: ignore[union-attr]
            protocol = {"asgi": "http", "grpc+redis": "grpc"}.get(kind, kind)
            args = [str(DRIVERS / "floor.js"), "--target", protocol]
            args += ["--address", target, "--matches", str(callers)]
            args += ["--seconds", str(seconds), "--warmup", str(warmup)]
            result, spent = run_driver(args, warmup + seconds + 60, pids)
        finally:
            if process is not None and (redis is None or process is not redis.process):
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(10)
                if process.poll() is None:
                    process.kill()
            if redis is not None:
                redis.stop()
        calls = result["moves"]
        floors[kind] = {
            "calls_per_second": result["moves_per_second"],
            "p50_ms": result["p50_ms"],
            "p99_ms": result["p99_ms"],
            "server_cpu_ms": per_move(spent["server"] + spent.get("redis", 0.0), calls),
            "driver_cpu_ms": per_move(result["driver_cpu_s"], calls),
            "errors": result["errors"],
            "other_cpu_s": round(max(0.0, spent["other"]), 2),
        }
    return floors


NAMES = {
    "grpc": "bare grpc.aio unary echo",
    "asgi": "bare ASGI request (uvicorn, the gateway's flags)",
    "redis": "Redis EVALSHA round trip",
    "grpc+redis": "grpc.aio echo awaiting one Redis EVALSHA (echo + redis-server)",
}


def describe(floors: dict[str, dict[str, Any]], rows: list[Row]) -> str:
    lines = [f"floors ({CALLERS} callers, one call in flight each; server CPU ms per call):"]
    for kind, floor in floors.items():
        lines.append(
            f"- {NAMES[kind]}: {floor['server_cpu_ms']:.3f} ms ({floor['calls_per_second']:,.0f} calls/s, "
            f"driver {floor['driver_cpu_ms']:.3f} ms, other CPU {floor['other_cpu_s']:.1f} s"
            + (f", {floor['errors']} errors" if floor["errors"] else "")
            + ")"
        )
    both = floors.get("grpc+redis", {}).get("server_cpu_ms")
    if both:
        lines.append(
            f"the gRPC path's least possible cost per move (a call and one Redis round trip): {both:.3f} ms,"
            f" so its 0.5 ms target leaves {max(0.0, 0.5 - both):.3f} ms for the move itself"
        )
        lines += ceiling(floors["grpc+redis"], rows)
    lines.append("server CPU per move as a multiple of its floor:")
    for row in rows:
        if row.path == "reference":
            continue
        parts = []
        floor_of = PLATFORM_FLOOR_OF if row.path == "platform" else FLOOR_OF
        for name, ms in row.cpu.items():
            floor_ms = floors.get(floor_of.get(name, ""), {}).get("server_cpu_ms")
            if floor_ms:
                parts.append(f"{name} {ms / floor_ms:.1f}×")
        before = " (before)" if row.before else ""
        if both and row.path == "grpc":
            from tools.bench import server_cpu

            served = server_cpu(row)
            parts.append(f"service + redis {served / both:.1f}× the call with a round trip")
        lines.append(f"- {row.path}{before}, {row.matches} matches of {row.players}: " + ", ".join(parts))
    return "\n".join(lines)


def ceiling(floor: dict[str, Any], rows: list[Row]) -> list[str]:
    """The most moves/s this machine could carry on the gRPC path if a move
    cost no more than its floor: the cores the bench may use over the floor's
    server and driver CPU per call, which share them. Set against the
    reference's moves/s, it says whether the 1.0× target is within this
    machine's reach at all, whatever the service does above the floor."""
    cores = len(os.sched_getaffinity(0))
    most = cores * 1000 / (floor["server_cpu_ms"] + floor["driver_cpu_ms"])
    lines = [
        f"at that floor and its driver's {floor['driver_cpu_ms']:.3f} ms a call, {cores} cores carry at most"
        f" {most:,.0f} moves/s on the gRPC path; against the reference:"
    ]
    for row in rows:
        if row.path == "reference" and not row.before and not row.layout:
            reference = row.result["moves_per_second"]
            lines.append(
                f"- {row.matches} matches of {row.players}: {reference:,.0f} moves/s, so at most"
                f" {most / reference:.2f}× at the floor"
            )
    return lines


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    with contextlib.suppress(KeyboardInterrupt):
        if kind == "asgi":
            asyncio.run(serve_asgi(port))
        else:
            asyncio.run(serve_grpc(port, int(sys.argv[3]) if kind == "grpc+redis" else None))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
