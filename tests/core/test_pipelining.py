"""Concurrent calls of a coalesced script share one round trip on a real
Redis, and each caller gets its own reply or error, as if it had called
alone; the store's concurrent commits keep their compare-and-set."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from redis.exceptions import ResponseError

from services.core import keys, metrics
from services.core.limits import Limit, RateLimiter
from services.core.pipelining import CoalescedScript
from services.core.store import RecordStore, RedisClient, VersionConflict, connect
from tests.conftest import STORE_TTL_SECONDS
from tools.redis_server import RedisServer

# Returns its key's new count, or fails when told to.
INCR_OR_FAIL = """
if ARGV[1] == 'fail' then return redis.error_reply('told to fail') end
return redis.call('INCR', KEYS[1])
"""


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[RedisClient]:
    client = connect(redis_server.url, timeout=2.0)
    try:
        yield client
    finally:
        await client.aclose()


def count(name: str) -> float:
    """Round trips measured so far under ``name`` (the store's metric)."""
    for sample in metrics.REDIS_SECONDS.collect()[0].samples:
        if sample.name.endswith("_count") and sample.labels["op"] == name:
            return sample.value
    return 0.0


async def test_concurrent_calls_share_one_pipeline_and_get_their_own_replies(redis: RedisClient) -> None:
    script = CoalescedScript(redis, INCR_OR_FAIL)
    key = f"t:{secrets.token_hex(4)}"
    await script(keys=[key], args=["go"])  # loads the script (a lone call: plain EVALSHA)
    pipelines = count("pipeline")
    replies = await asyncio.gather(
        *(script(keys=[key], args=["go" if i != 3 else "fail"]) for i in range(8)),
        return_exceptions=True,
    )
    assert count("pipeline") == pipelines + 1
    failed = replies.pop(3)
    assert isinstance(failed, ResponseError) and "told to fail" in str(failed)
    assert sorted(replies) == list(range(2, 9))  # seven increments after the first, each its own count
    assert int(await redis.get(key)) == 8


async def test_scripts_on_one_client_share_one_pipeline_and_get_their_own_replies(
    redis: RedisClient,
) -> None:
    """Whoever made them: a store's commits and a rate limiter's checks on
    one client share a turn's round trip as these two scripts do."""
    fresh = secrets.token_hex(4)  # scripts Redis has not seen: each is loaded on its own NOSCRIPT
    incr = CoalescedScript(redis, INCR_OR_FAIL + "-- incr " + fresh)
    echo = CoalescedScript(redis, "return ARGV[1] -- echo " + fresh)
    key = f"t:{secrets.token_hex(4)}"
    await redis.script_flush()
    pipelines = count("pipeline")
    replies = await asyncio.gather(
        *(incr(keys=[key], args=["go"]) for _ in range(3)),
        *(echo(keys=[], args=[f"said {i}"]) for i in range(3)),
        incr(keys=[key], args=["fail"]),
        return_exceptions=True,
    )
    # One round trip for the calls, and one more that loads both scripts and
    # makes the calls again.
    assert count("pipeline") == pipelines + 2
    failed = replies.pop()
    assert isinstance(failed, ResponseError) and "told to fail" in str(failed)
    assert sorted(replies[:3]) == [1, 2, 3] and replies[3:] == [b"said 0", b"said 1", b"said 2"]


async def test_a_script_unknown_to_redis_is_loaded_and_every_call_answered(redis: RedisClient) -> None:
    script = CoalescedScript(redis, INCR_OR_FAIL + "-- fresh " + secrets.token_hex(4))
    key = f"t:{secrets.token_hex(4)}"
    await redis.script_flush()
    replies = await asyncio.gather(*(script(keys=[key], args=["go"]) for _ in range(5)))
    assert sorted(replies) == [1, 2, 3, 4, 5]


async def test_concurrent_commits_at_one_version_let_exactly_one_win(redis: RedisClient) -> None:
    store = RecordStore(redis, keys.match, STORE_TTL_SECONDS)
    match_id = secrets.token_hex(6)
    await store.commit(match_id, 0, {"turn": 0}, [b"start"])
    outcomes = await asyncio.gather(
        *(store.commit(match_id, 1, {"turn": i}, [b"move"]) for i in range(6)), return_exceptions=True
    )
    won = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(won) == 1 and won[0].version == 2 and won[0].last_event_id == 2
    assert all(isinstance(o, VersionConflict) and o.current_version == 2 for o in outcomes if o not in won)
    stored = await store.load(match_id)
    assert stored is not None and stored.version == 2 and stored.last_event_id == 2


async def test_a_moves_rate_limit_and_another_moves_commit_share_one_round_trip(redis: RedisClient) -> None:
    """A game service checks each move's limit and commits moves on one
    client: made in one turn, the two go out in one pipeline."""
    store = RecordStore(redis, keys.match, STORE_TTL_SECONDS)
    limiter = RateLimiter(redis)
    match_id = secrets.token_hex(6)
    await store.commit(match_id, 0, {"turn": 0}, [b"start"])
    await limiter.hit(Limit("actions", 60, 10), "u_first")  # loads the limit's script
    pipelines = count("pipeline")
    written, _ = await asyncio.gather(
        store.commit(match_id, 1, {"turn": 1}, [b"move"]), limiter.hit(Limit("actions", 60, 10), "u_other")
    )
    assert count("pipeline") == pipelines + 1
    assert written.version == 2
    assert await redis.zcard(keys.rate("actions", "u_other")) == 1
