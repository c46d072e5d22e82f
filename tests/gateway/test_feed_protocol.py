"""The feeds' WebSocket protocol's inbox behaves as the asyncio.Queue it
replaces, as uvicorn uses it (put_nowait, get, empty), holding nothing while
idle."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.feed_protocol import Inbox


def event(n: int) -> Any:
    return {"type": "websocket.receive", "text": str(n)}


async def test_first_in_first_out_and_empty_when_drained() -> None:
    inbox = Inbox()
    assert inbox.empty()
    for n in range(3):
        inbox.put_nowait(event(n))
    assert not inbox.empty()
    assert [await inbox.get() for _ in range(3)] == [event(0), event(1), event(2)]
    assert inbox.empty()
    assert inbox._items is None  # an idle socket holds no deque


async def test_a_reader_waits_for_the_next_item() -> None:
    inbox = Inbox()
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    assert not reader.done()
    inbox.put_nowait(event(1))
    inbox.put_nowait(event(2))
    assert await reader == event(1)
    assert await inbox.get() == event(2)


async def test_a_reader_that_gives_up_leaves_the_inbox_working() -> None:
    inbox = Inbox()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(inbox.get(), 0.01)
    inbox.put_nowait(event(1))
    assert await asyncio.wait_for(inbox.get(), 1) == event(1)
