"""Bootstrap shared by every gRPC server of Rodada (the game services and the
gateway's gRPC face): a grpc.aio server with keepalive both ways, standard
health checking and reflection (v1 and v1alpha), the call guard, and a
graceful drain on SIGTERM: health turns NOT_SERVING while the server still
answers, for half of ``drain_seconds``, so load balancers and readiness
probes stop sending; then feeds are told to resume elsewhere, new calls are
refused and in-flight ones get the other half to finish. Signing keys are
reloaded from files while it runs (key rotation without a restart)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Collection, Sequence

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from services.core import reflection, tracing
from services.core.guard import CallGuard
from services.core.settings import CommonSettings
from services.core.tokens import TokenVerifier, load_public_keys

log = logging.getLogger("rodada.service")

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


async def start_grpc(
    address: str, guard: CallGuard, register: Callable[[grpc.aio.Server], Collection[str]]
) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """A started server: ``register`` adds the servicers and returns their
    full service names, which health reports SERVING and reflection lists."""
    # Tracing's interceptor (none when it is off) around the guarded
    # handlers: the guard's work and its refusals happen inside the call's
    # span. The guard wraps each handler once, as it is registered.
    server = grpc.aio.server(interceptors=tracing.server_interceptors(), options=SERVER_OPTIONS)
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
) -> None:
    """Run a server (:func:`start_grpc`) until SIGTERM/SIGINT, then drain;
    ``on_drain`` runs when new calls stop (close the feeds)."""
    server, health_servicer = await start_grpc(address, guard, register)
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
