"""Each user's social feed: private messages, friend notices and table
invites, kept in the user's stream (bounded by MAXLEN and a lifetime) and
pushed live to every replica holding a feed of that user.

One Lua script appends the event, renews the lifetime and publishes the
entry on the user's live channel (all in the user's slot), so a follower
that subscribes first and then reads the history has no gap: it skips
live entries it already read. Like the table feeds, a replica holds one
pub/sub connection per Redis node (the kit's shard), subscribing a user's
channel while it has followers of that user; when that connection is lost
and back, every follower re-reads its stream from its last id.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from rodada.platform.v1 import social_pb2

from services.core import keys
from services.core.errors import Refused, invalid, unavailable
from services.core.feeds import Shard  # the table feeds' pub/sub connection, reused as is
from services.core.store import RedisClient

# KEYS: stream, channel. ARGV: publish command, maxlen, ttl, event bytes.
_WRITE = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'd', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if ARGV[1] ~= '' then redis.call(ARGV[1], KEYS[2], id .. ' ' .. ARGV[4]) end
return id
"""

_REPAIR = object()  # a follower's cue to re-read its stream: live messages may be lost
# Live events waiting for a follower that does not keep up; past this it is
# cued to re-read its stream instead, so a stalled client costs no memory.
MAX_PENDING = 1_000
_BATCH = 500


def _order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class SocialFeeds:
    def __init__(self, redis: RedisClient, max_length: int, ttl_seconds: int) -> None:
        self.redis = redis  # bytes replies
        self.max_length = max_length
        self.ttl = ttl_seconds
        self.publish = "PUBLISH"
        self._write = redis.register_script(_WRITE)
        self._followers: dict[str, set[asyncio.Queue[Any]]] = {}
        self._shards: dict[str, Shard] = {}
        self._closing: Refused | None = None

    async def write(self, user_id: str, event: social_pb2.SocialEvent) -> str:
        """Append ``event`` to the user's feed (its id and time are set
        here) and push it; the entry id."""
        payload = event.SerializeToString()
        entry = await self._write(
            keys=[keys.social_feed(user_id), keys.social_live(user_id)],
            args=[self.publish, self.max_length, self.ttl, payload],
        )
        return _text(entry)

    async def history(self, user_id: str, after_id: str, count: int = 500) -> list[social_pb2.SocialEvent]:
        start = f"({after_id}" if after_id else "-"
        entries: Any = await self.redis.xrange(keys.social_feed(user_id), start, "+", count=count)
        return [_event(_text(entry_id), fields[b"d"]) for entry_id, fields in entries]

    async def open(self, user_id: str, after_id: str) -> Following:
        """Subscribe a follower of the user's feed: live from now, so what it
        reads next (the history after ``after_id``, then live events) has no
        gap. Let go of it with ``Following.close``."""
        if self._closing:
            raise self._closing
        check_after(after_id)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        await self._join(user_id, queue)
        return Following(self, user_id, after_id, queue)

    async def follow(self, user_id: str, after_id: str) -> AsyncIterator[social_pb2.SocialEvent]:
        """Everything after ``after_id`` still kept, then each new event,
        until the server drains (Refused ``draining``)."""
        following = await self.open(user_id, after_id)
        try:
            async for event in following.events():
                yield event
        finally:
            following.close()

    async def close(self) -> None:
        """Stop every follower (draining: they resume elsewhere)."""
        self._closing = unavailable("this server is draining; resume on another", "draining")
        for queues in self._followers.values():
            for queue in queues:
                queue.put_nowait(self._closing)
        for shard in self._shards.values():
            await shard.close()

    # -- subscriptions ------------------------------------------------------------

    async def _join(self, user_id: str, queue: asyncio.Queue[Any]) -> None:
        followers = self._followers.setdefault(user_id, set())
        followers.add(queue)
        if len(followers) > 1:
            return
        try:
            await self._shard(user_id).subscribe(keys.social_live(user_id))
        except Exception as error:
            self._leave(user_id, queue)
            raise unavailable("live updates are unavailable; retry shortly") from error

    def _leave(self, user_id: str, queue: asyncio.Queue[Any]) -> None:
        followers = self._followers.get(user_id)
        if followers is None:
            return
        followers.discard(queue)
        if not followers:
            del self._followers[user_id]
            with contextlib.suppress(Exception):
                self._shard(user_id).unsubscribe_soon(
                    keys.social_live(user_id), lambda: user_id in self._followers
                )

    def _shard(self, user_id: str) -> Shard:
        sharded = self.publish == "SPUBLISH"
        if isinstance(self.redis, RedisCluster):
            node = self.redis.get_node_from_key(keys.social_live(user_id))
            if node is None:
                raise unavailable("the Redis Cluster has no node for this user yet; retry shortly")
            name = f"{node.host}:{node.port}"
            if name not in self._shards:
                client = Redis(host=node.host, port=int(node.port), socket_keepalive=True)
                self._shards[name] = Shard(client, sharded, self._deliver, self._repair)
            return self._shards[name]
        if "" not in self._shards:
            self._shards[""] = Shard(self.redis, sharded, self._deliver, self._repair)
        return self._shards[""]

    async def _deliver(self, channel: str, data: bytes) -> None:
        followers = self._followers.get(keys.user_of_live(channel))
        if not followers:
            return
        entry_id, _, payload = data.partition(b" ")
        event = _event(entry_id.decode(), payload)
        for queue in followers:
            if queue.qsize() < MAX_PENDING:
                queue.put_nowait(event)
            elif queue.qsize() == MAX_PENDING:
                queue.put_nowait(_REPAIR)  # it will read the rest from its stream

    async def _repair(self, shard: Shard) -> None:
        for queues in self._followers.values():
            for queue in queues:
                queue.put_nowait(_REPAIR)


def check_after(after_id: str) -> None:
    if after_id:
        try:
            _order(after_id)
        except ValueError:
            raise invalid("invalid_request", "after_id: an id from this feed") from None


class Following:
    """One follower of a user's feed, subscribed (SocialFeeds.open)."""

    def __init__(self, feeds: SocialFeeds, user_id: str, after_id: str, queue: asyncio.Queue[Any]) -> None:
        self.feeds, self.user_id, self.after_id, self.queue = feeds, user_id, after_id, queue

    async def events(self) -> AsyncIterator[social_pb2.SocialEvent]:
        position = self.after_id or "0-0"
        while True:
            while True:
                batch = await self.feeds.history(self.user_id, position, _BATCH)
                for event in batch:
                    position = event.id
                    yield event
                if len(batch) < _BATCH:
                    break
            while True:
                item = await self.queue.get()
                if isinstance(item, Refused):
                    raise item
                if item is _REPAIR:
                    break  # read the stream again from where we are
                if _order(item.id) > _order(position):
                    position = item.id
                    yield item

    def close(self) -> None:
        self.feeds._leave(self.user_id, self.queue)


def _event(entry_id: str, payload: bytes) -> social_pb2.SocialEvent:
    event = social_pb2.SocialEvent.FromString(payload)
    event.id = entry_id
    return event
