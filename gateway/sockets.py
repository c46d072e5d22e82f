"""The WebSocket feeds — a table's, a matchmaking ticket's, the caller's
social feed, a tournament's — served as plain ASGI in front of FastAPI, with
one hello, one keepalive and one set of close codes.

A feed spends nearly all its life idle, and a gateway holds tens of
thousands: so each one is as little as it can be. The connection's own
coroutine only waits for what the client sends (pings, the close); what the
feed has to say is pushed into a small outgoing queue (by the hub for a
table, by a task following the ticket, the social stream or the
tournament), and a task drains it only while there is something to send. No
router, no dependency injection, no buffer while idle (measured in ``make
bench``: tools/bench_feeds.py).

The protocol (docs/feeds.md; the AsyncAPI at /v1/feeds/asyncapi.json): the
client first sends a JSON object with its token, ``{"token": "<access
token>"}`` (a table's also ``"after_event_id": N``, the social feed's
``"after_id"``), then at any time ``{"ping": <anything>}`` (answered
``{"pong": <the same>}``). A table's feed sends the JSON of
``FollowTableResponse`` items (``{"event": …}``, ``{"snapshot": …}``,
``{"table": …}``), then ``{"end": {"reason": "finished"}}`` and close 1000
when the match is over; a ticket's its ``TicketUpdate``s then ``{"end":
{"reason": "ticket_closed"}}``; the social feed ``{"event": SocialEvent}``;
a tournament's ``{"tournament": …}`` then ``{"end": {"reason":
"tournament_over"}}``. A refusal is ``{"error": {"code", "message"}}`` and
close 4000 + the HTTP status (4401, 4403, 4404, 4422 — a hello that is not
a JSON object —, 4429, 4503, …); 1012 "draining" when the replica drains and
1013 "lagging" when the client fell too far behind: resume from the last
event id, on any replica. Keepalive: the server pings at the protocol level
every FEED_PING_SECONDS; browsers answer by themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
import orjson
from google.protobuf.message import Message
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway import metrics
from gateway.feed_protocol import FeedProtocol
from gateway.feeds import feed_message
from gateway.matches import Caller
from gateway.matchmaking.messages import ticket_update_json
from gateway.platform import Platform
from gateway.protojson import message_json
from services.core import guard, tracing
from services.core.errors import Refused, invalid, permission_denied, unauthenticated, unavailable
from services.core.feeds import Item

if TYPE_CHECKING:
    from opentelemetry.context import Context

T = TypeVar("T")
log = logging.getLogger("rodada.gateway.feeds")
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
    there is something that could not be written at once).

    On our own protocol (gateway/feed_protocol.py) a text is written to the
    socket right away when nothing is waiting before it and the socket is
    writable: the fan-out of one event to thousands of feeds costs a frame
    and a write each, not a task and an ASGI ``send`` each. Otherwise (the
    socket paused by back-pressure, a close, another server) it queues, and
    a task drains the queue through ``send``, in order."""

    __slots__ = ("done", "protocol", "queue", "send", "task")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.protocol = FeedProtocol.of(send)
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
        if self.queue is None and self.task is None:
            if self.protocol is not None and self.protocol.write_text(text):
                return
        elif self.queue is not None and len(self.queue) >= MAX_OUTGOING:
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
                    if self.protocol is None or not self.protocol.write_text(message):
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
    """The client's first message: a JSON object with its token (each feed
    reads its other fields)."""
    try:
        message = await asyncio.wait_for(receive(), timeout)
    except TimeoutError:
        raise invalid("hello_timeout", 'send the hello first: {"token": ...}') from None
    if message["type"] != "websocket.receive":
        raise ConnectionError("the client left")
    try:
        # orjson, not json: a hello nested 100,000 deep is a refusal
        # (orjson's depth limit), not a RecursionError.
        hello = orjson.loads(message.get("text") or message.get("bytes") or b"")
    except orjson.JSONDecodeError:
        raise invalid("invalid_request", "the hello must be a JSON object") from None
    if not isinstance(hello, dict) or not isinstance(hello.get("token"), str):
        raise unauthenticated('bad hello: send {"token": "<access token>"} first')
    return hello


async def _listen(receive: Receive, out: Outgoing) -> None:
    """Until the client leaves: answer its pings (the feed is pushed)."""
    while True:
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


Close = Callable[[], Awaitable[None]]
# A feed: given the platform, the path's id, the caller, its hello and the
# socket's outgoing queue, start it; returns what to call when it ends.
Opener = Callable[[Platform, str, Caller, dict[str, Any], Outgoing], Awaitable[Close]]


async def serve(
    p: Platform,
    opener: Opener,
    key: str,
    receive: Receive,
    send: Send,
    name: str = "WS feed",
    upgrade: Context | None = None,
    scope: Scope | None = None,
) -> None:
    """One WebSocket of any feed: the hello, the feed, the client's pings,
    and every refusal as an error and a close code. With tracing on, the
    feed from its hello to its end is one span, ``name``, whose parent is
    the hello's ``traceparent`` or else the upgrade request's (``upgrade``).
    ``scope``, the connection's, is emptied once the socket is accepted: the
    server holds it for the connection's life, and neither it nor the feed
    reads it again."""
    if (await receive())["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    if scope is not None:
        scope.clear()
    metrics.WS_CONNECTIONS.inc()
    out = Outgoing(send)
    try:
        try:
            hello = await _hello(receive, p.settings.ws_auth_timeout_seconds)
        except ConnectionError:
            return
        except Exception as error:
            out.refuse(_refusal(error))
            await _wait_sent(out)
            return
        # With tracing off an idle feed holds no span, only an empty nullcontext.
        span = tracing.feed_span(name, upgrade, hello) if tracing.enabled() else contextlib.nullcontext()
        with span:
            feed = _feed(p, opener, key, receive, out, hello)
            del hello  # an idle feed keeps nothing it does not need
            await feed
    finally:
        metrics.WS_CONNECTIONS.dec()


async def _feed(
    p: Platform, opener: Opener, key: str, receive: Receive, out: Outgoing, hello: dict[str, Any]
) -> None:
    """A feed from its hello to its end (the client left, or a refusal)."""
    close: Close | None = None
    unwatch: Callable[[], None] | None = None
    try:
        caller = p.sessions.caller(hello["token"])
        unwatch = p.bans.watch(
            caller.user_id, lambda: out.refuse(permission_denied("banned", "this account is banned"))
        )
        close = await opener(p, key, caller, hello, out)
        del hello  # an idle feed keeps nothing it does not need
        await _listen(receive, out)
    except ConnectionError:
        return
    except Exception as error:  # a refusal, Redis unavailable (4503), or a bug (4500, logged)
        out.refuse(_refusal(error))
        await _wait_sent(out)
    finally:
        if unwatch is not None:
            unwatch()
        if close is not None:
            await close()


def _refusal(error: Exception) -> Refused:
    refusal = guard.as_refusal(error)
    if refusal.code == grpc.StatusCode.INTERNAL:
        log.error("a feed failed", exc_info=error)
    return refusal


async def _wait_sent(out: Outgoing) -> None:
    if out.task is not None:
        await asyncio.shield(out.task)


async def _pump(
    items: AsyncIterator[T], text: Callable[[T], str], out: Outgoing, end: str | None, first: bool = True
) -> Close:
    """Send each item of ``items`` as it comes, then ``{"end": {"reason": end}}``
    and close 1000 (``end`` None: a feed that ends only with a refusal). With
    ``first`` (a feed that starts with its current state), the first item is
    awaited here, before the client's pings are answered: the feed is live (a
    ticket's follower counted) once the socket answers, and a client that
    leaves at once still ends what it started."""
    started: list[T] = []
    if first:
        with contextlib.suppress(StopAsyncIteration):
            started.append(await anext(items))

    async def run() -> None:
        try:
            more = not first or bool(started)  # a feed primed with nothing has ended
            for item in started:
                out.text(text(item))
            started.clear()  # an idle feed keeps nothing it does not need
            if more:
                async for item in items:
                    out.text(text(item))
        except Exception as error:
            out.refuse(_refusal(error))
            return
        if end is not None:
            out.text(orjson.dumps({"end": {"reason": end}}).decode())
            out.close(CLOSE_FINISHED, end)

    task = asyncio.get_running_loop().create_task(run())

    async def close() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()

    return close


# -- the feeds -----------------------------------------------------------------------


async def _table(p: Platform, table_id: str, caller: Caller, hello: dict[str, Any], out: Outgoing) -> Close:
    """Events and snapshots, pushed by the hub (gateway/feeds.py)."""
    after = hello.get("after_event_id", 0)
    if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after < 2**32:
        raise invalid("invalid_request", "after_event_id: an integer >= 0")
    return await p.feeds.open(caller, table_id, after, out.item, out.refuse)


async def _ticket(p: Platform, ticket_id: str, caller: Caller, hello: dict[str, Any], out: Outgoing) -> Close:
    """Queue updates until the ticket is matched or closed; the open feed
    keeps the ticket alive."""
    updates = p.matchmaking.follow(ticket_id, caller.identity)
    return await _pump(
        updates,
        lambda u: orjson.dumps(ticket_update_json(ticket_id, u)).decode(),
        out,
        "ticket_closed",
    )


async def _social(p: Platform, _: str, caller: Caller, hello: dict[str, Any], out: Outgoing) -> Close:
    """The caller's social events after ``after_id``, then each new one."""
    after = hello.get("after_id", "")
    if not isinstance(after, str):
        raise invalid("invalid_request", "after_id: a string")
    # Registered and subscribed before pings are answered: a pong means the
    # feed is live.
    events, closing = await p.social.open(caller.identity, after)
    stop = await _pump(
        events, lambda event: orjson.dumps({"event": message_json(event)}).decode(), out, None, first=False
    )

    async def close() -> None:
        await stop()
        await closing()

    return close


async def _tournament(
    p: Platform, tournament_id: str, caller: Caller, hello: dict[str, Any], out: Outgoing
) -> Close:
    """The tournament now and after every change, to its end."""
    updates = p.tournaments.follow(tournament_id)
    return await _pump(
        updates,
        lambda doc: orjson.dumps({"tournament": message_json(p.tournaments.message(doc))}).decode(),
        out,
        "tournament_over",
    )


_ID = "([A-Za-z0-9_-]{1,64})"
FEEDS: list[tuple[re.Pattern[str], Opener]] = [
    (re.compile(rf"^/v1/tables/{_ID}/events$"), _table),
    (re.compile(rf"^/v1/matchmaking/tickets/{_ID}/events$"), _ticket),
    (re.compile(r"^/v1/social/events()$"), _social),
    (re.compile(rf"^/v1/tournaments/{_ID}/events$"), _tournament),
]
TABLE_FEED = FEEDS[0][0]
# Each feed's span name: its route, ids as ``{id}`` ("WS /v1/tables/{id}/events").
_SPAN_NAMES = {
    opener: "WS " + pattern.pattern.strip("^$").replace(_ID, "{id}").replace("()", "")
    for pattern, opener in FEEDS
}


class FeedSockets:
    """ASGI in front of the FastAPI app: the feeds here, the rest there."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            for pattern, opener in FEEDS:
                found = pattern.match(scope["path"])
                if found:
                    platform: Platform = self.app.state.platform  # type: ignore[attr-defined]
                    upgrade = tracing.upgrade_context(scope["headers"])
                    name = _SPAN_NAMES[opener]
                    await serve(platform, opener, found.group(1), receive, send, name, upgrade, scope)
                    return
        await self.app(scope, receive, send)
