"""uvicorn's wsproto WebSocket protocol, less what an open feed never uses
again.

An idle feed's memory is mostly the server's per-connection state
(BENCHMARKS.md). Once the handshake is answered, wsproto keeps its
handshake object (an h11 connection, the upgrade request, an event queue:
about 3 KB a connection, measured) only to ask it for events it will never
have again; the protocol here lets it go at the accept.
"""

from __future__ import annotations

from collections.abc import Iterator

from uvicorn._types import ASGISendEvent
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol


class _Answered:
    """What wsproto still asks of a handshake once the connection is open:
    its events (none)."""

    __slots__ = ()

    def events(self) -> Iterator[object]:
        return iter(())


_ANSWERED = _Answered()


class FeedProtocol(WSProtocol):
    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.conn.connection is not None:
            self.conn.handshake = _ANSWERED  # type: ignore[assignment]
