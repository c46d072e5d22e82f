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
  while something waits to be received;
- its ``writable`` flag, an ``asyncio.Event`` (an object with a dict and
  an empty deque of waiters, about 0.8 KB), is a :class:`Gate`: a flag and,
  only while someone waits, one future.

And one part of its time: a feed's text message (the fan-out of one event to
thousands of feeds) is framed here and written straight to the transport
(:meth:`FeedProtocol.write_text`), without uvicorn's ``send`` (an ASGI
message dict, a coroutine, wsproto's general frame encoder) per socket.
The frames written to one socket in one turn of the event loop (a move's
events and its snapshot, from one live message to a table's few feeds) go
out in one write: a system call per socket and turn, not per frame. Held
only until ``CORK_SOCKETS`` sockets have some: the hub hands a message's
events to every listener before any snapshot, so a fan-out to thousands
gets each event out at once, not after the snapshots (its clients read
while it writes; holding every frame to the turn's end measured worse).
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import Iterator
from typing import Any

from uvicorn._types import ASGISendEvent, WebSocketEvent
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol
from wsproto.connection import ConnectionState

_TEXT_FIN = 0x81  # FIN, no RSV bits (no extension: per-message deflate is off), opcode 1 (text)


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


class Gate:
    """What uvicorn's protocol uses of its ``writable`` ``asyncio.Event``
    (``set``, ``clear``, ``is_set``, ``wait``): a flag, and a future only
    while someone waits for it to be set."""

    __slots__ = ("_open", "_waiter")

    def __init__(self) -> None:
        self._open = True
        self._waiter: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._open

    def set(self) -> None:
        self._open = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def clear(self) -> None:
        self._open = False

    async def wait(self) -> None:
        while not self._open:
            if self._waiter is None or self._waiter.done():
                self._waiter = asyncio.get_running_loop().create_future()
            # shielded: one waiter giving up (cancelled) leaves the others waiting
            await asyncio.shield(self._waiter)


def text_frame(text: str) -> bytes:
    """A server's WebSocket frame of one whole text message: unmasked (RFC
    6455 5.1: a server never masks), no extension, the length in 7 bits, or
    126 and 16 bits, or 127 and 64 bits. The last few made are kept, by the
    ``str`` object: a fan-out hands the same rendered items (a move's events,
    then each audience's snapshot, audiences in turn) to every feed, so each
    is encoded and framed once, not once per feed."""
    kept = _frames.get(id(text))
    if kept is not None and kept[0] is text:
        return kept[1]
    payload = text.encode()
    size = len(payload)
    if size <= 125:
        frame = bytes((_TEXT_FIN, size)) + payload
    elif size <= 0xFFFF:
        frame = struct.pack("!BBH", _TEXT_FIN, 126, size) + payload
    else:
        frame = struct.pack("!BBQ", _TEXT_FIN, 127, size) + payload
    if len(_frames) >= FRAMES_KEPT:
        del _frames[next(iter(_frames))]  # the oldest
    _frames[id(text)] = (text, frame)  # the text held, so its id is not reused meanwhile
    return frame


FRAMES_KEPT = 8
_frames: dict[int, tuple[str, bytes]] = {}

CORK_SOCKETS = 16


class _Cork:
    """The sockets written to in this turn of the loop, each to send what it
    was given in one write, at the turn's end or once there are
    ``CORK_SOCKETS`` of them."""

    __slots__ = ("loop", "protocols")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.protocols: list[FeedProtocol] = []
        loop.call_soon(self.flush)

    def flush(self) -> None:
        global _cork
        if _cork is self:
            _cork = None
        protocols, self.protocols = self.protocols, []
        for protocol in protocols:
            protocol.uncork()


_cork: _Cork | None = None


class FeedProtocol(WSProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = Inbox()  # type: ignore[assignment]
        self.writable = Gate()  # type: ignore[assignment]
        self.corked: list[bytes] | None = None  # frames to write with the cork's flush

    @staticmethod
    def of(send: Any) -> FeedProtocol | None:
        """The protocol behind an ASGI ``send`` (uvicorn passes its bound
        method), or None when it is not ours (another server, a test's)."""
        protocol = getattr(send, "__self__", None)
        return protocol if isinstance(protocol, FeedProtocol) else None

    def write_text(self, text: str) -> bool:
        """Write a text message (with the others written to this socket in
        this turn of the loop: see :class:`_Cork`), if the socket is open
        and writable; False otherwise (closing, closed, paused by
        back-pressure): the caller then goes through ``send``, which waits,
        drops or raises as uvicorn does. wsproto keeps no state for a whole
        unfragmented message it sends, so bypassing it here leaves it
        consistent."""
        if (
            self.close_sent
            or self.disconnected
            or self.response_started
            or not self.handshake_complete
            or not self.writable.is_set()
            or self.conn.state is not ConnectionState.OPEN
            or self.transport.is_closing()
        ):
            return False
        if self.corked is not None:
            self.corked.append(text_frame(text))
            return True
        global _cork
        cork = _cork
        if cork is None or cork.loop is not self.loop:  # another loop's (a test's) is long gone
            cork = _cork = _Cork(self.loop)
        self.corked = [text_frame(text)]
        cork.protocols.append(self)
        if len(cork.protocols) >= CORK_SOCKETS:
            cork.flush()
        return True

    def uncork(self) -> None:
        frames, self.corked = self.corked, None
        if frames and not self.transport.is_closing():
            self.transport.write(frames[0] if len(frames) == 1 else b"".join(frames))

    async def send(self, message: ASGISendEvent) -> None:
        self.uncork()  # whatever goes through uvicorn goes after what was written here
        await super().send(message)
        if message["type"] == "websocket.accept" and self.conn.connection is not None:
            self.conn.handshake = _ANSWERED  # type: ignore[assignment]
