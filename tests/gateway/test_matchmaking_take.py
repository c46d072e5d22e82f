"""The matcher's batched take on a real Redis: one script call takes many
tables, each all or nothing — a table whose tickets are all still waiting
with every member alive is taken, one with a cancelled ticket, a ticket whose
heartbeat ran out or a ticket an earlier table of the batch took changes
nothing, and does not stop the tables after it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any, cast

import orjson
import pytest

from gateway.matchmaking.queues import CANCELLED, FORMING, MATCHED, WAITING, Matchmaking, Queue
from gateway.settings import MatchmakingSettings
from services.core import keys
from services.core.store import RedisClient, connect
from tools.redis_server import RedisServer

QUEUE = Queue("bozo", "duel", False, '{"mode":"DUEL"}')


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    client = connect(redis_server.url, decode=True, timeout=2.0)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


def matcher(redis: RedisClient) -> Matchmaking:
    # The take needs only Redis: no games or tables are reached.
    return Matchmaking(redis, cast(Any, None), cast(Any, None), MatchmakingSettings())


async def waiting_ticket(mm: Matchmaking, user: str, alive_until: float) -> str:
    ticket_id = QUEUE.hash + user.encode().hex().ljust(16, "0")[:16]
    now = time.time()
    doc = {"queue": QUEUE.spec(), "leader": user, "party": False, "created_at": now}
    member = {"user_id": user, "name": user, "role": "guest", "rating": 1500.0}
    await mm._create(
        keys=[keys.mm_ticket(ticket_id), QUEUE.key("waiting"), QUEUE.key("alive"), QUEUE.key("waits")],
        args=[ticket_id, orjson.dumps(doc), orjson.dumps([member]), WAITING, now, alive_until, "", user],
    )
    return ticket_id


def plan(table_id: str, seats: list[tuple[str, str] | None]) -> dict[str, Any]:
    """A table's plan: (ticket, user) per seat, None for a CPU."""
    players: list[dict[str, Any]] = []
    tickets: dict[str, dict[str, Any]] = {}
    for seat, who in enumerate(seats):
        if who is None:
            players.append({"cpu": True, "name": f"CPU {seat}"})
            continue
        ticket_id, user = who
        players.append({"user_id": user, "name": user})
        tickets.setdefault(ticket_id, {"enqueued_at": 0.0, "seats": {}})["seats"][user] = seat
    return {"table_id": table_id, "ranked": False, "formed_at": 0.0, "players": players, "tickets": tickets}


async def test_a_batch_takes_each_table_all_or_nothing(redis: RedisClient) -> None:
    mm = matcher(redis)
    now = time.time()
    users = ("ana", "bia", "cai", "dan", "eva", "fay", "gil")
    ids = {u: await waiting_ticket(mm, u, now + 60) for u in users}
    # Dan cancelled; Fay's heartbeat ran out before the take.
    closed = await mm._close(
        keys=[keys.mm_ticket(ids["dan"]), QUEUE.key("waiting"), QUEUE.key("alive")],
        args=[ids["dan"], CANCELLED, now, 60_000, "0", "cancelled"],
    )
    assert closed == "closed"
    await redis.zadd(QUEUE.key("alive"), {f"{ids['fay']}|fay": now - 1}, xx=True)

    batch = [
        plan("t1", [(ids["ana"], "ana"), (ids["bia"], "bia")]),
        plan("t2", [(ids["cai"], "cai"), (ids["dan"], "dan")]),  # Dan is cancelled
        plan("t3", [(ids["eva"], "eva"), (ids["fay"], "fay")]),  # Fay is not alive
        plan("t4", [(ids["gil"], "gil"), (ids["ana"], "ana")]),  # Ana went to t1 just before
        plan("t5", [(ids["gil"], "gil"), None]),  # bot fill: Gil and a CPU
    ]
    assert await mm._take_batch(QUEUE, batch, now) == [True, False, False, False, True]

    state = {u: await redis.hgetall(keys.mm_ticket(ids[u])) for u in users}
    assert (state["ana"]["state"], state["ana"]["table"], orjson.loads(state["ana"]["seats"])) == (
        FORMING,
        "t1",
        {"ana": 0},
    )
    assert (state["bia"]["table"], orjson.loads(state["bia"]["seats"])) == ("t1", {"bia": 1})
    assert (state["gil"]["state"], state["gil"]["table"], orjson.loads(state["gil"]["cpu_seats"])) == (
        FORMING,
        "t5",
        [1],
    )
    # The tables not taken changed nothing: their tickets are as they were.
    for user in ("cai", "eva", "fay"):
        assert state[user]["state"] == WAITING and "table" not in state[user]
    assert state["dan"]["state"] == CANCELLED and "table" not in state["dan"]
    assert set(await redis.zrange(QUEUE.key("waiting"), 0, -1)) == {ids["cai"], ids["eva"], ids["fay"]}
    assert set(await redis.zrange(QUEUE.key("forming"), 0, -1)) == {"t1", "t5"}
    assert set(await redis.hkeys(QUEUE.key("plans"))) == {"t1", "t5"}
    alive = set(await redis.zrange(QUEUE.key("alive"), 0, -1))
    assert alive == {f"{ids[u]}|{u}" for u in ("cai", "eva", "fay")}
    # Taking the same tables again takes nothing.
    assert await mm._take_batch(QUEUE, batch[:1] + batch[4:], now) == [False, False]


async def test_the_finish_publishes_each_tickets_seating_once(redis: RedisClient) -> None:
    """The finish script closes a formation and publishes its notice, with
    the table, seats and CPU seats, from Lua; a second finish of the same
    table (another replica's) closes nothing and publishes nothing."""
    mm = matcher(redis)
    now = time.time()
    ana, bia, cai = [await waiting_ticket(mm, u, now + 60) for u in ("ana", "bia", "cai")]
    duel, bot = plan("t1", [(ana, "ana"), (bia, "bia")]), plan("t2", [None, (cai, "cai")])
    assert await mm._take_batch(QUEUE, [duel, bot], now) == [True, True]
    woken = {t: mm.notices.watch(t) for t in (ana, bia, cai)}
    await mm.notices.ready()
    try:
        assert await mm._finish_plan(QUEUE, duel, MATCHED, "") is True
        assert await mm._finish_plan(QUEUE, bot, MATCHED, "") is True
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in woken.values())), 5)
        assert mm.notices.matched(ana) == {"table_id": "t1", "seats": {"ana": 0}, "cpu_seats": []}
        assert mm.notices.matched(bia) == {"table_id": "t1", "seats": {"bia": 1}, "cpu_seats": []}
        assert mm.notices.matched(cai) == {"table_id": "t2", "seats": {"cai": 1}, "cpu_seats": [0]}
        for ticket_id in (ana, bia, cai):
            assert await redis.hget(keys.mm_ticket(ticket_id), "state") == MATCHED
        # Another replica finishing the same table: nothing closed, nobody told.
        woken[ana].clear()
        woken[cai].clear()
        assert await mm._finish_plan(QUEUE, duel, MATCHED, "") is False
        await redis.publish(keys.MM_NOTICES, cai)  # a later notice, heard after any from the finish
        await asyncio.wait_for(woken[cai].wait(), 5)
        assert not woken[ana].is_set()
        mm.notices.unwatch(ana, woken[ana])
        assert mm.notices.matched(ana) is None  # forgotten with its last follower
    finally:
        await mm.notices.close()
