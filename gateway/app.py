"""The HTTP + WebSocket API for web clients (FastAPI), and the gRPC face for
mobile apps beside it, on one Platform: the API's servicers (gateway/api/)
serve both, HTTP through the transcoder of the protos' HTTP bindings.

Auth: ``Authorization: Bearer <access token>`` from /v1/auth/*. The same token
is forwarded to the game services, which derive the caller's seat from it.
Every refusal is ``{"error": {"code", "message"}}`` with the HTTP status that
services/core/errors.py derives from the refusal's gRPC code. The routes
written by hand (gateway/routes/) are what is not an RPC: probes, the
documents, the site; the feeds are gateway/sockets.py, in front.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway import metrics
from gateway.api import grpc as grpc_face
from gateway.api import http as http_face
from gateway.platform import Platform
from gateway.routes import docs, ops, site
from gateway.settings import GatewaySettings, MatchmakingSettings
from services.core import guard, logs, tracing
from services.core.errors import Refused

log = logging.getLogger("rodada.gateway")


def create_app(settings: GatewaySettings | None = None, mm: MatchmakingSettings | None = None) -> FastAPI:
    settings = settings or GatewaySettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        platform = app.state.platform = Platform(settings, mm)
        await platform.start()
        servicers = app.state.servicers = grpc_face.servicers(platform)
        face, app.state.grpc_health = await grpc_face.start(
            platform,
            servicers,
            f"{settings.gateway_host}:{settings.platform_grpc_port}",
            share_port=settings.is_worker,
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
    app.add_middleware(CORSMiddleware, **cors_options(settings))
    return app


def cors_options(settings: GatewaySettings) -> dict[str, Any]:
    return {
        "allow_origins": [o.strip() for o in settings.cors_origins.split(",") if o.strip()],
        "allow_methods": ["*"],
        "allow_headers": ["authorization", "content-type", "x-request-id"],
        "expose_headers": ["retry-after", "x-request-id"],
        "max_age": 600,
    }


class FastPath:
    """ASGI in front of the app: a request one of the API's operations
    (gateway/api/http.py) answers goes straight to it, through the same CORS
    and :class:`Measure` as every request, but not through FastAPI's and
    Starlette's other layers (exception, telemetry, body-limit and exit-stack
    middleware, the router's walk over every route): the operations catch
    their own errors, limit their bodies and need no dependencies, and those
    layers were a fifth of the gateway's CPU per move (py-spy). Routing is
    Starlette's own ``Route.matches``, over the routes in the app's order that
    could match the path, so the route that answers is the one Starlette
    would pick; anything else (no match, a method not allowed, a route that
    is not an operation) goes to the app as before. With tracing on, every
    request goes to the app (its OpenTelemetry middleware spans them)."""

    def __init__(self, app: FastAPI, settings: GatewaySettings) -> None:
        self.app = app
        self._operation = CORSMiddleware(Measure(self._endpoint), **cors_options(settings))
        operations = [
            r for r in app.routes if isinstance(r, Route) and isinstance(r.app, http_face.Operation)
        ]
        # Per the path's first two segments (/v1/tables): the routes, in the
        # app's order, that could match such a path: those whose literal
        # segments agree with it up to a parameter, and any that cannot say
        # which paths they serve. An included router (the probes',
        # the documents', the site's) is one of them only if one of its
        # routes is: matching one walks all its routes, and three of them
        # stood before every operation (4 % of the gateway's CPU a move).
        self._routes: dict[str, list[BaseRoute]] = {}
        if tracing.enabled():
            return  # every request through the app, whose middleware makes each one's span
        for prefix in {_prefix(r.path) for r in operations}:
            self._routes[prefix] = [route for route in app.routes if _may_match(route, prefix)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route in self._routes.get(_prefix(scope["path"]), ()):
                match, child = route.matches(scope)
                if match is Match.FULL:
                    if isinstance(route, Route) and isinstance(route.app, http_face.Operation):
                        scope.update(child, app=self.app, route=route)
                        await self._operation(scope, receive, send)
                        return
                    break
        await self.app(scope, receive, send)

    @property
    def state(self) -> Any:
        """The app's state (the feeds in front of us read the platform from it)."""
        return self.app.state

    @staticmethod
    async def _endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await scope["route"].app(scope, receive, send)


def _prefix(path: str) -> str:
    return "/".join(path.split("/", 3)[:3])


def _may_match(route: BaseRoute, prefix: str) -> bool:
    """Whether ``route`` could match a path whose first two segments are ``prefix``."""
    paths = _paths(route)
    return paths is None or any(_may_share(path, prefix) for path in paths)


def _may_share(template: str, prefix: str) -> bool:
    """Whether a path of ``template`` could begin with ``prefix``: no literal
    segment of its own differs before its first parameter (which may stand
    for anything, a ``:path`` one even for several segments)."""
    for ours, theirs in zip(template.split("/"), prefix.split("/"), strict=False):
        if "{" in ours:
            return True
        if ours != theirs:
            return False
    return True


def _paths(route: BaseRoute) -> list[str] | None:
    """The path templates a route serves (a router included in the app: its
    routes', under its prefix), or None when it cannot say (a kind of route
    or router this does not know)."""
    if isinstance(route, Route | WebSocketRoute):
        return [route.path]
    if isinstance(route, Mount):
        return [route.path + "/{path:path}"]  # what it serves is under its path
    # FastAPI's included router (fastapi.routing._IncludedRouter): its router
    # and the prefix it was included with.
    router = getattr(route, "original_router", None)
    included = getattr(getattr(route, "include_context", None), "prefix", None)
    if not isinstance(router, APIRouter) or not isinstance(included, str):
        return None
    if getattr(router, "_low_priority_routes", None):
        return None  # tried after the others, in ways not followed here
    paths: list[str] = []
    for child in router.routes:
        served = _paths(child)
        if served is None:
            return None
        paths += [included + path for path in served]
    return paths


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
        logs.REQUEST_ID.set(_request_id(scope["headers"]))
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
            method = scope["method"]
            counted = _COUNTED.get((method, path, status))
            if counted is None:
                counted = _COUNTED[method, path, status] = metrics.HTTP_REQUESTS.labels(
                    method, path, str(status)
                )
            timed = _TIMED.get((method, path))
            if timed is None:
                timed = _TIMED[method, path] = metrics.HTTP_SECONDS.labels(method, path)
            counted.inc()
            timed.observe(time.perf_counter() - started)


# The request metrics' children, by their labels: prometheus_client's
# ``labels()`` checks and locks on every call, a few µs a request. As many
# as the metrics themselves hold (a route template's methods and statuses).
_COUNTED: dict[tuple[str, str, int], Any] = {}
_TIMED: dict[tuple[str, str], Any] = {}


def _request_id(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's ``X-Request-Id`` (the last one given), or a new one: 16
    hex digits that join a request's log lines, ours and the services'. Not a
    secret, so not from the OS's generator (a system call a request)."""
    given = b""
    for name, value in headers:
        if name == b"x-request-id":
            given = value
    return given.decode() or f"{random.getrandbits(64):016x}"
