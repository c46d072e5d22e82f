"""The one MatchService (Nim and Dominó, in this process, on a real Redis):
creation once per id, moves by compare-and-set, a refused request that
changes nothing, who sees what, a feed that resumes without gap or
duplicate, deadlines tied to their version."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from google.protobuf.message import Message
from rodada.bozo.v1 import bozo_pb2
from rodada.common.v1 import match_pb2
from rodada.domino.v1 import domino_pb2
from rodada.nim.v1 import nim_pb2

from services.bozo.game import GAME as BOZO
from services.core import keys
from services.core.store import RecordStore
from services.domino.game import GAME as DOMINO
from services.kit.game import INACTIVITY_SECONDS
from tests.games.nim.game import GAME as NIM
from tests.in_process import GameServer, Keys
from tests.integration.grpc_client import pack, refusal, unpack
from tests.stored import history, stored

USERS = ["ana", "bia"]
MOVED, NOTIFIED, EXPIRED = (
    match_pb2.DEADLINE_OUTCOME_MOVED,
    match_pb2.DEADLINE_OUTCOME_NOTIFIED,
    match_pb2.DEADLINE_OUTCOME_EXPIRED,
)


class Clock:
    """The services' time, moved by the test (deadlines are 120 s away)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    @contextmanager
    def past_the_deadline(self) -> Iterator[None]:
        self.now += INACTIVITY_SECONDS + 1
        try:
            yield
        finally:
            self.now -= INACTIVITY_SECONDS + 1


@pytest.fixture(scope="module")
def tokens() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
async def nim(store: RecordStore, tokens: Keys, clock: Clock) -> AsyncIterator[GameServer]:
    async with GameServer(NIM, store, tokens, clock) as server:
        yield server


@pytest.fixture(scope="module")
async def domino(store: RecordStore, tokens: Keys) -> AsyncIterator[GameServer]:
    async with GameServer(DOMINO, store, tokens) as server:
        yield server


def take(stones: int) -> any_pb2.Any:
    return pack(nim_pb2.Action(take=nim_pb2.Take(stones=stones)))


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return refusal(raised.value)


async def new_nim(nim: GameServer, heap: int = 15) -> tuple[str, match_pb2.Snapshot]:
    match_id = secrets.token_hex(6)
    return match_id, await nim.create(match_id, USERS, nim_pb2.Options(heap=heap))


async def act(
    nim: GameServer, match_id: str, snapshot: match_pb2.Snapshot, stones: int
) -> match_pb2.Snapshot:
    """The seat to act takes ``stones``; the new snapshot."""
    user = USERS[snapshot.to_act[0]]
    request = match_pb2.ActRequest(match_id=match_id, expected_version=snapshot.version, action=take(stones))
    reply = await nim.stub.Act(request, metadata=nim.keys.auth(user))
    return reply.snapshot


# -- creating ---------------------------------------------------------------------


async def test_a_match_is_created_once_per_id(nim: GameServer) -> None:
    match_id, first = await new_nim(nim)
    before = await stored(nim.store.redis, match_id)
    assert await refused(nim.create(match_id, ["cai", "dora"])) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "match_exists",
    )
    assert await stored(nim.store.redis, match_id) == before
    assert first.version == 1 and [s.user_id for s in first.seats] == USERS


@pytest.mark.parametrize(
    ("match_id", "users", "options", "reason"),
    [
        ("no spaces!", USERS, None, "invalid_match_id"),
        ("x" * 65, USERS, None, "invalid_match_id"),
        (None, ["ana", "ana"], None, "invalid_seats"),
        (None, ["ana", ""], None, "invalid_seats"),
        (None, ["ana"], None, "invalid_seats"),  # Nim has 2-4 seats
        (None, USERS, nim_pb2.Options(heap=101), "invalid_options"),
        (None, USERS, bozo_pb2.Options(), "invalid_options"),  # another game's options
    ],
)
async def test_a_match_the_rules_refuse_is_not_created(
    nim: GameServer, match_id: str | None, users: list[str], options: Message | None, reason: str
) -> None:
    match_id = match_id or secrets.token_hex(6)
    code, why = await refused(nim.create(match_id, users, options))
    assert (code, why) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert (
        await nim.store.redis.exists(keys.match(match_id), keys.history(match_id), keys.events(match_id)) == 0
    )


# -- acting -----------------------------------------------------------------------


async def test_a_move_at_the_current_version_is_applied_once(nim: GameServer) -> None:
    match_id, start = await new_nim(nim)
    after = await act(nim, match_id, start, 2)
    assert after.version == 2 and after.to_act != start.to_act
    assert unpack(after.view, nim_pb2.View).heap == 13
    (took,) = [e for e in await history(nim.store.redis, match_id) if e.version == 2]
    assert unpack(took.event, nim_pb2.Event).took.stones == 2
    assert await refused(act(nim, match_id, start, 2)) == (grpc.StatusCode.ABORTED, "stale_version")


def _refusals() -> list[Any]:
    """(who acts: the seat to act, the other seat or a stranger; the version
    they expect, relative to the match's; the action; the refusal)."""
    aborted, denied = grpc.StatusCode.ABORTED, grpc.StatusCode.PERMISSION_DENIED
    failed, invalid = grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT
    return [
        pytest.param("to_act", -1, take(1), aborted, "stale_version", id="stale"),
        pytest.param("to_act", +1, take(1), aborted, "stale_version", id="ahead"),
        pytest.param("other", 0, take(1), failed, "not_your_turn", id="not-your-turn"),
        pytest.param("stranger", 0, take(1), denied, "not_seated", id="not-seated"),
        pytest.param("to_act", 0, take(4), invalid, "invalid_take", id="rules"),
        pytest.param("to_act", 0, pack(nim_pb2.Action()), invalid, "malformed_action", id="empty"),
        pytest.param("to_act", 0, pack(bozo_pb2.Action()), invalid, "malformed_action", id="other-game"),
        pytest.param("to_act", 0, None, invalid, "malformed_action", id="missing"),
        pytest.param("other", 0, pack(nim_pb2.Action(claim_inactivity={})), failed, "too_early", id="claim"),
    ]


@pytest.mark.parametrize(("who", "offset", "action", "code", "reason"), _refusals())
async def test_a_refused_move_leaves_the_stored_match_byte_identical(
    nim: GameServer, who: str, offset: int, action: any_pb2.Any | None, code: grpc.StatusCode, reason: str
) -> None:
    match_id, start = await new_nim(nim)
    now = await act(nim, match_id, start, 1)  # version 2: a stale version exists
    users = {"to_act": USERS[now.to_act[0]], "other": USERS[1 - now.to_act[0]], "stranger": "eve"}
    before = await stored(nim.store.redis, match_id)
    request = match_pb2.ActRequest(match_id=match_id, expected_version=now.version + offset, action=action)
    assert await refused(nim.stub.Act(request, metadata=nim.keys.auth(users[who]))) == (code, reason)
    assert await stored(nim.store.redis, match_id) == before


async def test_leaving_ends_a_duel_and_nothing_moves_after_the_end(nim: GameServer) -> None:
    match_id, start = await new_nim(nim)
    leaver = USERS[start.to_act[0]]
    stranger = await refused(
        nim.stub.Leave(match_pb2.LeaveRequest(match_id=match_id), metadata=nim.keys.auth("eve"))
    )
    assert stranger == (grpc.StatusCode.PERMISSION_DENIED, "not_seated")
    left = await nim.stub.Leave(match_pb2.LeaveRequest(match_id=match_id), metadata=nim.keys.auth(leaver))
    assert left.snapshot.status == match_pb2.MATCH_STATUS_FINISHED
    assert left.snapshot.result.reason == match_pb2.END_REASON_FORFEIT
    assert left.snapshot.fairness.seed  # revealed at the end
    before = await stored(nim.store.redis, match_id)
    other = USERS[1 - start.to_act[0]]
    request = match_pb2.ActRequest(match_id=match_id, expected_version=left.snapshot.version, action=take(1))
    assert await refused(nim.stub.Act(request, metadata=nim.keys.auth(other))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "game_over",
    )
    assert await stored(nim.store.redis, match_id) == before


async def test_a_game_without_questions_says_so(nim: GameServer) -> None:
    match_id, _ = await new_nim(nim)
    request = match_pb2.AskRequest(match_id=match_id)
    assert await refused(nim.stub.Ask(request, metadata=nim.keys.auth("ana"))) == (
        grpc.StatusCode.UNIMPLEMENTED,
        "no_questions",
    )


# -- seeing -----------------------------------------------------------------------

DOMINO_USERS = ["ana", "bia", "cai", "dora"]


async def domino_view(domino: GameServer, match_id: str, user: str) -> tuple[int, domino_pb2.View]:
    reply = await domino.stub.GetView(
        match_pb2.GetViewRequest(match_id=match_id), metadata=domino.keys.auth(user)
    )
    return reply.snapshot.seat, unpack(reply.snapshot.view, domino_pb2.View)


async def test_a_seat_sees_its_own_hand_and_a_spectator_none(domino: GameServer) -> None:
    match_id = secrets.token_hex(6)
    await domino.create(match_id, DOMINO_USERS)
    hands = {}
    for seat, user in enumerate(DOMINO_USERS):
        seen_as, view = await domino_view(domino, match_id, user)
        assert seen_as == seat and len(view.hand) == 7
        hands[seat] = {(t.a, t.b) for t in view.hand}
    assert len(set().union(*hands.values())) == 28  # four hands, no tile twice
    seen_as, spectator = await domino_view(domino, match_id, "eve")
    assert seen_as == -1 and not spectator.hand and list(spectator.hand_counts) == [7, 7, 7, 7]


async def test_a_match_of_another_game_is_not_found(nim: GameServer, domino: GameServer) -> None:
    match_id, _ = await new_nim(nim)
    for server, asked in ((domino, match_id), (nim, "no-such-match")):
        request = match_pb2.GetViewRequest(match_id=asked)
        assert await refused(server.stub.GetView(request, metadata=server.keys.auth("ana"))) == (
            grpc.StatusCode.NOT_FOUND,
            "match_not_found",
        )


async def watched(server: GameServer, match_id: str, user: str) -> list[match_pb2.WatchResponse]:
    """A Watch from the start, read until it has caught up (its first snapshot)."""
    call = server.stub.Watch(match_pb2.WatchRequest(match_id=match_id), metadata=server.keys.auth(user))
    items = []
    try:
        while not items or not items[-1].HasField("snapshot"):
            items.append(await asyncio.wait_for(call.read(), 5))
    finally:
        call.cancel()
    return items


async def test_a_feed_carries_a_seats_hidden_events_to_that_seat_alone(domino: GameServer) -> None:
    match_id = secrets.token_hex(6)
    await domino.create(match_id, DOMINO_USERS)

    def dealt_to(items: list[match_pb2.WatchResponse]) -> list[int]:
        events = [unpack(i.event.event, domino_pb2.Event) for i in items if i.HasField("event")]
        return [e.dealt.seat for e in events if e.WhichOneof("event") == "dealt"]

    assert dealt_to(await watched(domino, match_id, "bia")) == [1]
    assert dealt_to(await watched(domino, match_id, "eve")) == []


# -- watching ---------------------------------------------------------------------


async def test_a_watch_resumed_after_an_event_id_has_no_gap_or_duplicate(nim: GameServer) -> None:
    match_id, snapshot = await new_nim(nim, heap=8)
    for _ in range(2):
        snapshot = await act(nim, match_id, snapshot, 1)
    resume_after = 1
    call = nim.stub.Watch(
        match_pb2.WatchRequest(match_id=match_id, after_event_id=resume_after), metadata=nim.keys.auth("eve")
    )
    items = [await asyncio.wait_for(call.read(), 5)]
    while snapshot.status != match_pb2.MATCH_STATUS_FINISHED:  # the rest of the match, live
        snapshot = await act(nim, match_id, snapshot, min(3, unpack(snapshot.view, nim_pb2.View).heap))
    while (item := await asyncio.wait_for(call.read(), 5)) != grpc.aio.EOF:
        items.append(item)
    ids = [i.event.id for i in items if i.HasField("event")]
    assert ids == list(range(resume_after + 1, snapshot.last_event_id + 1))
    assert items[-1].snapshot.status == match_pb2.MATCH_STATUS_FINISHED  # then the stream ended


async def test_a_watch_after_the_last_event_is_refused(nim: GameServer) -> None:
    match_id, snapshot = await new_nim(nim)
    request = match_pb2.WatchRequest(match_id=match_id, after_event_id=snapshot.last_event_id + 1)
    call = nim.stub.Watch(request, metadata=nim.keys.auth("ana"))
    assert await refused(call.read()) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_event_id")


# -- deadlines --------------------------------------------------------------------


async def fire(server: GameServer, match_id: str, version: int) -> int:
    request = match_pb2.FireDeadlineRequest(match_id=match_id, expected_version=version)
    return (await server.stub.FireDeadline(request, metadata=server.keys.platform())).outcome


async def test_a_deadline_for_a_version_that_has_moved_on_does_nothing(nim: GameServer, clock: Clock) -> None:
    match_id, start = await new_nim(nim)
    await act(nim, match_id, start, 1)
    before = await stored(nim.store.redis, match_id)
    with clock.past_the_deadline():
        assert await fire(nim, match_id, start.version) == MOVED
    assert await stored(nim.store.redis, match_id) == before


async def test_a_deadline_before_its_time_does_nothing(nim: GameServer) -> None:
    match_id, start = await new_nim(nim)
    before = await stored(nim.store.redis, match_id)
    assert await fire(nim, match_id, start.version) == MOVED
    assert await stored(nim.store.redis, match_id) == before


async def test_a_claimable_deadline_tells_the_table_once(nim: GameServer, clock: Clock) -> None:
    match_id, start = await new_nim(nim)
    with clock.past_the_deadline():
        assert await fire(nim, match_id, start.version) == NOTIFIED
        assert await fire(nim, match_id, start.version) == NOTIFIED  # a second replica, or a retry
    notices = [e.notice for e in await history(nim.store.redis, match_id) if e.HasField("notice")]
    assert [(n.kind, n.seat) for n in notices] == [(match_pb2.NOTICE_KIND_INACTIVE, start.to_act[0])]
    assert (await stored(nim.store.redis, match_id))[1][b"v"] == str(start.version).encode()


async def test_an_expiring_deadline_ends_the_match_once(store: RecordStore, tokens: Keys) -> None:
    clock = Clock()
    async with GameServer(BOZO, store, tokens, clock) as bozo:
        match_id = secrets.token_hex(6)
        start = await bozo.create(match_id, ["ana"], bozo_pb2.Options(mode=bozo_pb2.SOLO))
        with clock.past_the_deadline():
            assert await fire(bozo, match_id, start.version) == EXPIRED
            ended = await store.load(match_id)
            assert ended is not None and ended.version == start.version + 1
            before = await stored(store.redis, match_id)
            assert await fire(bozo, match_id, start.version) == MOVED
            assert await fire(bozo, match_id, ended.version) == MOVED  # over: nothing is due
        assert await stored(store.redis, match_id) == before


def test_a_none_in_a_games_dict_is_a_field_left_unset_at_any_depth() -> None:
    """``packed`` hands a game's dict to the message's constructor as it is:
    a None, top level or nested, must mean "unset" (as to_json leaves it out
    and ParseDict reads it), or a game's view would fail on every reply."""
    from services.kit.matches import packed

    given = {
        "seat": 1,
        "result": None,
        "fairness": {"seed": None, "algorithm": "x"},
        "seats": [{"user_id": None}],
    }
    without = {"seat": 1, "fairness": {"algorithm": "x"}, "seats": [{}]}
    assert packed(match_pb2.Snapshot, given) == packed(match_pb2.Snapshot, without)
    assert not match_pb2.Snapshot.FromString(packed(match_pb2.Snapshot, given).value).HasField("result")
