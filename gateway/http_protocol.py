"""uvicorn's HTTP/1.1 protocol (httptools), writing a response's head and
body in one system call.

uvicorn writes a response's status line and headers when the app sends
``http.response.start`` and its body when it sends ``http.response.body``:
two writes, and (the socket has Nagle's algorithm off) two packets for the
client to read, for every answer; on the web path a move is one request. Here
a connection's responses are written through :class:`_Joined`, which holds a
write until the next one joins it or the loop's turn ends, whichever is
first. An answer's head and body come in one turn (the app sends one after
the other), so they leave together; a head whose body comes later (a file
read in a thread) and a ``100 Continue`` leave at the end of their turn, no
later than any client could tell. The feeds' WebSockets are not touched: an
upgrade hands the real transport to their protocol (gateway/feed_protocol.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _Joined:
    """What a response cycle uses of its transport (``write``, ``close``,
    ``is_closing``): a write waits for the next one, which goes out with it,
    or for the end of the loop's turn; a close sends what waits first. One
    per connection, so pipelined responses keep their order."""

    __slots__ = ("held", "loop", "transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self.loop = loop
        self.held: bytes | None = None

    def write(self, data: bytes) -> None:
        if self.held is None:
            self.held = bytes(data)
            self.loop.call_soon(self.flush)
            return
        self.held += data
        self.flush()

    def flush(self) -> None:
        held, self.held = self.held, None
        if held and not self.transport.is_closing():
            self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, its responses written through :class:`_Joined`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._joined = _Joined(transport, self.loop)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        # The cycle just made for this request (none for an upgrade) has not
        # run yet: it writes through the joiner from its first byte.
        if self.cycle is not None and self.cycle.transport is self.transport:
            self.cycle.transport = self._joined  # type: ignore[assignment]
