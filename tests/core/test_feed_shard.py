"""The feeds' pub/sub connection (a Shard) on a Redis that goes silent: the
socket stays open but nothing comes back (a stopped process, a network that
drops packets). Only the Shard's own health check can notice, so this waits
through every one of its timeouts, at their real lengths."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from services.core import feeds
from services.core.feeds import HEALTH_SECONDS, POLL_SECONDS, Shard
from services.core.store import connect
from tests.integration.waiting import until
from tools.redis_server import RedisServer

CHANNEL = "live:silent-match"


@pytest.mark.timeout(180)
async def test_a_silent_redis_is_pinged_reconnected_to_until_it_answers_and_then_repaired(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=feeds.log.name)
    server = RedisServer(tmp_path).start()
    assert server.process is not None
    pid = server.process.pid
    client = connect(server.url, timeout=2.0)
    loop = asyncio.get_running_loop()
    delivered: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    repaired: list[float] = []

    async def deliver(channel: str, data: bytes) -> None:
        await delivered.put((channel, data))

    async def repair(shard: Shard) -> None:
        repaired.append(loop.time())

    def logged(text: str) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            return any(text in record.getMessage() for record in caplog.records)

        return check

    async def was_repaired() -> bool:
        return bool(repaired)

    async def one_subscriber() -> bool:
        return await client.pubsub_numsub(CHANNEL) == [(CHANNEL.encode(), 1)]

    shard = Shard(client, False, deliver, repair)
    try:
        await shard.subscribe(CHANNEL)
        assert await client.publish(CHANNEL, b"before") == 1
        assert await asyncio.wait_for(delivered.get(), 5) == (CHANNEL, b"before")

        os.kill(pid, signal.SIGSTOP)
        stopped = loop.time()
        try:
            # Nothing heard for HEALTH_SECONDS: a PING; its answer not back
            # within as long again: the connection is given up for a new one.
            silent_within = 2 * HEALTH_SECONDS + 3 * POLL_SECONDS + 5
            await until(logged("feed connection silent"), silent_within, every=0.1)
            silent_after = loop.time() - stopped
            assert 2 * HEALTH_SECONDS < silent_after < 2 * HEALTH_SECONDS + 3 * POLL_SECONDS + 2
            # The new connection opens (the kernel accepts for the stopped
            # process) but its PING is not answered either: given up after
            # HEALTH_SECONDS, and tried again.
            await until(logged("feed connection lost"), HEALTH_SECONDS + 5, every=0.1)
            assert loop.time() - stopped > 3 * HEALTH_SECONDS
            assert repaired == []  # nothing is repaired before Redis has the subscription
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed = loop.time()

        await until(was_repaired, HEALTH_SECONDS + 5, every=0.1)
        assert len(repaired) == 1 and repaired[0] >= resumed
        assert shard.channels == {CHANNEL}
        # The connections given up are closed: Redis drops them as it reads
        # their end, leaving the one subscription.
        await until(one_subscriber, 5, every=0.1)

        assert await client.publish(CHANNEL, b"after") == 1
        assert await asyncio.wait_for(delivered.get(), 5) == (CHANNEL, b"after")
        assert delivered.empty()  # "before" once, nothing twice
        assert len(repaired) == 1
    finally:
        await shard.close()
        await client.aclose()
        os.kill(pid, signal.SIGCONT)  # harmless if running; stop() needs it running
        server.stop()
