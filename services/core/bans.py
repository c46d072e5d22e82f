"""Bans, known to every process at once: each gateway replica and each game
service replica.

The banned set is stored in Redis (``keys.BANNED``); each replica keeps it
in memory (loaded at start and at every (re)subscription, so a notice lost
while it was not listening changes nothing) and hears each ban and unban on
one pub/sub channel (``keys.BANS``). A banned user's tokens are refused by
every token check (``TokenVerifier.banned``): both faces of the gateway and
every game service reached directly; the feeds a gateway replica serves them
are ended through the stops registered here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from services.core import keys, pubsub
from services.core.store import RedisClient

log = logging.getLogger("rodada.bans")


class Bans:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._banned: frozenset[str] = frozenset()
        # A list, not a set: a user has a feed or a few here, and a set of one
        # is 216 bytes where a list of one is 64 (one per user with a feed open).
        self._stops: dict[str, list[Callable[[], None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._banned

    async def start(self) -> None:
        with contextlib.suppress(Exception):  # Redis down at start: the listener loads it when back
            await self._reload()
        self._task = asyncio.create_task(
            pubsub.listen(
                self.redis,
                keys.BANS,
                self._heard,
                subscribed=self._subscribed,
                lost=self.listening.clear,
                what="ban notices",
            )
        )

    def watch(self, user_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        """Call ``stop`` if ``user_id`` is banned while it is watched (a feed
        of theirs); returns what to call to stop watching."""
        self._stops.setdefault(user_id, []).append(stop)

        def unwatch() -> None:
            stops = self._stops.get(user_id)
            if stops is not None:
                with contextlib.suppress(ValueError):  # watched once, unwatched once; twice is harmless
                    stops.remove(stop)
                if not stops:
                    del self._stops[user_id]

        return unwatch

    async def changed(self, user_id: str, banned: bool) -> None:
        """A ban or unban, already stored: apply it here at once and tell
        every other replica."""
        self._apply(user_id, banned)
        try:
            await self.redis.publish(keys.BANS, f"{int(banned)} {user_id}")
        except Exception as error:  # the others reload the set when they reconnect
            log.warning("ban notice not published (%s)", error)

    def _apply(self, user_id: str, banned: bool) -> None:
        self._banned = self._banned | {user_id} if banned else self._banned - {user_id}
        if banned:
            for stop in list(self._stops.get(user_id, ())):
                stop()

    async def _reload(self) -> None:
        stored: set[bytes | str] = await self.redis.smembers(keys.BANNED)
        banned = frozenset(m.decode() if isinstance(m, bytes) else m for m in stored)
        for user_id in banned - self._banned:
            self._apply(user_id, True)
        self._banned = banned

    async def _subscribed(self) -> None:
        await self._reload()
        self.listening.set()

    def _heard(self, notice: str) -> None:
        flag, _, user_id = notice.partition(" ")
        self._apply(user_id, flag == "1")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
