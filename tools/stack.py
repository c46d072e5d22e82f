"""The real platform on loopback: our own redis-server on a free port, the
game services and the gateway as subprocesses, all stopped by PID. Used by the
integration tests and the benchmark; it never touches the machine's own Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from services.kit.settings import GAME_PORTS
from services.kit.tokens import Identity, TokenSigner, load_or_create_signing_key
from tools.redis_server import RedisServer, free_port, wait_for_port

PLATFORM = Identity("platform:tests", "tests", "platform")


class Stack:
    """``redis_url`` points the platform at a Redis the caller runs (a cluster,
    say, with ``cluster=True``); otherwise the stack starts its own."""

    def __init__(
        self,
        root: Path,
        redis_url: str | None = None,
        cluster: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.keys_dir = root / "keys"
        self.signer = TokenSigner(load_or_create_signing_key(self.keys_dir))
        self.redis = None if redis_url else RedisServer(root / "redis").start()
        self.redis_url = redis_url or self.redis.url  # type: ignore[union-attr]
        self.grpc_ports = {game: free_port() for game in GAME_PORTS}
        self.gateway_port = free_port()
        self.gateway_ports = {0: self.gateway_port}
        self.platform_grpc_ports: dict[int, int] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "REDIS_CLUSTER": "1" if cluster else "",
            "RODADA_KEYS_DIR": str(self.keys_dir),
            "GATEWAY_PORT": str(self.gateway_port),
            "DRAIN_SECONDS": "2",
            "CLOCK_CYCLE_SECONDS": "0.2",
            # Test players are bots: abuse limits are tested on a stack of their own.
            "ACTION_LIMIT": "0",
            "AUTH_CLIENT_LIMIT": "0",
            "LOGIN_LIMIT": "0",
            **(env or {}),
        }
        for game, port in self.grpc_ports.items():
            self.env[f"{game.upper()}_GRPC_PORT"] = str(port)
            self.env[f"{game.upper()}_METRICS_PORT"] = str(free_port())

    def log_path(self, name: str) -> Path:
        return self.root / f"{name}.log"

    def _spawn(self, name: str, module: str, port: int) -> None:
        if name in self.processes and self.processes[name].poll() is None:
            return
        log = self.log_path(name).open("ab")
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", module], env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        wait_for_port(port, timeout=30)

    def service(self, game: str) -> str:
        """Start the game's gRPC service if needed; its address."""
        self._spawn(game, f"services.{game}.service", self.grpc_ports[game])
        return f"127.0.0.1:{self.grpc_ports[game]}"

    def metrics_url(self, game: str) -> str:
        return f"http://127.0.0.1:{self.env[f'{game.upper()}_METRICS_PORT']}/metrics"

    def gateway(self, replica: int = 0) -> str:
        """Start gateway replica ``replica`` (0, 1, …) if needed: all replicas
        share the Redis and the keys; each has its own port."""
        name = "gateway" if replica == 0 else f"gateway-{replica}"
        port = self.gateway_ports.setdefault(replica, free_port())
        grpc_port = self.platform_grpc_ports.setdefault(replica, free_port())
        if name not in self.processes or self.processes[name].poll() is not None:
            log = self.log_path(name).open("ab")
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", "gateway"],
                env={**self.env, "GATEWAY_PORT": str(port), "PLATFORM_GRPC_PORT": str(grpc_port)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            wait_for_port(port, timeout=30)
        return f"http://127.0.0.1:{port}"

    def platform_grpc(self, replica: int = 0) -> str:
        """The gRPC address of gateway replica ``replica`` (started if needed)."""
        self.gateway(replica)
        return f"127.0.0.1:{self.platform_grpc_ports[replica]}"

    def token(self, identity: Identity, ttl: int = 3600) -> str:
        return self.signer.issue(identity, ttl)

    def platform_metadata(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token(PLATFORM)}"),)

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.processes.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.redis:
            self.redis.stop()
