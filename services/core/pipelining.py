"""A Lua script whose concurrent calls share a round trip.

Under load many moves commit in the same turn of the event loop. Sent one by
one, each commit costs a ``write(2)`` to Redis and a wake-up for its reply,
and on the loopback of a small VM those syscalls were the largest single
cost of a move (about a fifth of the game service's CPU, py-spy). A
:class:`CoalescedScript` queues every call made in one turn of the loop and
sends them at the end of it as one pipeline (no transaction: each script is
atomic on its own and independent of the others), then hands each caller its
own reply or error. A lone call goes out as a plain ``EVALSHA``. Nothing
changes for the callers: the same replies, the same errors, the same
compare-and-set in every script. A client has one :class:`Coalescer`
(``store.connect``'s ``scripts``): one pipeline per turn carries the calls
of every coalesced script on it, whoever makes them (a move's rate limit
beside other moves' commits, a ticket's creation beside another's status).

The batch goes out on the client's :class:`~services.core.wire.Wire` (one
pipelined connection, hiredis, none of redis-py's per-command machinery),
measured in REDIS_SECONDS and traced as redis-py's commands are. A Redis
Cluster client calls the script directly (a pipeline there is split by node,
and a script's keys share one slot anyway).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from services.core import metrics, tracing
from services.core.wire import Wire

_Call = tuple[AsyncScript, tuple[Any, ...], asyncio.Future[Any]]


class Coalescer:
    """The calls of the coalesced scripts on one client made in one turn of
    the loop, sent as one pipeline. One per client (``store.connect``'s
    ``scripts``): a coalescer per caller would send a pipeline each in the
    same turn, on the same connection."""

    def __init__(self, redis: Any) -> None:
        # A single node's client (from store.connect) carries the Wire its
        # batches go out on; a cluster's calls each script directly.
        self._wire: Wire | None = None if isinstance(redis, RedisCluster) else redis.wire
        self._pending: list[_Call] = []

    async def call(self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        if self._wire is None:
            return await script(keys=keys, args=args)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((script, (len(keys), *keys, *args), future))
        if len(self._pending) == 1:
            # After every callback ready in this turn of the loop: the calls
            # they make join this batch.
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.ensure_future(self._send(batch))
        task.add_done_callback(_retrieve)

    async def _send(self, batch: list[_Call]) -> None:
        try:
            replies = await self._execute([("EVALSHA", script.sha, *args) for script, args, _ in batch])
            unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if unknown:  # a Redis restarted or failed over, or a script's first call
                # One more round trip: the scripts loaded, then those calls
                # again (a connection's commands run in the order sent).
                scripts = {batch[i][0].sha: batch[i][0].script for i in unknown}
                loads = [("SCRIPT", "LOAD", script) for script in scripts.values()]
                calls = [("EVALSHA", batch[i][0].sha, *batch[i][1]) for i in unknown]
                again = await self._execute(loads + calls)
                for index, reply in zip(unknown, again[len(loads) :], strict=True):
                    replies[index] = reply
        except BaseException as error:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
            if not isinstance(error, Exception):
                raise
            return
        for (_, _, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue  # its caller gave up (a deadline); the script ran all the same
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _execute(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """The commands' replies (an error as its exception), as one round
        trip: measured as "evalsha" alone, else as a "pipeline", like
        redis-py's."""
        assert self._wire is not None
        op = "pipeline" if len(commands) > 1 else str(commands[0][0]).lower()
        started = time.perf_counter()
        with tracing.redis_span(commands):
            replies = await self._wire.execute(commands)
        metrics.REDIS_SECONDS.labels(op).observe(time.perf_counter() - started)
        return replies


class CoalescedScript:
    """A script on a client of ``store.connect``, its calls batched with
    every other coalesced script's on that client."""

    def __init__(self, redis: Any, script: str) -> None:
        self._script: AsyncScript = redis.register_script(script)
        self._coalescer: Coalescer = redis.scripts

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await self._coalescer.call(self._script, keys, args)


def _retrieve(task: asyncio.Future[None]) -> None:
    """A batch's errors went to its callers; nothing is left unretrieved."""
    if not task.cancelled():
        task.exception()
