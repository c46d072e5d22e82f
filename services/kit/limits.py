"""Rate limits with counters in Redis, shared by every replica.

A fixed window per (limit, subject): ``rl:<limit>:<subject>:<window>`` is
incremented and given the window's lifetime in one round trip. Simple and
cheap; at a window's edge a client may get up to twice its rate for a moment,
which is fine for abuse limits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from services.kit import keys
from services.kit.store import RedisClient


@dataclass(frozen=True)
class Limit:
    name: str
    count: int
    seconds: int

    @classmethod
    def parse(cls, name: str, text: str) -> Limit:
        """``<count>/<seconds>``, e.g. ``30/10``; 0 turns the limit off."""
        count, _, seconds = text.partition("/")
        return cls(name, int(count), int(seconds or 1))


class RateLimited(Exception):
    def __init__(self, limit: Limit, retry_after: float) -> None:
        super().__init__(f"too many requests: {limit.count} per {limit.seconds} s ({limit.name})")
        self.limit = limit
        self.retry_after = retry_after


class RateLimiter:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis

    async def hit(self, limit: Limit, subject: str) -> None:
        """Count one request of ``subject``; raise RateLimited past the limit."""
        if limit.count <= 0:
            return
        now = time.time()
        window = int(now // limit.seconds)
        key = keys.rate(limit.name, subject, window)
        pipe = self.redis.pipeline(transaction=True)
        pipe.incr(key)
        pipe.expire(key, limit.seconds + 1)
        count, _ = await pipe.execute()
        if int(count) > limit.count:
            raise RateLimited(limit, (window + 1) * limit.seconds - now)
