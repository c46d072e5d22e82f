"""The table feed's WebSocket (``/v1/tables/{id}/events``), served as plain
ASGI in front of FastAPI.

A feed spends nearly all its life idle, and a gateway holds tens of
thousands: so each one is as little as it can be. The connection's own
coroutine only waits for what the client sends (pings, the close); the hub
pushes items into a small outgoing queue, and a task drains it only while
there is something to send. No router, no dependency injection, no task
and no buffer while idle (measured in ``make bench``: tools/bench_feeds.py).

The protocol (docs/feeds.md; the AsyncAPI at /v1/feeds/asyncapi.json): the client
first sends ``{"token": "<access token>", "after_event_id": N}``, then at
any time ``{"ping": <anything>}`` (answered ``{"pong": <the same>}``). The
server sends the JSON of ``FollowTableResponse`` items (``{"event": …}``,
``{"snapshot": …}``, ``{"table": …}``), then ``{"end": {"reason":
"finished"}}`` and close 1000 when the match is over. A refusal is ``{"error":
{"code", "message"}}`` and close 4000 + the HTTP status (4401, 4403, 4404,
4422, 4429, 4503, …); 1012 "draining" when the replica drains and 1013
"lagging" when the client fell too far behind: resume from the last event
id, on any replica. Keepalive: the server pings at the protocol level every
FEED_PING_SECONDS; browsers answer by themselves.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from google.protobuf.message import Message
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway import metrics
from gateway.deps import message_json
from gateway.feeds import feed_message
from gateway.platform import Platform
from services.kit.errors import Refused, invalid, unauthenticated, unavailable
from services.kit.feeds import Item

TABLE_FEED = re.compile(r"^/v1/tables/([A-Za-z0-9_-]{1,64})/events$")
CLOSE_FINISHED, CLOSE_DRAINING, CLOSE_LAGGING = 1000, 1012, 1013
MAX_OUTGOING = 1_000  # items waiting to be sent; a client this far behind is let go ("lagging")


def close_code(refusal: Refused) -> int:
    if refusal.reason == "draining":
        return CLOSE_DRAINING
    if refusal.reason == "lagging":
        return CLOSE_LAGGING
    return 4000 + refusal.http_status


def render(message: Message) -> str:
    """A feed item's JSON, made once per item however many sockets get it."""
    return orjson.dumps({key: message_json(value) for key, value in feed_message(message).items()}).decode()


class Outgoing:
    """What one socket has to send, and the task sending it (only while
    there is something to send)."""

    __slots__ = ("done", "queue", "send", "task")

    def __init__(self, send: Send) -> None:
        self.send = send
        # Text, or a close (code, reason); made when there is something to
        # send, and dropped when sent: an idle socket has none.
        self.queue: deque[str | tuple[int, str]] | None = None
        self.task: asyncio.Task[None] | None = None
        self.done = False

    def _put(self, message: str | tuple[int, str]) -> None:
        if self.queue is None:
            self.queue = deque()
        self.queue.append(message)

    def text(self, text: str) -> None:
        if self.done:
            return
        if self.queue is not None and len(self.queue) >= MAX_OUTGOING:
            self.refuse(unavailable("this feed fell too far behind; resume from your last event", "lagging"))
            return
        self._put(text)
        self._flush()

    def item(self, item: Item | None) -> None:
        """The hub's sink: an item, or None when the match is over."""
        if item is None:
            self.text(orjson.dumps({"end": {"reason": "finished"}}).decode())
            self.close(CLOSE_FINISHED, "finished")
        else:
            self.text(item.render(render))

    def refuse(self, refusal: Refused) -> None:
        """The hub's stop, and every refusal: the error, then its close."""
        if self.done:
            return
        self._put(orjson.dumps(refusal.body()).decode())
        self.close(close_code(refusal), refusal.reason)

    def close(self, code: int, reason: str) -> None:
        if not self.done:
            self._put((code, reason))
            self.done = True
            self._flush()

    def _flush(self) -> None:
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self.queue:
                message = self.queue.popleft()
                if not self.queue:
                    self.queue = None
                if isinstance(message, str):
                    await self.send({"type": "websocket.send", "text": message})
                else:
                    code, reason = message
                    await self.send({"type": "websocket.close", "code": code, "reason": reason})
        except Exception:  # the client is gone: its receive loop ends the feed
            self.queue = None
            self.done = True
        finally:
            self.task = None


async def _hello(receive: Receive, timeout: float) -> dict[str, Any]:
    try:
        message = await asyncio.wait_for(receive(), timeout)
    except TimeoutError:
        raise invalid("hello_timeout", 'send the hello first: {"token": ...}') from None
    if message["type"] != "websocket.receive":
        raise ConnectionError("the client left")
    try:
        hello = orjson.loads(message.get("text") or message.get("bytes") or b"")
    except orjson.JSONDecodeError:
        raise invalid("invalid_request", "the hello must be a JSON object") from None
    if not isinstance(hello, dict) or not isinstance(hello.get("token"), str):
        raise unauthenticated('bad hello: send {"token": "<access token>"} first')
    after = hello.get("after_event_id", 0)
    if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after < 2**32:
        raise invalid("invalid_request", "after_event_id: an integer >= 0")
    return hello


async def table_feed(p: Platform, table_id: str, receive: Receive, send: Send) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    metrics.WS_CONNECTIONS.inc()
    out = Outgoing(send)
    close: Callable[[], Awaitable[None]] | None = None
    try:
        hello = await _hello(receive, p.settings.ws_auth_timeout_seconds)
        caller, after = p.sessions.caller(hello["token"]), hello.get("after_event_id", 0)
        del hello  # an idle feed keeps nothing it does not need
        close = await p.feeds.open(caller, table_id, after, out.item, out.refuse)
        while True:  # the feed is pushed; here, only what the client says
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text and '"ping"' in text:
                try:
                    said = orjson.loads(text)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(said, dict) and "ping" in said:
                    out.text(orjson.dumps({"pong": said["ping"]}).decode())
    except Refused as refusal:
        out.refuse(refusal)
        await _wait_sent(out)
    except ConnectionError:
        return
    finally:
        metrics.WS_CONNECTIONS.dec()
        if close is not None:
            await close()


async def _wait_sent(out: Outgoing) -> None:
    if out.task is not None:
        await asyncio.shield(out.task)


class FeedSockets:
    """ASGI in front of the FastAPI app: table feeds here, the rest there."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            found = TABLE_FEED.match(scope["path"])
            if found:
                platform: Platform = self.app.state.platform  # type: ignore[attr-defined]
                # The server holds the scope for the connection's life; a feed
                # needs none of the upgrade request's headers once here.
                scope["headers"] = ()
                await table_feed(platform, found.group(1), receive, send)
                return
        await self.app(scope, receive, send)
