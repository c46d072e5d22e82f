"""Deadlines: fired by whichever gateway replica gets there first — at least
once, and exactly once in effect.

Every write of a game service puts ``<match>:<version>`` in the game's clock
of the match's group (keys.py), scored by when the seat to act runs out of
time, and removes the previous version's entry — in the same script as the
write, so no move is ever without its deadline. Every replica polls the due
entries of every group (one round trip per game) and *takes*
one by moving it, in one script, to the leased set with a lease of
``CLOCK_LEASE_SECONDS``; only then does it ask the game to fire the deadline
(``FireDeadline``), and only after the game answered does it drop the lease.
A replica that dies in between leaves the lease to run out, and another
replica takes the deadline again. Firing twice changes nothing: the game
acts only if the match is still at the deadline's version and the time has
really come, an inactivity notice is appended once per version, and a CPU
turn or an expiry is a version-checked write.
"""

from __future__ import annotations

import time

from gateway import metrics
from gateway.games import GameClient, Games
from gateway.matches import MatchClient
from services.core import keys
from services.core.errors import Refused
from services.core.store import RedisClient

BATCH = 100

# KEYS: clock, leases. ARGV: member, now, lease until. Takes a due deadline,
# or one whose lease ran out; 1 if taken.
_TAKE = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  return 1
end
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
if lease and tonumber(lease) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  return 1
end
return 0
"""


class Clocks:
    def __init__(self, redis: RedisClient, games: Games, matches: MatchClient, lease_seconds: float) -> None:
        self.redis = redis
        self.games = games
        self.matches = matches
        self.lease_seconds = lease_seconds
        self._take = redis.register_script(_TAKE)

    async def fire_due(self, now: float | None = None) -> int:
        """Fire every deadline due by ``now`` (and every lapsed lease);
        returns how many this replica fired."""
        now = time.time() if now is None else now
        fired = 0
        for game in self.games.described():
            # Every group's due deadlines and lapsed leases, in one round trip.
            pipe = self.redis.pipeline(transaction=False)
            for group in range(keys.GROUPS):
                pipe.zrangebyscore(
                    keys.clocks(game.name, group), "-inf", now, start=0, num=BATCH, withscores=True
                )
                pipe.zrangebyscore(
                    keys.clock_leases(game.name, group), "-inf", now, start=0, num=BATCH, withscores=True
                )
            replies = await pipe.execute()
            for group in range(keys.GROUPS):
                clock, leases = keys.clocks(game.name, group), keys.clock_leases(game.name, group)
                for member, deadline in [*replies[2 * group], *replies[2 * group + 1]]:
                    fired += await self._fire(game, clock, leases, member, deadline, now)
        return fired

    async def _fire(
        self, game: GameClient, clock: str, leases: str, member: bytes | str, deadline: float, now: float
    ) -> int:
        """Take one deadline and fire it; 1 if this replica fired it."""
        member = member.decode() if isinstance(member, bytes) else member
        if not await self._take(keys=[clock, leases], args=[member, now, now + self.lease_seconds]):
            return 0  # another replica took it
        metrics.TIMER_LAG.observe(max(0.0, time.time() - deadline))
        match_id, _, version = member.rpartition(":")
        try:
            outcome = await self.matches.fire_deadline(game, match_id, int(version))
        except Refused as refusal:
            if refusal.http_status >= 500:
                raise  # the lease runs out and the deadline is taken again
            outcome = "gone"  # e.g. the match expired: nothing to fire, ever
        await self.redis.zrem(leases, member)
        metrics.TIMERS_FIRED.labels(game.name, outcome.removeprefix("DEADLINE_OUTCOME_").lower()).inc()
        return 1
