"""The social feed on a real Redis: a follower gets everything after its id
then everything new, in order, without gap or duplicate — from a history
longer than one read, across two hubs (two replicas), and when it stalls
past the live buffer; the stream is trimmed and expires."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from rodada.platform.v1 import social_pb2

from gateway.social import feed as social_feed
from gateway.social.feed import SocialFeeds
from services.core import keys
from services.core.store import RedisClient, connect, publish_command
from tools.redis_server import RedisServer


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    client = connect(redis_server.url, timeout=5.0)
    try:
        yield client
    finally:
        await client.aclose()


async def hub(redis: RedisClient, length: int = 5_000, ttl: int = 3_600) -> SocialFeeds:
    feeds = SocialFeeds(redis, length, ttl)
    feeds.publish = await publish_command(redis, cluster=False)
    return feeds


def said(n: int) -> social_pb2.SocialEvent:
    return social_pb2.SocialEvent(at=float(n), message=social_pb2.ChatMessage(text=f"m{n}"))


async def take(events: AsyncIterator[social_pb2.SocialEvent], count: int) -> list[social_pb2.SocialEvent]:
    return [await asyncio.wait_for(anext(events), 15) for _ in range(count)]


async def test_history_longer_than_one_read_then_live_from_another_replica(redis: RedisClient) -> None:
    writer, reader = await hub(redis), await hub(redis)  # two replicas' hubs
    user = secrets.token_hex(4)
    ids = [await writer.write(user, said(n)) for n in range(1_200)]
    events = reader.follow(user, "")
    try:
        got = await take(events, 1_200)
        assert [e.message.text for e in got] == [f"m{n}" for n in range(1_200)]
        assert [e.id for e in got] == ids
        live_id = await writer.write(user, said(1_200))
        (live,) = await take(events, 1)
        assert (live.id, live.message.text) == (live_id, "m1200")
    finally:
        await events.aclose()  # type: ignore[attr-defined]
        await reader.close()
        await writer.close()

    # Resuming after an id gives exactly what follows it.
    again = await hub(redis)
    events = again.follow(user, ids[1_000])
    try:
        got = await take(events, 200)
        assert [e.message.text for e in got] == [f"m{n}" for n in range(1_001, 1_201)]
    finally:
        await events.aclose()  # type: ignore[attr-defined]
        await again.close()


async def test_a_stalled_follower_catches_up_from_its_stream(
    redis: RedisClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(social_feed, "MAX_PENDING", 20)
    feeds = await hub(redis)
    user = secrets.token_hex(4)
    events = feeds.follow(user, "")
    first = asyncio.ensure_future(anext(events))  # subscribed and waiting, then stalls
    await asyncio.sleep(0)
    await feeds.write(user, said(0))
    assert (await asyncio.wait_for(first, 15)).message.text == "m0"
    try:
        for n in range(1, 101):  # far past the live buffer while nobody reads
            await feeds.write(user, said(n))
        queued = next(iter(feeds._followers[user]))
        # Its buffer stopped growing: the rest is left in the stream.
        for _ in range(100):
            if queued.qsize() >= 21:
                break
            await asyncio.sleep(0.05)
        assert queued.qsize() == 21
        got = await take(events, 100)
        assert [e.message.text for e in got] == [f"m{n}" for n in range(1, 101)]
    finally:
        await events.aclose()  # type: ignore[attr-defined]
        await feeds.close()


async def test_the_stream_is_trimmed_and_expires(redis: RedisClient) -> None:
    feeds = await hub(redis, length=100, ttl=600)
    user = secrets.token_hex(4)
    for n in range(1_000):
        await feeds.write(user, said(n))
    kept = await feeds.history(user, "", 5_000)
    # MAXLEN ~ trims whole nodes: about the length, never much more, the newest kept.
    assert 100 <= len(kept) < 300 and kept[-1].message.text == "m999"
    assert [e.message.text for e in kept] == [f"m{n}" for n in range(1_000 - len(kept), 1_000)]
    assert 0 < await redis.ttl(keys.social_feed(user)) <= 600
    await feeds.close()


async def test_a_draining_hub_ends_its_followers(redis: RedisClient) -> None:
    feeds = await hub(redis)
    events = feeds.follow(secrets.token_hex(4), "")
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.2)
    await feeds.close()
    with pytest.raises(Exception) as ended:
        await asyncio.wait_for(waiting, 15)
    assert getattr(ended.value, "reason", None) == "draining"
