"""The Prometheus metrics every game service exports (names are part of the
contract with the dashboards and alerts in deploy/observability)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

GRPC_REQUESTS = Counter(
    "rodada_grpc_requests_total",
    "gRPC requests handled, by method and status code",
    ["service", "method", "code"],
)
GRPC_SECONDS = Histogram(
    "rodada_grpc_request_seconds",
    "gRPC request latency by method",
    ["service", "method"],
    buckets=_LATENCY_BUCKETS,
)
ACTIONS = Counter("rodada_actions_total", "Actions applied, by game and kind", ["game", "kind"])
REFUSED = Counter("rodada_actions_refused_total", "Actions refused, by game and code", ["game", "code"])
MATCHES_STARTED = Counter("rodada_matches_started_total", "Matches created, by game", ["game"])
MATCHES_FINISHED = Counter(
    "rodada_matches_finished_total", "Matches finished, by game and reason", ["game", "reason"]
)
ACTIVE_MATCHES = Gauge("rodada_active_matches", "Matches being played, by game", ["game"])
WATCHERS = Gauge("rodada_watch_streams", "Open Watch streams, by game", ["game"])
REDIS_SECONDS = Histogram(
    "rodada_redis_seconds", "Redis round-trip latency by operation", ["op"], buckets=_LATENCY_BUCKETS
)
