"""The results consumer's delivery (gateway/results.py ``Results``) on a real
Redis: every new entry taken once and acknowledged once recorded; a dead
replica's entries and ours left pending by a failure are taken by a sweep,
which the steady reads (new entries only) leave alone."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from gateway import results
from gateway.games import Games
from services.core.store import RedisClient, connect
from tools.redis_server import RedisServer

Recorded = list[tuple[str, str]]


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    """Replies as str, as the gateway's client gives them."""
    client = connect(redis_server.url, decode=True, timeout=2.0)
    try:
        yield client
    finally:
        await client.aclose()


async def _consumer(
    redis: RedisClient, fail: set[str] | None = None
) -> tuple[results.Results, list[str], Recorded]:
    """A consumer of two fresh streams whose ``record`` notes each match (and
    raises, as a Redis hiccup would, for those in ``fail``)."""
    consumer = results.Results(redis, Games.__new__(Games))
    recorded: Recorded = []

    async def record(game: str, match_id: str, result: dict[str, Any]) -> None:
        if fail and match_id in fail:
            fail.discard(match_id)
            raise ConnectionError("Redis went away")
        recorded.append((game, match_id))

    consumer.record = record  # type: ignore[method-assign]
    streams = [f"test-results:{secrets.token_hex(4)}:{i}" for i in range(2)]
    for stream in streams:
        await redis.xgroup_create(stream, results.GROUP, id="0", mkstream=True)
    return consumer, streams, recorded


async def _finish(redis: RedisClient, stream: str, match_id: str) -> None:
    fields = {"game": "nim", "match": match_id, "result": orjson.dumps({"seats": []})}
    await redis.xadd(stream, fields)


async def _pending(redis: RedisClient, stream: str) -> int:
    return int((await redis.xpending(stream, results.GROUP))["pending"])


async def test_new_entries_are_recorded_once_and_acknowledged(redis: RedisClient) -> None:
    consumer, streams, recorded = await _consumer(redis)
    await _finish(redis, streams[0], "m1")
    await _finish(redis, streams[1], "m2")
    assert await consumer._consume(streams, "me", sweep=False) == 2
    assert await consumer._consume(streams, "me", sweep=True) == 0
    assert await consumer._consume(streams, "me", sweep=False) == 0
    assert sorted(recorded) == [("nim", "m1"), ("nim", "m2")]
    assert [await _pending(redis, s) for s in streams] == [0, 0]


async def test_a_dead_replicas_entries_are_taken_by_a_sweep_only(
    redis: RedisClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "RECLAIM_IDLE_MS", 0)  # claimable at once
    consumer, streams, recorded = await _consumer(redis)
    await _finish(redis, streams[0], "m1")
    taken = await redis.xreadgroup(results.GROUP, "dead", {streams[0]: ">"}, count=10)
    assert taken and await _pending(redis, streams[0]) == 1  # the dead replica's, never acknowledged
    assert await consumer._consume(streams, "me", sweep=False) == 0
    assert recorded == []
    assert await consumer._consume(streams, "me", sweep=True) == 1
    assert recorded == [("nim", "m1")] and await _pending(redis, streams[0]) == 0


async def test_an_entry_whose_recording_failed_is_recorded_by_the_next_sweep(redis: RedisClient) -> None:
    consumer, streams, recorded = await _consumer(redis, fail={"m1"})
    await _finish(redis, streams[0], "m1")
    with pytest.raises(ConnectionError):
        await consumer._consume(streams, "me", sweep=False)
    assert await _pending(redis, streams[0]) == 1  # taken by us, not acknowledged
    assert await consumer._consume(streams, "me", sweep=False) == 0  # a steady read leaves it
    assert await consumer._consume(streams, "me", sweep=True) == 1
    assert recorded == [("nim", "m1")] and await _pending(redis, streams[0]) == 0
