"""Helpers for long-running asyncio loops."""

from __future__ import annotations

import asyncio


def cancel_requested() -> bool:
    """Whether the running task has been asked to stop. redis-py (8.1) can
    lose a CancelledError that lands mid-command (it drops the connection and
    the call fails with a ConnectionError, or carries on), so loops that must
    end on cancellation check this as well: Task.cancelling() keeps the
    request even when the exception was swallowed."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
