"""A game service: the one MatchService over the game's declaration, its
store and feed hub, on a gRPC server of Rodada (``services.core.server``),
with its Prometheus endpoint on a side port and the active-matches gauge;
what the game must prepare is done before the port opens."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import grpc
from prometheus_client import start_http_server
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.core import keys, logs, metrics, tracing, workers
from services.core.bans import Bans
from services.core.feeds import FeedHub
from services.core.guard import CallGuard
from services.core.server import public_keys, reload_keys, serve_grpc
from services.core.settings import ServiceSettings
from services.core.store import RecordStore, connect, publish_command
from services.core.tokens import TokenVerifier
from services.kit.game import Game
from services.kit.matches import MatchServicer

log = logging.getLogger("rodada.service")

MATCH_SERVICE = match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
_GAUGE_PERIOD_SECONDS = 15.0


async def _refresh_active_gauge(store: RecordStore, game: str) -> None:
    while True:
        with contextlib.suppress(Exception):  # a scrape gap beats a dead service
            metrics.ACTIVE_MATCHES.labels(game).set(await store.count_active(game))
        await asyncio.sleep(_GAUGE_PERIOD_SECONDS)


def match_guard(game: Game, verifier: TokenVerifier) -> CallGuard:
    """A game service's guard: Describe needs no token (the gateway learns
    the game from it before anyone signs in)."""
    return CallGuard(verifier, game.name, open_methods={f"/{MATCH_SERVICE}/Describe"})


async def serve(game: Game, settings: ServiceSettings) -> None:
    verifier = TokenVerifier(public_keys(settings))
    redis = connect(
        settings.redis_url,
        settings.redis_cluster,
        timeout=settings.redis_timeout_seconds,
        max_connections=settings.redis_max_connections,
    )
    store = RecordStore(
        redis, keys.match, settings.match_ttl_seconds, await publish_command(redis, settings.redis_cluster)
    )
    hub = FeedHub(redis, store)
    # A ban refuses the user's tokens here at once, as at the gateway: a
    # mobile app may reach a game service directly.
    bans = Bans(redis)
    await bans.start()
    verifier.banned = bans
    servicer = MatchServicer(game, store, hub, settings.actions)
    grpc_port, metrics_port = game.ports
    address = f"{settings.grpc_host}:{settings.grpc_port or grpc_port}"

    def register(server: grpc.aio.Server) -> list[str]:
        match_pb2_grpc.add_MatchServiceServicer_to_server(servicer, server)
        return [MATCH_SERVICE]

    worker = settings.is_worker
    if not worker:  # a worker's metrics are served by its supervisor
        start_http_server(settings.metrics_port or metrics_port)
    tasks = [
        asyncio.create_task(_refresh_active_gauge(store, game.name)),
        asyncio.create_task(reload_keys(verifier, settings)),
    ]
    if game.prepare is not None:
        # Before the port opens: health says SERVING only once it is done.
        await asyncio.to_thread(game.prepare)
    log.info("%s serving gRPC on %s", game.name, address)
    try:
        await serve_grpc(
            address, match_guard(game, verifier), register, settings.drain_seconds, hub.close, worker
        )
    finally:
        for task in tasks:
            task.cancel()
        await bans.close()
        await redis.aclose()


def run(game: Game) -> None:
    """Entry point of ``python -m services.<game>.service``."""
    logs.configure(game.name)
    settings = ServiceSettings()
    if settings.workers > 1 and not settings.is_worker:
        log.info("%s: %d workers on one port", game.name, settings.workers)
        raise SystemExit(workers.supervise(settings.workers, settings.metrics_port or game.ports[1]))
    tracing.configure(game.name, settings)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(serve(game, settings))
