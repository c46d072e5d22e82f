"""Bootstrap shared by every game service: a grpc.aio server with the game's
MatchService, standard health checking and reflection, a Prometheus endpoint on
a side port, and a graceful drain on SIGTERM: health turns NOT_SERVING while
the server still answers, for half of ``drain_seconds``, so load balancers
and readiness probes stop sending; then new calls are refused and in-flight
ones get the other half to finish."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.kit import logs, metrics
from services.kit.guard import CallGuard
from services.kit.matches import Game, MatchServicer
from services.kit.settings import ServiceSettings
from services.kit.store import MatchStore, connect
from services.kit.tokens import TokenVerifier, load_public_keys

log = logging.getLogger("rodada.service")

MATCH_SERVICE = match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
_GAUGE_PERIOD_SECONDS = 15.0
KEY_RELOAD_SECONDS = float(os.environ.get("KEY_RELOAD_SECONDS", "30"))


async def _refresh_active_gauge(store: MatchStore, game: str) -> None:
    while True:
        with contextlib.suppress(Exception):  # a scrape gap beats a dead service
            metrics.ACTIVE_MATCHES.labels(game).set(await store.count_active(game))
        await asyncio.sleep(_GAUGE_PERIOD_SECONDS)


async def _reload_keys(verifier: TokenVerifier) -> None:
    """Pick up a key rotation without a restart (keys from files)."""
    while True:
        await asyncio.sleep(KEY_RELOAD_SECONDS)
        with contextlib.suppress(Exception):  # a half-written key file is read next time
            verifier.replace_keys(load_public_keys())


async def serve(game: Game, settings: ServiceSettings) -> None:
    verifier = TokenVerifier(load_public_keys())
    redis = connect(settings.redis_url, settings.redis_cluster)
    store = MatchStore(redis, settings.match_ttl_seconds)
    server = grpc.aio.server(
        interceptors=[CallGuard(verifier, game.name)],
        options=[
            # A second process on our port must fail to start, not share it.
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ],
    )
    match_pb2_grpc.add_MatchServiceServicer_to_server(MatchServicer(game, store), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    service_names = (MATCH_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(service_names, server)
    address = f"{settings.host}:{settings.port}"
    server.add_insecure_port(address)
    start_http_server(settings.metrics_port)
    await server.start()
    for name in ("", MATCH_SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info("%s serving gRPC on %s, metrics on :%d", game.name, address, settings.metrics_port)

    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    gauge_task = asyncio.create_task(_refresh_active_gauge(store, game.name))
    keys_task = asyncio.create_task(_reload_keys(verifier))
    await stopping.wait()
    log.info("%s draining for up to %ds", game.name, settings.drain_seconds)
    await health_servicer.enter_graceful_shutdown()
    await asyncio.sleep(settings.drain_seconds / 2)
    await server.stop(settings.drain_seconds / 2)
    gauge_task.cancel()
    keys_task.cancel()
    await redis.aclose()


def run(game: Game) -> None:
    """Entry point of ``python -m services.<game>.service``."""
    logs.configure(game.name)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(game, ServiceSettings.from_env(game.name)))
