"""Waiting for something another process does (a clock firing, a matcher cycle)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 10.0, every: float = 0.05) -> None:
    """Poll ``check`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(every)
