"""Friends and chat as one object on the Platform, shared by both faces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from rodada.platform.v1 import social_pb2

from gateway import metrics
from gateway.feeds import Connections
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings
from gateway.social.chat import Chat, ChatSight
from gateway.social.feed import SocialFeeds, check_after
from gateway.social.friends import Friends
from gateway.social.sights import Sights
from gateway.tables import Tables
from services.core.store import RecordStore, RedisClient
from services.core.tokens import Identity


class Social:
    def __init__(
        self,
        redis: RedisClient,
        raw: RedisClient,
        store: RecordStore,
        tables: Tables,
        sessions: Sessions,
        connections: Connections,
        settings: GatewaySettings,
    ) -> None:
        self.feeds = SocialFeeds(raw, settings.social_feed_length, settings.social_feed_ttl_seconds)
        self.friends = Friends(redis, self.feeds, tables, sessions, settings)
        self.chat = Chat(raw, store, tables, self.friends, self.feeds, sessions, settings)
        self.sights = Sights(redis)
        self.friends.blocks_changed = self.sights.changed
        self.connections = connections

    async def start(self, publish: str) -> None:
        self.feeds.publish = publish  # PUBLISH, or SPUBLISH on a Redis Cluster

    def sight(self, user_id: str, seated: bool, blocked: set[str]) -> tuple[ChatSight, Callable[[], None]]:
        """The table chat a new table feed of ``user_id`` may carry (``blocked``:
        read by the feed's registration, in the same round trip), kept
        current with every block on any replica; and what to call when the
        feed ends."""
        return self.sights.open(user_id, seated, blocked)

    async def open(
        self, me: Identity, after_id: str
    ) -> tuple[AsyncIterator[social_pb2.SocialEvent], Callable[[], Awaitable[None]]]:
        """The caller's social feed, registered and subscribed when this
        returns (so the caller counts as online and misses nothing from
        here): its events, and what to call when it ends. It is one of the
        caller's MAX_FEEDS_PER_USER feeds."""
        check_after(after_id)
        connection, _, _ = await self.connections.open(me.user_id, "", seated=False)
        try:
            following = await self.feeds.open(me.user_id, after_id)
        except BaseException:
            await asyncio.shield(self.connections.close(connection, tell=False))
            raise
        metrics.SOCIAL_FEEDS_OPEN.inc()

        async def close() -> None:
            following.close()
            metrics.SOCIAL_FEEDS_OPEN.dec()
            await asyncio.shield(self.connections.close(connection, tell=False))

        return following.events(), close

    async def close(self) -> None:
        await self.sights.close()
        await self.feeds.close()
