"""The Redis match store: one hash and one stream per match, written atomically.

Keys (the ``{m:ID}`` hash tag keeps a match in one Redis Cluster slot):

- ``{m:ID}`` hash: ``v`` version, ``e`` last event id, ``doc`` the match
  record (JSON: game, seats, engine state, generator seed and counter, times,
  result).
- ``{m:ID}:ev`` stream: one entry per event, id ``0-N`` for event N, field
  ``d`` the event (JSON: version, audience, kind, data, time, final flag).

A write is one Lua call that checks the version, stores the record and appends
the events; a writer that lost the race gets :class:`VersionConflict` and
nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.kit import metrics

RedisClient = Redis | RedisCluster

_COMMIT = """
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then
  return {-1, v}
end
local e = tonumber(redis.call('HGET', KEYS[1], 'e') or '0')
for i = 4, #ARGV do
  e = e + 1
  redis.call('XADD', KEYS[2], '0-' .. e, 'd', ARGV[i])
end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 'e', e, 'doc', ARGV[2])
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {v, e}
"""


class VersionConflict(Exception):
    """Someone else wrote the match first (or, on create, it already exists)."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"match is at version {current_version}")
        self.current_version = current_version


def match_key(match_id: str) -> str:
    return f"{{m:{match_id}}}"


def events_key(match_id: str) -> str:
    return f"{{m:{match_id}}}:ev"


def active_key(game: str) -> str:
    return f"active:{game}"


def clocks_key(game: str) -> str:
    return f"clocks:{game}"


def clock_member(match_id: str, version: int) -> str:
    return f"{match_id}:{version}"


RESULTS_STREAM = "results"


@dataclass
class StoredMatch:
    """A match as read from Redis: its record and the version it was read at."""

    match_id: str
    version: int
    last_event_id: int
    doc: dict[str, Any]


@dataclass(frozen=True)
class StoredEvent:
    id: int
    version: int
    audience: tuple[int, ...] | None
    kind: str
    data: dict[str, Any]
    at: float
    final: bool

    def visible_to(self, seat: int | None) -> bool:
        return self.audience is None or (seat is not None and seat in self.audience)


def encode_event(
    version: int, kind: str, data: dict[str, Any], audience: Sequence[int] | None, at: float, final: bool
) -> bytes:
    return orjson.dumps(
        {
            "v": version,
            "aud": None if audience is None else list(audience),
            "k": kind,
            "d": data,
            "at": at,
            "f": final,
        }
    )


def decode_event(entry_id: bytes | str, blob: bytes) -> StoredEvent:
    raw = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    body = orjson.loads(blob)
    audience = body["aud"]
    return StoredEvent(
        id=int(raw.split("-", 1)[1]),
        version=body["v"],
        audience=None if audience is None else tuple(audience),
        kind=body["k"],
        data=body["d"],
        at=body["at"],
        final=body["f"],
    )


class MatchStore:
    def __init__(self, redis: RedisClient, ttl_seconds: int) -> None:
        self.redis = redis
        self.ttl_seconds = ttl_seconds
        self._commit = redis.register_script(_COMMIT)

    async def load(self, match_id: str) -> StoredMatch | None:
        started = time.perf_counter()
        version, last_event, doc = await self.redis.hmget(match_key(match_id), ["v", "e", "doc"])
        metrics.REDIS_SECONDS.labels("load").observe(time.perf_counter() - started)
        if doc is None:
            return None
        return StoredMatch(match_id, int(version or 0), int(last_event or 0), orjson.loads(doc))

    async def commit(
        self, match_id: str, expected_version: int, doc: dict[str, Any], events: Sequence[bytes]
    ) -> tuple[int, int]:
        """Write ``doc`` and append ``events`` if the match is at ``expected_version``
        (0 = create). Returns the new version and last event id."""
        started = time.perf_counter()
        reply = await self._commit(
            keys=[match_key(match_id), events_key(match_id)],
            args=[expected_version, orjson.dumps(doc), self.ttl_seconds, *events],
        )
        metrics.REDIS_SECONDS.labels("commit").observe(time.perf_counter() - started)
        version, last_event = (int(x) for x in cast(list[Any], reply))
        if version < 0:
            raise VersionConflict(last_event)
        return version, last_event

    async def read_events(
        self, match_id: str, after_event_id: int, block_ms: int | None, count: int = 100
    ) -> list[StoredEvent]:
        """Events after ``after_event_id``; waits up to ``block_ms`` for new ones."""
        reply = await self.redis.xread(
            {events_key(match_id): f"0-{after_event_id}"}, count=count, block=block_ms
        )
        if not reply:
            return []
        # RESP2 reply: [[stream, [(id, fields), ...]]]
        entries = cast(list[list[Any]], reply)[0][1]
        return [decode_event(entry_id, fields[b"d"]) for entry_id, fields in entries]

    async def track(
        self,
        game: str,
        match_id: str,
        version: int,
        due: float | None,
        result: dict[str, Any] | None,
    ) -> None:
        """After a commit: the per-game set of active matches (the gauge), the
        per-game clock (``clocks:<game>``, member ``<id>:<version>`` scored
        by when the seat to act may be timed out; the gateway's clocks pop
        it, so the deadline is tied to the version it was set for), and, once
        over, the result on the ``results`` stream for ratings and history.

        Best effort in one round trip: these keys live in other Redis Cluster
        slots than the match, so they cannot join the commit script. A lost
        clock entry means no inactivity notice for that turn, never a wrong
        action, since every deadline action names its version."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrem(clocks_key(game), clock_member(match_id, version - 1))
        if result is None:
            pipe.sadd(active_key(game), match_id)
            if due is not None:
                pipe.zadd(clocks_key(game), {clock_member(match_id, version): due})
        else:
            pipe.srem(active_key(game), match_id)
            pipe.xadd(
                RESULTS_STREAM,
                {"game": game, "match": match_id, "result": orjson.dumps(result)},
                maxlen=1_000_000,
                approximate=True,
            )
        await pipe.execute()

    async def count_active(self, game: str) -> int:
        return int(await self.redis.scard(active_key(game)))


def connect(url: str, cluster: bool = False, decode: bool = False) -> RedisClient:
    """A pooled client; ``cluster`` talks to a Redis Cluster through ``url``'s
    node; ``decode`` returns str instead of bytes."""
    if cluster:
        return RedisCluster.from_url(url, decode_responses=decode)
    return Redis.from_url(url, decode_responses=decode)
