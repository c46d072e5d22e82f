"""Friends and chat as one object on the Platform, shared by both faces."""

from __future__ import annotations

from collections.abc import AsyncIterator

from rodada.platform.v1 import social_pb2

from gateway import metrics
from gateway.feeds import Connections
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings
from gateway.social.chat import Chat, ChatSight
from gateway.social.feed import SocialFeeds
from gateway.social.friends import Friends
from gateway.tables import Tables
from services.kit.store import MatchStore, RedisClient
from services.kit.tokens import Identity


class Social:
    def __init__(
        self,
        redis: RedisClient,
        raw: RedisClient,
        store: MatchStore,
        tables: Tables,
        sessions: Sessions,
        connections: Connections,
        settings: GatewaySettings,
    ) -> None:
        self.feeds = SocialFeeds(raw, settings.social_feed_length, settings.social_feed_ttl_seconds)
        self.friends = Friends(redis, self.feeds, tables)
        self.chat = Chat(raw, store, tables, self.friends, self.feeds, sessions, settings)
        self.connections = connections

    async def start(self, publish: str) -> None:
        self.feeds.publish = publish  # PUBLISH, or SPUBLISH on a Redis Cluster

    @staticmethod
    def sight(user_id: str, seated: bool, blocked: set[str]) -> ChatSight:
        """The table chat a new table feed of ``user_id`` may carry (``blocked``:
        read by the feed's registration, in the same round trip)."""
        return ChatSight(user_id, seated, blocked)

    async def follow(self, me: Identity, after_id: str) -> AsyncIterator[social_pb2.SocialEvent]:
        """The caller's social feed; while open the caller is online (one of
        their MAX_FEEDS_PER_USER feeds)."""
        connection, _, _ = await self.connections.open(me.user_id, "", seated=False)
        metrics.SOCIAL_FEEDS_OPEN.inc()
        try:
            async for event in self.feeds.follow(me.user_id, after_id):
                yield event
        finally:
            metrics.SOCIAL_FEEDS_OPEN.dec()
            await self.connections.close(connection, tell=False)

    async def close(self) -> None:
        await self.feeds.close()
