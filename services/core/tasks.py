"""Helpers for long-running asyncio loops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("rodada.tasks")


def cancel_requested() -> bool:
    """Whether the running task has been asked to stop. redis-py (8.1) can
    lose a CancelledError that lands mid-command (it drops the connection and
    the call fails with a ConnectionError, or carries on), so loops that must
    end on cancellation check this as well: Task.cancelling() keeps the
    request even when the exception was swallowed."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def every(seconds: float, step: Callable[[], Awaitable[object]], what: str) -> None:
    """Run ``step`` every ``seconds`` until cancelled. A step that fails (a
    Redis or game service hiccup) is logged as ``what`` and the loop goes on:
    a background check must not stop for good on one bad moment."""
    while not cancel_requested():
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s failed", what)
        await asyncio.sleep(seconds)
