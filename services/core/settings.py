"""Settings, typed and read from the environment once, at start-up, then
passed in: nothing else reads the environment.

Every variable is listed in README.md ("Configuration").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.core.limits import Limit


class CommonSettings(BaseSettings):
    """What every process shares: Redis, the token keys, draining, tracing
    and its workers."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True, env_ignore_empty=True)

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool = False  # REDIS_CLUSTER=1: REDIS_URL names a node of a Redis Cluster
    redis_timeout_seconds: float = 5.0  # every Redis command; past it Redis counts as unavailable
    redis_max_connections: int = 256  # per process and Redis node; a burst beyond waits for one
    # Where the gateway keeps (and on first run generates) its signing key,
    # and where every process finds the public keys (a previous one too,
    # during a rotation); JWT_PUBLIC_KEYS (PEMs) overrides the folder.
    rodada_keys_dir: Path = Path(".keys")
    jwt_public_keys: str = ""
    key_reload_seconds: float = 30.0  # how often key files are re-read (rotation without restart)
    # On SIGTERM: report NOT_SERVING / unready for half of it, then stop
    # taking calls and give the rest to the calls in flight.
    drain_seconds: float = 10.0
    # Tracing (services/core/tracing.py): off unless an OTLP/gRPC endpoint is
    # set, e.g. http://otel-collector:4317; the standard OpenTelemetry names.
    # The SDK reads the other OTEL_* variables itself (sampler, batching,
    # headers, resource attributes).
    otel_exporter_otlp_endpoint: str = ""
    otel_exporter_otlp_traces_endpoint: str = ""  # for traces only; wins over the one above
    otel_sdk_disabled: bool = False  # true: no tracing whatever the endpoint
    otel_service_name: str = ""  # default rodada-<game> / rodada-gateway
    # Processes sharing the pod's ports (SO_REUSEPORT) and its one metrics
    # port (services/core/workers.py), for a game service and the gateway
    # alike: as many as the cores the pod may use.
    workers: Annotated[int, Field(ge=1)] = 1
    rodada_worker: int | None = None  # set by the supervisor on each of its workers, not by operators

    @property
    def is_worker(self) -> bool:
        """One of a supervisor's workers: it shares its ports and leaves the
        metrics port to the supervisor."""
        return self.rodada_worker is not None


class ServiceSettings(CommonSettings):
    """A game service's settings (GRPC_PORT and METRICS_PORT default to the
    game's own ports)."""

    grpc_host: str = "[::]"
    grpc_port: int | None = None
    metrics_port: int | None = None
    match_ttl_seconds: int = 7 * 24 * 3600  # a match's keys expire this long after its last write
    action_limit: str = "60/10"  # actions per user: <count>/<seconds>, 0 = off

    @property
    def actions(self) -> Limit:
        return Limit.parse("actions", self.action_limit)
