"""The gateway's Prometheus metrics (names are part of the contract with the
dashboards and alerts)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.core.metrics import BUILD_INFO  # noqa: F401  (every process exports rodada_build_info)

HTTP_REQUESTS = Counter(
    "rodada_http_requests_total", "HTTP requests, by method, route and status", ["method", "route", "status"]
)
HTTP_SECONDS = Histogram(
    "rodada_http_request_seconds",
    "HTTP request latency, by method and route",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
WS_CONNECTIONS = Gauge(
    "rodada_websocket_connections",
    "Open WebSockets (table feeds and ticket feeds)",
    multiprocess_mode="livesum",
)
FEEDS_OPEN = Gauge(
    "rodada_feeds_open",
    "Open table feeds on this replica (WebSocket and gRPC)",
    multiprocess_mode="livesum",
)
FEEDS_REFUSED = Counter("rodada_feeds_refused_total", "Feeds refused because their user had too many open")
TIMERS_FIRED = Counter(
    "rodada_timers_fired_total", "Deadlines fired, by game and what was done", ["game", "action"]
)
TIMER_LAG = Histogram(
    "rodada_timer_lag_seconds", "How late a deadline fired", buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)
)
FORFEITS = Counter(
    "rodada_forfeits_total", "Matches ended by leaving or inactivity, by game and reason", ["game", "reason"]
)
RATE_LIMITED = Counter("rodada_rate_limited_total", "Requests refused by a rate limit, by limit", ["limit"])
# Every replica reports the same, global length: aggregate with max, not sum
# (and a pod's WORKERS report the max of theirs). Every gauge declares how a
# pod's workers add up (services/core/workers.py); the open-things gauges sum.
MATCHMAKING_QUEUE_LENGTH = Gauge(
    "rodada_matchmaking_queue_length",
    "Matchmaking tickets waiting, by game and mode",
    ["game", "mode"],
    multiprocess_mode="livemax",
)
MATCHMAKING_WAIT_SECONDS = Histogram(
    "rodada_matchmaking_wait_seconds",
    "How long matched tickets waited in the queue, by game and mode",
    ["game", "mode"],
    buckets=(1, 2, 5, 10, 20, 30, 45, 60, 120, 300, 600),
)
MATCHMAKING_MATCHES = Counter(
    "rodada_matchmaking_matches_total", "Tables formed by the matchmaker, by game and mode", ["game", "mode"]
)
CHAT_SENT = Counter(
    "rodada_chat_messages_total",
    "Chat messages sent, by channel (private, table_players, table_spectators)",
    ["channel"],
)
CHAT_REFUSED = Counter(
    "rodada_chat_refused_total",
    "Chat messages refused, by reason (rate_limited, blocked, message_too_long, not_friends, …)",
    ["reason"],
)
CHAT_REPORTS = Counter("rodada_chat_reports_total", "Chat messages reported, by channel", ["channel"])
SOCIAL_FEEDS_OPEN = Gauge(
    "rodada_social_feeds_open",
    "Open social feeds on this replica (WebSocket and gRPC)",
    multiprocess_mode="livesum",
)
MATCHMAKING_CPU_TABLES = Counter(
    "rodada_matchmaking_cpu_tables_total",
    "Tables the matchmaker filled with CPUs (bot fill), by game and mode",
    ["game", "mode"],
)
TROPHIES_AWARDED = Counter("rodada_trophies_awarded_total", "Trophies awarded, by kind", ["kind"])
TOURNAMENTS = Counter(
    "rodada_tournaments_total",
    "Tournaments created, started, finished or cancelled, by game and event",
    ["game", "event"],
)
TOURNAMENT_ROUNDS = Counter(
    "rodada_tournament_rounds_total",
    "Tournament rounds paired (each exactly once), by game and format",
    ["game", "format"],
)
TOURNAMENT_CONFLICTS = Counter(
    "rodada_tournament_conflicts_total",
    "Tournament writes that lost a compare-and-set to another replica and were recomputed",
)
LEAGUE_SEASONS = Counter(
    "rodada_league_seasons_total", "League seasons closed, by game and mode", ["game", "mode"]
)
LEAGUE_MOVES = Counter(
    "rodada_league_moves_total",
    "Players moved when a season closed, by game, mode and direction (up, down)",
    ["game", "mode", "direction"],
)
