"""The real platform on loopback: our own redis-server on a free port, the
game services (every game ``services/`` declares) and the gateway replicas as
subprocesses, all stopped by PID. Used by the integration tests and the
benchmarks; it never touches the machine's own Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from services.core.tokens import Identity, TokenSigner, load_or_create_signing_key
from services.kit.game import DEFAULT_PACKAGES, service_modules
from tools.redis_server import RedisServer, free_port, wait_for_port

PLATFORM = Identity("platform:tests", "tests", "platform")


def games_setting(addresses: Mapping[str, str | Sequence[str]]) -> str:
    """The gateway's GAMES variable: ``name=host:port`` per game (several
    replicas' addresses separated by spaces)."""
    return ",".join(
        f"{name}={address if isinstance(address, str) else ' '.join(address)}"
        for name, address in addresses.items()
    )


class Stack:
    """``redis_url`` points the platform at a Redis the caller runs (a cluster,
    say, with ``cluster=True``); otherwise the stack starts its own. ``games``
    limits it to some of the games found in ``packages``; ``replicas`` runs
    several replicas of a game's service (the gateway spreads its calls over
    them). ``gateway_workers``: processes per gateway replica (its WORKERS;
    an ``env`` WORKERS is the game services'). ``source`` runs the processes
    from another checkout of the code (the benchmark's baseline), this one's
    by default."""

    def __init__(
        self,
        root: Path,
        redis_url: str | None = None,
        cluster: bool = False,
        env: dict[str, str] | None = None,
        packages: tuple[str, ...] = DEFAULT_PACKAGES,
        games: Sequence[str] | None = None,
        replicas: Mapping[str, int] | None = None,
        source: Path | None = None,
        gateway_workers: int = 1,
    ) -> None:
        self.root = root
        self.gateway_workers = gateway_workers
        self.source = source
        self.keys_dir = root / "keys"
        self.signer = TokenSigner(load_or_create_signing_key(self.keys_dir))
        self.redis = None if redis_url else RedisServer(root / "redis").start()
        self.redis_url = redis_url or self.redis.url  # type: ignore[union-attr]
        found = service_modules(packages)
        self.modules = {g: module for g, module in found.items() if games is None or g in games}
        self.games = list(self.modules)
        counts = {game: (replicas or {}).get(game, 1) for game in self.games}
        self.replica_ports = {game: [free_port() for _ in range(n)] for game, n in counts.items()}
        self.replica_metrics_ports = {game: [free_port() for _ in range(n)] for game, n in counts.items()}
        self.grpc_ports = {game: ports[0] for game, ports in self.replica_ports.items()}
        self.metrics_ports = {game: ports[0] for game, ports in self.replica_metrics_ports.items()}
        self.gateway_ports: dict[int, int] = {}
        self.platform_grpc_ports: dict[int, int] = {}
        self.gateway_metrics_ports: dict[int, int] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "REDIS_CLUSTER": "1" if cluster else "",
            "RODADA_KEYS_DIR": str(self.keys_dir),
            "DRAIN_SECONDS": "2",
            "CLOCK_CYCLE_SECONDS": "0.2",
            "GAME_PACKAGES": ",".join(packages),
            "GAMES": games_setting(
                {g: [f"127.0.0.1:{p}" for p in ports] for g, ports in self.replica_ports.items()}
            ),
            # Test players are bots: abuse limits are tested on a stack of their own.
            "ACTION_LIMIT": "0",
            "AUTH_CLIENT_LIMIT": "0",
            "LOGIN_LIMIT": "0",
            "FRIEND_REQUEST_LIMIT": "0",
            "TABLE_INVITE_LIMIT": "0",
            "REPORT_LIMIT": "0",
            "OPEN_TABLES_PER_USER": "0",
            **(env or {}),
        }
        self.gateway_port = self._gateway_port(0)

    def _gateway_port(self, replica: int) -> int:
        return self.gateway_ports.setdefault(replica, free_port())

    def log_path(self, name: str) -> Path:
        return self.root / f"{name}.log"

    def _spawn(self, name: str, args: list[str], env: dict[str, str], port: int) -> None:
        if name in self.processes and self.processes[name].poll() is None:
            return
        log = self.log_path(name).open("ab")
        if self.source is not None:
            env = {**env, "PYTHONPATH": f"{self.source}:{self.source / 'gen'}"}
        self.processes[name] = subprocess.Popen(
            [sys.executable, *args], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.source
        )
        wait_for_port(port, timeout=30)

    def service(self, game: str, replica: int = 0) -> str:
        """Start replica ``replica`` of the game's gRPC service if needed; its
        address. Process names: the game's, then ``<game>-1``, ``<game>-2``…"""
        port = self.replica_ports[game][replica]
        metrics_port = self.replica_metrics_ports[game][replica]
        env = {**self.env, "GRPC_PORT": str(port), "METRICS_PORT": str(metrics_port)}
        self._spawn(game if replica == 0 else f"{game}-{replica}", ["-m", self.modules[game]], env, port)
        return f"127.0.0.1:{port}"

    def services(self) -> None:
        for game, ports in self.replica_ports.items():
            for replica in range(len(ports)):
                self.service(game, replica)

    def metrics_url(self, game: str, replica: int = 0) -> str:
        return f"http://127.0.0.1:{self.replica_metrics_ports[game][replica]}/metrics"

    def gateway(self, replica: int = 0) -> str:
        """Start gateway replica ``replica`` (0, 1, …) if needed, and every game
        service it talks to: all replicas share the Redis and the keys; each
        has its own ports."""
        self.services()
        name = "gateway" if replica == 0 else f"gateway-{replica}"
        port = self._gateway_port(replica)
        grpc_port = self.platform_grpc_ports.setdefault(replica, free_port())
        metrics_port = self.gateway_metrics_ports.setdefault(replica, free_port())
        env = {
            **self.env,
            "GATEWAY_PORT": str(port),
            "PLATFORM_GRPC_PORT": str(grpc_port),
            "METRICS_PORT": str(metrics_port),
            "WORKERS": str(self.gateway_workers),
        }
        self._spawn(name, ["-m", "gateway"], env, port)
        return f"http://127.0.0.1:{port}"

    def gateway_metrics_url(self, replica: int = 0) -> str:
        """Gateway replica ``replica``'s /metrics (on its own port; started if needed)."""
        self.gateway(replica)
        return f"http://127.0.0.1:{self.gateway_metrics_ports[replica]}/metrics"

    def platform_grpc(self, replica: int = 0) -> str:
        """The gRPC address of gateway replica ``replica`` (started if needed)."""
        self.gateway(replica)
        return f"127.0.0.1:{self.platform_grpc_ports[replica]}"

    def token(self, identity: Identity, ttl: int = 3600) -> str:
        return self.signer.issue(identity, ttl)

    def platform_metadata(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token(PLATFORM)}"),)

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, name: str | None = None, sig: int = signal.SIGTERM) -> None:
        """Stop one process (``name``) or everything, Redis last."""
        procs = [self.processes[name]] if name else list(self.processes.values())
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(sig)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if name is None and self.redis:
            self.redis.stop()
