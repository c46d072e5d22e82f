"""The feeds a replica holds (gateway/feeds.py ``Connections``) on a real
Redis: a refresh cycle pushes back the expiry of every registration, a chunk
of connections per round trip, and brings back none that closed."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

from gateway import feeds
from services.core import keys
from services.core.store import RecordStore

EXPIRY_MS = feeds.EXPIRY_SECONDS * 1000


async def test_a_refresh_pushes_back_every_feed_across_chunks(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feeds, "REFRESH_CHUNK", 3)  # ten feeds: chunks of 3, 3, 3 and 1
    redis = store.redis
    connections = feeds.Connections(redis, cap=8)
    prefix = secrets.token_hex(4)
    held = []
    for i in range(10):
        user, table, seated = f"{prefix}u{i}", f"{prefix}t{i // 2}", i % 2 == 0
        connection, _, _ = await connections.open(user, table, seated)
        held.append((connection, user, table, seated))
    for connection, user, table, seated in held:  # every registration near its end
        await redis.zadd(keys.feeds(user), {connection: 1}, xx=True)
        await redis.pexpire(keys.feeds(user), 5000)
        await redis.delete(keys.at_table(user))
        if seated:
            await redis.zadd(keys.feeds_at(user, table), {connection: 1}, xx=True)
            await redis.pexpire(keys.feeds_at(user, table), 5000)

    before = time.time()
    await connections.refresh()
    after = time.time()

    for connection, user, table, seated in held:
        registered = [keys.feeds(user)] + ([keys.feeds_at(user, table)] if seated else [])
        for key in registered:
            score = await redis.zscore(key, connection)
            assert before + feeds.EXPIRY_SECONDS <= score <= after + feeds.EXPIRY_SECONDS, (key, score)
            assert EXPIRY_MS - 5000 < await redis.pttl(key) <= EXPIRY_MS, key
        if seated:
            assert await redis.get(keys.at_table(user)) == table.encode()
            assert feeds.EXPIRY_SECONDS - 5 < await redis.ttl(keys.at_table(user)) <= feeds.EXPIRY_SECONDS
        else:
            assert await redis.exists(keys.feeds_at(user, table), keys.at_table(user)) == 0


async def test_a_feed_closed_during_a_refresh_is_not_registered_again(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feeds, "REFRESH_CHUNK", 1)
    redis = store.redis
    connections = feeds.Connections(redis, cap=8)
    prefix = secrets.token_hex(4)
    first, _, _ = await connections.open(f"{prefix}a", f"{prefix}t", True)
    second, _, _ = await connections.open(f"{prefix}b", f"{prefix}t", True)
    await redis.delete(keys.at_table(f"{prefix}a"), keys.at_table(f"{prefix}b"))

    cycle = asyncio.create_task(connections.refresh())
    await asyncio.sleep(0)  # the cycle has sent its first chunk and waits for the reply
    await connections.close(second, tell=False)
    await cycle

    assert await redis.get(keys.at_table(f"{prefix}a")) == f"{prefix}t".encode()
    assert await redis.exists(keys.at_table(f"{prefix}b")) == 0  # not marked at the table again
    assert await redis.zscore(keys.feeds(f"{prefix}b"), second) is None
    assert await redis.zscore(keys.feeds(f"{prefix}a"), first) is not None
