"""A replica's one subscription to a Redis pub/sub channel, kept alive.

The gateway hears three kinds of notice this way: matchmaking tickets closed
(gateway/matchmaking/notices.py), blocks (gateway/social/sights.py) and bans
(bans.py); the game services hear the bans too. Each notice is only a hint over what Redis
stores, so a listener re-reads the stored truth every time it (re)subscribes:
one lost while it was not listening changes nothing. Classic pub/sub, not
sharded: a Redis Cluster forwards a PUBLISH to every node, so one connection
to any node hears the channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.core.store import RedisClient
from services.core.tasks import cancel_requested

log = logging.getLogger("rodada.pubsub")

# How long one read waits for a message (and a follower for the subscription).
LISTEN_POLL_SECONDS = 5.0
RECONNECT_SECONDS = 0.5


async def listen(
    redis: RedisClient,
    channel: str,
    heard: Callable[[str], None],
    *,
    subscribed: Callable[[], Awaitable[None]],
    lost: Callable[[], None] = lambda: None,
    what: str,
) -> None:
    """Until the server drains: subscribe to ``channel``, await
    ``subscribed()`` (re-read what is stored, say it is listening), then pass
    every message's text to ``heard``; on a lost connection call ``lost()``
    and subscribe again after a pause. ``what`` names the notices in the log."""
    while not cancel_requested():
        client = _subscriber(redis)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(channel)
            await subscribed()
            while True:
                message = await pubsub.get_message(timeout=LISTEN_POLL_SECONDS)
                if message is not None and message.get("type") == "message":
                    data = message["data"]
                    heard(data.decode() if isinstance(data, bytes) else data)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            lost()
            log.warning("%s connection lost (%s); reconnecting", what, error)
            await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call]
            if client is not redis:
                with contextlib.suppress(Exception):
                    await client.aclose()


def _subscriber(redis: RedisClient) -> Redis:
    if isinstance(redis, RedisCluster):  # any node hears a classic PUBLISH
        node = redis.get_default_node()
        return Redis(host=node.host, port=int(node.port), socket_keepalive=True)
    return redis
