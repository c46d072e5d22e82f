"""Blocks reach the feeds already open, on every replica, at once.

Each open table feed filters its table chat through a ChatSight
(gateway/social/chat.py) holding the senders its user blocked. This replica
keeps its open sights by user; a block or unblock is published on one
channel (``keys.BLOCKS``) after it is stored, every replica holds one
subscription to it and updates the sights it has of the blocker, so the
blocked user's next message is not carried by the blocker's open feeds,
whichever replica serves them. A notice is a hint over the stored truth: on
(re)subscribing a replica re-reads the blocked sets of every user it holds
sights of, so a notice lost while it was not listening changes nothing.
Classic pub/sub (a Redis Cluster forwards it to every node), as the
matchmaker's ticket notices (gateway/matchmaking/notices.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import cast

import orjson

from gateway.social.chat import ChatSight
from services.core import keys, pubsub
from services.core.store import RedisClient

log = logging.getLogger("rodada.gateway.social")


class Sights:
    """This replica's open chat sights, kept current with every block."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis  # str replies
        # Lists, not sets: a user has one table feed or a few open here, and a
        # set of one is 216 bytes where a list of one is 64.
        self._open: dict[str, list[ChatSight]] = {}
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()

    def open(self, user_id: str, seated: bool, blocked: set[str]) -> tuple[ChatSight, Callable[[], None]]:
        """A sight for a new table feed of ``user_id`` (``blocked`` read by
        the feed's registration), and what to call when the feed ends."""
        sight = ChatSight(user_id, seated, blocked)
        self._open.setdefault(user_id, []).append(sight)
        if self._task is None or self._task.done():
            self._subscribed = asyncio.Event()
            self._task = asyncio.create_task(
                pubsub.listen(
                    self.redis, keys.BLOCKS, self._heard, subscribed=self._listening, what="block notices"
                )
            )

        def forget() -> None:
            sights = self._open.get(user_id)
            if sights is not None:
                with contextlib.suppress(ValueError):  # forgotten twice: harmless
                    sights.remove(sight)
                if not sights:
                    del self._open[user_id]

        return sight, forget

    async def ready(self) -> None:
        """Listening (for tests and start-up), or given up waiting."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), pubsub.LISTEN_POLL_SECONDS)

    async def changed(self, blocker: str, other: str, blocked: bool) -> None:
        """``blocker`` blocked (or unblocked) ``other``, already stored: apply
        it here at once and tell every other replica."""
        self._apply(blocker, other, blocked)
        message = orjson.dumps({"blocker": blocker, "other": other, "blocked": blocked})
        try:
            await self.redis.publish(keys.BLOCKS, message)
        except Exception as error:  # the stored set is the truth; a resubscribe re-reads it
            log.warning("block notice not published (%s)", error)

    def _apply(self, blocker: str, other: str, blocked: bool) -> None:
        for sight in self._open.get(blocker, ()):
            sight.hidden = sight.hidden | {other} if blocked else sight.hidden - {other}

    async def _reread(self) -> None:
        """Every sight's blocked set from Redis: notices may have been missed."""
        users = list(self._open)
        if not users:
            return
        pipe = self.redis.pipeline(transaction=False)
        for user in users:
            pipe.smembers(keys.blocked(user))
        for user, blocked in zip(users, await pipe.execute(), strict=True):
            hidden = frozenset(cast(set[str], blocked))
            for sight in self._open.get(user, ()):
                sight.hidden = hidden

    async def _listening(self) -> None:
        await self._reread()
        self._subscribed.set()

    def _heard(self, data: str) -> None:
        notice = orjson.loads(data)
        self._apply(str(notice["blocker"]), str(notice["other"]), bool(notice["blocked"]))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
