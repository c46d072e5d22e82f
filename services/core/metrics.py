"""The Prometheus metrics every game service exports (names are part of the
contract with the dashboards and alerts in deploy/observability)."""

from __future__ import annotations

import os
import platform
import tomllib
from importlib import metadata
from pathlib import Path

from prometheus_client import Counter, Gauge, Histogram, Info

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
# With WORKERS>1 (services/core/workers.py) each worker reads the same count
# from Redis and holds its own streams: the pod reports the one and the sum.
ACTIVE_MATCHES = Gauge(
    "rodada_active_matches", "Matches being played, by game", ["game"], multiprocess_mode="livemax"
)
WATCHERS = Gauge("rodada_watch_streams", "Open Watch streams, by game", ["game"], multiprocess_mode="livesum")
REDIS_SECONDS = Histogram(
    "rodada_redis_seconds", "Redis round-trip latency by operation", ["op"], buckets=_LATENCY_BUCKETS
)

# What is running, on every process (the gateway's too): the package version,
# the commit the image was built from (RODADA_COMMIT, a build argument of
# deploy/docker/Dockerfile) and the Python. Exported as rodada_build_info 1.
BUILD_INFO = Info("rodada_build", "The running build: version, commit and Python")


def _version() -> str:
    """The installed package's version, or (in the image, which installs the
    dependencies only) pyproject.toml's beside the sources."""
    try:
        return metadata.version("rodada")
    except metadata.PackageNotFoundError:
        with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as project:
            return str(tomllib.load(project)["project"]["version"])


BUILD_INFO.info(
    {
        "version": _version(),
        "commit": os.environ.get("RODADA_COMMIT", "unknown"),
        "python": platform.python_version(),
    }
)
