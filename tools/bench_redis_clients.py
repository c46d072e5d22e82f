"""redis-py against valkey-glide for the store's kind of call (issue 22): not
part of ``make bench``, and valkey-glide is not a dependency.

Each client runs ``--callers`` coroutines, each committing to a match of its
own through a compare-and-set Lua script shaped like the store's commit (read
the version, write the state, append an event) as fast as answers come, for
``--seconds``, on our own redis-server. Reported per call: this process's CPU
(every thread: glide's Rust core runs its own) and Redis's. Clients:

- ``redis-py``: one ``EVALSHA`` per call (hiredis parser), as the store's
  Redis Cluster path;
- ``coalesced``: the store's :class:`CoalescedScript` on the services' own
  client (``services.core.store.connect``): one batch per turn of the
  event loop, sent on the client's Wire, the path the game services take;
- ``glide``: valkey-glide's asyncio ``GlideClient.invoke_script``.

    pip install --target /tmp/glide valkey-glide
    PYTHONPATH=/tmp/glide python -m tools.bench_redis_clients [--callers 50] [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from services.core.pipelining import CoalescedScript
from services.core.store import connect
from tools.bench import cpu_seconds
from tools.redis_server import RedisServer

SCRIPT = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[1]) then return {0, version} end
redis.call('HSET', KEYS[1], 'version', version + 1, 'state', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100', '*', 'e', ARGV[3])
return {1, version + 1}
"""
STATE = "s" * 1200  # about a match's state
EVENT = "e" * 150  # about an event

Commit = Callable[[list[str], list[str]], Awaitable[Any]]


async def drive(commit: Commit, callers: int, seconds: float, redis_pid: int) -> dict[str, float]:
    prefix = uuid.uuid4().hex[:8]
    """``callers`` matches committed to as fast as answers come; the calls
    made and the CPU they cost, after one second's warm-up."""
    counting = stopping = False
    calls = 0

    async def caller(index: int) -> None:
        nonlocal calls
        match = f"{{{prefix}{index}}}"  # new matches each run
        keys = [f"{match}:match", f"{match}:events"]
        version = 0
        while not stopping:  # not cancelled: a cancelled call may leave a connection half-used
            ok, version = await commit(keys, [str(version), STATE, EVENT])
            assert ok == 1, "compare-and-set refused: callers share a match"
            if counting:
                calls += 1

    tasks = [asyncio.create_task(caller(i)) for i in range(callers)]
    await asyncio.sleep(1.0)
    counting, started = True, time.monotonic()
    own, redis = time.process_time(), cpu_seconds(redis_pid)
    await asyncio.sleep(seconds)
    own, redis = time.process_time() - own, cpu_seconds(redis_pid) - redis
    elapsed, made = time.monotonic() - started, calls
    stopping = True
    await asyncio.gather(*tasks)
    return {
        "calls_per_second": round(made / elapsed),
        "client_cpu_ms": round(own * 1000 / made, 4),
        "redis_cpu_ms": round(redis * 1000 / made, 4),
    }


async def redis_py(url: str, coalesced: bool) -> tuple[Commit, Callable[[], Awaitable[None]]]:
    from redis.asyncio import BlockingConnectionPool, Redis

    if coalesced:
        services = connect(url)
        return CoalescedScript(services, SCRIPT), services.aclose
    client = Redis(connection_pool=BlockingConnectionPool.from_url(url, max_connections=256))
    script = client.register_script(SCRIPT)

    async def commit(keys: list[str], args: list[str]) -> Any:
        return await script(keys=keys, args=args)

    return commit, client.aclose


async def glide(port: int) -> tuple[Commit, Callable[[], Awaitable[None]]]:
    from glide import GlideClient, GlideClientConfiguration, NodeAddress, Script

    client = await GlideClient.create(GlideClientConfiguration([NodeAddress("127.0.0.1", port)]))
    script = Script(SCRIPT)

    async def commit(keys: list[str], args: list[str]) -> Any:
        return await client.invoke_script(script, keys=keys, args=args)

    return commit, client.close


async def measure(
    server: RedisServer, port: int, client: str, callers: int, seconds: float
) -> dict[str, Any]:
    if client == "glide":
        commit, close = await glide(port)
    else:
        commit, close = await redis_py(server.url, coalesced=client == "coalesced")
    try:
        assert server.process is not None
        return {"client": client, **await drive(commit, callers, seconds, server.process.pid)}
    finally:
        await close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--callers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp)).start()
        try:
            port = int(server.url.rsplit(":", 1)[1].split("/")[0])
            for _ in range(args.rounds):  # interleaved: a busy spell hits every client alike
                for client in ("redis-py", "coalesced", "glide"):
                    result = asyncio.run(measure(server, port, client, args.callers, args.seconds))
                    print(json.dumps(result), flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
