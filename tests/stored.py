"""What Redis holds for a table and its match, read raw: tests compare it
byte for byte to prove a refused request changed nothing."""

from __future__ import annotations

from typing import Any

from rodada.common.v1 import match_pb2

from services.core import keys
from services.core.store import RedisClient


async def stored(redis: RedisClient, match_id: str) -> tuple[Any, ...]:
    """The table's and the match's records and their whole history (head
    and events), as stored."""
    return (
        await redis.hgetall(keys.table(match_id)),
        await redis.hgetall(keys.match(match_id)),
        await redis.hgetall(keys.history(match_id)),
        await redis.xrange(keys.events(match_id)),
    )


async def history(redis: RedisClient, match_id: str) -> list[match_pb2.MatchEvent]:
    """The match's events, each with its id from its entry id ``0-N``."""
    events = []
    for entry_id, fields in await redis.xrange(keys.events(match_id)):
        event = match_pb2.MatchEvent.FromString(fields[b"d"])
        major, _, minor = entry_id.decode().partition("-")
        assert major == "0", entry_id
        event.id = int(minor)
        events.append(event)
    return events
