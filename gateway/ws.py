"""What every WebSocket endpoint of the gateway does the same way: count the
connection, read the hello that authenticates it, notice the client leaving."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from gateway import metrics
from gateway.platform import WS_AUTH_TIMEOUT_SECONDS, Caller
from services.kit.tokens import TokenError, TokenVerifier


@contextlib.asynccontextmanager
async def connection(websocket: WebSocket) -> AsyncIterator[None]:
    """Accept and count the connection; a client that leaves is no error."""
    await websocket.accept()
    metrics.WS_CONNECTIONS.inc()
    try:
        yield
    except WebSocketDisconnect:
        pass
    finally:
        metrics.WS_CONNECTIONS.dec()


async def hello(websocket: WebSocket, verifier: TokenVerifier) -> tuple[Caller, dict[str, Any]] | None:
    """The first message, ``{"token": ..., ...}``: the caller and the whole
    message, or None after answering a bad one with an error and close 4401.
    (Browsers cannot set headers on a WebSocket, and a token in the URL would
    end up in access logs.)"""
    try:
        message = await asyncio.wait_for(websocket.receive_json(), WS_AUTH_TIMEOUT_SECONDS)
        token = str(message["token"])
        return Caller(verifier.verify(token), token), message
    except (TimeoutError, KeyError, TypeError, ValueError, TokenError) as exc:
        await websocket.send_json({"error": {"code": "unauthenticated", "message": f"bad hello: {exc}"}})
        await websocket.close(code=4401)
        return None


async def wait_closed(websocket: WebSocket) -> None:
    """Returns when the client goes away (anything it sends is ignored)."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            await websocket.receive_text()
