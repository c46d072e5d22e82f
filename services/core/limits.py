"""Rate limits kept in Redis, shared by every replica; each check is one
script call on one key, timed by Redis's own clock (replicas' clocks may
differ).

Two kinds, both written ``<count>/<seconds>`` (``0`` turns a limit off):

- a **sliding window** (``hit``): the times of the requests accepted in the
  last ``seconds`` are kept (a sorted set), so no window of that length ever
  holds more than ``count`` — unlike fixed windows, which let twice the
  limit through across a window's edge. For chat, log-ins and actions.
- a **token bucket** (``take``): ``count`` tokens, refilled at ``count`` per
  ``seconds``: a burst of ``count``, then a steady pace. For what a person
  does now and then and a script does in a loop: friend requests, table
  invites, reports.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

from services.core import keys
from services.core.pipelining import CoalescedScript
from services.core.store import RedisClient

# KEYS[1] the log; ARGV: count, window (µs), a unique member. Returns 0 when
# accepted, else the µs until the oldest request leaves the window.
_SLIDING = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""

# KEYS[1] the bucket (tokens, at); ARGV: capacity, µs per token. Returns 0
# when a token was taken, else the µs until the next one.
_BUCKET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local capacity = tonumber(ARGV[1])
local per = tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or capacity
local at = tonumber(held[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) / per)
if tokens < 1 then
  return math.max(1, math.ceil((1 - tokens) * per))
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens - 1), 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity * per / 1000))
return 0
"""


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
        # The requests of one moment share a round trip, with the client's
        # other scripts (a move's limit with other moves' commits).
        self._sliding, self._bucket = CoalescedScript(redis, _SLIDING), CoalescedScript(redis, _BUCKET)

    async def hit(self, limit: Limit, subject: str) -> None:
        """Count one request of ``subject`` in a sliding window; raise
        RateLimited (nothing counted) past the limit."""
        if limit.count <= 0:
            return
        window = limit.seconds * 1_000_000
        member = secrets.token_hex(6)  # two requests in one µs are two requests
        wait = await self._sliding(keys=[keys.rate(limit.name, subject)], args=[limit.count, window, member])
        if int(wait):
            raise RateLimited(limit, int(wait) / 1e6)

    async def take(self, limit: Limit, subject: str) -> None:
        """Take one token of ``subject``'s bucket; raise RateLimited (nothing
        taken) when it is empty."""
        if limit.count <= 0:
            return
        per_token = math.ceil(limit.seconds * 1_000_000 / limit.count)
        wait = await self._bucket(keys=[keys.rate(limit.name, subject)], args=[limit.count, per_token])
        if int(wait):
            raise RateLimited(limit, int(wait) / 1e6)
