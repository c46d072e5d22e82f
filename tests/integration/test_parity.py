"""Parity of the gateway's two faces, by construction (issue 21): every RPC
of the public services that is not a stream has its HTTP binding in the
protos, the HTTP API serves exactly those bindings (and what is not an RPC:
probes, documents, the site), and every stream is a WebSocket feed. Then
the two faces refuse alike — the same reason, and the gRPC status that
services/core/errors.py's HTTP_STATUS maps to the HTTP status — down to a
request whose bytes do not decode, and strict input: a float for an integer
or an enum, an unknown field or enum value, a number out of its field's
range, an Any that is not the game's message."""

from __future__ import annotations

import asyncio
import json
import re
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import grpc
import httpx
import pytest
import websockets
from fastapi import FastAPI
from google.api import annotations_pb2 as google_api
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2
from starlette.routing import Mount, Route

from gateway.api.grpc import SERVICES
from gateway.api.http import bindings
from gateway.app import create_app
from gateway.settings import GatewaySettings
from gateway.sockets import FEEDS
from services.core.errors import HTTP_STATUS
from tests.integration.grpc_client import bearer, error_info, pack, raw_stream, raw_unary, refusal
from tests.integration.http_client import Player, register, seated_table
from tools.stack import Stack

SERVICE = platform_pb2.DESCRIPTOR.services_by_name["PlatformService"]

# Routes that are not the API, and why they need no RPC.
_DOCS = "API documentation; the gRPC face has server reflection"
NOT_API: dict[tuple[str, str], str] = {
    ("GET", "/livez"): "liveness probe; the gRPC face serves grpc.health.v1.Health",
    ("GET", "/healthz"): "readiness probe; the gRPC face serves grpc.health.v1.Health",
    ("GET", "/openapi.json"): _DOCS,
    ("GET", "/docs"): _DOCS,
    ("GET", "/redoc"): _DOCS,
    ("GET", "/docs-assets/redoc.offline.js"): "ReDoc's script, served so /redoc needs no CDN",
    ("GET", "/v1/feeds/asyncapi.json"): "the WebSocket feeds' AsyncAPI document; gRPC has reflection",
    ("GET", "/rules/"): "the players' rules as web pages, for the web client",
    ("GET", "/rules/{name}"): "the players' rules as web pages, for the web client",
    ("GET", "/rules/{lang}/"): "the players' rules in one language (en, pt-BR)",
    ("GET", "/rules/{lang}/{name}"): "the players' rules in one language (en, pt-BR)",
    ("GET", "/favicon.svg"): "the site's icon",
    ("GET", "/favicon.ico"): "the site's icon, where browsers look first",
}
# Each WebSocket feed and the stream it is on the gRPC face (FindMatch and
# JoinParty are CreateTicket or JoinTicket, then FollowTicket).
FEED_STREAMS = {
    "/v1/tables/{id}/events": "PlatformService.FollowTable",
    "/v1/matchmaking/tickets/{id}/events": "PlatformService.FollowTicket",
    "/v1/social/events": "SocialService.FollowSocial",
    "/v1/tournaments/{id}/events": "CompetitionService.FollowTournament",
}


def app_routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every HTTP route of the app."""
    from fastapi.routing import iter_route_contexts  # included routers are branches: flatten them

    found = set()
    for context in iter_route_contexts(app.routes):
        route, path = context.original_route, context.path
        if isinstance(route, Mount):
            continue  # the docs' static assets, the web client's site
        assert isinstance(route, Route), route  # no WebSocket here: the feeds are in front
        found |= {(method, path) for method in route.methods or () if method != "HEAD"}
    return found


def test_every_rpc_is_bound_or_a_stream() -> None:
    """The rule that keeps the faces equal: an RPC of a public service has an
    HTTP binding exactly when it is not a stream."""
    unbound, bound_streams = [], []
    for service, _ in SERVICES:
        for method in service.methods:
            bound = method.GetOptions().HasExtension(google_api.http)
            if method.server_streaming and bound:
                bound_streams.append(method.full_name)
            if not method.server_streaming and not bound:
                unbound.append(method.full_name)
    assert not unbound, f"RPCs without an HTTP binding: {unbound}"
    assert not bound_streams, f"streams are feeds, not HTTP operations: {bound_streams}"
    assert len(bindings()) >= 50


def test_each_binding_names_what_its_messages_have() -> None:
    for binding in bindings():
        name = binding.method.full_name
        for parameter in binding.path_fields:
            field = binding.request.fields_by_name.get(parameter)
            assert field is not None and field.type == field.TYPE_STRING, (name, parameter)
        assert binding.body in ("", "*"), name
        assert (binding.verb in ("GET", "DELETE")) == (binding.body == ""), name
        if binding.response_body:
            assert binding.response_body in binding.method.output_type.fields_by_name, name
        if binding.created:
            assert binding.verb == "POST" and binding.status == 201, name
    routes = [(b.verb, b.path) for b in bindings()]
    assert len(routes) == len(set(routes)), "two RPCs on one route"


def test_the_app_serves_the_bindings_and_only_what_is_not_an_rpc() -> None:
    app = create_app(GatewaySettings())  # built, never started: no Redis, no games needed
    served = app_routes(app)
    bound = {(b.verb, b.path) for b in bindings()}
    assert served - NOT_API.keys() == bound
    assert NOT_API.keys() <= served, sorted(NOT_API.keys() - served)
    # Every feed is one of the services' streams; every stream but FindMatch
    # and JoinParty (a ticket made, then followed) is a feed.
    feeds = {
        re.sub(r"\([^)]+\)", "{id}", pattern.pattern.strip("^$").replace("()", "")) for pattern, _ in FEEDS
    }
    assert feeds == FEED_STREAMS.keys(), feeds
    streams = {
        f"{service.name}.{method.name}"
        for service, _ in SERVICES
        for method in service.methods
        if method.server_streaming
    }
    assert streams - set(FEED_STREAMS.values()) == {"PlatformService.FindMatch", "PlatformService.JoinParty"}


# -- the two faces refuse alike ------------------------------------------------------

LOGIN_WINDOW = 60  # seconds; LOGIN_LIMIT's fixed windows


@pytest.fixture(scope="module")
def faces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of its own, with a log-in limit to run into."""
    with Stack(
        tmp_path_factory.mktemp("parity"), games=["yatzy"], env={"LOGIN_LIMIT": f"3/{LOGIN_WINDOW}"}
    ) as stack:
        stack.gateway()
        yield stack


@pytest.fixture
async def http(faces: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=faces.gateway(), timeout=15) as client:
        yield client


@pytest.fixture
async def channel(faces: Stack) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(faces.platform_grpc()) as channel:
        yield channel


@dataclass
class Case:
    """One refusal, asked of both faces."""

    name: str
    reason: str
    status: int  # HTTP
    code: grpc.StatusCode
    http: Callable[[], Awaitable[httpx.Response]]
    grpc: Callable[[], Awaitable[Any]]


async def grpc_refused(call: Callable[[], Awaitable[Any]]) -> grpc.aio.AioRpcError:
    try:
        reply = await call()
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError(f"accepted: {reply!r}")


async def drain(stream: Any) -> None:
    async for _ in stream:
        pass


async def follow_table_to_the_end(
    api: platform_pb2_grpc.PlatformServiceStub, token: str, table_id: str
) -> None:
    await drain(api.FollowTable(platform_pb2.FollowTableRequest(table_id=table_id), metadata=bearer(token)))


async def ws_refusal(base_url: str, path: str, hello: dict[str, Any]) -> tuple[int, str]:
    """A WebSocket feed's refusal: (close code - 4000, error code)."""
    async with websockets.connect(base_url.replace("http", "ws", 1) + path) as ws:
        await ws.send(json.dumps(hello))
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        await asyncio.wait_for(ws.wait_closed(), 10)
        assert ws.close_code is not None and ws.close_code >= 4000, ws.close_code
        return ws.close_code - 4000, message["error"]["code"]


async def test_the_two_faces_refuse_alike(
    http: httpx.AsyncClient, channel: grpc.aio.Channel, faces: Stack
) -> None:
    api = platform_pb2_grpc.PlatformServiceStub(channel)
    ana, bia, eve = [await register(http, name) for name in ("ana", "bia", "eve")]
    table_id, _ = await seated_table([ana, bia], "yatzy")
    lobby = await ana.create_table("yatzy", 2)
    await bia.join(lobby["invite_code"])
    before = await ana.view(table_id)
    version = before["version"]
    roll: dict[str, Any] = {"roll": {}}
    packed_roll = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))

    def post(path: str, body: Any, player: Player | None = None) -> Callable[[], Awaitable[httpx.Response]]:
        return lambda: http.post(path, json=body, headers=player.headers if player else {})

    def get(path: str, player: Player | None = None) -> Callable[[], Awaitable[httpx.Response]]:
        return lambda: http.get(path, headers=player.headers if player else {})

    def act(player: Player | None, expected_version: int, action: Any) -> Callable[[], Awaitable[Any]]:
        request = platform_pb2.ActRequest(table_id=table_id, expected_version=expected_version, action=action)
        return lambda: api.Act(request, metadata=bearer(player.token) if player else ())

    actions = f"/v1/tables/{table_id}/actions"
    cases = [
        Case(
            "act without a token",
            "unauthenticated",
            401,
            grpc.StatusCode.UNAUTHENTICATED,
            post(actions, {"expected_version": version, "action": roll}),
            act(None, version, packed_roll),
        ),
        Case(
            "a forged token",
            "unauthenticated",
            401,
            grpc.StatusCode.UNAUTHENTICATED,
            lambda: http.get("/v1/me", headers={"authorization": f"Bearer {ana.token}x"}),
            lambda: api.GetMe(platform_pb2.GetMeRequest(), metadata=bearer(ana.token + "x")),
        ),
        Case(
            "a stale version",
            "stale_version",
            409,
            grpc.StatusCode.ABORTED,
            post(actions, {"expected_version": version + 7, "action": roll}, ana),
            act(ana, version + 7, packed_roll),
        ),
        Case(
            "out of turn",
            "not_your_turn",
            409,
            grpc.StatusCode.FAILED_PRECONDITION,
            post(actions, {"expected_version": version, "action": roll}, bia),
            act(bia, version, packed_roll),
        ),
        Case(
            "not at the table",
            "not_seated",
            403,
            grpc.StatusCode.PERMISSION_DENIED,
            post(actions, {"expected_version": version, "action": roll}, eve),
            act(eve, version, packed_roll),
        ),
        Case(
            "an action the game does not have",
            "malformed_action",
            422,
            grpc.StatusCode.INVALID_ARGUMENT,
            post(actions, {"expected_version": version, "action": {"jump": {}}}, ana),
            act(ana, version, pack(yatzy_pb2.View())),  # not an Action at all
        ),
        Case(
            "a rule of the game",
            "roll_first",
            409,
            grpc.StatusCode.FAILED_PRECONDITION,
            post(actions, {"expected_version": version, "action": {"score": {"box": "CHANCE"}}}, ana),
            act(ana, version, pack(yatzy_pb2.Action(score=yatzy_pb2.Score(box=yatzy_pb2.CHANCE)))),
        ),
        Case(
            "no such table",
            "table_not_found",
            404,
            grpc.StatusCode.NOT_FOUND,
            get("/v1/tables/no-such-table", ana),
            lambda: api.GetTable(
                platform_pb2.GetTableRequest(table_id="no-such-table"), metadata=bearer(ana.token)
            ),
        ),
        Case(
            "a guest starts the host's table",
            "not_host",
            403,
            grpc.StatusCode.PERMISSION_DENIED,
            post(f"/v1/tables/{lobby['id']}/start", None, bia),
            lambda: api.StartTable(
                platform_pb2.StartTableRequest(table_id=lobby["id"]), metadata=bearer(bia.token)
            ),
        ),
        Case(
            "a full table",
            "table_full",
            409,
            grpc.StatusCode.FAILED_PRECONDITION,
            post("/v1/tables/join", {"invite_code": lobby["invite_code"]}, eve),
            lambda: api.JoinTable(
                platform_pb2.JoinTableRequest(invite_code=lobby["invite_code"]), metadata=bearer(eve.token)
            ),
        ),
        Case(
            "no such invite",
            "invite_not_found",
            404,
            grpc.StatusCode.NOT_FOUND,
            post("/v1/tables/join", {"invite_code": "no-such-invite"}, eve),
            lambda: api.JoinTable(
                platform_pb2.JoinTableRequest(invite_code="no-such-invite"), metadata=bearer(eve.token)
            ),
        ),
        Case(
            "no such game",
            "unknown_game",
            404,
            grpc.StatusCode.NOT_FOUND,
            post("/v1/tables", {"game": "chess", "seats": 2, "options": {}, "cpu_seats": []}, eve),
            lambda: api.CreateTable(
                platform_pb2.CreateTableRequest(game="chess", seats=2), metadata=bearer(eve.token)
            ),
        ),
        Case(
            "a seat count the game does not have",
            "invalid_seats",
            422,
            grpc.StatusCode.INVALID_ARGUMENT,
            post("/v1/tables", {"game": "yatzy", "seats": 99, "options": {}, "cpu_seats": []}, eve),
            lambda: api.CreateTable(
                platform_pb2.CreateTableRequest(game="yatzy", seats=99), metadata=bearer(eve.token)
            ),
        ),
        Case(
            "a username taken",
            "username_taken",
            409,
            grpc.StatusCode.ALREADY_EXISTS,
            post("/v1/auth/register", {"username": ana.name, "password": "correct horse"}),
            lambda: api.SignUp(platform_pb2.SignUpRequest(username=ana.name, password="correct horse")),
        ),
        Case(
            "a wrong password",
            "bad_credentials",
            401,
            grpc.StatusCode.UNAUTHENTICATED,
            post("/v1/auth/login", {"username": eve.name, "password": "wrong password"}),
            lambda: api.LogIn(platform_pb2.LogInRequest(username=eve.name, password="wrong password")),
        ),
        Case(
            "a used refresh token",
            "refresh_token_used",
            401,
            grpc.StatusCode.UNAUTHENTICATED,
            post("/v1/auth/refresh", {"refresh_token": bia.refresh_token}),
            lambda: api.Refresh(platform_pb2.RefreshRequest(refresh_token=bia.refresh_token)),
        ),
        Case(
            "no such ticket",
            "ticket_not_found",
            404,
            grpc.StatusCode.NOT_FOUND,
            get("/v1/matchmaking/tickets/no-such-ticket", ana),
            lambda: api.GetTicket(
                platform_pb2.GetTicketRequest(ticket_id="no-such-ticket"), metadata=bearer(ana.token)
            ),
        ),
    ]
    await bia.call("POST", "/v1/auth/refresh", {"refresh_token": bia.refresh_token})  # used once now
    mismatches = []
    for case in cases:
        response = await case.http()
        body = response.json() if response.content else {}
        http_side = (response.status_code, body.get("error", {}).get("code"))
        grpc_side = refusal(await grpc_refused(case.grpc))
        if (
            http_side != (case.status, case.reason)
            or grpc_side != (case.code, case.reason)
            or HTTP_STATUS[case.code] != case.status
        ):
            mismatches.append(f"{case.name}: HTTP {http_side}, gRPC {grpc_side}")
    assert not mismatches, "\n".join(mismatches)

    # The feeds refuse alike too: the WebSocket's close code is 4000 + the
    # HTTP status of the gRPC stream's code.
    for token, feed_table, reason, code in [
        ("not-a-token", table_id, "unauthenticated", grpc.StatusCode.UNAUTHENTICATED),
        (ana.token, "no-such-table", "table_not_found", grpc.StatusCode.NOT_FOUND),
    ]:
        closed = await ws_refusal(
            faces.gateway(), f"/v1/tables/{feed_table}/events", {"token": token, "after_event_id": 0}
        )
        stream = await grpc_refused(partial(follow_table_to_the_end, api, token, feed_table))
        assert closed == (HTTP_STATUS[code], reason) and refusal(stream) == (code, reason), (closed, stream)
    closed = await ws_refusal(
        faces.gateway(), "/v1/matchmaking/tickets/no-such-ticket/events", {"token": ana.token}
    )
    request = platform_pb2.FollowTicketRequest(ticket_id="no-such-ticket")
    stream = await grpc_refused(lambda: drain(api.FollowTicket(request, metadata=bearer(ana.token))))
    assert closed == (404, "ticket_not_found") and refusal(stream) == (
        grpc.StatusCode.NOT_FOUND,
        "ticket_not_found",
    )

    # Refused, all of it: the match is as it was.
    assert await ana.view(table_id) == before


async def test_rate_limits_refuse_alike(http: httpx.AsyncClient, channel: grpc.aio.Channel) -> None:
    api = platform_pb2_grpc.PlatformServiceStub(channel)
    ana = await register(http, "ana")
    left = LOGIN_WINDOW - time.time() % LOGIN_WINDOW
    if left < 10:  # the whole exchange within one window
        await asyncio.sleep(left + 0.1)
    wrong = {"username": ana.name, "password": "wrong password"}
    assert [(await http.post("/v1/auth/login", json=wrong)).status_code for _ in range(3)] == [401] * 3
    limited = await http.post("/v1/auth/login", json=wrong)
    error = await grpc_refused(lambda: api.LogIn(platform_pb2.LogInRequest(**wrong)))
    assert (limited.status_code, limited.json()["error"]["code"]) == (429, "rate_limited")
    assert refusal(error) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited")
    assert HTTP_STATUS[grpc.StatusCode.RESOURCE_EXHAUSTED] == 429
    # Both tell when to come back: the same moment, in whole seconds over HTTP.
    seconds = float(error_info(error).metadata["retry_after_seconds"])
    assert 0 < seconds <= int(limited.headers["retry-after"]) <= seconds + 1.5


# -- a request that does not decode --------------------------------------------------

# Not a message of any type: a length-delimited field 1 that claims 5 bytes
# and has 2, and a varint that never ends.
UNDECODABLE = (b"\x0a\x05ab", b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")


async def test_an_undecodable_request_is_invalid_argument_on_every_face(
    http: httpx.AsyncClient, channel: grpc.aio.Channel, faces: Stack
) -> None:
    ana = await register(http, "ana")
    table_id, _ = await seated_table([ana], "yatzy")
    before = await ana.view(table_id)
    platform = f"/{SERVICE.full_name}"
    async with grpc.aio.insecure_channel(faces.service("yatzy")) as game_channel:
        for body in UNDECODABLE:
            errors = {
                "platform Act": await raw_unary(channel, f"{platform}/Act", body, bearer(ana.token)),
                "platform GetTable": await raw_unary(
                    channel, f"{platform}/GetTable", body, bearer(ana.token)
                ),
                "platform LogIn (no token needed)": await raw_unary(channel, f"{platform}/LogIn", body),
                "platform FollowTable": await raw_stream(
                    channel, f"{platform}/FollowTable", body, bearer(ana.token)
                ),
                "yatzy Act": await raw_unary(
                    game_channel, "/rodada.common.v1.MatchService/Act", body, bearer(ana.token)
                ),
                "yatzy Watch": await raw_stream(
                    game_channel, "/rodada.common.v1.MatchService/Watch", body, bearer(ana.token)
                ),
            }
            refused = {name: refusal(error) for name, error in errors.items()}
            assert all(
                r == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_request") for r in refused.values()
            ), refused
    # Over HTTP, a body that is not JSON: the same reason, 422.
    response = await http.post(
        f"/v1/tables/{table_id}/actions",
        content=b"\x0a\x05ab",
        headers={**ana.headers, "content-type": "application/json"},
    )
    assert (response.status_code, response.json()["error"]["code"]) == (422, "invalid_request")
    assert HTTP_STATUS[grpc.StatusCode.INVALID_ARGUMENT] == 422
    assert await ana.view(table_id) == before


async def test_the_running_gateway_documents_what_it_serves(
    http: httpx.AsyncClient, channel: grpc.aio.Channel
) -> None:
    """The running replica's OpenAPI document has an operation for each
    binding and none else but the probes (no feed as an HTTP operation: they
    are in the AsyncAPI document, which it links to), and its gRPC face
    answers health checks (for /livez, /healthz)."""
    schema = (await http.get("/openapi.json")).json()
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete", "patch")
    }
    assert operations - NOT_API.keys() == {(b.verb, b.path) for b in bindings()}
    assert schema["externalDocs"]["url"] == "/v1/feeds/asyncapi.json"
    asyncapi = (await http.get("/v1/feeds/asyncapi.json")).json()
    addresses = {channel["address"] for channel in asyncapi["channels"].values()}
    assert {re.sub(r"\{\w+\}", "{id}", a) for a in addresses} == FEED_STREAMS.keys()
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", *(s.full_name for s, _ in SERVICES)):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


# -- strict input, the same on both faces ----------------------------------------------

SOCIAL = "/rodada.platform.v1.SocialService"


def varint(number: int) -> bytes:
    out = b""
    while True:
        low, number = number & 0x7F, number >> 7
        out += bytes([low | (0x80 if number else 0)])
        if not number:
            return out


async def test_strict_input_is_refused_alike_and_changes_nothing(
    http: httpx.AsyncClient, channel: grpc.aio.Channel, faces: Stack
) -> None:
    """A float for an integer or an enum, an unknown field, an enum value the
    enum does not have, a number out of its field's range: 422
    ``invalid_request`` over HTTP on a connection that stays open,
    INVALID_ARGUMENT over gRPC; and nothing changes."""
    ana = await register(http, "strict")
    table_id, _ = await seated_table([ana], "yatzy")
    before = await ana.view(table_id)
    games = (await http.get("/v1/games")).json()["games"]
    mode = next(g for g in games if g["name"] == "yatzy")["modes"][0]["name"]
    board = f"/v1/leaderboards/yatzy/{mode}"
    actions = f"/v1/tables/{table_id}/actions"
    version = before["version"]
    platform, report = f"/{SERVICE.full_name}", f"{SOCIAL}/ReportMessage"
    leaderboard = platform_pb2.GetLeaderboardRequest(game="yatzy", mode=mode).SerializeToString()
    http_cases = {
        "a float for an enum": ("POST", "/v1/social/reports", {"channel": 1.5, "message_id": "1-0"}),
        "a bool for an enum": ("POST", "/v1/social/reports", {"channel": True, "message_id": "1-0"}),
        "an enum name the enum does not have": (
            "POST",
            "/v1/social/reports",
            {"channel": "CHAT_CHANNEL_LOUD", "message_id": "1-0"},
        ),
        "an enum number the enum does not have": ("POST", "/v1/social/reports", {"channel": 42}),
        "a float for an integer": ("GET", f"{board}?limit=2.5", None),
        "an int32 out of range": ("GET", f"{board}?offset=2147483648", None),
        "2^63 for an int32": ("GET", f"{board}?offset=9223372036854775808", None),
        "a uint32 out of range": ("POST", actions, {"expected_version": 2**32, "action": {"roll": {}}}),
        "a float for a version": (
            "POST",
            actions,
            {"expected_version": version + 0.5, "action": {"roll": {}}},
        ),
        "an unknown field": ("POST", actions, {"expected_version": version, "action": {"roll": {}}, "x": 1}),
        "an unknown query parameter": ("GET", f"{board}?page=2", None),
        "max_entrants out of int32": (
            "POST",
            "/v1/tournaments",
            {"name": "x", "game": "yatzy", "format": "TOURNAMENT_FORMAT_SWISS", "max_entrants": 2**31},
        ),
    }
    for name, (method, path, body) in http_cases.items():
        response = await http.request(method, path, json=body, headers=ana.headers)
        assert (response.status_code, response.json()["error"]["code"]) == (422, "invalid_request"), (
            name,
            response.text,
        )
        assert response.headers.get("connection") != "close", name
    # A float for the game's enum is the game's malformed action, never box 2.
    response = await http.post(
        actions, json={"expected_version": version, "action": {"score": {"box": 2.5}}}, headers=ana.headers
    )
    assert (response.status_code, response.json()["error"]["code"]) == (422, "malformed_action")

    auth = bearer(ana.token)
    grpc_cases = {
        # A float where an enum is: a 64-bit field where a varint belongs.
        "a float for an enum": (report, b"\x12\x031-0" + b"\x09" + struct.pack("<d", 1.5)),
        "an enum number the enum does not have": (
            report,
            bytes([0x08, 42]) + b"\x12\x031-0",
        ),
        "a float for an integer": (
            f"{platform}/GetLeaderboard",
            leaderboard + b"\x25" + struct.pack("<f", 2.5),
        ),
        "an unknown field": (f"{platform}/GetMe", varint(111 << 3) + b"\x01"),
        # 2^31 for the int32 offset reads as -2^31: a page that is not one.
        "an int32 out of range": (f"{platform}/GetLeaderboard", leaderboard + b"\x18" + varint(2**31)),
    }
    for name, (method, body) in grpc_cases.items():
        error = await raw_unary(channel, method, body, auth)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (name, refusal(error))
    assert await ana.view(table_id) == before


async def test_paging_means_one_thing_on_both_faces(
    http: httpx.AsyncClient, channel: grpc.aio.Channel
) -> None:
    """``limit=0`` is the server's default page (AIP-158) on both faces; a
    limit past the largest page is refused on both."""
    ana = await register(http, "pager")
    api = platform_pb2_grpc.PlatformServiceStub(channel)
    games = (await http.get("/v1/games")).json()["games"]
    mode = next(g for g in games if g["name"] == "yatzy")["modes"][0]["name"]
    for limit in (0, 100):
        over_http = await ana.call("GET", f"/v1/leaderboards/yatzy/{mode}?limit={limit}")
        over_grpc = await api.GetLeaderboard(
            platform_pb2.GetLeaderboardRequest(game="yatzy", mode=mode, limit=limit),
            metadata=bearer(ana.token),
        )
        assert over_http["game"] == over_grpc.game == "yatzy" and over_http["offset"] == over_grpc.offset == 0
    response = await http.get(f"/v1/leaderboards/yatzy/{mode}?limit=101", headers=ana.headers)
    error = await grpc_refused(
        lambda: api.GetLeaderboard(
            platform_pb2.GetLeaderboardRequest(game="yatzy", mode=mode, limit=101), metadata=bearer(ana.token)
        )
    )
    assert (response.status_code, response.json()["error"]["code"]) == (422, refusal(error)[1])
    assert refusal(error) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_page")
    bia = await register(http, "pagee")
    await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
    await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
    response = await http.get(f"/v1/social/messages/{bia.user_id}?limit=201", headers=ana.headers)
    assert (response.status_code, response.json()["error"]["code"]) == (422, "invalid_page")
    response = await http.get(f"/v1/users/{ana.user_id}/matches?limit=0", headers=ana.headers)
    assert response.status_code == 200 and response.json()["matches"] == []


async def test_an_any_that_is_not_the_games_message_is_invalid_argument(
    http: httpx.AsyncClient, channel: grpc.aio.Channel, faces: Stack
) -> None:
    """Act and Ask with an Any whose bytes do not parse as the game's message
    (a truncated varint) or that hold a field it does not know, on the
    platform's face and the game's own MatchService: INVALID_ARGUMENT with
    the game's reason, not INTERNAL; over HTTP an action that is not an
    object is the same refusal."""
    ana = await register(http, "anyone")
    table_id, _ = await seated_table([ana], "yatzy")
    before = await ana.view(table_id)
    truncated = b"\x0a\x02\x08\xff"  # roll { keep: a varint that never ends }
    action = pack(yatzy_pb2.Action())
    action.value = truncated
    question = pack(yatzy_pb2.Question())
    question.value = truncated
    api = platform_pb2_grpc.PlatformServiceStub(channel)
    auth = bearer(ana.token)
    from rodada.common.v1 import match_pb2, match_pb2_grpc

    async with grpc.aio.insecure_channel(faces.service("yatzy")) as game_channel:
        game = match_pb2_grpc.MatchServiceStub(game_channel)
        calls = {
            "platform Act": lambda: api.Act(
                platform_pb2.ActRequest(table_id=table_id, expected_version=before["version"], action=action),
                metadata=auth,
            ),
            "platform Ask": lambda: api.Ask(
                platform_pb2.AskRequest(table_id=table_id, question=question), metadata=auth
            ),
            "yatzy Act": lambda: game.Act(
                match_pb2.ActRequest(match_id=table_id, expected_version=before["version"], action=action),
                metadata=auth,
            ),
            "yatzy Ask": lambda: game.Ask(
                match_pb2.AskRequest(match_id=table_id, question=question), metadata=auth
            ),
        }
        # Then bytes that decode but hold a field the game does not know
        # (field 99): refused on the game's own service as on the platform's.
        unknown = b"\x98\x06\x01"
        for payload in (truncated, unknown):
            action.value = question.value = payload
            for name, call in calls.items():
                error = await grpc_refused(call)
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (name, payload, refusal(error))
                assert refusal(error)[1] in ("malformed_action", "invalid_question"), (name, refusal(error))
    response = await http.post(
        f"/v1/tables/{table_id}/actions",
        json={"expected_version": before["version"], "action": {"roll": "all"}},
        headers=ana.headers,
    )
    assert (response.status_code, response.json()["error"]["code"]) == (422, "malformed_action")
    assert await ana.view(table_id) == before
