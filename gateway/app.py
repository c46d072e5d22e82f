"""The HTTP + WebSocket API for web clients (FastAPI), and the gRPC face for
mobile apps beside it, on one Platform: the API's servicers (gateway/api/)
serve both, HTTP through the transcoder of the protos' HTTP bindings.

Auth: ``Authorization: Bearer <access token>`` from /v1/auth/*. The same token
is forwarded to the game services, which derive the caller's seat from it.
Every refusal is ``{"error": {"code", "message"}}`` with the HTTP status that
services/kit/errors.py derives from the refusal's gRPC code. The routes
written by hand (gateway/routes/) are what is not an RPC: probes, the
documents, the site; the feeds are gateway/sockets.py, in front.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway import metrics
from gateway.api import grpc as grpc_face
from gateway.api import http as http_face
from gateway.platform import Platform
from gateway.routes import docs, ops, site
from gateway.settings import GatewaySettings, MatchmakingSettings
from services.kit import guard, logs, tracing
from services.kit.errors import Refused

log = logging.getLogger("rodada.gateway")


def create_app(settings: GatewaySettings | None = None, mm: MatchmakingSettings | None = None) -> FastAPI:
    settings = settings or GatewaySettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        platform = app.state.platform = Platform(settings, mm)
        await platform.start()
        servicers = app.state.servicers = grpc_face.servicers(platform)
        face, app.state.grpc_health = await grpc_face.start(
            platform, servicers, f"{settings.gateway_host}:{settings.platform_grpc_port}"
        )
        app.state.grpc = face
        yield
        await platform.drain()
        await face.stop(settings.drain_seconds / 2)
        await platform.close()

    app = FastAPI(
        title="Rodada gateway",
        version="1",
        summary="Accounts, tables, play, feeds, matchmaking and ratings for Rodada's games.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    for module in (ops, docs, site):
        app.include_router(module.router)
    http_face.mount(app)
    docs.mount(app)
    site.mount(app, settings.web_dir)
    tracing.instrument_app(app)

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> JSONResponse:
        return refusal_response(exc)

    @app.exception_handler(RedisError)
    async def storage_error(request: Request, exc: Exception) -> JSONResponse:
        refusal = guard.as_refusal(exc)
        if refusal.http_status >= 500 and refusal.http_status != 503:
            log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return refusal_response(refusal)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            {"error": {"code": code, "message": str(exc.detail)}}, status_code=exc.status_code
        )

    app.add_middleware(Measure)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    app.add_middleware(
        CORSMiddleware,
        allow_origins=origins,
        allow_methods=["*"],
        allow_headers=["authorization", "content-type", "x-request-id"],
        expose_headers=["retry-after", "x-request-id"],
        max_age=600,
    )
    return app


def refusal_response(refusal: Refused) -> JSONResponse:
    wait = http_face.retry_after(refusal)
    headers = None if wait is None else {"Retry-After": wait}
    return JSONResponse(refusal.body(), status_code=refusal.http_status, headers=headers)


class Measure:
    """Request metrics and the request id, as plain ASGI middleware (Starlette's
    BaseHTTPMiddleware costs more per request than our whole route)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        logs.REQUEST_ID.set((headers.get(b"x-request-id") or b"").decode() or secrets.token_hex(8))
        status = 500  # unless a response starts: an unhandled error is a 500 too

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            path = getattr(scope.get("route"), "path", "unmatched")
            metrics.HTTP_REQUESTS.labels(scope["method"], path, str(status)).inc()
            metrics.HTTP_SECONDS.labels(scope["method"], path).observe(time.perf_counter() - started)
