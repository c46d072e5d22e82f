"""Parity of the gateway's two faces (issue 14): every HTTP route and both
WebSocket feeds have their call in rodada.platform.v1.PlatformService, kept
here as an explicit table; and the two faces refuse alike — the same reason,
and the gRPC status that services/kit/errors.py's HTTP_STATUS maps to the
HTTP status — down to a request whose bytes do not decode."""

from __future__ import annotations

import asyncio
import json
import re
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
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc, social_pb2
from rodada.yatzy.v1 import yatzy_pb2
from starlette.routing import Mount, WebSocketRoute

from gateway.app import create_app
from gateway.settings import GatewaySettings
from services.kit.errors import HTTP_STATUS
from tests.integration.grpc_client import bearer, error_info, pack, raw_stream, raw_unary, refusal
from tests.integration.http_client import Player, register, seated_table
from tests.integration.test_competitions import COMPETITION_ROUTES
from tools.stack import Stack

SERVICE = platform_pb2.DESCRIPTOR.services_by_name["PlatformService"]

# Every operation of the HTTP API → its call on the platform's gRPC face.
# ("WS", path) are the WebSocket feeds. A new route fails the test until it
# is added here with its RPC (and the RPC exists).
ROUTES: dict[tuple[str, str], str] = {
    ("POST", "/v1/auth/register"): "SignUp",
    ("POST", "/v1/auth/login"): "LogIn",
    ("POST", "/v1/auth/guest"): "LogInAsGuest",
    ("POST", "/v1/auth/refresh"): "Refresh",
    ("GET", "/v1/me"): "GetMe",
    ("GET", "/v1/games"): "ListGames",
    ("POST", "/v1/tables"): "CreateTable",
    ("GET", "/v1/tables"): "ListOpenTables",
    ("GET", "/v1/tables/{table_id}"): "GetTable",
    ("POST", "/v1/tables/join"): "JoinTable",
    ("POST", "/v1/tables/{table_id}/sit"): "SitAtTable",
    ("POST", "/v1/tables/{table_id}/invites"): "CreateInvite",
    ("DELETE", "/v1/tables/{table_id}/invites/{code}"): "RevokeInvite",
    ("PUT", "/v1/tables/{table_id}/seats"): "ArrangeSeats",
    ("POST", "/v1/tables/{table_id}/start"): "StartTable",
    ("POST", "/v1/tables/{table_id}/leave"): "LeaveTable",
    ("GET", "/v1/tables/{table_id}/view"): "GetView",
    ("POST", "/v1/tables/{table_id}/actions"): "Act",
    ("POST", "/v1/tables/{table_id}/ask"): "Ask",
    ("GET", "/v1/tables/{table_id}/presence"): "GetPresence",
    ("WS", "/v1/tables/{table_id}/events"): "FollowTable",
    # Over HTTP a ticket is made, then followed on its WebSocket; FindMatch
    # and JoinParty do both in one stream.
    ("POST", "/v1/matchmaking/tickets"): "FindMatch",
    ("POST", "/v1/matchmaking/parties/join"): "JoinParty",
    ("GET", "/v1/matchmaking/tickets/{ticket_id}"): "GetTicket",
    ("DELETE", "/v1/matchmaking/tickets/{ticket_id}"): "CancelTicket",
    ("WS", "/v1/matchmaking/tickets/{ticket_id}/events"): "FollowTicket",
    ("GET", "/v1/leaderboards/{game}/{mode}"): "GetLeaderboard",
    ("GET", "/v1/users/{user_id}/ratings"): "ListRatings",
    ("GET", "/v1/users/{user_id}/ratings/{game}/{mode}/history"): "GetRatingHistory",
    ("GET", "/v1/users/{user_id}/matches"): "ListMatchHistory",
}

# Friends and chat (issue 18) → their call on rodada.platform.v1.SocialService,
# served on the same gRPC face.
SOCIAL = social_pb2.DESCRIPTOR.services_by_name["SocialService"]
SOCIAL_ROUTES: dict[tuple[str, str], str] = {
    ("GET", "/v1/social/friends"): "ListFriends",
    ("POST", "/v1/social/friends/requests"): "RequestFriend",
    ("POST", "/v1/social/friends/{user_id}/accept"): "AcceptFriend",
    ("POST", "/v1/social/friends/{user_id}/decline"): "DeclineFriend",
    ("DELETE", "/v1/social/friends/{user_id}"): "RemoveFriend",
    ("PUT", "/v1/social/blocks/{user_id}"): "BlockUser",
    ("DELETE", "/v1/social/blocks/{user_id}"): "UnblockUser",
    ("POST", "/v1/social/friends/{user_id}/invite"): "InviteFriend",
    ("POST", "/v1/social/messages/{user_id}"): "SendMessage",
    ("GET", "/v1/social/messages/{user_id}"): "ListMessages",
    ("POST", "/v1/tables/{table_id}/chat"): "SendTableMessage",
    ("GET", "/v1/tables/{table_id}/chat"): "ListTableMessages",
    ("POST", "/v1/social/reports"): "ReportMessage",
    ("WS", "/v1/social/events"): "FollowSocial",
}

# Routes that are not the API, and why they need no RPC.
_DOCS = "API documentation; the gRPC face has server reflection"
NOT_API: dict[tuple[str, str], str] = {
    ("GET", "/livez"): "liveness probe; the gRPC face serves grpc.health.v1.Health",
    ("GET", "/healthz"): "readiness probe; the gRPC face serves grpc.health.v1.Health",
    ("GET", "/metrics"): "the process's Prometheus metrics, both faces' included",
    ("GET", "/openapi.json"): _DOCS,
    ("GET", "/docs"): _DOCS,
    ("GET", "/docs/oauth2-redirect"): _DOCS,
    ("GET", "/redoc"): _DOCS,
    ("GET", "/v1/feeds/asyncapi.json"): "the WebSocket feeds' AsyncAPI document; gRPC has reflection",
    ("GET", "/rules/"): "the players' rules as web pages, for the web client",
    ("GET", "/rules/{name}"): "the players' rules as web pages, for the web client",
}


def app_routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route of the app, ("WS", path) for WebSockets."""
    try:  # FastAPI ≥ 0.16x keeps included routers as branches: flatten them.
        from fastapi.routing import iter_route_contexts

        pairs = [(context.original_route, context.path) for context in iter_route_contexts(app.routes)]
    except ImportError:
        pairs = [(route, getattr(route, "path", None)) for route in app.routes]
    found = set()
    for route, path in pairs:
        if isinstance(route, Mount) and path == "":
            path = "/"  # the web client's site, mounted at the root
        assert path, route
        if isinstance(route, WebSocketRoute):
            found.add(("WS", path))
        else:
            # (A Mount, of the docs' static assets, has no methods.)
            found |= {(method, path) for method in getattr(route, "methods", None) or () if method != "HEAD"}
    return found


def front_websockets() -> set[tuple[str, str]]:
    """WebSockets served in front of the FastAPI app (gateway/sockets.py:
    the table feed, as plain ASGI), as route templates."""
    try:
        from gateway.sockets import TABLE_FEED
    except ImportError:  # served by a FastAPI route then
        return set()
    path = re.sub(r"\([^)]*\)", "{table_id}", TABLE_FEED.pattern.strip("^$"))
    assert TABLE_FEED.match(path.replace("{table_id}", "T4ble_id-1")), path
    return {("WS", path)}


def test_every_route_has_its_rpc_in_the_platform_service() -> None:
    app = create_app(GatewaySettings())  # built, never started: no Redis, no games needed
    served = app_routes(app) | front_websockets()
    api = {route for route in served if route not in NOT_API and route not in COMPETITION_ROUTES}
    assert not ROUTES.keys() & SOCIAL_ROUTES.keys()
    missing = sorted(api - ROUTES.keys() - SOCIAL_ROUTES.keys())
    assert not missing, f"routes without a gRPC counterpart in the table: {missing}"
    stale = sorted((ROUTES.keys() | SOCIAL_ROUTES.keys()) - api)
    assert not stale, f"the table names routes the gateway does not serve: {stale}"
    assert {
        ("WS", "/v1/tables/{table_id}/events"),
        ("WS", "/v1/matchmaking/tickets/{ticket_id}/events"),
        ("WS", "/v1/social/events"),
    } <= api
    for service, routes in ((SERVICE, ROUTES), (SOCIAL, SOCIAL_ROUTES)):
        methods = service.methods_by_name
        unknown = sorted(set(routes.values()) - set(methods))
        assert not unknown, f"not in {service.full_name}: {unknown}"
        # And the other way: every call of the service is some route's.
        assert set(routes.values()) == set(methods), sorted(set(methods) - set(routes.values()))
        # A feed is a stream on both faces.
        for (method, _), rpc in routes.items():
            if method == "WS":
                assert methods[rpc].server_streaming, rpc


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


async def test_the_running_gateway_serves_what_the_table_lists(
    http: httpx.AsyncClient, channel: grpc.aio.Channel
) -> None:
    """The running replica's OpenAPI document has no operation the table
    lacks, and its gRPC face answers health checks (for /livez, /healthz)."""
    schema = (await http.get("/openapi.json")).json()
    operations = {
        # The WebSocket feeds are documented as the GET of their upgrade.
        ("WS" if "feeds" in operation.get("tags", ()) else method.upper(), path)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "delete", "patch")
    }
    listed = ROUTES.keys() | SOCIAL_ROUTES.keys()
    assert {route for route in listed if route[0] == "WS"} <= operations
    others = NOT_API.keys() | COMPETITION_ROUTES.keys()
    assert operations - others <= listed, sorted(operations - others - listed)
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", SERVICE.full_name):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
