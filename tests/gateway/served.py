"""A real uvicorn server on loopback for the protocol tests, and a transport
that notes the writes on their way to the socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from tools.redis_server import free_port


@asynccontextmanager
async def served(app: Any, **options: Any) -> AsyncIterator[int]:
    """``app`` served by uvicorn (``options``: its Config's) on a free port,
    for the block; the port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", **options))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 10)


class Recorder:
    """A socket's transport, its writes noted in ``writes`` on their way through."""

    def __init__(self, transport: Any, writes: list[bytes]) -> None:
        self.transport = transport
        self.writes = writes

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)
