"""The OpenAPI document is true: a real reply of every operation — its
success, and a refusal — recorded from a running stack, and every error
status the document gives (401, 403, 404, 409, 422, 429, 503, 504) answered
for real at least once, each validated with a JSON Schema validator against
what ``/openapi.json`` documents for that operation and status (headers
too: ``Retry-After``). Game values included: views, actions, options and
events of the games, packed with their ``@type``."""

from __future__ import annotations

import re
import signal
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from redis.asyncio import Redis

from services.core import keys
from services.core.tokens import Identity
from tests.integration.http_client import ApiRefused, Player, guest, register
from tools.stack import Stack

ERROR_STATUSES = {"401", "403", "404", "409", "422", "429", "503", "504"}


class Recorder:
    """An httpx response hook: each reply of an operation the document has,
    checked against it and counted by (method, path template) and status."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.routes = [
            (re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", path) + "$"), path, method.upper(), operation)
            for path, item in document["paths"].items()
            for method, operation in item.items()
        ]
        self.seen: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.problems: list[str] = []

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
        # A literal path beats a template (/v1/tables/join before /v1/tables/{table_id}).
        found = [
            (template, op) for pattern, template, m, op in self.routes if m == method and pattern.match(path)
        ]
        found.sort(key=lambda pair: pair[0].count("{"))
        return found[0] if found else None

    async def __call__(self, response: httpx.Response) -> None:
        await response.aread()
        method, path = response.request.method, response.request.url.path
        found = self.operation(method, path)
        if found is None:
            return
        template, operation = found
        status = str(response.status_code)
        where = f"{method} {template} {status}"
        self.seen[(method, template)].add(status)
        documented = operation["responses"].get(status)
        if documented is None:
            self.problems.append(f"{where}: undocumented status ({response.text[:200]})")
            return
        for header in documented.get("headers", {}):
            if header.lower() not in response.headers:
                self.problems.append(f"{where}: no {header} header")
        content = documented.get("content")
        if content is None:
            if response.content:
                self.problems.append(f"{where}: a body where none is documented")
            return
        schema = content["application/json"]["schema"]
        validator = Draft202012Validator({"components": self.document["components"], **schema})
        for error in validator.iter_errors(response.json()):
            self.problems.append(f"{where}: {error.message[:300]} at {list(error.absolute_path)}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env = {"LOGIN_LIMIT": "3/60", "RPC_TIMEOUT_SECONDS": "2"}
    with Stack(tmp_path_factory.mktemp("openapi"), games=["yatzy", "domino"], env=env) as stack:
        stack.gateway()
        yield stack


@pytest.fixture
async def recorded(stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, Recorder]]:
    document = httpx.get(f"{stack.gateway()}/openapi.json", timeout=30).json()
    recorder = Recorder(document)
    async with httpx.AsyncClient(
        base_url=stack.gateway(), timeout=30, event_hooks={"response": [recorder]}
    ) as http:
        yield http, recorder


async def refused(call: Any) -> ApiRefused:
    try:
        await call
    except ApiRefused as refusal:
        return refusal
    raise AssertionError("accepted")


async def test_every_operation_replies_as_documented(
    recorded: tuple[httpx.AsyncClient, Recorder], stack: Stack
) -> None:
    http, recorder = recorded
    ana, bia, eve = [await register(http, name) for name in ("ana", "bia", "eve")]
    admin = Player(http, stack.token(Identity(ana.user_id, ana.name, "admin")), ana.user_id, ana.name)
    nobody = Player(http, "not-a-token", "", "")

    # -- accounts and games
    await guest(http, "gi")
    await http.post("/v1/auth/guest", json={"name": 5})  # 422
    await http.post("/v1/auth/register", json={"username": ana.name, "password": "correct horse"})  # 409
    login = await http.post("/v1/auth/login", json={"username": bia.name, "password": "correct horse"})
    bia.refresh_token = login.json()["refresh_token"]
    for _ in range(4):  # the 4th is over LOGIN_LIMIT: 429 with Retry-After
        await http.post("/v1/auth/login", json={"username": eve.name, "password": "wrong password"})
    await http.post("/v1/auth/refresh", json={"refresh_token": bia.refresh_token})
    await http.post("/v1/auth/refresh", json={"refresh_token": bia.refresh_token})  # used: 401
    await ana.call("GET", "/v1/me")
    await refused(nobody.call("GET", "/v1/me"))
    await http.get("/v1/games")
    await http.get("/v1/games?x=1")  # 422

    # -- a Yatzy practice table: invites, seats, the match, advice, chat, presence
    table = await ana.create_table("yatzy", 2, {"card": "CLASSIC", "advice": True})
    table_id = table["id"]
    await refused(eve.call("POST", "/v1/tables", {"game": "chess", "seats": 2}))  # 404
    invite = await ana.call("POST", f"/v1/tables/{table_id}/invites", {})
    await refused(bia.call("POST", f"/v1/tables/{table_id}/invites", {}))  # 403 not_host
    await ana.call("DELETE", f"/v1/tables/{table_id}/invites/{invite['code']}")
    await refused(ana.call("DELETE", f"/v1/tables/{table_id}/invites/nope"))
    await refused(bia.call("POST", "/v1/tables/join", {"invite_code": invite["code"]}))  # revoked: 404
    await bia.call("POST", "/v1/tables/join", {"invite_code": table["invite_code"]})
    await refused(eve.call("POST", "/v1/tables/join", {"invite_code": table["invite_code"]}))  # 409 full
    await ana.call("PUT", f"/v1/tables/{table_id}/seats", {"seats": [bia.user_id, ana.user_id]})
    await refused(bia.call("PUT", f"/v1/tables/{table_id}/seats", {"seats": []}))
    await ana.call("GET", f"/v1/tables/{table_id}")
    await refused(ana.call("GET", "/v1/tables/no-such-table"))
    await ana.call("GET", f"/v1/tables/{table_id}/presence")
    await refused(nobody.call("GET", f"/v1/tables/{table_id}/presence"))
    await refused(ana.call("GET", f"/v1/tables/{table_id}/view"))  # not started: 409
    await refused(bia.call("POST", f"/v1/tables/{table_id}/start"))  # 403
    snapshot = await ana.call("POST", f"/v1/tables/{table_id}/start")
    assert snapshot["view"]["@type"] == "type.googleapis.com/rodada.yatzy.v1.View"
    version = snapshot["version"]
    to_act = bia if snapshot["to_act"] == [0] else ana
    await ana.call("GET", f"/v1/tables/{table_id}/view")
    await refused(to_act.call("POST", f"/v1/tables/{table_id}/actions", {"expected_version": version + 9}))
    snapshot = await to_act.call(
        "POST", f"/v1/tables/{table_id}/actions", {"expected_version": version, "action": {"roll": {}}}
    )
    await to_act.call("POST", f"/v1/tables/{table_id}/ask", {"question": {"advice": {}}})
    await refused(eve.call("POST", f"/v1/tables/{table_id}/ask", {"question": {"advice": {}}}))
    await ana.call("POST", f"/v1/tables/{table_id}/chat", {"text": "boa sorte"})
    await refused(ana.call("POST", f"/v1/tables/{table_id}/chat", {"text": ""}))
    await bia.call("GET", f"/v1/tables/{table_id}/chat?limit=0")
    await refused(bia.call("GET", f"/v1/tables/{table_id}/chat?limit=-1"))
    # The game service stopped (SIGSTOP): 504 after RPC_TIMEOUT_SECONDS.
    yatzy = stack.processes["yatzy"]
    yatzy.send_signal(signal.SIGSTOP)
    try:
        await refused(ana.call("GET", f"/v1/tables/{table_id}/view"))
    finally:
        yatzy.send_signal(signal.SIGCONT)

    # -- Dominó's open tables: list, sit, leave
    domino = await ana.create_table("domino", 4)
    await ana.call("GET", "/v1/tables?game=domino")
    await refused(ana.call("GET", "/v1/tables?game=chess"))
    await eve.call("POST", f"/v1/tables/{domino['id']}/sit", {})
    await refused(eve.call("POST", "/v1/tables/no-such-table/sit", {}))
    await eve.call("POST", f"/v1/tables/{domino['id']}/leave")
    await refused(eve.call("POST", f"/v1/tables/{domino['id']}/leave"))

    # -- matchmaking: a party, joined, read, cancelled
    ticket = await ana.call("POST", "/v1/matchmaking/tickets", {"game": "domino", "party": True})
    await refused(ana.call("POST", "/v1/matchmaking/tickets", {"game": "domino"}))  # 409 already queued
    await bia.call("POST", "/v1/matchmaking/parties/join", {"party_code": ticket["party_code"]})
    await refused(eve.call("POST", "/v1/matchmaking/parties/join", {"party_code": "nope"}))
    await ana.call("GET", f"/v1/matchmaking/tickets/{ticket['id']}")
    await refused(eve.call("GET", f"/v1/matchmaking/tickets/{ticket['id']}"))
    await ana.call("DELETE", f"/v1/matchmaking/tickets/{ticket['id']}")
    await refused(nobody.call("DELETE", f"/v1/matchmaking/tickets/{ticket['id']}"))

    # -- standings
    games = (await http.get("/v1/games")).json()["games"]
    mode = next(g for g in games if g["name"] == "yatzy")["modes"][0]["name"]
    await ana.call("GET", f"/v1/leaderboards/yatzy/{mode}?offset=0&limit=0")
    await refused(ana.call("GET", f"/v1/leaderboards/yatzy/{mode}?offset=2147483648"))
    await ana.call("GET", f"/v1/users/{ana.user_id}/ratings")
    await refused(nobody.call("GET", f"/v1/users/{ana.user_id}/ratings"))
    await ana.call("GET", f"/v1/users/{ana.user_id}/ratings/yatzy/{mode}/history")
    await refused(ana.call("GET", f"/v1/users/{ana.user_id}/ratings/yatzy/{mode}/history?limit=101"))
    await ana.call("GET", f"/v1/users/{ana.user_id}/matches")
    await refused(nobody.call("GET", f"/v1/users/{ana.user_id}/matches"))

    # -- friends and private chat
    await ana.call("POST", "/v1/social/friends/requests", {"username": bia.name})
    await refused(ana.call("POST", "/v1/social/friends/requests", {"username": "nobody-here"}))
    await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
    await refused(bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept"))
    await ana.call("GET", "/v1/social/friends")
    await refused(nobody.call("GET", "/v1/social/friends"))
    said = await ana.call("POST", f"/v1/social/messages/{bia.user_id}", {"text": "oi"})
    await refused(ana.call("POST", f"/v1/social/messages/{eve.user_id}", {"text": "oi"}))  # not friends
    await bia.call("GET", f"/v1/social/messages/{ana.user_id}")
    await refused(bia.call("GET", f"/v1/social/messages/{ana.user_id}?limit=2.5"))
    report = {"channel": "CHAT_CHANNEL_PRIVATE", "message_id": said["id"], "user_id": ana.user_id}
    await bia.call("POST", "/v1/social/reports", report)
    await refused(bia.call("POST", "/v1/social/reports", {**report, "channel": "CHAT_CHANNEL_LOUD"}))
    private = await ana.create_table("yatzy", 2)
    await ana.call("POST", f"/v1/social/friends/{bia.user_id}/invite", {"table_id": private["id"]})
    await refused(ana.call("POST", f"/v1/social/friends/{eve.user_id}/invite", {"table_id": private["id"]}))
    await eve.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
    await bia.call("POST", f"/v1/social/friends/{eve.user_id}/decline")
    await refused(bia.call("POST", f"/v1/social/friends/{eve.user_id}/decline"))
    await ana.call("DELETE", f"/v1/social/friends/{bia.user_id}")
    await refused(ana.call("DELETE", f"/v1/social/friends/{bia.user_id}"))
    await ana.call("PUT", f"/v1/social/blocks/{eve.user_id}")
    await refused(ana.call("PUT", f"/v1/social/blocks/{ana.user_id}"))
    await ana.call("DELETE", f"/v1/social/blocks/{eve.user_id}")
    await refused(ana.call("DELETE", f"/v1/social/blocks/{eve.user_id}"))

    # -- trophies, tournaments, leagues
    await ana.call("GET", "/v1/trophies")
    await refused(nobody.call("GET", "/v1/trophies"))
    await ana.call("GET", f"/v1/users/{ana.user_id}/trophies")
    await refused(nobody.call("GET", f"/v1/users/{ana.user_id}/trophies"))
    body = {
        "name": "Copa",
        "game": "yatzy",
        "options": {"card": "CLASSIC"},
        "format": "TOURNAMENT_FORMAT_SWISS",
        "max_entrants": 8,
    }
    await refused(bia.call("POST", "/v1/tournaments", body))  # 403 admin_required
    tournament = await admin.call("POST", "/v1/tournaments", body)
    assert tournament["options"]["@type"] == "type.googleapis.com/rodada.yatzy.v1.Options"
    await ana.call("GET", "/v1/tournaments?status=TOURNAMENT_STATUS_REGISTRATION")
    await refused(ana.call("GET", "/v1/tournaments?status=registration"))
    await ana.call("GET", f"/v1/tournaments/{tournament['id']}")
    await refused(ana.call("GET", "/v1/tournaments/nope"))
    await bia.call("POST", f"/v1/tournaments/{tournament['id']}/register", {})
    await refused(bia.call("POST", f"/v1/tournaments/{tournament['id']}/register", {}))
    await bia.call("POST", f"/v1/tournaments/{tournament['id']}/withdraw")
    await refused(bia.call("POST", "/v1/tournaments/nope/withdraw"))
    await refused(bia.call("POST", f"/v1/tournaments/{tournament['id']}/start"))
    await admin.call("POST", f"/v1/tournaments/{tournament['id']}/start")
    second = await admin.call("POST", "/v1/tournaments", {**body, "name": "Copa 2"})
    edited = await admin.call(
        "POST", f"/v1/tournaments/{second['id']}/edit", {"name": "Copa II", "rounds": 2}
    )
    assert edited["name"] == "Copa II"
    await refused(admin.call("POST", f"/v1/tournaments/{second['id']}/edit", {"max_entrants": 1}))  # 422
    await refused(admin.call("POST", f"/v1/tournaments/{tournament['id']}/edit", {"name": "Late"}))  # 409
    await bia.call("POST", f"/v1/tournaments/{second['id']}/register", {})
    entrant = (await admin.call("GET", f"/v1/tournaments/{second['id']}"))["entrants"][0]["id"]
    await admin.call("POST", f"/v1/tournaments/{second['id']}/entrants/{entrant}/remove", {})
    await refused(admin.call("POST", f"/v1/tournaments/{second['id']}/entrants/{entrant}/remove", {}))  # 404
    await admin.call("POST", f"/v1/tournaments/{second['id']}/cancel", {})
    await refused(admin.call("POST", f"/v1/tournaments/{second['id']}/cancel", {}))  # 409 tournament_over
    schedule_body = {**body, "first_at": time.time() + 86400, "every_seconds": 86400}
    schedule = await admin.call("POST", "/v1/tournament-schedules", schedule_body)
    await refused(bia.call("POST", "/v1/tournament-schedules", schedule_body))  # 403
    await admin.call("GET", "/v1/tournament-schedules")
    await refused(bia.call("GET", "/v1/tournament-schedules"))  # 403
    await admin.call("DELETE", f"/v1/tournament-schedules/{schedule['id']}")
    await refused(admin.call("DELETE", f"/v1/tournament-schedules/{schedule['id']}"))  # 404
    await ana.call("GET", f"/v1/leagues/yatzy/{mode}")
    await refused(ana.call("GET", "/v1/leagues/yatzy/no-such-mode"))

    # -- moderation (roles are read from the account, not the token)
    async with Redis.from_url(stack.redis_url) as redis:
        await redis.hset(keys.user(ana.user_id), "role", "admin")
    await admin.call("PUT", f"/v1/moderation/moderators/{bia.user_id}", {})
    await refused(eve.call("PUT", f"/v1/moderation/moderators/{eve.user_id}", {}))  # 403
    queue = await bia.call("GET", "/v1/moderation/reports?limit=5")
    await refused(eve.call("GET", "/v1/moderation/reports"))
    report_id = queue["reports"][0]["id"]
    await bia.call("POST", f"/v1/moderation/reports/{report_id}/take", {})
    await refused(bia.call("POST", "/v1/moderation/reports/nope/take", {}))
    await bia.call("POST", f"/v1/moderation/reports/{report_id}/resolve", {"resolution": "warned"})
    await refused(bia.call("POST", f"/v1/moderation/reports/{report_id}/resolve", {"resolution": "again"}))
    await bia.call("POST", f"/v1/moderation/users/{eve.user_id}/mute", {"seconds": 60, "reason": "spam"})
    await refused(bia.call("POST", f"/v1/moderation/users/{eve.user_id}/mute", {"seconds": 0}))
    await bia.call("POST", f"/v1/moderation/users/{eve.user_id}/ban", {"reason": "spam"})
    await refused(bia.call("POST", f"/v1/moderation/users/{ana.user_id}/ban", {}))  # 409 staff_user
    await bia.call("DELETE", f"/v1/moderation/users/{eve.user_id}/ban")
    await refused(bia.call("DELETE", f"/v1/moderation/users/{eve.user_id}/ban"))
    removal = {
        "channel": "CHAT_CHANNEL_PRIVATE",
        "message_id": said["id"],
        "user_ids": [ana.user_id, bia.user_id],
    }
    await bia.call("POST", "/v1/moderation/messages/remove", removal)
    await refused(bia.call("POST", "/v1/moderation/messages/remove", removal))  # 404: gone
    await bia.call("GET", "/v1/moderation/audit?limit=3")
    await refused(eve.call("GET", "/v1/moderation/audit"))
    await admin.call("DELETE", f"/v1/moderation/moderators/{bia.user_id}")
    await refused(bia.call("DELETE", f"/v1/moderation/moderators/{bia.user_id}"))  # 403

    # -- the game service gone: 503 (last: the match is not played again)
    stack.stop("yatzy")
    await refused(to_act.call("POST", f"/v1/tables/{table_id}/leave"))

    assert not recorder.problems, "\n".join(recorder.problems)
    operations = {
        (method.upper(), path)
        for path, item in recorder.document["paths"].items()
        for method in item
        if path.startswith("/v1/")
    }
    never = sorted(op for op in operations if not any(s < "300" for s in recorder.seen.get(op, ())))
    assert not never, f"operations with no success recorded: {never}"
    unrefused = sorted(op for op in operations if not any(s >= "400" for s in recorder.seen.get(op, ())))
    assert not unrefused, f"operations with no refusal recorded: {unrefused}"
    answered = {status for statuses in recorder.seen.values() for status in statuses}
    assert answered >= ERROR_STATUSES, sorted(ERROR_STATUSES - answered)
    documented = {
        code
        for item in recorder.document["paths"].values()
        for op in item.values()
        for code in op["responses"]
    }
    assert documented - {"200", "201", "204"} <= ERROR_STATUSES | {"503"}, documented
