"""uvicorn's wsproto WebSocket protocol, less what an open feed never uses
again.

An idle feed's memory is mostly the server's per-connection state
(BENCHMARKS.md). Two parts of it go here, measured with tracemalloc:

- once the handshake is answered, wsproto keeps its handshake object (an
  h11 connection, the upgrade request, an event queue: about 3 KB) only to
  ask it for events it will never have again; it is let go at the accept;
- the incoming queue, an ``asyncio.Queue``, is four empty deques (its
  items, getters, putters, and its ``join`` event's waiters: about 3 KB)
  for what is, on an idle feed, nothing; :class:`Inbox` holds a deque only
  while something waits to be received.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from typing import Any

from uvicorn._types import ASGISendEvent, WebSocketEvent
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol


class _Answered:
    """What wsproto still asks of a handshake once the connection is open:
    its events (none)."""

    __slots__ = ()

    def events(self) -> Iterator[object]:
        return iter(())


_ANSWERED = _Answered()


class Inbox:
    """What uvicorn's protocol uses of its ``asyncio.Queue`` (``put_nowait``,
    ``get``, ``empty``), for its one reader (the app's ``receive``): first in,
    first out, unbounded."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[WebSocketEvent] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: WebSocketEvent) -> None:
        if self._items is None:
            self._items = deque()
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> WebSocketEvent:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if not self._items:
            self._items = None
        return item


class FeedProtocol(WSProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = Inbox()  # type: ignore[assignment]

    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.conn.connection is not None:
            self.conn.handshake = _ANSWERED  # type: ignore[assignment]
