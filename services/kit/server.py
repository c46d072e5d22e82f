"""Bootstrap shared by every gRPC server of Rodada (the game services and the
gateway's platform face): a grpc.aio server with keepalive both ways,
standard health checking and reflection (v1 and v1alpha), the call guard;
for a game service also a Prometheus endpoint on a side port and a graceful
drain on SIGTERM:
health turns NOT_SERVING while the server still answers, for half of
``drain_seconds``, so load balancers and readiness probes stop sending; then
feeds are told to resume elsewhere, new calls are refused and in-flight ones
get the other half to finish."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Collection, Sequence

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import start_http_server
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.kit import logs, metrics, reflection, tracing, workers
from services.kit.feeds import FeedHub
from services.kit.game import Game
from services.kit.guard import CallGuard
from services.kit.matches import MatchServicer
from services.kit.settings import CommonSettings, ServiceSettings
from services.kit.store import MatchStore, connect, publish_command
from services.kit.tokens import TokenVerifier, load_public_keys

log = logging.getLogger("rodada.service")

MATCH_SERVICE = match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
_GAUGE_PERIOD_SECONDS = 15.0

# Keepalive both ways: the server pings idle connections (a dead client or a
# proxy's idle cut shows up within a minute) and lets clients ping it as often
# as every 10 s, even with no call in flight (a feed that sees no event for
# minutes is still a call in flight). Connections are recycled every five
# minutes: clients re-resolve then (gRPC's DNS resolver does not poll), so
# replicas the autoscaler adds get their share within minutes. A stream open
# at that moment keeps its connection for up to an hour more (the grace);
# past that, a feed resumes from its last event id.
SERVER_OPTIONS: list[tuple[str, int]] = [
    ("grpc.so_reuseport", 0),  # a second process on our port must fail to start, not share it
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_connection_age_ms", 300_000),
    ("grpc.max_connection_age_grace_ms", 3_600_000),
]


def public_keys(settings: CommonSettings) -> list[Ed25519PublicKey]:
    return load_public_keys(settings.rodada_keys_dir, settings.jwt_public_keys)


async def reload_keys(
    verifier: TokenVerifier, settings: CommonSettings, own: Sequence[Ed25519PublicKey] = ()
) -> None:
    """Pick up a key rotation without a restart (keys from files); ``own``
    keys (a gateway's signing key) are always kept."""
    while True:
        await asyncio.sleep(settings.key_reload_seconds)
        with contextlib.suppress(Exception):  # a half-written key file is read next time
            verifier.replace_keys([*own, *public_keys(settings)])


async def _refresh_active_gauge(store: MatchStore, game: str) -> None:
    while True:
        with contextlib.suppress(Exception):  # a scrape gap beats a dead service
            metrics.ACTIVE_MATCHES.labels(game).set(await store.count_active(game))
        await asyncio.sleep(_GAUGE_PERIOD_SECONDS)


async def start_grpc(
    address: str,
    guard: CallGuard,
    register: Callable[[grpc.aio.Server], Collection[str]],
    share_port: bool = False,
) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """A started server: ``register`` adds the servicers and returns their
    full service names, which health reports SERVING and reflection lists.
    ``share_port``: one of a pod's workers (services/kit/workers.py), which
    bind the same port with SO_REUSEPORT."""
    # Tracing's interceptor (none when it is off) around the guarded
    # handlers: the guard's work and its refusals happen inside the call's
    # span. The guard wraps each handler once, as it is registered.
    options = [(k, 1 if k == "grpc.so_reuseport" and share_port else v) for k, v in SERVER_OPTIONS]
    server = grpc.aio.server(interceptors=tracing.server_interceptors(), options=options)
    names = register(guard.serving(server))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable(server, (*names, health.SERVICE_NAME))
    server.add_insecure_port(address)
    await server.start()
    for name in ("", *names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, health_servicer


async def serve_grpc(
    address: str,
    guard: CallGuard,
    register: Callable[[grpc.aio.Server], Collection[str]],
    drain_seconds: float,
    on_drain: Callable[[], Awaitable[None]],
    share_port: bool = False,
) -> None:
    """Run a server (:func:`start_grpc`) until SIGTERM/SIGINT, then drain;
    ``on_drain`` runs when new calls stop (close the feeds)."""
    server, health_servicer = await start_grpc(address, guard, register, share_port)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("draining for up to %ss", drain_seconds)
    await health_servicer.enter_graceful_shutdown()
    await asyncio.sleep(drain_seconds / 2)
    await on_drain()
    await server.stop(drain_seconds / 2)


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
    store = MatchStore(
        redis, settings.match_ttl_seconds, await publish_command(redis, settings.redis_cluster)
    )
    hub = FeedHub(redis, store)
    servicer = MatchServicer(game, store, hub, settings.actions)
    grpc_port, metrics_port = game.ports
    address = f"{settings.grpc_host}:{settings.grpc_port or grpc_port}"

    def register(server: grpc.aio.Server) -> list[str]:
        match_pb2_grpc.add_MatchServiceServicer_to_server(servicer, server)
        return [MATCH_SERVICE]

    worker = settings.rodada_worker is not None
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
        await redis.aclose()


def run(game: Game) -> None:
    """Entry point of ``python -m services.<game>.service``."""
    logs.configure(game.name)
    settings = ServiceSettings()
    if settings.workers > 1 and settings.rodada_worker is None:
        metrics_port = settings.metrics_port or game.ports[1]
        log.info("%s: %d workers on one port", game.name, settings.workers)
        raise SystemExit(workers.supervise(settings.workers, metrics_port))
    tracing.configure(game.name, settings)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(serve(game, settings))
