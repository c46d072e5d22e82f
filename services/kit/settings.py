"""Settings from environment variables, read once per process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Fixed ports that clients, ops and the other services rely on.
GAME_PORTS: dict[str, tuple[int, int]] = {
    # game: (gRPC port, metrics port)
    "bozo": (50051, 9101),
    "dudo": (50052, 9102),
    "bozu_mekuri": (50053, 9103),
    "domino": (50054, 9104),
    "yatzy": (50055, 9105),
}


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def keys_dir() -> Path:
    """Where the gateway keeps (and on first run generates) its signing keys."""
    return Path(os.environ.get("RODADA_KEYS_DIR", ".keys"))


@dataclass(frozen=True)
class ServiceSettings:
    """A game service's settings.

    Variables: REDIS_URL, REDIS_CLUSTER (1 = Redis Cluster), <GAME>_GRPC_PORT,
    <GAME>_METRICS_PORT (e.g. YATZY_GRPC_PORT), GRPC_HOST, RODADA_KEYS_DIR or
    JWT_PUBLIC_KEYS (PEM, several separated by blank lines),
    MATCH_TTL_SECONDS, DRAIN_SECONDS.
    """

    game: str
    redis_url: str
    redis_cluster: bool
    host: str
    port: int
    metrics_port: int
    match_ttl_seconds: int
    drain_seconds: int

    @classmethod
    def from_env(cls, game: str) -> ServiceSettings:
        grpc_port, metrics_port = GAME_PORTS[game]
        prefix = game.upper()
        return cls(
            game=game,
            redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            redis_cluster=os.environ.get("REDIS_CLUSTER", "") == "1",
            host=os.environ.get("GRPC_HOST", "[::]"),
            port=env_int(f"{prefix}_GRPC_PORT", grpc_port),
            metrics_port=env_int(f"{prefix}_METRICS_PORT", metrics_port),
            match_ttl_seconds=env_int("MATCH_TTL_SECONDS", 7 * 24 * 3600),
            drain_seconds=env_int("DRAIN_SECONDS", 10),
        )
