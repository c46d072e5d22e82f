"""Gateway settings from environment variables, read once at start."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from services.kit.settings import GAME_PORTS, env_int


def _game_addresses() -> dict[str, str]:
    """``<GAME>_ADDR`` (host:port) per game, else localhost on its fixed port,
    moved by ``<GAME>_GRPC_PORT`` like the service itself."""
    addresses = {}
    for game, (port, _) in GAME_PORTS.items():
        prefix = game.upper()
        default = f"127.0.0.1:{env_int(f'{prefix}_GRPC_PORT', port)}"
        addresses[game] = os.environ.get(f"{prefix}_ADDR", default)
    return addresses


@dataclass(frozen=True)
class GatewaySettings:
    """Variables: REDIS_URL, REDIS_CLUSTER, GATEWAY_HOST, GATEWAY_PORT,
    <GAME>_ADDR, ACCESS_TOKEN_TTL_SECONDS, INVITE_TTL_SECONDS, CLOCK_CYCLE_SECONDS,
    RODADA_KEYS_DIR or JWT_PRIVATE_KEY."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    access_token_ttl: int = 3600
    refresh_token_ttl: int = 30 * 24 * 3600
    invite_ttl: int = 24 * 3600
    clock_cycle_seconds: float = 1.0
    game_addresses: dict[str, str] = field(default_factory=_game_addresses)

    @classmethod
    def from_env(cls) -> GatewaySettings:
        return cls(
            redis_url=os.environ.get("REDIS_URL", cls.redis_url),
            redis_cluster=os.environ.get("REDIS_CLUSTER", "") == "1",
            host=os.environ.get("GATEWAY_HOST", cls.host),
            port=env_int("GATEWAY_PORT", cls.port),
            access_token_ttl=env_int("ACCESS_TOKEN_TTL_SECONDS", cls.access_token_ttl),
            refresh_token_ttl=env_int("REFRESH_TOKEN_TTL_SECONDS", cls.refresh_token_ttl),
            invite_ttl=env_int("INVITE_TTL_SECONDS", cls.invite_ttl),
            clock_cycle_seconds=float(os.environ.get("CLOCK_CYCLE_SECONDS", cls.clock_cycle_seconds)),
        )
