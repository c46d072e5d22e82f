"""The gateway's settings, typed, read from the environment once at start-up
and passed in (README.md "Configuration" lists every variable)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.core.limits import Limit
from services.core.settings import CommonSettings

# The port every game listens on in a cluster (GRPC_PORT in
# deploy/k8s/components/game/deployment.yaml: each pod has its own address),
# so a GAMES entry there names no port. Locally (make run, tools/stack.py)
# every game is on one host, on its own GAME.ports, and GAMES names them.
GAME_GRPC_PORT = 50051


def with_port(address: str, default: int = GAME_GRPC_PORT) -> str:
    """``host`` → ``host:default``; a ``host:port`` (``[v6]:port``) as it is.
    An IPv6 address without a port gets its brackets."""
    host, colon, port = address.rpartition(":")
    if colon and port.isdigit() and (host.startswith("[") or ":" not in host):
        return address
    if ":" in address and not address.startswith("["):
        address = f"[{address}]"
    return f"{address}:{default}"


class GatewaySettings(CommonSettings):
    gateway_host: str = "127.0.0.1"
    gateway_port: int = 8000
    platform_grpc_port: int = 50050  # the platform's gRPC face for mobile apps
    # Prometheus /metrics on a port of its own (as the game services), not on
    # the API port the ingress publishes; 0 = not served.
    metrics_port: int = 9100
    # The games: ``name=host[:port]`` each, comma-separated; without a port,
    # GAME_GRPC_PORT (a cluster's). The launcher, the tests' stack and the
    # Kubernetes ConfigMap set it; everything else about a game the gateway
    # learns from the game's Describe. Calls are spread over every address the
    # host name resolves to (a headless Service lists its pods); a fixed set of
    # replicas is ``name=ip[:port] ip[:port] …``.
    games: str = ""
    # Channels per game, each with its own connection to every replica,
    # calls dealt over them in turn, so that a replica's WORKERS processes
    # all get this gateway's calls (gateway/games.py).
    game_channels: Annotated[int, Field(ge=1)] = 8
    jwt_private_key: str = ""  # PEM; else the keys folder's signing key
    access_token_ttl_seconds: int = 3600
    refresh_token_ttl_seconds: int = 30 * 24 * 3600
    invite_ttl_seconds: int = 24 * 3600
    table_ttl_seconds: int = 24 * 3600  # a table that never starts is forgotten after this long
    rpc_timeout_seconds: float = 10.0  # calls to the game services
    clock_cycle_seconds: float = 1.0
    clock_lease_seconds: float = 30.0  # a taken deadline not acted on within this is taken again
    auth_client_limit: str = "30/60"  # sign-ups and log-ins per client address
    login_limit: str = "10/60"  # log-ins per username
    max_feeds_per_user: int = 10  # concurrent feeds (WebSocket and gRPC) per user, every replica
    feed_ping_seconds: float = 20.0  # WebSocket keepalive: a ping this often, the pong within it
    # An idle HTTP keep-alive connection is closed after this long. Longer
    # than the ingress keeps its upstream connections idle (ingress-nginx: 60
    # s), so the proxy, not the gateway, closes them: a gateway closing one
    # just as the proxy sends a request on it is a 502 (uvicorn's default 5 s
    # made that race every few seconds per connection).
    http_keepalive_seconds: Annotated[int, Field(ge=1)] = 75
    ws_auth_timeout_seconds: float = 10.0  # time to send the hello after connecting
    # How often each replica looks for tournaments due to start, rounds whose
    # tables a dead replica left unstarted, and league seasons due to close.
    competitions_check_seconds: Annotated[float, Field(gt=0)] = 5.0
    league_season_seconds: Annotated[float, Field(gt=0)] = 7 * 24 * 3600  # a league season's length
    league_divisions: Annotated[int, Field(ge=1)] = 3  # divisions per league, 1 the top
    league_moves: Annotated[int, Field(ge=0)] = (
        2  # players going up (and down) from each division when a season closes
    )
    cors_origins: str = "http://localhost:5173,http://127.0.0.1:5173"  # comma-separated; * = any
    # Friends and chat (gateway/social/).
    chat_limit: str = "10/10"  # chat messages per user (private and table together), in any 10 s
    # Token buckets per user: <count>/<seconds> is a burst of count, then
    # count per seconds (services/core/limits.py); 0 = no limit.
    friend_request_limit: str = "10/600"  # friend requests sent
    table_invite_limit: str = "20/600"  # friends invited to tables
    report_limit: str = "10/600"  # chat messages reported
    open_tables_per_user: int = 5  # open tables (not started) a user may host at once; 0 = no limit
    chat_max_length: int = 500  # characters per message
    chat_history_length: int = 200  # messages kept per conversation and table channel
    chat_history_ttl_seconds: int = 7 * 24 * 3600  # kept this long after the last message
    chat_word_filter: str = ""  # comma-separated words masked with * (whole words, any case)
    social_feed_length: int = 500  # events kept in each user's social feed
    social_feed_ttl_seconds: int = 7 * 24 * 3600
    web_dir: str = (
        "clients/web/dist"  # the built web client, served at / when present (relative: to the repo)
    )

    @property
    def game_addresses(self) -> dict[str, str]:
        """Game name → ``host:port`` (or ``ip:port ip:port …``), each port
        GAME_GRPC_PORT unless GAMES names one."""
        pairs = (item.strip().partition("=") for item in self.games.split(",") if item.strip())
        return {
            name.strip(): " ".join(with_port(replica) for replica in address.split())
            for name, _, address in pairs
        }

    @property
    def auth_per_client(self) -> Limit:
        return Limit.parse("auth_client", self.auth_client_limit)

    @property
    def login_per_username(self) -> Limit:
        return Limit.parse("login_username", self.login_limit)

    @property
    def chat_per_user(self) -> Limit:
        return Limit.parse("chat", self.chat_limit)

    @property
    def friend_requests_per_user(self) -> Limit:
        return Limit.parse("friend_requests", self.friend_request_limit)

    @property
    def table_invites_per_user(self) -> Limit:
        return Limit.parse("table_invites", self.table_invite_limit)

    @property
    def reports_per_user(self) -> Limit:
        return Limit.parse("reports", self.report_limit)


class MatchmakingSettings(BaseSettings):
    """The matchmaker's rules and timing (gateway/matchmaking/), variables
    MATCHMAKER_<NAME>."""

    model_config = SettingsConfigDict(
        env_prefix="MATCHMAKER_", extra="ignore", frozen=True, env_ignore_empty=True
    )

    # How often every gateway replica's matcher looks at every queue when there
    # is nothing to do (a ticket queued here, or a visit that formed tables,
    # brings the next look forward). A ranked ticket's window widens once per
    # cycle_seconds waited, so this also paces that.
    cycle_seconds: float = 2.0
    # Ranked queues: a ticket accepts opponents within ±window_start of its
    # rating at first, window_step more for every cycle waited, never more than
    # ±window_cap. ±100 is close to an even game (Glicko expects 64% for the
    # stronger player); at 400 the stronger expects 91%, beyond which a match
    # is no contest, so even a long wait does not widen further.
    window_start: float = 100.0
    window_step: float = 50.0
    window_cap: float = 400.0
    # Flexible tables (2 to 6 players): a full table forms at once; a smaller
    # one once its oldest ticket has waited this long.
    fill_wait_seconds: float = 10.0
    # Bot fill: in casual queues of games with CPU seats, a ticket still
    # without a table after this long is seated with CPUs (never in ranked
    # queues). 45 s: longer than a quiet queue's usual wait for a person, short
    # enough that nobody gives up first. 0 turns bot fill off.
    cpu_wait_seconds: float = 45.0
    # A waiting ticket lives while a connection following it refreshes its
    # heartbeat; this long after the last refresh it is dropped. A new ticket
    # gets ``grace_seconds`` to be followed for the first time, and a ticket
    # whose last follower left is dropped at once.
    heartbeat_seconds: float = 10.0
    grace_seconds: float = 20.0

    @model_validator(mode="after")
    def _consistent(self) -> MatchmakingSettings:
        if min(self.cycle_seconds, self.heartbeat_seconds, self.grace_seconds) <= 0:
            raise ValueError("matchmaker cycle, heartbeat and grace must be positive")
        if not 0 <= self.window_start <= self.window_cap or self.window_step < 0:
            raise ValueError("matchmaker windows need 0 <= start <= cap and step >= 0")
        if self.fill_wait_seconds < 0 or self.cpu_wait_seconds < 0:
            raise ValueError("matchmaker waits must not be negative")
        if self.cpu_wait_seconds and self.cpu_wait_seconds < self.fill_wait_seconds:
            raise ValueError("the CPU wait must not be shorter than the fill wait (or 0: no bot fill)")
        return self

    @property
    def bot_fill(self) -> bool:
        return self.cpu_wait_seconds > 0
