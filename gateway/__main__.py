"""``python -m gateway``: serve the HTTP API (uvicorn; granian was measured
and lost, BENCHMARKS.md) and the gRPC face, and the Prometheus metrics on
METRICS_PORT.

On SIGTERM the replica drains: readiness (/healthz) fails at once, so load
balancers stop sending; after half of DRAIN_SECONDS the feeds are told to
resume elsewhere (close 1012 "draining"; gRPC UNAVAILABLE ``draining``) and
uvicorn stops, giving requests in flight the rest.

With WORKERS=N this process supervises N copies of itself on the same ports
(services/core/workers.py), each draining as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Awaitable, Callable

import uvicorn
from prometheus_client import start_http_server

from gateway.app import FastPath, create_app
from gateway.feed_protocol import FeedProtocol
from gateway.http_protocol import HttpProtocol
from gateway.settings import GatewaySettings
from gateway.sockets import FeedSockets
from services.core import logs, tracing, workers


def uvicorn_config(app: Callable[..., Awaitable[None]], settings: GatewaySettings) -> uvicorn.Config:
    """How the gateway serves HTTP and its feeds; the benchmarks' floors
    serve their bare apps the same way."""
    return uvicorn.Config(
        app,
        host=settings.gateway_host,
        port=settings.gateway_port,
        log_config=None,  # our JSON logs
        proxy_headers=True,
        timeout_keep_alive=settings.http_keepalive_seconds,
        ws_ping_interval=settings.feed_ping_seconds,
        ws_ping_timeout=settings.feed_ping_seconds,
        # Compression costs ~40 KB of state per open WebSocket (measured):
        # more than an idle feed may cost.
        ws_per_message_deflate=False,
        http=HttpProtocol,  # httptools', a response's head and body in one write
        ws=FeedProtocol,  # wsproto's, without the handshake kept by every open socket
        timeout_graceful_shutdown=max(1, int(settings.drain_seconds / 2)),
        lifespan="on",
        interface="asgi3",  # ASGI 3 apps only: no detection, no ASGI 2 wrapper
    )


async def serve(settings: GatewaySettings) -> None:
    app = create_app(settings)
    if settings.metrics_port and not settings.is_worker:  # a worker's are its supervisor's
        # Its own port, as the game services: the API port is public behind
        # the ingress, the metrics are for Prometheus only.
        start_http_server(settings.metrics_port, settings.gateway_host)
    server = uvicorn.Server(uvicorn_config(FeedSockets(FastPath(app, settings)), settings))
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    async def drain() -> None:
        await stopping.wait()
        platform = app.state.platform
        platform.draining = True  # /healthz fails
        await app.state.grpc_health.enter_graceful_shutdown()  # so does the gRPC face's health
        await asyncio.sleep(settings.drain_seconds / 2)
        await platform.drain()
        server.should_exit = True

    # uvicorn installs its own handlers when serving; ours replace them after start-up.
    drainer = asyncio.create_task(drain())
    shared = (
        [workers.shared_socket(settings.gateway_host, settings.gateway_port)] if settings.is_worker else None
    )
    serving = asyncio.create_task(server.serve(sockets=shared))
    while not server.started and not serving.done():
        await asyncio.sleep(0.05)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    # What start-up made (modules, the app, the games' descriptors) lives as
    # long as the process: out of the collector's sight, so that no full
    # collection walks it again.
    gc.freeze()
    await serving
    drainer.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await drainer


# Young objects collected every 10,000 allocations net instead of 700: a
# request or a ticket allocates hundreds of short-lived objects, nearly all
# freed by reference counting, so most young collections find little
# (BENCHMARKS.md, "Matchmaking (issue 22)", has what this saves).
GC_YOUNG_THRESHOLD = 10_000


def main() -> None:
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    settings = GatewaySettings()
    logs.configure("gateway")
    if settings.workers > 1 and not settings.is_worker:  # WORKERS processes on the same ports
        raise SystemExit(workers.supervise(settings.workers, settings.metrics_port, settings.gateway_host))
    tracing.configure("gateway", settings)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
