"""How long a feeds refresh cycle (``Connections.refresh``, gateway/feeds.py)
holds the gateway's event loop: not part of ``make bench``.

``--feeds`` connections are registered (``--seated`` of them seated: a seated
feed refreshes five keys, a spectator's two) on our own redis-server, then
``--cycles`` refresh cycles run while a ticker sleeps 1 ms at a time. Per
cycle: its wall time, this process's CPU, the longest the ticker waited past
its 1 ms (what every move and feed waits for at worst while it runs), and
the most CPU this thread spent between two ticks (the hold itself, without
the time a busy machine gave other processes).
``--chunk`` sets ``REFRESH_CHUNK`` (0 = every connection in one pipeline,
as before it was chunked). The collector is set up as the gateway's
(gateway/__main__.py): its young threshold, and start-up frozen.

    python -m tools.bench_keep_alive [--feeds 10000] [--seated 0.5] [--chunk 128]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

from gateway import feeds
from gateway.__main__ import GC_YOUNG_THRESHOLD
from services.core.store import connect
from tools.redis_server import RedisServer


async def run(count: int, seated: float, cycles: int) -> list[tuple[float, float, float, float]]:
    """(wall, CPU, longest loop gap, longest CPU between ticks) per cycle, in seconds."""
    data = tempfile.TemporaryDirectory(prefix="bench-keep-alive-")
    server = RedisServer(Path(data.name)).start()
    redis = connect(server.url, timeout=5.0)
    try:
        connections = feeds.Connections(redis, cap=64)
        opening = asyncio.Semaphore(64)

        async def open_one(index: int) -> None:
            async with opening:  # four feeds to a table, the first ``seated`` share seated
                await connections.open(f"u{index}", f"t{index // 4}", index < count * seated)

        await asyncio.gather(*(open_one(i) for i in range(count)))
        longest = held = 0.0

        async def ticker() -> None:
            nonlocal longest, held
            while True:
                before, cpu = time.perf_counter(), time.thread_time()
                await asyncio.sleep(0.001)
                longest = max(longest, time.perf_counter() - before - 0.001)
                held = max(held, time.thread_time() - cpu)

        ticking = asyncio.create_task(ticker())
        results = []
        for _ in range(cycles):
            await asyncio.sleep(0.2)
            longest = held = 0.0
            wall, cpu = time.perf_counter(), time.process_time()
            await connections.refresh()
            results.append((time.perf_counter() - wall, time.process_time() - cpu, longest, held))
        ticking.cancel()
        return results
    finally:
        await redis.aclose()
        server.stop()
        data.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--seated", type=float, default=0.5, help="the share of feeds that are seated")
    parser.add_argument("--chunk", type=int, default=feeds.REFRESH_CHUNK, help="0: one pipeline")
    parser.add_argument("--cycles", type=int, default=5)
    args = parser.parse_args()
    feeds.REFRESH_CHUNK = args.chunk or args.feeds
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.freeze()
    results = asyncio.run(run(args.feeds, args.seated, args.cycles))
    print(
        f"{args.feeds} feeds ({args.seated:.0%} seated), chunk {feeds.REFRESH_CHUNK}, load {os.getloadavg()}"
    )
    for name, index in (("wall", 0), ("CPU", 1), ("longest loop gap", 2), ("longest hold (CPU)", 3)):
        values = [1000 * r[index] for r in results]
        listed = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {name}: median {statistics.median(values):.1f} ms, max {max(values):.1f} ms ({listed})")


if __name__ == "__main__":
    main()
