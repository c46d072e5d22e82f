"""``make bench`` (feeds): how a gateway holds many idle feeds.

Starts a loopback platform (its own Redis, the Yatzy service, one gateway),
opens FEEDS (default 10,000) WebSocket feeds on one Yatzy match from a client
process, leaves them idle, then makes one move. Prints the gateway's memory
per idle feed, the Redis connections the gateway and the service hold before
and after (they must not grow with the feeds), and how long the move's event
took to reach every feed (p50/p99). Bounded in time; loopback only; stops
everything it started.

The feeds' client is ``bench/rodada/feeds.js`` (Node): this process's own
asyncio client cost as much CPU as the gateway it measured, on the same two
cores. ``BENCH_FEEDS_CLIENT=python`` uses that one still; ``BENCH_FEEDS_BASELINE``
(another checkout of the code, e.g. ``git archive`` of a commit with this
one's ``gen/``) runs the platform from there, for a before/after with the
same client; it is not ``BENCH_BASELINE``, with which ``make bench`` runs
its throughput rows twice and these feeds once, for this code.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import secrets
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import redis
import websockets

from services.core.tokens import Identity
from tools.stack import Stack

FEEDS = int(os.environ.get("BENCH_FEEDS", "10000"))
CLIENT = os.environ.get("BENCH_FEEDS_CLIENT", "node")
DRIVER = Path(__file__).resolve().parent.parent / "bench" / "rodada" / "feeds.js"
OPEN_CONCURRENCY = 200
TIMEOUT_SECONDS = 120.0
OPEN_TIMEOUT_SECONDS = 300.0  # the Node client's, for each half of the opening: a busy machine is slow


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def raise_open_files(wanted: int) -> None:
    """Sockets are files: the benchmark and the processes it starts need many."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, max(soft, wanted))
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        raise SystemExit(f"need {wanted} open files, the hard limit is {hard}")


def cpu_seconds(pid: int) -> float:
    """A process's CPU seconds (tools.bench's, imported late: tools.bench
    imports this module through tools.bench_matchmaking)."""
    from tools.bench import cpu_seconds

    return cpu_seconds(pid)


def redis_clients(url: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        return len(client.client_list()) - 1  # less this connection
    finally:
        client.close()


async def open_feed(url: str, token: str, ready: asyncio.Queue[Any]) -> Any:
    socket = await websockets.connect(url, ping_interval=None, max_size=2**22, open_timeout=60)
    await socket.send(json.dumps({"token": token, "after_event_id": 0}))
    # Read up to the snapshot: the feed is live from here.
    while "snapshot" not in json.loads(await socket.recv()):
        pass
    await ready.put(socket)
    return socket


async def run(stack: Stack, feeds: int = FEEDS, client: str = CLIENT) -> dict[str, Any]:
    base = stack.gateway()
    gateway_pid = stack.processes["gateway"].pid
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        body = (await http.post("/v1/auth/guest", json={})).json()
        headers = {"authorization": f"Bearer {body['access_token']}"}
        table = (await http.post("/v1/tables", json={"game": "yatzy", "seats": 1}, headers=headers)).json()
        snap = (await http.post(f"/v1/tables/{table['id']}/start", headers=headers)).json()
        url = base.replace("http", "ws") + f"/v1/tables/{table['id']}/events"
        await asyncio.sleep(1.0)
        rss_before = rss_kib(gateway_pid)
        redis_before = redis_clients(stack.redis_url)
        # Spectators: distinct users (each under the per-user cap).
        tokens = [
            stack.token(Identity(f"g_bench{secrets.token_hex(6)}", "watcher", "guest")) for _ in range(feeds)
        ]
        if client == "node":
            measured = await _node_client(stack, url, tokens, gateway_pid, http, table["id"], snap, headers)
        else:
            measured = await _python_client(stack, url, tokens, gateway_pid, http, table["id"], snap, headers)
        open_seconds, redis_at_first, rss_after, redis_after, latencies, fanout_cpu = measured
    return {
        "feeds": feeds,
        "client": client,
        "open_seconds": round(open_seconds, 1),
        "gateway_rss_mib_before": round(rss_before / 1024, 1),
        "gateway_rss_mib_after": round(rss_after / 1024, 1),
        "kib_per_idle_feed": round((rss_after - rss_before) / feeds, 2),
        "redis_connections_before": redis_before,
        "redis_connections_at_1000": redis_at_first,
        "redis_connections_after": redis_after,
        "event_to_all_p50_ms": round(statistics.median(latencies), 1),
        "event_to_all_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 1),
        "event_to_all_max_ms": round(latencies[-1], 1),
        "gateway_fanout_cpu_s": round(fanout_cpu, 2),
        "load_average": os.getloadavg()[0],
    }


async def _move(
    http: httpx.AsyncClient, table_id: str, snap: dict[str, Any], headers: dict[str, str]
) -> None:
    reply = await http.post(
        f"/v1/tables/{table_id}/actions",
        json={"expected_version": snap["version"], "action": {"roll": {}}},
        headers=headers,
    )
    reply.raise_for_status()


Measured = tuple[float, int, int, int, list[float], float]


async def _node_client(
    stack: Stack,
    url: str,
    tokens: list[str],
    gateway_pid: int,
    http: httpx.AsyncClient,
    table_id: str,
    snap: dict[str, Any],
    headers: dict[str, str],
) -> Measured:
    """The feeds held by bench/rodada/feeds.js; (open seconds, Redis
    connections at 1,000 feeds, RSS after, Redis connections after, each
    feed's latency in ms, the gateway's CPU seconds for the fan-out)."""
    from tools.bench import npm_ci  # late: tools.bench imports this module

    npm_ci(DRIVER.parent)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump(tokens, file)
        file.flush()
        proc = subprocess.Popen(
            [
                "node",
                str(DRIVER),
                "--url",
                url,
                "--tokens",
                file.name,
                "--timeout",
                str(int(OPEN_TIMEOUT_SECONDS)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdout = proc.stdout
        loop = asyncio.get_running_loop()

        async def said(key: str) -> dict[str, Any]:
            while True:
                line = await asyncio.wait_for(
                    loop.run_in_executor(None, stdout.readline), OPEN_TIMEOUT_SECONDS + 60
                )
                if not line:
                    raise RuntimeError(f"feeds.js exited {proc.wait()} before {key!r}")
                value: dict[str, Any] = json.loads(line)
                if key in value:
                    return value

        def tell(word: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(word + "\n")
            proc.stdin.flush()

        try:
            await said("opened")
            redis_at_first = redis_clients(stack.redis_url)
            tell("more")
            ready = await said("ready")
            await asyncio.sleep(5.0)  # idle: let allocations settle
            rss_after = rss_kib(gateway_pid)
            redis_after = redis_clients(stack.redis_url)
            tell("go")
            await said("go")
            cpu = cpu_seconds(gateway_pid)
            sent = time.monotonic_ns() / 1e6  # the clock feeds.js reads (CLOCK_MONOTONIC)
            await _move(http, table_id, snap, headers)
            arrived = (await said("arrived"))["arrived"]
            cpu = cpu_seconds(gateway_pid) - cpu
            tell("close")
            proc.stdin.close()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    latencies = sorted(t - sent for t in arrived)
    return ready["open_seconds"], redis_at_first, rss_after, redis_after, latencies, cpu


async def _python_client(
    stack: Stack,
    url: str,
    tokens: list[str],
    gateway_pid: int,
    http: httpx.AsyncClient,
    table_id: str,
    snap: dict[str, Any],
    headers: dict[str, str],
) -> Measured:
    """The same, held by this process (websockets)."""
    ready: asyncio.Queue[Any] = asyncio.Queue()
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)
    opened_at = time.monotonic()

    async def one(token: str) -> Any:
        async with gate:
            return await open_feed(url, token, ready)

    first = min(1_000, len(tokens))
    sockets = await asyncio.wait_for(asyncio.gather(*(one(t) for t in tokens[:first])), TIMEOUT_SECONDS)
    redis_at_first = redis_clients(stack.redis_url)
    sockets += await asyncio.wait_for(asyncio.gather(*(one(t) for t in tokens[first:])), TIMEOUT_SECONDS)
    open_seconds = time.monotonic() - opened_at
    await asyncio.sleep(5.0)  # idle: let allocations settle
    rss_after = rss_kib(gateway_pid)
    redis_after = redis_clients(stack.redis_url)
    # One move; time until its event reaches each feed.
    arrived: list[float] = []

    async def wait_event(socket: Any) -> None:
        while True:
            item = json.loads(await socket.recv())
            if "event" in item:
                arrived.append(time.perf_counter())
                return

    waiters = [asyncio.create_task(wait_event(s)) for s in sockets]
    cpu = cpu_seconds(gateway_pid)
    sent = time.perf_counter()
    await _move(http, table_id, snap, headers)
    await asyncio.wait_for(asyncio.gather(*waiters), TIMEOUT_SECONDS)
    cpu = cpu_seconds(gateway_pid) - cpu
    latencies = sorted((t - sent) * 1000 for t in arrived)
    await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)
    return open_seconds, redis_at_first, rss_after, redis_after, latencies, cpu


def main() -> None:
    raise_open_files(FEEDS + 2000)  # inherited by the gateway this starts (one socket per feed each side)
    baseline = os.environ.get("BENCH_FEEDS_BASELINE")
    source = Path(baseline) if baseline else None
    with tempfile.TemporaryDirectory() as root, Stack(Path(root), games=["yatzy"], source=source) as stack:
        stack.service("yatzy")
        report = asyncio.run(run(stack))
    print(
        f"\nfeeds: {FEEDS:,} idle WebSocket feeds on one gateway (one Yatzy match, spectators;"
        f" the {CLIENT} client{', baseline ' + baseline if baseline else ''})"
    )
    print(f"  opened in {report['open_seconds']} s")
    print(
        f"  gateway memory: {report['gateway_rss_mib_before']} MiB → {report['gateway_rss_mib_after']} MiB"
        f" = {report['kib_per_idle_feed']} KiB per idle feed (issue 22: ≤ 16 KB = 15.6 KiB)"
    )
    print(
        f"  Redis connections (gateway + service): {report['redis_connections_before']} before,"
        f" {report['redis_connections_at_1000']} with 1,000 feeds, {report['redis_connections_after']} with"
        f" {FEEDS:,} (pools bounded by REDIS_MAX_CONNECTIONS; feeds hold none: one pub/sub per process)"
    )
    print(
        f"  one event to all {FEEDS:,}: p50 {report['event_to_all_p50_ms']} ms,"
        f" p99 {report['event_to_all_p99_ms']} ms, max {report['event_to_all_max_ms']} ms;"
        f" gateway CPU {report['gateway_fanout_cpu_s']} s (load average {report['load_average']:.1f})"
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
