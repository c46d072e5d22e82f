"""The gateway's tables on a real Redis, with Nim, Bozó and Dominó served in
this process: every change is one TableChange event in the match's history,
recorded once; invites, teams and open tables seat people as the game's
facts say; a start is idempotent and can be retried after an outage; a
refused request says why and changes nothing."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2

from gateway.games import Games
from gateway.matches import MatchClient
from gateway.tables import Tables
from services.bozo.game import GAME as BOZO
from services.core import keys
from services.core.errors import Refused
from services.core.store import RecordStore
from services.core.tokens import Identity
from services.domino.game import GAME as DOMINO
from tests.conftest import STORE_TTL_SECONDS
from tests.games.nim.game import GAME as NIM
from tests.in_process import GameServer, Keys
from tests.integration.grpc_client import table_change
from tests.stored import history, stored

INVITE_TTL = 600
ANA, BIA, CAI, DORA, EVE = (Identity(name, name, "user") for name in ("ana", "bia", "cai", "dora", "eve"))


@dataclass
class Lobby:
    tables: Tables
    servers: dict[str, GameServer]

    @property
    def redis(self) -> Any:
        return self.tables.redis

    def game(self, name: str) -> Any:
        return self.tables.games.get(name)


@pytest.fixture(scope="module")
async def lobby(store: RecordStore) -> AsyncIterator[Lobby]:
    tokens = Keys()
    servers = {game.name: GameServer(game, store, tokens) for game in (NIM, BOZO, DOMINO)}
    for server in servers.values():
        await server.start()
    games = Games({name: server.address for name, server in servers.items()})
    await games.start(wait_seconds=10)
    matches = MatchClient(lambda: tokens.token("platform:tests", "platform"), timeout=5)
    try:
        tables = RecordStore(store.redis, keys.table, STORE_TTL_SECONDS, store.publish)
        yield Lobby(Tables(tables, games, matches, INVITE_TTL), servers)
    finally:
        await games.close()
        for server in servers.values():
            await server.__aexit__()


async def changes(lobby: Lobby, table_id: str) -> list[tuple[str, int | None, bool]]:
    """The table's history: (kind, seat, host only) per TableChange, in order."""
    recorded = []
    for event in await history(lobby.redis, table_id):
        change = table_change(event)
        assert change is not None, event
        kind = platform_pb2.TableChangeKind.Name(change.kind).removeprefix("TABLE_CHANGE_KIND_")
        recorded.append((kind, change.seat if change.HasField("seat") else None, event.host_only))
    return recorded


async def refused(call: Awaitable[Any]) -> str:
    with pytest.raises(Refused) as raised:
        await call
    return raised.value.reason


async def unchanged(lobby: Lobby, table_id: str, call: Awaitable[Any]) -> str:
    """``call``'s refusal reason; the table and its history are as they were."""
    before = await stored(lobby.redis, table_id)
    reason = await refused(call)
    assert await stored(lobby.redis, table_id) == before
    return reason


async def nim_table(lobby: Lobby, seats: int = 2, *guests: Identity) -> tuple[dict[str, Any], str]:
    """A Nim table of ana's with ``guests`` joined by its invite; the invite code."""
    table = await lobby.tables.create(ANA, lobby.game("nim"), seats, {}, [])
    code = table["invites"][0]["code"]
    for guest in guests:
        await lobby.tables.join(guest, code)
    return table, code


# -- opening and joining ------------------------------------------------------------


async def test_a_new_table_is_its_own_record_with_a_host_only_invite(lobby: Lobby) -> None:
    table, code = await nim_table(lobby)
    assert await lobby.redis.exists(keys.match(table["id"])) == 0  # the game service's key, not the lobby's
    stored_table = await lobby.tables.store.load(table["id"])
    assert stored_table is not None and stored_table.version == 1 and stored_table.doc == table
    assert await changes(lobby, table["id"]) == [("OPENED", None, False), ("INVITE_CREATED", None, True)]
    assert orjson.loads(await lobby.redis.get(keys.invite(code))) == {"table": table["id"], "team": ""}
    assert 0 < await lobby.redis.ttl(keys.invite(code)) <= INVITE_TTL
    assert lobby.tables.message(table, "ana").invite_code == code
    assert not lobby.tables.message(table, "bia").invites


async def test_an_invite_seats_a_player_once_until_the_table_is_full(lobby: Lobby) -> None:
    table, code = await nim_table(lobby, 2, BIA)
    await lobby.tables.join(BIA, code)  # joining twice is harmless, and recorded once
    assert [p["user_id"] for p in (await lobby.tables.get(table["id"]))["players"]] == ["ana", "bia"]
    assert await unchanged(lobby, table["id"], lobby.tables.join(CAI, code)) == "table_full"
    assert (await changes(lobby, table["id"]))[2:] == [("JOINED", 1, False)]


async def test_two_joins_for_the_last_seat_seat_one_player(lobby: Lobby) -> None:
    table, code = await nim_table(lobby)
    results = await asyncio.gather(
        lobby.tables.join(BIA, code), lobby.tables.join(CAI, code), return_exceptions=True
    )
    assert sorted(r.reason if isinstance(r, Refused) else "seated" for r in results) == [
        "seated",
        "table_full",
    ]
    assert (await changes(lobby, table["id"]))[2:] == [("JOINED", 1, False)]


@pytest.mark.parametrize("code", ["", "no-such-code"])
async def test_an_unknown_invite_seats_nobody(lobby: Lobby, code: str) -> None:
    assert await refused(lobby.tables.join(BIA, code)) == "invite_not_found"


async def test_a_player_may_leave_before_the_start(lobby: Lobby) -> None:
    table, _ = await nim_table(lobby, 3, BIA)
    left = await lobby.tables.leave_lobby(BIA, table["id"])
    assert left["players"][1] is None
    assert await unchanged(lobby, table["id"], lobby.tables.leave_lobby(BIA, table["id"])) == "not_seated"
    assert (await changes(lobby, table["id"]))[2:] == [("JOINED", 1, False), ("LEFT", 1, False)]


async def test_the_host_arranges_the_seats_and_nobody_else_may(lobby: Lobby) -> None:
    table, _ = await nim_table(lobby, 3, BIA)
    arranged = await lobby.tables.arrange(ANA, table["id"], [None, "bia", "ana"])
    assert [p and p["user_id"] for p in arranged["players"]] == [None, "bia", "ana"]
    for who, order, reason in [
        (BIA, ["bia", "ana", None], "not_host"),
        (ANA, ["ana", None, None], "invalid_arrangement"),  # bia left out
        (ANA, ["ana", "ana", "bia"], "invalid_arrangement"),
        (ANA, ["ana", "bia"], "invalid_arrangement"),  # a seat short
        (ANA, ["ana", "bia", "eve"], "invalid_arrangement"),  # eve is not at the table
    ]:
        assert await unchanged(lobby, table["id"], lobby.tables.arrange(who, table["id"], order)) == reason
    assert (await changes(lobby, table["id"]))[2:] == [("JOINED", 1, False), ("ARRANGED", None, False)]


# -- invites and teams ----------------------------------------------------------------


async def test_a_team_invite_seats_that_team_while_it_has_a_free_seat(lobby: Lobby) -> None:
    table = await lobby.tables.create(ANA, lobby.game("bozo"), 4, {"mode": "DUPLAS"}, [])
    jade = await lobby.tables.invite(ANA, table["id"], "JADE")  # ana sits in JADE's seat 0
    joined = await lobby.tables.join(CAI, jade["code"])
    assert joined["players"][2]["user_id"] == "cai"
    tid = table["id"]
    assert await unchanged(lobby, tid, lobby.tables.join(DORA, jade["code"])) == "team_full"
    assert await unchanged(lobby, tid, lobby.tables.invite(ANA, tid, "JADE")) == "team_full"
    assert await unchanged(lobby, tid, lobby.tables.invite(ANA, tid, "RUBI")) == "unknown_team"
    assert await unchanged(lobby, tid, lobby.tables.invite(BIA, tid, "AMBAR")) == "not_host"
    assert (await changes(lobby, tid))[2:] == [("INVITE_CREATED", None, True), ("JOINED", 2, False)]


async def test_a_revoked_invite_seats_nobody(lobby: Lobby) -> None:
    table, code = await nim_table(lobby, 3)
    tid = table["id"]
    assert await unchanged(lobby, tid, lobby.tables.revoke(BIA, tid, code)) == "not_host"
    assert await unchanged(lobby, tid, lobby.tables.revoke(ANA, tid, "no-such-code")) == "invite_not_found"
    await lobby.tables.revoke(ANA, tid, code)
    assert await unchanged(lobby, tid, lobby.tables.join(BIA, code)) == "invite_not_found"
    assert await lobby.redis.exists(keys.invite(code)) == 0
    assert (await lobby.tables.get(tid))["invites"] == []
    assert (await changes(lobby, tid))[2:] == [("INVITE_REVOKED", None, True)]


# -- open tables ------------------------------------------------------------------------


async def test_an_open_table_is_listed_and_seats_anyone_without_invites(lobby: Lobby) -> None:
    domino = lobby.game("domino")
    table = await lobby.tables.create(ANA, domino, 4, {}, [])
    tid = table["id"]
    assert table["invites"] == [] and await changes(lobby, tid) == [("OPENED", None, False)]
    assert tid in [t["id"] for t in (await lobby.tables.open_tables(domino))[0]]
    await lobby.tables.sit(BIA, tid, 2)
    await lobby.tables.sit(BIA, tid, 3)  # seated already: nothing changes
    await lobby.tables.sit(CAI, tid, None)  # any free seat: the first
    assert await unchanged(lobby, tid, lobby.tables.sit(DORA, tid, 2)) == "seat_taken"
    assert await unchanged(lobby, tid, lobby.tables.sit(DORA, tid, 4)) == "invalid_seat"
    assert await unchanged(lobby, tid, lobby.tables.invite(ANA, tid, None)) == "open_table"
    await lobby.tables.sit(DORA, tid, None)
    assert tid not in [t["id"] for t in (await lobby.tables.open_tables(domino))[0]]  # full
    assert await unchanged(lobby, tid, lobby.tables.sit(EVE, tid, None)) == "table_full"
    assert (await changes(lobby, tid))[1:] == [
        ("JOINED", 2, False),
        ("JOINED", 1, False),
        ("JOINED", 3, False),
    ]


async def test_a_table_seated_by_invite_refuses_a_player_who_just_sits(lobby: Lobby) -> None:
    table, _ = await nim_table(lobby)
    assert await unchanged(lobby, table["id"], lobby.tables.sit(BIA, table["id"], 1)) == "invite_required"


# -- bad tables --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "seats", "options", "cpu", "reason"),
    [
        ("nim", 2, {"stones": 3}, [], "invalid_options"),  # no such option
        ("nim", 2, {"heap": "many"}, [], "invalid_options"),
        ("nim", 5, {}, [], "invalid_seats"),
        ("bozo", 2, {"mode": "DUPLAS"}, [], "invalid_seats"),
        ("nim", 2, {}, [1], "invalid_cpu_seats"),  # Nim has no CPU players
        ("domino", 4, {}, [0], "invalid_cpu_seats"),  # the host's seat
        ("domino", 4, {}, [1, 1], "invalid_cpu_seats"),
        ("domino", 4, {}, [4], "invalid_cpu_seats"),
    ],
)
async def test_a_table_the_game_cannot_have_is_not_opened(
    lobby: Lobby, game: str, seats: int, options: dict[str, Any], cpu: list[int], reason: str
) -> None:
    keys_before = set(await lobby.redis.keys("*"))
    assert await refused(lobby.tables.create(ANA, lobby.game(game), seats, options, cpu)) == reason
    assert set(await lobby.redis.keys("*")) == keys_before


@pytest.mark.parametrize("table_id", ["nope", "", "../x", "a" * 65])
async def test_a_table_that_does_not_exist_is_not_found(lobby: Lobby, table_id: str) -> None:
    assert await refused(lobby.tables.load(table_id)) == "table_not_found"
    assert await refused(lobby.tables.sit(BIA, table_id, None)) == "table_not_found"


# -- the start ----------------------------------------------------------------------------


async def match_of(lobby: Lobby, table_id: str) -> match_pb2.Snapshot:
    nim = lobby.servers["nim"]
    request = match_pb2.GetViewRequest(match_id=table_id)
    return (await nim.stub.GetView(request, metadata=nim.keys.auth("ana"))).snapshot


async def test_only_the_host_starts_and_only_a_full_table(lobby: Lobby) -> None:
    table, _ = await nim_table(lobby, 3, BIA)
    tid = table["id"]
    assert await unchanged(lobby, tid, lobby.tables.start(tid, ANA)) == "seats_free"
    await lobby.tables.join(CAI, table["invites"][0]["code"])
    assert await unchanged(lobby, tid, lobby.tables.start(tid, BIA)) == "not_host"


async def test_a_start_creates_the_match_once_however_often_it_is_repeated(lobby: Lobby) -> None:
    table, code = await nim_table(lobby, 2, BIA)
    tid = table["id"]
    await lobby.tables.start(tid, ANA)
    first = await match_of(lobby, tid)
    again = await lobby.tables.start(tid, ANA)
    await lobby.tables.start(tid, None)  # the matchmaker's way, or another replica's
    assert again["status"] == "playing" and await match_of(lobby, tid) == first
    assert [s.user_id for s in first.seats] == ["ana", "bia"] and first.version == 1
    assert await lobby.redis.exists(keys.invite(code)) == 0  # closed with the start
    kinds = [kind for kind, _, _ in await changes(lobby, tid)]
    assert kinds == ["OPENED", "INVITE_CREATED", "JOINED", "STARTED"]
    assert await unchanged(lobby, tid, lobby.tables.leave_lobby(BIA, tid)) == "table_started"


async def test_a_formed_table_is_born_started_once_however_often_it_is_formed(lobby: Lobby) -> None:
    """start_formed (the matchmaker's tables, a tournament's boards): one
    write makes the table, with no host and no invites, and its history
    OPENED then STARTED, as an opening and a start would record; then its
    match. A retry changes nothing and returns the table as stored."""
    table_id = secrets.token_hex(6)
    seated = [{"user_id": "ana", "name": "ana"}, {"user_id": "bia", "name": "bia"}]
    formed = await lobby.tables.start_formed(table_id, lobby.game("nim"), {}, seated, ranked=True)
    again = await lobby.tables.start_formed(table_id, lobby.game("nim"), {}, seated[::-1], ranked=True)
    assert again == formed and formed["status"] == "playing" and formed["ranked"] is True
    assert formed["host"] is None and formed["invites"] == [] and formed["open"] is False
    assert (await lobby.tables.get(table_id))["players"] == seated
    assert await changes(lobby, table_id) == [("OPENED", None, False), ("STARTED", None, False)]
    match = await match_of(lobby, table_id)
    assert [s.user_id for s in match.seats] == ["ana", "bia"] and match.version == 1


async def test_a_formed_table_cut_short_by_an_outage_is_started_by_a_retry(lobby: Lobby) -> None:
    """The game is down: the table is stored started but has no match; a
    retried formation (the matchmaker's, a tournament's periodic check)
    creates the match and records nothing twice."""
    table_id = secrets.token_hex(6)
    seated = [{"user_id": "ana", "name": "ana"}, {"user_id": "bia", "name": "bia"}]
    nim = lobby.servers["nim"]
    await nim.stop()
    try:
        with pytest.raises(Refused) as outage:
            await lobby.tables.start_formed(table_id, lobby.game("nim"), {}, seated, ranked=False)
        assert outage.value.http_status == 503
        assert (await lobby.tables.get(table_id))["status"] == "playing"  # started, but no match yet
        assert await lobby.redis.exists(keys.match(table_id)) == 0
    finally:
        await nim.start()
    for _ in range(100):  # retried while the channel reconnects
        try:
            await lobby.tables.start_formed(table_id, lobby.game("nim"), {}, seated, ranked=False)
            break
        except Refused as refusal:
            assert refusal.http_status == 503, refusal
            await asyncio.sleep(0.1)
    match = await match_of(lobby, table_id)
    assert [s.user_id for s in match.seats] == ["ana", "bia"] and match.version == 1
    assert [kind for kind, _, _ in await changes(lobby, table_id)] == ["OPENED", "STARTED"]


async def test_a_formed_table_the_game_refuses_opens_again(lobby: Lobby) -> None:
    """The game's refusal opens the table again; a retried formation finds it
    open and starts it as a start would, to the same refusal."""
    table_id = secrets.token_hex(6)
    seated = [{"user_id": "ana", "name": "ana"}, {"user_id": "bia", "name": "bia"}]
    for _ in range(2):
        formed = lobby.tables.start_formed(table_id, lobby.game("nim"), {"heap": 101}, seated, ranked=False)
        assert await refused(formed) == "invalid_options"
        assert (await lobby.tables.get(table_id))["status"] == "open"
        assert await lobby.redis.exists(keys.match(table_id)) == 0
    kinds = [kind for kind, _, _ in await changes(lobby, table_id)]
    assert kinds == ["OPENED", "STARTED", "REOPENED", "STARTED", "REOPENED"]


async def test_a_practice_table_is_never_formed_ranked(lobby: Lobby) -> None:
    """Bozó's ``advice`` makes a practice table (GameInfo.practice_options):
    a ranked formation with it is refused and nothing is stored; casual is fine."""
    assert list(lobby.game("bozo").info.practice_options) == ["advice"]
    seated = [{"user_id": "ana", "name": "ana"}, {"user_id": "bia", "name": "bia"}]
    practice = {"mode": "DUEL", "advice": True}
    table_id = secrets.token_hex(6)
    formed = lobby.tables.start_formed(table_id, lobby.game("bozo"), practice, seated, ranked=True)
    assert await refused(formed) == "practice_unranked"
    assert await stored(lobby.redis, table_id) == ({}, {}, {}, [])
    casual = await lobby.tables.start_formed(table_id, lobby.game("bozo"), practice, seated, ranked=False)
    assert casual["ranked"] is False and casual["options"]["advice"] is True
    assert casual["status"] == "playing" and await lobby.redis.exists(keys.match(table_id)) == 1


async def test_a_start_the_game_refuses_opens_the_table_again(lobby: Lobby) -> None:
    table = await lobby.tables.create(ANA, lobby.game("nim"), 2, {"heap": 101}, [])  # Nim's heap is 1-100
    tid = table["id"]
    await lobby.tables.join(BIA, table["invites"][0]["code"])
    assert await refused(lobby.tables.start(tid, ANA)) == "invalid_options"
    assert (await lobby.tables.get(tid))["status"] == "open"
    assert [kind for kind, _, _ in await changes(lobby, tid)][-2:] == ["STARTED", "REOPENED"]
    assert await lobby.redis.exists(keys.match(tid)) == 0  # no match


async def test_a_start_cut_short_by_an_outage_is_finished_by_the_next(lobby: Lobby) -> None:
    table, _ = await nim_table(lobby, 2, BIA)
    tid = table["id"]
    nim = lobby.servers["nim"]
    await nim.stop()
    try:
        with pytest.raises(Refused) as outage:
            await lobby.tables.start(tid, ANA)
        assert outage.value.http_status == 503
        assert (await lobby.tables.get(tid))["status"] == "playing"  # started, but no match yet
        assert await lobby.redis.exists(keys.match(tid)) == 0
    finally:
        await nim.start()
    for _ in range(100):  # the host tries again while the channel reconnects
        try:
            await lobby.tables.start(tid, ANA)
            break
        except Refused as refusal:
            assert refusal.http_status == 503, refusal
            await asyncio.sleep(0.1)
    assert (await match_of(lobby, tid)).version == 1
    kinds = [kind for kind, _, _ in await changes(lobby, tid)]
    assert kinds == ["OPENED", "INVITE_CREATED", "JOINED", "STARTED"]
