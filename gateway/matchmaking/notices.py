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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.kit import keys, tracing
from services.kit.store import RedisClient
from services.kit.tasks import cancel_requested

log = logging.getLogger("rodada.gateway.matchmaking")

LISTEN_POLL_SECONDS = 5.0
RECONNECT_SECONDS = 0.5


class TicketNotices:
    """This replica's ticket followers, woken by the notices channel."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._waiting: dict[str, set[asyncio.Event]] = {}
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
            self._task = asyncio.create_task(self._listen(), context=tracing.background())
        return event

    async def ready(self) -> None:
        """Subscribed (a notice published from now on is heard), or given up
        waiting for Redis, when the followers' periodic reads cover it."""
        if self._subscribed is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subscribed.wait(), LISTEN_POLL_SECONDS)

    def unwatch(self, ticket_id: str, event: asyncio.Event) -> None:
        events = self._waiting.get(ticket_id)
        if events is not None:
            events.discard(event)
            if not events:
                del self._waiting[ticket_id]

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

    def _wake(self, ticket_ids: Iterable[str]) -> None:
        for ticket_id in ticket_ids:
            for event in self._waiting.get(ticket_id, ()):
                event.set()

    def _subscriber(self) -> Redis:
        if isinstance(self.redis, RedisCluster):  # any node hears a classic PUBLISH
            node = self.redis.get_default_node()
            return Redis(host=node.host, port=int(node.port), socket_keepalive=True)
        return self.redis

    async def _listen(self) -> None:
        while not cancel_requested():
            client = self._subscriber()
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(keys.MM_NOTICES)
                assert self._subscribed is not None
                self._subscribed.set()
                # Anything published while unsubscribed was missed: read again.
                self._wake(list(self._waiting))
                while True:
                    message = await pubsub.get_message(timeout=LISTEN_POLL_SECONDS)
                    if message is not None and message.get("type") == "message":
                        data = message["data"]
                        self._wake((data.decode() if isinstance(data, bytes) else data).split())
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("ticket notices connection lost (%s); reconnecting", error)
                await asyncio.sleep(RECONNECT_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                if client is not self.redis:
                    with contextlib.suppress(Exception):
                        await client.aclose()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
