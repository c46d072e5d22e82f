"""Making time pass for a stored match, as the tests need (a claim after
120 s, a deadline due now) without waiting for it."""

from __future__ import annotations

import secrets

import orjson
from redis.asyncio import Redis

from services.core import keys


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


async def pass_round_deadline(redis: Redis, tournament_id: str) -> None:
    """Make the current round's deadline of a tournament lie in the past, as
    a replica's next periodic check will see it (a new record version, so a
    replica's compare-and-set on the old record fails and reads again)."""
    key = f"tournament:{tournament_id}"
    stored = await redis.hmget(key, ["v", "doc"])
    assert stored[1] is not None, tournament_id
    doc = orjson.loads(stored[1])
    doc["rounds"][-1]["deadline"] = 0.0
    written = await redis.eval(
        "if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end "
        "redis.call('HSET', KEYS[1], 'v', ARGV[1] + 1, 'doc', ARGV[2]) return 1",
        1,
        key,
        stored[0],
        orjson.dumps(doc),
    )
    assert written == 1, "the tournament changed meanwhile"
