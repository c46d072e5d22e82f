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
    """Variables: REDIS_URL, REDIS_CLUSTER, GATEWAY_HOST, GATEWAY_PORT, PLATFORM_GRPC_PORT,
    <GAME>_ADDR, ACCESS_TOKEN_TTL_SECONDS, INVITE_TTL_SECONDS, CLOCK_CYCLE_SECONDS,
    RODADA_KEYS_DIR or JWT_PRIVATE_KEY."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    grpc_port: int = 50050  # the platform's gRPC face for mobile apps
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
            grpc_port=env_int("PLATFORM_GRPC_PORT", cls.grpc_port),
            access_token_ttl=env_int("ACCESS_TOKEN_TTL_SECONDS", cls.access_token_ttl),
            refresh_token_ttl=env_int("REFRESH_TOKEN_TTL_SECONDS", cls.refresh_token_ttl),
            invite_ttl=env_int("INVITE_TTL_SECONDS", cls.invite_ttl),
            clock_cycle_seconds=float(os.environ.get("CLOCK_CYCLE_SECONDS", cls.clock_cycle_seconds)),
        )


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw in (None, "") else float(raw)


@dataclass(frozen=True)
class MatchmakingSettings:
    """The matchmaker's rules and timing (see gateway/matchmaking.py).

    Variables: MATCHMAKER_CYCLE_SECONDS, MATCHMAKER_WINDOW_START,
    MATCHMAKER_WINDOW_STEP, MATCHMAKER_WINDOW_CAP (rating points),
    MATCHMAKER_FILL_WAIT_SECONDS, MATCHMAKER_CPU_WAIT_SECONDS,
    MATCHMAKER_HEARTBEAT_SECONDS, MATCHMAKER_GRACE_SECONDS.
    """

    # How often every gateway replica's matcher looks at every queue. A ranked
    # ticket's window widens once per cycle waited, so this also paces that.
    cycle_seconds: float = 2.0
    # Ranked queues: a ticket accepts opponents within ±window_start of its
    # rating at first, window_step more for every cycle waited, never more than
    # ±window_cap. ±100 is close to an even game (Glicko expects 64% for the
    # stronger player); at 400 the stronger expects 91%, beyond which a match
    # is no contest, so even a long wait does not widen further.
    window_start: float = 100.0
    window_step: float = 50.0
    window_cap: float = 400.0
    # Dudo, Yatzy, Bozu Mekuri: a full table (6) forms at once; a smaller one
    # (2 to 5 players) once its oldest ticket has waited this long.
    fill_wait_seconds: float = 10.0
    # Bozu Mekuri: a ticket still alone after this long is seated against CPUs.
    cpu_wait_seconds: float = 45.0
    # A waiting ticket lives while a connection following it refreshes its
    # heartbeat; this long after the last refresh it is dropped. A new ticket
    # gets ``grace_seconds`` to be followed for the first time.
    heartbeat_seconds: float = 10.0
    grace_seconds: float = 20.0

    def __post_init__(self) -> None:
        if min(self.cycle_seconds, self.heartbeat_seconds, self.grace_seconds) <= 0:
            raise ValueError("matchmaker cycle, heartbeat and grace must be positive")
        if not 0 <= self.window_start <= self.window_cap or self.window_step < 0:
            raise ValueError("matchmaker windows need 0 <= start <= cap and step >= 0")
        if not 0 <= self.fill_wait_seconds <= self.cpu_wait_seconds:
            raise ValueError("the CPU wait must not be shorter than the fill wait")

    @classmethod
    def from_env(cls) -> MatchmakingSettings:
        return cls(
            cycle_seconds=env_float("MATCHMAKER_CYCLE_SECONDS", cls.cycle_seconds),
            window_start=env_float("MATCHMAKER_WINDOW_START", cls.window_start),
            window_step=env_float("MATCHMAKER_WINDOW_STEP", cls.window_step),
            window_cap=env_float("MATCHMAKER_WINDOW_CAP", cls.window_cap),
            fill_wait_seconds=env_float("MATCHMAKER_FILL_WAIT_SECONDS", cls.fill_wait_seconds),
            cpu_wait_seconds=env_float("MATCHMAKER_CPU_WAIT_SECONDS", cls.cpu_wait_seconds),
            heartbeat_seconds=env_float("MATCHMAKER_HEARTBEAT_SECONDS", cls.heartbeat_seconds),
            grace_seconds=env_float("MATCHMAKER_GRACE_SECONDS", cls.grace_seconds),
        )
