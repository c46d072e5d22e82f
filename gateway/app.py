"""The HTTP + WebSocket API for web clients (FastAPI).

Auth: ``Authorization: Bearer <access token>`` from /v1/auth/*. The same token
is forwarded to the game services, which derive the caller's seat from it.
"""

import asyncio
import contextlib
import math
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import orjson
from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field
from rodada.common.v1 import match_pb2
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway import metrics, ws
from gateway.accounts import AccountError
from gateway.clocks import notices_channel, run_clocks
from gateway.deps import CallerDep, PlatformDep
from gateway.games import BadGameInput, GameClient, message_json
from gateway.grpc_api import start_server
from gateway.matchmaking import Matchmaking
from gateway.matchmaking_api import router as matchmaking_router
from gateway.platform import (
    RPC_TIMEOUT_SECONDS,
    ApiError,
    Caller,
    Platform,
    api_error,
    rpc,
)
from gateway.presence import REFRESH_SECONDS
from gateway.results import run_results
from gateway.settings import GatewaySettings, MatchmakingSettings
from gateway.standings_api import router as standings_router
from gateway.tables import TableError, public_table
from services.kit import logs
from services.kit.tasks import cancel_requested

# -- request bodies ------------------------------------------------------------


class Credentials(BaseModel):
    username: str = Field(description="3-24 characters: letters, digits, _ . -")
    password: str = Field(description="8-128 characters")


class RefreshBody(BaseModel):
    refresh_token: str


class GuestRequest(BaseModel):
    name: str | None = Field(default=None, description="display name; a generated one if omitted")


class CreateTable(BaseModel):
    game: str = Field(description="bozo, dudo, bozu_mekuri, domino or yatzy")
    seats: int = Field(description="number of seats, the host's included")
    options: dict[str, Any] = Field(default_factory=dict, description="the game's Options, proto JSON form")
    cpu_seats: list[int] = Field(
        default_factory=list, description="seats played by the computer (Bozu Mekuri)"
    )


class Sit(BaseModel):
    seat: int | None = Field(default=None, description="the seat wanted; null = any free seat")


class JoinTable(BaseModel):
    invite_code: str


class AskBody(BaseModel):
    question: dict[str, Any] = Field(description="the game's Question, proto JSON form")


class NewInvite(BaseModel):
    team: str | None = Field(
        default=None, description="a team's name for a team invite; null = any free seat"
    )


class Arrangement(BaseModel):
    seats: list[str | None] = Field(description="per seat, the id of a seated player or null for a free seat")


class ActBody(BaseModel):
    expected_version: int = Field(ge=0, description="the version of the view the action was decided on")
    action: dict[str, Any] = Field(
        description='the game\'s Action, proto JSON form, e.g. {"roll": {"keep": [0]}}'
    )


# -- the application -----------------------------------------------------------


def create_app(settings: GatewaySettings | None = None) -> FastAPI:
    settings = settings or GatewaySettings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.platform = Platform(settings)
        app.state.matchmaking = Matchmaking(app.state.platform, MatchmakingSettings.from_env())
        matcher = asyncio.create_task(app.state.matchmaking.run())
        clocks = asyncio.create_task(run_clocks(app.state.platform, settings.clock_cycle_seconds))
        results = asyncio.create_task(run_results(app.state.platform))
        keys = asyncio.create_task(app.state.platform.reload_keys())
        grpc_server = await start_server(
            app.state.platform, app.state.matchmaking, settings.host, settings.grpc_port
        )
        yield
        await grpc_server.stop(5)
        clocks.cancel()
        results.cancel()
        keys.cancel()
        matcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await matcher  # let it release the lease it holds
        await app.state.platform.close()

    app = FastAPI(
        title="Rodada gateway",
        version="1",
        summary="Accounts, tables and realtime feeds for Rodada's five games.",
        lifespan=lifespan,
    )

    app.include_router(standings_router)
    app.include_router(matchmaking_router)

    @app.exception_handler(ApiError)
    @app.exception_handler(AccountError)
    @app.exception_handler(TableError)
    async def refused(request: Request, exc: Any) -> JSONResponse:
        retry_after = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(max(1, math.ceil(retry_after)))} if retry_after is not None else None
        return JSONResponse(
            {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"error": {"code": "invalid_request", "message": problems}}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": {"code": "http_error", "message": str(exc.detail)}}, status_code=exc.status_code
        )

    app.add_middleware(Measure)

    # -- operations --

    @app.get("/livez", tags=["ops"])
    async def livez() -> dict[str, str]:
        """The process answers (no Redis check: for liveness probes)."""
        return {"status": "ok"}

    @app.get("/healthz", tags=["ops"])
    async def healthz(p: PlatformDep) -> dict[str, str]:
        await p.redis.ping()
        return {"status": "ok"}

    @app.get("/metrics", tags=["ops"], include_in_schema=False)
    async def prometheus() -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    # -- accounts --

    @app.post("/v1/auth/register", status_code=201, tags=["auth"])
    async def register(body: Credentials, request: Request, p: PlatformDep) -> dict[str, Any]:
        """Create an account and log in."""
        return await p.register(body.username, body.password, client_address(request))

    @app.post("/v1/auth/login", tags=["auth"])
    async def login(body: Credentials, request: Request, p: PlatformDep) -> dict[str, Any]:
        """Log in; attempts are limited per username and per client (429)."""
        return await p.login(body.username, body.password, client_address(request))

    @app.post("/v1/auth/guest", status_code=201, tags=["auth"])
    async def guest(request: Request, p: PlatformDep, body: GuestRequest | None = None) -> dict[str, Any]:
        """Play without signing up: a guest account and its tokens."""
        return await p.guest(body.name if body else None, client_address(request))

    @app.post("/v1/auth/refresh", tags=["auth"])
    async def refresh(body: RefreshBody, p: PlatformDep) -> dict[str, Any]:
        """A new access token (and refresh token) for a refresh token, which
        works only once."""
        return await p.refresh(body.refresh_token)

    @app.get("/v1/me", tags=["auth"])
    async def me(caller: CallerDep) -> dict[str, str]:
        who = caller.identity
        return {"id": who.user_id, "name": who.name, "role": who.role}

    # -- tables --

    @app.post("/v1/tables", status_code=201, tags=["tables"])
    async def create_table(body: CreateTable, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Open a table; the host takes seat 0 and receives the invite code."""
        return await p.create_table(caller.identity, body.game, body.seats, body.options, body.cpu_seats)

    @app.get("/v1/tables", tags=["tables"])
    async def list_open_tables(game: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """A game's open tables with a free seat (games without private tables: Dominó)."""
        p.game(game)
        return {"tables": await p.tables.open_tables(game)}

    @app.post("/v1/tables/{table_id}/sit", tags=["tables"])
    async def sit(table_id: str, body: Sit, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Sit at an open table, in the seat asked for or any free one; the
        player who takes the last seat starts the match."""
        table, snapshot = await p.sit(caller, table_id, body.seat)
        return {"table": table} | ({"match": message_json(snapshot)} if snapshot else {})

    @app.post("/v1/tables/join", tags=["tables"])
    async def join_table(body: JoinTable, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        return public_table(await p.tables.join(caller.identity, body.invite_code))

    @app.post("/v1/tables/{table_id}/invites", status_code=201, tags=["tables"])
    async def invite(table_id: str, body: NewInvite, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Host only: a new invite for any free seat, or (``team``) for a free
        seat of that team, valid while the team has one."""
        return await p.tables.invite(caller.identity, table_id, body.team)

    @app.delete("/v1/tables/{table_id}/invites/{code}", status_code=204, tags=["tables"])
    async def revoke_invite(table_id: str, code: str, caller: CallerDep, p: PlatformDep) -> Response:
        await p.tables.revoke(caller.identity, table_id, code)
        return Response(status_code=204)

    @app.put("/v1/tables/{table_id}/seats", tags=["tables"])
    async def arrange_seats(
        table_id: str, body: Arrangement, caller: CallerDep, p: PlatformDep
    ) -> dict[str, Any]:
        """Host only, before the start: place the seated players (into teams)."""
        return await p.tables.arrange(caller.identity, table_id, body.seats)

    @app.get("/v1/tables/{table_id}", tags=["tables"])
    async def get_table(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        table = await p.tables.get(table_id)
        return table if table["host"] == caller.identity.user_id else public_table(table)

    @app.post("/v1/tables/{table_id}/start", tags=["tables"])
    async def start_table(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """The host starts a full table: the match is created in the game service."""
        return message_json(await p.start(table_id, caller.identity, caller))

    @app.get("/v1/tables/{table_id}/view", tags=["play"])
    async def view_match(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """The match as the caller may see it (a spectator sees the public view)."""
        return message_json(await p.view(table_id, caller))

    @app.post("/v1/tables/{table_id}/actions", tags=["play"])
    async def act(table_id: str, body: ActBody, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Play one action against the version you saw; a stale version gets 409 stale_version."""
        game = await p.playing(table_id)
        try:
            action = game.pack("Action", body.action)
        except BadGameInput as exc:
            raise ApiError(422, "invalid_action", str(exc)) from None
        return message_json(await p.act(caller, table_id, body.expected_version, action))

    @app.get("/v1/tables/{table_id}/presence", tags=["play"])
    async def presence(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Which seated players have a live feed open on this match, on any replica."""
        table = await p.tables.get(table_id)
        users = [s["user_id"] for s in table["players"] if s and s.get("user_id")]
        return {"connected": await p.presence.connected(table_id, users)}

    @app.post("/v1/tables/{table_id}/ask", tags=["play"])
    async def ask(table_id: str, body: AskBody, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Ask the game a question that changes nothing (Dudo: the odds of a bid
        in assisted mode). Returns ``{version, answer}``."""
        game = await p.playing(table_id)
        try:
            question = game.pack("Question", body.question)
        except (BadGameInput, AttributeError):
            raise ApiError(422, "invalid_question", f"not a {game.name} question") from None
        request = match_pb2.AskRequest(match_id=table_id, question=question)
        reply = await rpc(game.stub.Ask(request, metadata=caller.metadata, timeout=RPC_TIMEOUT_SECONDS))
        return message_json(reply)

    @app.post("/v1/tables/{table_id}/leave", tags=["play"])
    async def leave(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
        """Before the start: free your seat. During the match: the game's leaving policy."""
        table, snapshot = await p.leave(caller, table_id)
        return {"match": message_json(snapshot)} if snapshot else {"table": table}

    # -- realtime --

    @app.websocket("/v1/tables/{table_id}/events")
    async def events(websocket: WebSocket, table_id: str) -> None:
        """The caller's events of a match, in order. After connecting, send
        ``{"token": "<access token>", "after_event_id": N}`` (N = last id you
        saw, 0 for all); each event then arrives as the JSON of a MatchEvent,
        and ``{"end": true}`` after the match's last one."""
        async with ws.connection(websocket):
            await feed(websocket, table_id, websocket.app.state.platform)

    async def feed(websocket: WebSocket, table_id: str, p: Platform) -> None:
        greeted = await ws.hello(websocket, p.verifier)
        if greeted is None:
            return
        caller, message = greeted
        after = message.get("after_event_id", 0)
        if not isinstance(after, int) or isinstance(after, bool) or after < 0:
            await websocket.send_json(
                {"error": {"code": "invalid_request", "message": "after_event_id: int >= 0"}}
            )
            await websocket.close(code=4422)
            return
        try:
            table = await p.tables.get(table_id)
            game = await p.playing(table_id)
        except (ApiError, TableError) as error:
            await websocket.send_json({"error": {"code": error.code, "message": error.message}})
            await websocket.close(code=4000 + error.status)
            return
        seated = any(s and s.get("user_id") == caller.identity.user_id for s in table["players"])
        # One outbox, three producers: the match's events (through the game's
        # Watch, so the audience rules are the game service's), the platform's
        # notices for this match, and the client going away.
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        connection = await p.presence.connect(table_id, caller.identity.user_id) if seated else None
        producers = [
            asyncio.create_task(_forward_events(game, table_id, after, caller, outbox)),
            asyncio.create_task(_forward_notices(p, table_id, outbox)),
        ]
        if connection:
            producers.append(
                asyncio.create_task(_keep_present(p, table_id, caller.identity.user_id, connection))
            )
        closed = asyncio.create_task(ws.wait_closed(websocket))
        try:
            while True:
                next_item = asyncio.create_task(outbox.get())
                await asyncio.wait({next_item, closed}, return_when=asyncio.FIRST_COMPLETED)
                if closed.done():
                    next_item.cancel()
                    return
                item = next_item.result()
                await websocket.send_json(item)
                if "end" in item or "error" in item:
                    await websocket.close(code=1000 if "end" in item else 4000 + item["error"]["status"])
                    return
        finally:
            for task in [*producers, closed]:
                task.cancel()
            if connection:
                await p.presence.disconnect(table_id, caller.identity.user_id, connection)

    return app


async def _forward_events(
    game: GameClient, match_id: str, after: int, caller: Caller, outbox: asyncio.Queue[dict[str, Any]]
) -> None:
    stream = game.stub.Watch(
        match_pb2.WatchRequest(match_id=match_id, after_event_id=after), metadata=caller.metadata
    )
    try:
        async for event in stream:
            await outbox.put(message_json(event))
        await outbox.put({"end": True})
    except grpc.aio.AioRpcError as error:
        refused = api_error(error)
        problem = {"code": refused.code, "message": refused.message, "status": refused.status}
        await outbox.put({"error": problem})
    finally:
        stream.cancel()


async def _forward_notices(p: Platform, match_id: str, outbox: asyncio.Queue[dict[str, Any]]) -> None:
    pubsub = p.redis.pubsub()
    await pubsub.subscribe(notices_channel(match_id))
    try:
        async for message in pubsub.listen():
            if message["type"] == "message":
                await outbox.put(orjson.loads(message["data"]))
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call]


async def _keep_present(p: Platform, match_id: str, user_id: str, connection: str) -> None:
    while not cancel_requested() and await p.presence.refresh(match_id, user_id, connection):
        await asyncio.sleep(REFRESH_SECONDS)


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


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"
