"""Who is connected to each match, across every gateway replica.

One key per player and match, ``presence:<match>:<user>`` = the id of the
connection that holds it, with a TTL its connection keeps refreshing (so a
replica that dies without cleaning up is forgotten within the TTL). Every
change names the connection: when a player reconnects (on any replica, any
device) the new connection takes the key, and the old one's late refresh or
"gone" finds a different id and does nothing — it can never mark the new
connection as gone.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from services.kit.store import RedisClient

TTL_SECONDS = 30
REFRESH_SECONDS = 10

# Only the connection that holds the key may refresh or delete it.
_REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def presence_key(match_id: str, user_id: str) -> str:
    return f"presence:{match_id}:{user_id}"


class Presence:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._refresh = redis.register_script(_REFRESH)
        self._release = redis.register_script(_RELEASE)

    async def connect(self, match_id: str, user_id: str) -> str:
        """The player's new connection takes over; returns its id."""
        connection = secrets.token_hex(8)
        await self.redis.set(presence_key(match_id, user_id), connection, ex=TTL_SECONDS)
        return connection

    async def refresh(self, match_id: str, user_id: str, connection: str) -> bool:
        return bool(
            await self._refresh(keys=[presence_key(match_id, user_id)], args=[connection, TTL_SECONDS])
        )

    async def disconnect(self, match_id: str, user_id: str, connection: str) -> bool:
        """True if this connection was still the player's current one."""
        return bool(await self._release(keys=[presence_key(match_id, user_id)], args=[connection]))

    async def connected(self, match_id: str, user_ids: Sequence[str]) -> list[str]:
        if not user_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)  # not MGET: the keys may sit in different cluster slots
        for user in user_ids:
            pipe.get(presence_key(match_id, user))
        held = await pipe.execute()
        return [user for user, connection in zip(user_ids, held, strict=True) if connection]
