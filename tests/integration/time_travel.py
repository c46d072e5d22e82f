"""Making time pass for a stored match, as the tests need (a claim after
120 s, a deadline due now) without waiting for it."""

from __future__ import annotations

import secrets

import orjson
from redis.asyncio import Redis

from services.kit import keys


async def rewind_idle(redis: Redis, match_id: str, seconds: float) -> float:
    """Make the seat to act look idle ``seconds`` longer (what the game checks
    before acting on a deadline or a claim); the new ``idle_since``. The
    record gets a new write token, as any write would: a game service that
    kept the old record must not act on it."""
    stored = await redis.hget(keys.match(match_id), "doc")
    assert stored is not None, match_id
    doc = orjson.loads(stored)
    doc["idle_since"] -= seconds
    await redis.hset(keys.match(match_id), mapping={"doc": orjson.dumps(doc), "w": secrets.token_hex(8)})
    return float(doc["idle_since"])
