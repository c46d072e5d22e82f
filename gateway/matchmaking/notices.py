"""Ticket notices: a follower is woken when its ticket closes (matched,
failed, cancelled, dropped) instead of polling for it.

Whoever closes tickets publishes their ids on one channel
(``keys.MM_NOTICES``) after the script that closed them; every gateway
replica holds one subscription to it and wakes the followers it has of those
tickets, which then read the ticket record — the truth. A notice is only a
hint: one lost (a replica dying between the script and the publish, a
dropped subscription) delays a follower until its next heartbeat read, never
misleads it. Classic pub/sub, not sharded: the channel carries every queue's
notices and a Redis Cluster forwards a PUBLISH to every node, so one
connection per replica hears them all.

A notice is the closed tickets' ids, space separated. The finish script's
notice of a formed table (published from Lua with the tickets' closing, so
it is as true as the record) adds a line of JSON: per ticket its table, its
members' seats and the CPU seats, which is all its followers answer with, so
a burst's followers read nothing more. A replica that knows only the ids
reads the JSON line as more words, names of no ticket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from services.core import keys, pubsub, tracing
from services.core.store import RedisClient

log = logging.getLogger("rodada.gateway.matchmaking")


class TicketNotices:
    """This replica's ticket followers, woken by the notices channel."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._matched: dict[str, dict[str, Any]] = {}  # a watched ticket's seating, as its notice said
        self._task: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Event | None = None

    def watch(self, ticket_id: str) -> asyncio.Event:
        """An event set whenever a notice names ``ticket_id``; the caller
        clears it before each read of the ticket, so a notice published
        after the read wakes it. Let go of it with :meth:`unwatch`."""
        event = asyncio.Event()
        self._waiting.setdefault(ticket_id, set()).add(event)
        if self._task is None or self._task.done():
            self._subscribed = asyncio.Event()
            self._task = asyncio.create_task(
                pubsub.listen(
                    self.redis,
                    keys.MM_NOTICES,
                    self._heard,
                    subscribed=self._listening,
                    what="ticket notices",
                ),
                context=tracing.background(),
            )
        return event

    async def ready(self) -> None:
        """Subscribed (a notice published from now on is heard), or given up
        waiting for Redis, when the followers' periodic reads cover it."""
        if self._subscribed is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subscribed.wait(), pubsub.LISTEN_POLL_SECONDS)

    def unwatch(self, ticket_id: str, event: asyncio.Event) -> None:
        events = self._waiting.get(ticket_id)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiting[ticket_id]
                self._matched.pop(ticket_id, None)

    def matched(self, ticket_id: str) -> dict[str, Any] | None:
        """A watched ticket's table, seats (user id → seat) and CPU seats,
        if a notice has said it was matched."""
        return self._matched.get(ticket_id)

    @property
    def followers(self) -> int:
        return sum(len(events) for events in self._waiting.values())

    async def publish(self, ticket_ids: Iterable[str]) -> None:
        """Tell every replica these tickets changed (best effort: see above)."""
        message = " ".join(ticket_ids)
        if message:
            try:
                await self.redis.publish(keys.MM_NOTICES, message)
            except Exception as error:  # the followers' periodic reads cover it
                log.warning("ticket notice not published (%s)", error)

    def _heard(self, data: str) -> None:
        ids, _, seating = data.partition("\n")
        if seating:
            try:
                matched = orjson.loads(seating)
            except orjson.JSONDecodeError:
                matched = {}
            for ticket_id, seated in matched.items():
                if ticket_id in self._waiting:
                    self._matched[ticket_id] = seated
        self._wake(ids.split())

    def _wake(self, ticket_ids: Iterable[str]) -> None:
        for ticket_id in ticket_ids:
            for event in self._waiting.get(ticket_id, ()):
                event.set()

    async def _listening(self) -> None:
        assert self._subscribed is not None
        self._subscribed.set()
        # Anything published while unsubscribed was missed: read again.
        self._wake(list(self._waiting))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


def matched_notice(seating: Mapping[str, Mapping[str, Any]]) -> str:
    """The notice of tickets matched: their ids, then their seating (ticket
    id → table_id, seats, cpu_seats) as one line of JSON."""
    return " ".join(seating) + "\n" + orjson.dumps(seating).decode()
