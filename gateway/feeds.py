"""A table's feed, for a caller, over either face (WebSocket or gRPC): the
table's history from the caller's last event id, the state to draw from,
then everything new, until the match's end (``services/core/feeds.py`` does
the fan-out). Around it, the feeds every replica holds open:

- a cap per user (``MAX_FEEDS_PER_USER``): one user cannot use up a
  replica's feeds, and an extra one is refused with ``too_many_feeds``;
- presence: which seated players have a feed open on a table. When a
  seated player's last feed on a started table closes, the table is told
  (notice DISCONNECTED); when they come back, RECONNECTED.

Keys (the user's hash tag keeps one user's keys in one Redis Cluster slot,
so one script updates them together): ``{u:<user>}:feeds`` and
``{u:<user>}:at:<table>`` sorted sets of connection ids scored by when they
expire, ``{u:<user>}:gone:<table>`` a marker that the table was told the
player left. One task per replica refreshes every connection it holds, so a
replica that dies is forgotten within ``EXPIRY_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import grpc
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2

from gateway import metrics
from gateway.games import Games
from gateway.matches import Caller, MatchClient
from gateway.tables import PLAYING, Tables
from services.core import keys
from services.core.errors import Refused, invalid
from services.core.feeds import FeedHub, Item, Viewer
from services.core.store import RecordStore, RedisClient

log = logging.getLogger("rodada.gateway.feeds")

REFRESH_SECONDS = 20.0
EXPIRY_SECONDS = 60.0
# Connections refreshed per pipeline. Building a pipeline and parsing its
# replies hold the event loop, 40-60 us of CPU per connection: 10,000 feeds
# in one pipeline held it 0.16-0.3 s at a time (every move and feed
# waiting), a chunk of this many about 6 ms; the loop runs while each
# chunk's replies come (tools/bench_keep_alive.py).
REFRESH_CHUNK = 128


# KEYS: feeds, at (or a dummy when not seated), gone, the user's blocked set,
# the user's at-table marker (all in the user's slot). ARGV: connection, now,
# expires, cap, seated, table, marker lifetime. Returns {-1} (over the cap),
# or {1 if the player was away from the table and told so (a comeback) else
# 0, the users this user blocked…} (what the feed's chat sight needs: read
# here, not in a round trip of its own). A seated feed also marks where the
# user sits, for their friends (gateway/social/).
_OPEN = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return {-1} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(ARGV[3]) * 1000))
local blocked = redis.call('SMEMBERS', KEYS[4])
if ARGV[5] ~= '1' then return {0, unpack(blocked)} end
redis.call('SET', KEYS[5], ARGV[6], 'EX', ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
local away = redis.call('ZCARD', KEYS[2]) == 0
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('PEXPIREAT', KEYS[2], math.floor(tonumber(ARGV[3]) * 1000))
local back = 0
if away and redis.call('DEL', KEYS[3]) == 1 then back = 1 end
return {back, unpack(blocked)}
"""

# KEYS: feeds, at, gone. ARGV: connection, now, seated, tell. Returns 1 if
# this was the player's last feed at the table and the table must be told.
_CLOSE = """
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[3] ~= '1' then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[2]) == 0 and ARGV[4] == '1' then
  redis.call('SET', KEYS[3], '1', 'EX', 86400)
  return 1
end
return 0
"""


class _Open(NamedTuple):
    user_id: str
    table_id: str
    seated: bool


@dataclass
class Connections:
    """The feeds this replica holds open, registered in Redis."""

    redis: RedisClient
    cap: int
    _mine: dict[str, _Open] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._open = self.redis.register_script(_OPEN)
        self._close = self.redis.register_script(_CLOSE)

    @property
    def count(self) -> int:
        return len(self._mine)

    async def open(self, user_id: str, table_id: str, seated: bool) -> tuple[str, bool, set[str]]:
        """Register a feed; (its id, whether it is the player's comeback, the
        users this user blocked). Refused past the user's cap."""
        connection = secrets.token_hex(8)
        now = time.time()
        reply = await self._open(
            keys=[
                keys.feeds(user_id),
                keys.feeds_at(user_id, table_id),
                keys.feeds_gone(user_id, table_id),
                keys.blocked(user_id),
                keys.at_table(user_id),
            ],
            args=[
                connection,
                now,
                now + EXPIRY_SECONDS,
                self.cap,
                "1" if seated else "0",
                table_id,
                int(EXPIRY_SECONDS),
            ],
        )
        code, *blocked = reply
        if int(code) < 0:
            metrics.FEEDS_REFUSED.inc()
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_feeds",
                f"at most {self.cap} feeds per user may be open at once; close one first",
            )
        self._mine[connection] = _Open(user_id, table_id, seated)
        return connection, int(code) == 1, {b.decode() if isinstance(b, bytes) else b for b in blocked}

    async def close(self, connection: str, tell: bool) -> bool:
        """Forget a feed; True if it was the player's last one at the table
        and the table is to be told (``tell``: the match is under way)."""
        held = self._mine.pop(connection, None)
        if held is None:
            return False
        reply = await self._close(
            keys=[
                keys.feeds(held.user_id),
                keys.feeds_at(held.user_id, held.table_id),
                keys.feeds_gone(held.user_id, held.table_id),
            ],
            args=[connection, time.time(), "1" if held.seated else "0", "1" if tell else "0"],
        )
        return int(reply) == 1

    async def connected(self, table_id: str, user_ids: list[str]) -> list[str]:
        """Which of ``user_ids`` have a live feed on the table, on any replica."""
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)  # the keys sit in different users' slots
        for user in user_ids:
            pipe.zcount(keys.feeds_at(user, table_id), now, "+inf")
        counts = await pipe.execute()
        return [user for user, count in zip(user_ids, counts, strict=True) if int(count)]

    async def keep_alive(self) -> None:
        """Refresh every feed this replica holds, every ``REFRESH_SECONDS``."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            with contextlib.suppress(Exception):  # a Redis hiccup: the next cycle refreshes
                await self.refresh()

    async def refresh(self) -> None:
        """One cycle: push back the expiry of every feed held now (and of its
        user's keys), ``REFRESH_CHUNK`` connections per round trip so the
        event loop runs between them. A feed closed during the cycle is
        skipped (``xx`` alone would not bring its connection back, but its
        user's at-table marker would be set again)."""
        held = list(self._mine.items())
        for start in range(0, len(held), REFRESH_CHUNK):
            expires = time.time() + EXPIRY_SECONDS
            pipe = self.redis.pipeline(transaction=False)  # the keys sit in different users' slots
            for connection, feed in held[start : start + REFRESH_CHUNK]:
                if connection not in self._mine:
                    continue
                pipe.zadd(keys.feeds(feed.user_id), {connection: expires}, xx=True)
                pipe.pexpireat(keys.feeds(feed.user_id), int(expires * 1000))
                if feed.seated:
                    pipe.zadd(keys.feeds_at(feed.user_id, feed.table_id), {connection: expires}, xx=True)
                    pipe.pexpireat(keys.feeds_at(feed.user_id, feed.table_id), int(expires * 1000))
                    pipe.set(keys.at_table(feed.user_id), feed.table_id, ex=int(EXPIRY_SECONDS))
            await pipe.execute()


class Feeds:
    def __init__(
        self,
        hub: FeedHub,
        store: RecordStore,
        tables: Tables,
        games: Games,
        matches: MatchClient,
        connections: Connections,
    ) -> None:
        self.hub = hub
        self.store = store
        self.tables = tables
        self.games = games
        self.matches = matches
        self.connections = connections
        # Which table chat each feed may carry (gateway/social/sights.py), set
        # by the Platform: (user, seated, blocked) -> (the sight, forget it).
        self.chat_sight: Callable[[str, bool, set[str]], tuple[Any, Callable[[], None]]] | None = None

    async def open(
        self,
        caller: Caller,
        table_id: str,
        after_event_id: int,
        sink: Callable[[Item | None], None],
        stop: Callable[[Refused], None],
    ) -> Callable[[], Awaitable[None]]:
        """Start the caller's feed of a table, pushed to ``sink`` (see
        FeedHub.open); returns what to call when it ends. Refused before
        anything is sent if the table does not exist, the id is past its
        history, or the caller has too many feeds open."""
        table, last_event_id = await self.tables.load(table_id)
        if after_event_id > last_event_id:
            raise invalid("invalid_event_id", f"after_event_id is past the last event ({last_event_id})")
        user = caller.user_id
        seated = any(p and p.get("user_id") == user for p in table["players"])
        viewer = Viewer(user, None, host=table["host"] == user)

        async def current() -> Message:
            record, last = await self.tables.load(table_id)
            if record["status"] == PLAYING:
                try:
                    return await self.matches.view(self.games.get(record["game"]), table_id, caller)
                except Refused as refusal:
                    if refusal.reason != "match_not_found":  # a start under way: its events will come
                        raise
            return self.tables.message(record, user, last)

        connection, comeback, blocked = await self.connections.open(user, table_id, seated)
        forget: Callable[[], None] = lambda: None  # noqa: E731
        if self.chat_sight is not None:
            sight, forget = self.chat_sight(user, seated, blocked)
            sink = sight.wrap(sink)
        try:
            if comeback:
                await self._notify(table_id, table, user, "RECONNECTED")
            listener = await self.hub.open(table_id, after_event_id, viewer, current, sink, stop)
        except BaseException:
            forget()
            await asyncio.shield(self._release(connection, table_id, user, seated))
            raise
        metrics.FEEDS_OPEN.inc()

        async def close() -> None:
            metrics.FEEDS_OPEN.dec()
            forget()
            self.hub.release(table_id, listener)
            await asyncio.shield(self._release(connection, table_id, user, seated))

        return close

    async def follow(self, caller: Caller, table_id: str, after_event_id: int) -> AsyncGenerator[Item, None]:
        """The same feed as an async iterator (the gRPC face's FollowTable)."""
        queue: asyncio.Queue[Item | Refused | None] = asyncio.Queue()
        close = await self.open(caller, table_id, after_event_id, queue.put_nowait, queue.put_nowait)
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, Refused):
                    raise item
                yield item
        finally:
            await close()

    async def _release(self, connection: str, table_id: str, user: str, seated: bool) -> None:
        try:
            playing = seated and (await self.tables.get(table_id))["status"] == PLAYING
            if await self.connections.close(connection, tell=playing):
                await self._notify(table_id, await self.tables.get(table_id), user, "DISCONNECTED")
        except Exception:  # the connection expires on its own
            log.warning("releasing a feed failed", exc_info=True)

    async def _notify(self, table_id: str, table: dict[str, Any], user: str, kind: str) -> None:
        seat = next(i for i, p in enumerate(table["players"]) if p and p.get("user_id") == user)
        event = match_pb2.MatchEvent(
            version=await self.store.match_version(table_id),  # notices carry the version they happened at
            at=time.time(),
            notice=match_pb2.Notice(kind=match_pb2.NoticeKind.Value(f"NOTICE_KIND_{kind}"), seat=seat),
        )
        live = match_pb2.LiveUpdate(events=[event]).SerializeToString()
        await self.store.append(table_id, [event.SerializeToString()], live)


def feed_message(message: Message) -> dict[str, Message]:
    """A feed item as the oneof of FollowTableResponse it travels in."""
    if isinstance(message, match_pb2.MatchEvent):
        return {"event": message}
    if isinstance(message, match_pb2.Snapshot):
        return {"snapshot": message}
    return {"table": message}
