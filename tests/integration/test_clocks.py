"""Deadlines, inactivity policies and presence with two gateway replicas on one
Redis.

A game service puts ``<match>:<version>`` in ``{clocks:<game>}`` after every
write, scored by when the seat to act runs out of time; every gateway replica
polls the due ones, *takes* one into ``{clocks:<game>}:leased`` with a lease,
asks the game to fire it (``FireDeadline``) and then drops the lease. The game
acts only if the match is still at that version and the time has really come
(``Snapshot.idle_since`` + the game's deadline). Time is made to pass here by
moving stored times back: the deadline's score in the clock (when the platform
acts) and the match record's ``idle_since`` (what the game checks).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest
from redis.asyncio import Redis
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.core import keys
from services.core.errors import error_reason
from tests.integration.grpc_client import bearer
from tests.integration.http_client import (
    ACTIVE,
    FINISHED,
    ApiRefused,
    Player,
    game_event,
    notice,
    register,
    seated_table,
)
from tests.integration.time_travel import rewind_idle
from tests.integration.waiting import until
from tools.stack import Stack

GAMES = ("bozo", "dudo", "yatzy", "domino", "bozu_mekuri")
INACTIVE, CLAIMED, EXPIRED = "NOTICE_KIND_INACTIVE", "NOTICE_KIND_CLAIMED", "NOTICE_KIND_EXPIRED"
CPU_TOOK_OVER = "NOTICE_KIND_CPU_TOOK_OVER"
DISCONNECTED, RECONNECTED = "NOTICE_KIND_DISCONNECTED", "NOTICE_KIND_RECONNECTED"


@pytest.fixture(scope="module")
def clock_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of its own: the clocks' metrics count only this module's
    deadlines (the session stack's other matches reach their own 120 s)."""
    with Stack(tmp_path_factory.mktemp("clocks"), games=GAMES) as stack:
        stack.gateway(0)
        stack.gateway(1)
        yield stack


@pytest.fixture
async def redis(clock_stack: Stack) -> AsyncIterator[Redis]:
    client = Redis.from_url(clock_stack.redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
async def replicas(clock_stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=clock_stack.gateway(0), timeout=15) as a,
        httpx.AsyncClient(base_url=clock_stack.gateway(1), timeout=15) as b,
    ):
        yield a, b


# -- making time pass, and reading what happened -----------------------------------


async def make_due(redis: Redis, game: str, match_id: str, version: int) -> None:
    """The deadline set for ``version`` is due now, as far as the clocks know."""
    await redis.zadd(
        keys.clocks(game, keys.group(match_id)), {keys.clock_member(match_id, version): time.time() - 1}
    )


async def fired(stack: Stack, game: str, action: str, replicas: tuple[int, ...] = (0, 1)) -> float:
    """rodada_timers_fired_total{game, action}, summed over the replicas."""
    total = 0.0
    prefix = f'rodada_timers_fired_total{{action="{action}",game="{game}"}} '
    async with httpx.AsyncClient(timeout=5) as http:
        for replica in replicas:
            text = (await http.get(stack.gateway_metrics_url(replica))).text
            total += sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(prefix))
    return total


async def fired_at_least(stack: Stack, game: str, action: str, count: float, timeout: float = 10) -> None:
    async def reached() -> bool:
        return await fired(stack, game, action) >= count

    await until(reached, timeout)


async def history(
    player: Player, base_url: str, table_id: str, after_event_id: int = 0
) -> list[dict[str, Any]]:
    """The table's history as ``player`` sees it: a feed read up to the state
    it draws from (the items; the snapshot or table last)."""
    async with player.feed(base_url, table_id, after_event_id) as feed:
        return await feed.until(lambda item: "snapshot" in item or "table" in item)


def notices_in(items: list[dict[str, Any]], kind: str | None = None) -> list[dict[str, Any]]:
    return [n for item in items if (n := notice(item)) and (kind is None or n["kind"] == kind)]


async def leased(redis: Redis, game: str, match_id: str, version: int) -> tuple[float | None, float | None]:
    """The deadline's score in the clock and in the leased set (None: absent)."""
    member = keys.clock_member(match_id, version)
    return (
        await redis.zscore(keys.clocks(game, keys.group(match_id)), member),
        await redis.zscore(keys.clock_leases(game, keys.group(match_id)), member),
    )


# -- firing exactly once in effect ---------------------------------------------------


async def test_a_deadline_fires_exactly_once_and_tells_the_table(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    ana, bia = await register(a, "ana"), await register(b, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")
    assert snap["deadline_at"] == pytest.approx(snap["idle_since"] + 120)
    before = await fired(clock_stack, "yatzy", "notified")
    async with bia.feed(clock_stack.gateway(1), table_id, after_event_id=snap["last_event_id"]) as feed:
        await feed.snapshot()  # following from now on
        since = await rewind_idle(redis, table_id, 121)
        await make_due(redis, "yatzy", table_id, snap["version"])
        item = await feed.next()
        # One INACTIVE notice in the match history, at the match's version;
        # it changes no version (no snapshot follows).
        assert item["event"]["notice"] == {"kind": INACTIVE, "seat": 0, "since": since}
        assert (item["event"]["id"], item["event"]["version"]) == (snap["last_event_id"] + 1, snap["version"])
        with pytest.raises(TimeoutError):
            await feed.next(timeout=1.5)  # and only once
    assert await fired(clock_stack, "yatzy", "notified") == before + 1
    assert await leased(redis, "yatzy", table_id, snap["version"]) == (None, None)  # taken, fired, let go
    # The seat may now be claimed against (the notice says so), and the match
    # has not moved.
    after = await bia.view(table_id)
    assert (after["version"], after["to_act"], after["status"]) == (snap["version"], [0], ACTIVE)


async def test_many_deadlines_through_two_replicas_each_fire_once(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    players = [await register(a if i % 2 else b, f"p{i}") for i in range(12)]
    tables = [await seated_table([player], "yatzy") for player in players]
    before = await fired(clock_stack, "yatzy", "notified")
    for table_id, snap in tables:
        await rewind_idle(redis, table_id, 121)
        await make_due(redis, "yatzy", table_id, snap["version"])
    await fired_at_least(clock_stack, "yatzy", "notified", before + 12)
    await asyncio.sleep(1)  # several cycles of both replicas
    assert await fired(clock_stack, "yatzy", "notified") == before + 12
    for (table_id, snap), player in zip(tables, players, strict=True):
        told = notices_in(await history(player, clock_stack.gateway(0), table_id), INACTIVE)
        assert [(n["seat"], n["kind"]) for n in told] == [(0, INACTIVE)], table_id
        assert await leased(redis, "yatzy", table_id, snap["version"]) == (None, None)


async def test_a_move_made_in_time_makes_the_deadline_a_no_op(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, _ = replicas
    players = [await register(a, n) for n in ("ana", "bia", "caio")]
    table_id, snap = await seated_table(players, "bozu_mekuri", {"turn_timer_seconds": 30})
    assert snap["deadline_at"] == pytest.approx(snap["idle_since"] + 30)
    (seat,) = snap["to_act"]
    player = players[seat]
    stale_version = snap["version"]
    await rewind_idle(redis, table_id, 31)  # the seat's 30 s have really run out ...
    moved = await player.act(table_id, stale_version, {"flip": {}})  # ... but the move lands first
    # The move replaced the deadline: the old version's entry is gone, the new one is set.
    assert await leased(redis, "bozu_mekuri", table_id, stale_version) == (None, None)
    if moved["status"] == ACTIVE:
        due, _ = await leased(redis, "bozu_mekuri", table_id, moved["version"])
        assert due is not None and due == pytest.approx(moved["deadline_at"]) and due > time.time() + 25
    # The old version's deadline comes due only now (as if its replica had
    # taken it just before the move landed): firing it must change nothing.
    before = await fired(clock_stack, "bozu_mekuri", "moved")
    cpu_turns = await fired(clock_stack, "bozu_mekuri", "cpu_turn")
    await make_due(redis, "bozu_mekuri", table_id, stale_version)
    await fired_at_least(clock_stack, "bozu_mekuri", "moved", before + 1)
    after = await player.view(table_id)
    assert (after["version"], after["to_act"]) == (moved["version"], moved["to_act"])
    assert await fired(clock_stack, "bozu_mekuri", "cpu_turn") == cpu_turns
    assert notices_in(await history(player, clock_stack.gateway(1), table_id)) == []


async def test_bozu_mekuri_timer_has_the_cpu_play_exactly_one_turn(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    ana, bia = await register(a, "ana"), await register(b, "bia")
    table_id, snap = await seated_table([ana, bia], "bozu_mekuri", {"turn_timer_seconds": 30})
    players = [ana, bia]
    (idle,) = snap["to_act"]
    before = await fired(clock_stack, "bozu_mekuri", "cpu_turn")
    async with players[idle].feed(clock_stack.gateway(1), table_id, snap["last_event_id"]) as feed:
        await feed.snapshot()
        await rewind_idle(redis, table_id, 31)  # the game checks the 30 s itself
        await make_due(redis, "bozu_mekuri", table_id, snap["version"])
        items = await feed.until(lambda item: "snapshot" in item, timeout=15)
    after = items[-1]["snapshot"]
    # One write: the CPU_TOOK_OVER notice, then the idle seat's one turn.
    assert after["version"] == snap["version"] + 1
    took_over = notice(items[0])
    assert took_over == {"kind": CPU_TOOK_OVER, "seat": idle, "since": 0.0}, (
        f"the timer of seat {idle} had the CPU take over {took_over}; the write: {items}"
    )
    played = [found for item in items[1:-1] if (found := game_event(item))]
    assert played and played[0][0] == "card_flipped"
    turn_ends = [i for i, (kind, _) in enumerate(played) if kind == "turn_started"]
    moves = [(i, data) for i, (kind, data) in enumerate(played) if kind in ("card_flipped", "stopped")]
    assert all(data["seat"] == idle for _, data in moves)  # nobody else's turn was played
    if after["status"] == ACTIVE:
        # The turn passed once, and the CPU stopped there.
        assert len(turn_ends) == 1 and all(i < turn_ends[0] for i, _ in moves)
        assert played[turn_ends[0]][1]["seat"] == after["to_act"][0]
    else:
        assert turn_ends == []
    # One turn, not the seat: the player still plays it.
    assert after["seats"][idle]["cpu_controlled"] is False
    assert await fired(clock_stack, "bozu_mekuri", "cpu_turn") == before + 1
    snap = after
    while snap["status"] == ACTIVE and snap["to_act"] != [idle]:
        (seat,) = snap["to_act"]
        snap = await players[seat].act(table_id, snap["version"], {"flip": {}})
    if snap["status"] == ACTIVE:
        mine = await players[idle].act(table_id, snap["version"], {"flip": {}})
        assert mine["version"] == snap["version"] + 1


async def test_an_idle_solo_bozo_match_expires(replicas: Any, clock_stack: Stack, redis: Redis) -> None:
    a, _ = replicas
    ana = await register(a, "ana")
    table = await ana.create_table("bozo", 1)
    snap = await ana.start(table["id"])
    table_id = table["id"]
    assert snap["mode"] == "solo" and snap["deadline_at"] == pytest.approx(snap["idle_since"] + 120)
    # A deadline that comes due early (a clock ahead of the game's) does nothing:
    # the game checks the time itself.
    moved = await fired(clock_stack, "bozo", "moved")
    await make_due(redis, "bozo", table_id, snap["version"])
    await fired_at_least(clock_stack, "bozo", "moved", moved + 1)
    assert (await ana.view(table_id))["status"] == ACTIVE
    # Past the 120 s: the match ends, told by an EXPIRED notice that carries the result.
    expired = await fired(clock_stack, "bozo", "expired")
    result = {"ranks": [1], "scores": [0], "reason": "END_REASON_INACTIVITY", "forfeited": [0]}
    async with ana.feed(clock_stack.gateway(1), table_id, snap["last_event_id"]) as feed:
        await feed.snapshot()
        since = await rewind_idle(redis, table_id, 121)
        await make_due(redis, "bozo", table_id, snap["version"])

        async def finished() -> bool:
            return bool((await ana.view(table_id))["status"] == FINISHED)

        await until(finished)
        final = await ana.view(table_id)
        assert final["result"] == result  # was reason "forfeit"
        assert final["version"] == snap["version"] + 1  # one write
        assert await fired(clock_stack, "bozo", "expired") == expired + 1
        # Whoever follows the table hears it: the notice, the final event, the end.
        try:
            items = await feed.until(lambda item: "end" in item, timeout=5)
        except TimeoutError:
            pytest.fail(f"the feed never heard the match expire; it got {feed.items[1:]}")
    events = [item["event"] for item in items if "event" in item]
    assert [e["version"] for e in events] == [final["version"]] * len(events)
    assert events and events[0]["notice"] == {"kind": EXPIRED, "seat": 0, "since": since}
    assert events[-1]["final"] is True and events[-1]["result"] == result
    (pushed,) = [item["snapshot"] for item in items if "snapshot" in item]
    assert pushed["last_event_id"] == events[-1]["id"]
    # (GET /view may count a presence notice appended since: the feed's own close.)
    assert {**pushed, "last_event_id": 0} == {**final, "last_event_id": 0}
    assert items[-1] == {"end": {"reason": "finished"}} and feed.close_code == 1000
    # The history says the same to anyone reading it later.
    later = await history(ana, clock_stack.gateway(0), table_id, snap["last_event_id"])
    assert [item["event"] for item in later if "event" in item][: len(events)] == events


# -- claims --------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["yatzy", "dudo"])
async def test_removal_after_120s_by_any_other_player(
    replicas: Any, clock_stack: Stack, redis: Redis, game: str
) -> None:
    a, b = replicas
    players = [await register(h, n) for h, n in ((a, "ana"), (b, "bia"), (a, "caio"))]
    table_id, snap = await seated_table(players, game)
    (idle,) = snap["to_act"]
    other = players[(idle + 1) % 3]
    claim: dict[str, Any] = {"claim_inactivity": {}}
    with pytest.raises(ApiRefused) as refused:
        await other.act(table_id, snap["version"], claim)
    assert (refused.value.status, refused.value.code) == (409, "too_early")
    await rewind_idle(redis, table_id, 121)
    with pytest.raises(ApiRefused) as refused:
        await players[idle].act(table_id, snap["version"], claim)
    assert refused.value.code == "cannot_claim_yourself"
    removed = await other.act(table_id, snap["version"], claim)
    assert removed["status"] == ACTIVE and idle not in removed["to_act"]  # the others play on
    assert removed["version"] == snap["version"] + 1
    told = notices_in(await history(other, clock_stack.gateway(1), table_id), CLAIMED)
    assert told == [{"kind": CLAIMED, "seat": idle, "since": 0.0, "by": (idle + 1) % 3}]
    # The removed seat is out of the match.
    with pytest.raises(ApiRefused) as refused:
        await players[idle].act(table_id, removed["version"], claim)
    assert refused.value.code == "not_in_game"


async def test_domino_claim_after_120s_by_the_opposing_team_not_the_partner(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    players = [await register(h, n) for h, n in ((a, "ana"), (b, "bia"), (a, "caio"), (b, "davi"))]
    table = await players[0].create_table("domino", 4)  # open tables: anyone sits
    for player in players[1:3]:
        await player.sit(table["id"])
    snap = (await players[3].sit(table["id"]))["match"]  # the last seat starts it
    by_seat = {s["user_id"]: i for i, s in enumerate(snap["seats"])}
    seated = {by_seat[p.user_id]: p for p in players}
    (idle,) = snap["to_act"]
    partner, opponent = seated[(idle + 2) % 4], seated[(idle + 1) % 4]
    claim: dict[str, Any] = {"claim_inactivity": {}}
    with pytest.raises(ApiRefused) as refused:
        await opponent.act(table["id"], snap["version"], claim)
    assert refused.value.code == "too_early"
    await rewind_idle(redis, table["id"], 121)
    with pytest.raises(ApiRefused) as refused:
        await partner.act(table["id"], snap["version"], claim)
    assert (refused.value.status, refused.value.code) == (409, "partner_cannot_claim")
    claimed = await opponent.act(table["id"], snap["version"], claim)
    result = claimed["result"]
    assert claimed["status"] == FINISHED and result["reason"] == "END_REASON_INACTIVITY"
    assert result["forfeited"] == [idle]
    assert result["ranks"][idle] == result["ranks"][(idle + 2) % 4] == 2
    assert result["ranks"][(idle + 1) % 4] == result["ranks"][(idle + 3) % 4] == 1
    told = notices_in(await history(opponent, clock_stack.gateway(1), table["id"]), CLAIMED)
    assert told == [{"kind": CLAIMED, "seat": idle, "since": 0.0, "by": (idle + 1) % 4}]


# -- presence --------------------------------------------------------------------------


async def test_presence_follows_the_newest_connection_across_replicas(
    replicas: Any, clock_stack: Stack
) -> None:
    a, _ = replicas
    ana, bia = await register(a, "ana"), await register(a, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")

    async def connected() -> list[str]:
        return list((await ana.call("GET", f"/v1/tables/{table_id}/presence"))["connected"])

    async def shows(expected: list[str]) -> bool:
        return await connected() == expected

    assert await connected() == []
    old = bia.feed(clock_stack.gateway(0), table_id)
    await old.__aenter__()
    await old.snapshot()
    await until(lambda: shows([bia.user_id]))
    # Bia reconnects on the other replica; then the old connection closes late.
    new = bia.feed(clock_stack.gateway(1), table_id)
    await new.__aenter__()
    await new.snapshot()
    await old.__aexit__(None, None, None)
    await asyncio.sleep(0.5)
    assert await connected() == [bia.user_id]  # the old "leave" did not unseat the new connection
    await new.__aexit__(None, None, None)
    await until(lambda: shows([]))
    # The table heard bia leave once (her last feed), not when the old one closed.
    await asyncio.sleep(0.3)
    items = await history(ana, clock_stack.gateway(1), table_id, snap["last_event_id"])
    assert [(n["kind"], n["seat"]) for n in notices_in(items)] == [(DISCONNECTED, 1)]
    # A notice carries the version it happened at, as every event does.
    (gone,) = [item["event"] for item in items if notice(item)]
    assert gone["version"] == snap["version"]
    # She comes back: the table hears that too, and she is present again.
    async with bia.feed(clock_stack.gateway(0), table_id) as again:
        await again.snapshot()
        await until(lambda: shows([bia.user_id]))
        items = await history(ana, clock_stack.gateway(1), table_id, snap["last_event_id"])
        seen = [(n["kind"], n["seat"]) for n in notices_in(items) if n["seat"] == 1]
        assert seen == [(DISCONNECTED, 1), (RECONNECTED, 1)]
    await until(lambda: shows([]))


# -- issue 16.5: deadlines at least once -------------------------------------------------


async def test_a_lease_a_dead_replica_left_is_taken_and_fired_once(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    """A replica took the deadline (moved it from the clock to the leased set)
    and died before firing it. While its lease runs, nobody else fires it;
    once the lease has run out, another replica takes it and fires it, once."""
    a, b = replicas
    ana, bia = await register(a, "ana"), await register(b, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")
    member = keys.clock_member(table_id, snap["version"])
    since = await rewind_idle(redis, table_id, 121)
    before = await fired(clock_stack, "yatzy", "notified")
    # What the take leaves behind: gone from the clock, in the leased set
    # with the lease's end as its score; the lease still runs.
    pipe = redis.pipeline(transaction=True)
    pipe.zrem(keys.clocks("yatzy", keys.group(table_id)), member)
    pipe.zadd(keys.clock_leases("yatzy", keys.group(table_id)), {member: time.time() + 3600})
    await pipe.execute()
    await asyncio.sleep(1)  # five cycles of each live replica
    assert await fired(clock_stack, "yatzy", "notified") == before
    assert notices_in(await history(ana, clock_stack.gateway(0), table_id)) == []
    # The dead replica's lease runs out.
    await redis.zadd(keys.clock_leases("yatzy", keys.group(table_id)), {member: time.time() - 1})
    await fired_at_least(clock_stack, "yatzy", "notified", before + 1)
    await asyncio.sleep(1)
    assert await fired(clock_stack, "yatzy", "notified") == before + 1
    told = notices_in(await history(bia, clock_stack.gateway(1), table_id), INACTIVE)
    assert told == [{"kind": INACTIVE, "seat": 0, "since": since}]
    assert await leased(redis, "yatzy", table_id, snap["version"]) == (None, None)


async def test_a_repeated_fire_for_one_version_tells_the_table_once(
    replicas: Any, clock_stack: Stack, redis: Redis
) -> None:
    a, _ = replicas
    ana, bia = await register(a, "ana"), await register(a, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")
    # Only this test fires it: the clocks are kept out.
    await redis.zrem(keys.clocks("yatzy", keys.group(table_id)), keys.clock_member(table_id, snap["version"]))
    since = await rewind_idle(redis, table_id, 121)
    platform = clock_stack.platform_metadata()
    request = match_pb2.FireDeadlineRequest(match_id=table_id, expected_version=snap["version"])
    async with grpc.aio.insecure_channel(clock_stack.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        # Replicas racing on one deadline (a lease that ran out while its
        # holder was still at work), then a late repeat.
        replies = await asyncio.gather(*(stub.FireDeadline(request, metadata=platform) for _ in range(6)))
        replies.append(await stub.FireDeadline(request, metadata=platform))
        assert {r.outcome for r in replies} == {match_pb2.DEADLINE_OUTCOME_NOTIFIED}
        # Another version's deadline is no longer this match's.
        stale = match_pb2.FireDeadlineRequest(match_id=table_id, expected_version=snap["version"] - 1)
        assert (await stub.FireDeadline(stale, metadata=platform)).outcome == match_pb2.DEADLINE_OUTCOME_MOVED
        # Only the platform fires deadlines.
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.FireDeadline(request, metadata=bearer(ana.token))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_reason(refused.value) == "platform_only"
    items = await history(bia, clock_stack.gateway(0), table_id)
    assert notices_in(items, INACTIVE) == [{"kind": INACTIVE, "seat": 0, "since": since}]
    after = items[-1]["snapshot"]
    assert (after["version"], after["last_event_id"]) == (snap["version"], snap["last_event_id"] + 1)


@pytest.fixture
def lease_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Yatzy alone, with short leases; the test starts its replicas itself."""
    with Stack(
        tmp_path_factory.mktemp("leases"), games=("yatzy",), env={"CLOCK_LEASE_SECONDS": "2"}
    ) as stack:
        yield stack


async def test_a_replica_killed_between_taking_and_firing_a_deadline(lease_stack: Stack) -> None:
    """SIGKILL a replica right after it took a deadline, before it acted:
    the game service is paused (SIGSTOP), so the replica's FireDeadline
    cannot have been answered when it dies. Another replica takes the
    deadline once the lease has run out and fires it; the table is told once
    (if the paused service, resumed, still serves the dead replica's call,
    the second fire changes nothing)."""
    doomed = lease_stack.gateway(0)
    game = lease_stack.processes["yatzy"]
    async with httpx.AsyncClient(base_url=doomed, timeout=15) as http:
        ana, bia = await register(http, "ana"), await register(http, "bia")
        table_id, snap = await seated_table([ana, bia], "yatzy")
    redis = Redis.from_url(lease_stack.redis_url, decode_responses=True)
    try:
        since = await rewind_idle(redis, table_id, 121)
        game.send_signal(signal.SIGSTOP)
        try:
            await make_due(redis, "yatzy", table_id, snap["version"])

            async def taken() -> bool:
                return await leased(redis, "yatzy", table_id, snap["version"]) != (None, None) and (
                    await redis.zscore(
                        keys.clocks("yatzy", keys.group(table_id)),
                        keys.clock_member(table_id, snap["version"]),
                    )
                    is None
                )

            await until(taken)
            lease_stack.stop("gateway", sig=signal.SIGKILL)
            assert lease_stack.processes["gateway"].returncode == -signal.SIGKILL
        finally:
            game.send_signal(signal.SIGCONT)
        _, lease = await leased(redis, "yatzy", table_id, snap["version"])
        assert lease is not None  # the dead replica's lease is still there
        survivor = lease_stack.gateway(1)

        async def fired_by_survivor() -> bool:
            return await fired(lease_stack, "yatzy", "notified", replicas=(1,)) >= 1

        await until(fired_by_survivor, timeout=15)
        assert await leased(redis, "yatzy", table_id, snap["version"]) == (None, None)
        await asyncio.sleep(1)
        assert await fired(lease_stack, "yatzy", "notified", replicas=(1,)) == 1
        async with httpx.AsyncClient(base_url=survivor, timeout=15) as http:
            reader = Player(http, bia.token, bia.user_id, bia.name)
            items = await history(reader, survivor, table_id)
        assert notices_in(items, INACTIVE) == [{"kind": INACTIVE, "seat": 0, "since": since}]
        assert items[-1]["snapshot"]["version"] == snap["version"]
    finally:
        await redis.aclose()
