"""A client of the social feed and table chat, as a web frontend would use
them (beside http_client.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import websockets

from tests.integration.http_client import Feed, Player


class SocialFeed:
    """A user's social feed over WebSocket (``/v1/social/events``)."""

    def __init__(self, base_url: str, token: str, after_id: str = "") -> None:
        self.url = base_url.replace("http", "ws", 1) + "/v1/social/events"
        self.hello = {"token": token, "after_id": after_id}
        self.events: list[dict[str, Any]] = []

    async def __aenter__(self) -> SocialFeed:
        self.socket = await websockets.connect(self.url, ping_interval=None)
        await self.socket.send(json.dumps(self.hello))
        # The feed is registered and subscribed once it answers a ping.
        await self.socket.send(json.dumps({"ping": "ready"}))
        while (item := json.loads(await asyncio.wait_for(self.socket.recv(), 10))) != {"pong": "ready"}:
            self.events.append(item["event"])
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.socket.close()

    async def until(self, done: Callable[[dict[str, Any]], bool], timeout: float = 15) -> dict[str, Any]:
        for event in self.events:
            if done(event):
                return event
        while True:
            item = json.loads(await asyncio.wait_for(self.socket.recv(), timeout))
            assert "event" in item, item
            self.events.append(item["event"])
            if done(item["event"]):
                return item["event"]


async def lobby_feed(player: Player, base: str, table_id: str) -> Feed:
    feed = Feed(base, table_id, player.token)
    await feed.__aenter__()
    await feed.until(lambda item: "table" in item or "snapshot" in item)
    return feed


def chat_of(item: dict[str, Any]) -> dict[str, Any] | None:
    return item.get("event", {}).get("chat")


async def next_chat(feed: Feed) -> tuple[dict[str, Any], dict[str, Any]]:
    """The next table chat the feed carries: (the ChatMessage, its event)."""
    item = (await feed.until(lambda i: chat_of(i) is not None, 15))[-1]
    chat = dict(item["event"]["chat"])
    assert chat.pop("@type") == "type.googleapis.com/rodada.platform.v1.ChatMessage"
    return chat, item["event"]
