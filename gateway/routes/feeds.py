"""The matchmaking ticket's WebSocket feed (a table's feed is gateway/sockets.py,
plain ASGI for its memory's sake). Browsers cannot set headers on a
WebSocket, and a token in the URL would end up in access logs, so the first
message is a hello carrying the token: ``{"token"}``; then the client may
send ``{"ping": x}`` (answered ``{"pong": x}``). Refusals and close codes are
the table feed's (gateway/sockets.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from gateway import metrics
from gateway.deps import message_json
from gateway.matches import Caller
from gateway.matchmaking.queues import ticket_update
from gateway.platform import Platform
from gateway.sockets import CLOSE_FINISHED, close_code
from services.kit.errors import Refused, invalid, unauthenticated

router = APIRouter(tags=["feeds"])


class FeedSocket:
    """One WebSocket: the hello, a reader that answers pings and notices the
    client leaving, and sends serialised by a lock (the reader sends pongs)."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.lock = asyncio.Lock()

    async def send(self, text: str) -> None:
        async with self.lock:
            await self.websocket.send_text(text)

    async def hello(self, p: Platform) -> tuple[Caller, dict[str, Any]]:
        try:
            message = await asyncio.wait_for(
                self.websocket.receive_json(), p.settings.ws_auth_timeout_seconds
            )
        except TimeoutError:
            raise invalid("hello_timeout", 'send the hello first: {"token": ...}') from None
        except (ValueError, KeyError):
            raise invalid("invalid_request", "the hello must be a JSON object") from None
        if not isinstance(message, dict) or not isinstance(message.get("token"), str):
            raise unauthenticated('bad hello: send {"token": "<access token>"} first')
        return p.sessions.caller(message["token"]), message

    async def read(self, main: asyncio.Task[Any]) -> None:
        """Until the client goes: answer pings; then stop the feed."""
        try:
            while True:
                text = await self.websocket.receive_text()
                with contextlib.suppress(ValueError):
                    message = orjson.loads(text)
                    if isinstance(message, dict) and "ping" in message:
                        await self.send(orjson.dumps({"pong": message["ping"]}).decode())
        except (WebSocketDisconnect, RuntimeError, KeyError):
            main.cancel()

    async def pump(self, items: AsyncIterator[Any], text: Any) -> None:
        """Send every item, then end; a refusal ends with an error and its code."""
        reader = asyncio.create_task(self.read(asyncio.current_task()))  # type: ignore[arg-type]
        try:
            async for item in items:
                await self.send(text(item))
        except Refused as refusal:
            await self.refuse(refusal)
        finally:
            reader.cancel()

    async def refuse(self, refusal: Refused) -> None:
        with contextlib.suppress(Exception):
            await self.send(orjson.dumps(refusal.body()).decode())
            await self.websocket.close(close_code(refusal), refusal.reason)

    async def finish(self, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self.send(orjson.dumps({"end": {"reason": reason}}).decode())
            await self.websocket.close(CLOSE_FINISHED, reason)


async def serve_feed(websocket: WebSocket, body: Any) -> None:
    """Accept, count, run ``body(socket, platform)``; a client that leaves is no error."""
    await websocket.accept()
    metrics.WS_CONNECTIONS.inc()
    socket = FeedSocket(websocket)
    try:
        await body(socket, websocket.app.state.platform)
    except Refused as refusal:
        await socket.refuse(refusal)
    except (WebSocketDisconnect, asyncio.CancelledError):
        pass
    finally:
        metrics.WS_CONNECTIONS.dec()


@router.websocket("/v1/matchmaking/tickets/{ticket_id}/events")
async def ticket_feed(websocket: WebSocket, ticket_id: str) -> None:
    """Follow a ticket, which keeps it alive (close it and the ticket is
    dropped): ``{"queue": {...}}`` whenever that changes, then
    ``{"matched": {"table_id", "seat", "cpu_seats"}}`` (``cpu_seats`` not
    empty: bot fill) or ``{"closed": {"state", "reason"}}`` before the end."""

    async def body(socket: FeedSocket, p: Platform) -> None:
        caller, _ = await socket.hello(p)
        updates = p.matchmaking.follow(ticket_id, caller.identity)
        try:
            await socket.pump(
                updates, lambda update: orjson.dumps(message_json(ticket_update(ticket_id, update))).decode()
            )
        finally:
            await updates.aclose()
        await socket.finish("ticket_closed")

    await serve_feed(websocket, body)
