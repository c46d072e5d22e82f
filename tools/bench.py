"""``make bench``: actions per second through the web path (HTTP → gateway →
gRPC → Redis, with a WebSocket watcher per match receiving every event) and
through the mobile path (gRPC straight to the game service), on a loopback
platform started here. Each phase runs for BENCH_SECONDS (default 10) with
BENCH_CLIENTS concurrent solo Yatzy matches (default 16), then prints
throughput, latency percentiles and the CPU each process spent per action.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import websockets
from google.protobuf import any_pb2, json_format
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.kit.tokens import Identity
from tools.stack import Stack

SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "16"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def next_action(dice: list[int], throws_used: int, preview: list[dict[str, Any]]) -> dict[str, Any]:
    """A simple player: throw twice keeping the commonest face, then take the best box."""
    if throws_used == 0:
        return {"roll": {}}
    face = Counter(dice).most_common(1)[0][0]
    keep = [i for i, d in enumerate(dice) if d == face]
    if throws_used < 2 and len(keep) < 5:
        return {"roll": {"keep": keep}}
    return {"score": {"box": max(preview, key=lambda p: p["points"])["box"]}}


async def run_clients(
    client: Callable[[float, list[float]], Awaitable[None]],
) -> tuple[int, list[float], float]:
    latencies: list[float] = []
    deadline = time.monotonic() + SECONDS
    started = time.monotonic()
    await asyncio.gather(*(client(deadline, latencies) for _ in range(CLIENTS)))
    return len(latencies), latencies, time.monotonic() - started


async def web_path(stack: Stack) -> tuple[int, list[float], float, int]:
    base = stack.gateway()
    ws_base = base.replace("http", "ws")
    received = 0
    async with httpx.AsyncClient(
        base_url=base, timeout=30, limits=httpx.Limits(max_connections=CLIENTS * 2)
    ) as http:

        async def client(deadline: float, latencies: list[float]) -> None:
            nonlocal received
            token = (await http.post("/v1/auth/guest", json={})).json()["access_token"]
            headers = {"authorization": f"Bearer {token}"}
            while time.monotonic() < deadline:
                table = (
                    await http.post("/v1/tables", json={"game": "yatzy", "seats": 1}, headers=headers)
                ).json()
                snap = (await http.post(f"/v1/tables/{table['id']}/start", headers=headers)).json()
                async with websockets.connect(f"{ws_base}/v1/tables/{table['id']}/events") as ws:
                    await ws.send(json.dumps({"token": token, "after_event_id": 0}))

                    async def watch() -> None:
                        nonlocal received
                        async for message in ws:
                            if "end" in json.loads(message):
                                return
                            received += 1

                    watcher = asyncio.create_task(watch())
                    while snap["status"] == "ACTIVE" and time.monotonic() < deadline:
                        view = snap["view"]
                        action = next_action(view["dice"], view["throws_used"], view["preview"])
                        sent = time.perf_counter()
                        response = await http.post(
                            f"/v1/tables/{table['id']}/actions",
                            json={"expected_version": snap["version"], "action": action},
                            headers=headers,
                        )
                        latencies.append(time.perf_counter() - sent)
                        assert response.status_code == 200, response.text
                        snap = response.json()
                    if snap["status"] == "FINISHED":
                        await asyncio.wait_for(watcher, 10)
                    watcher.cancel()

        actions, latencies, elapsed = await run_clients(client)
    return actions, latencies, elapsed, received


async def mobile_path(stack: Stack) -> tuple[int, list[float], float]:
    async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)

        async def client(deadline: float, latencies: list[float]) -> None:
            me = Identity(f"u_{secrets.token_hex(6)}", "bench", "user")
            auth = (("authorization", f"Bearer {stack.token(me)}"),)
            while time.monotonic() < deadline:
                snap = await stub.CreateMatch(
                    match_pb2.CreateMatchRequest(seats=[match_pb2.Seat(user_id=me.user_id)]),
                    metadata=stack.platform_metadata(),
                )
                while snap.status == match_pb2.MATCH_STATUS_ACTIVE and time.monotonic() < deadline:
                    view = yatzy_pb2.View()
                    snap.view.Unpack(view)
                    preview = [{"box": p.box, "points": p.points} for p in view.preview]
                    action = any_pb2.Any()
                    action.Pack(
                        json_format.ParseDict(
                            next_action(list(view.dice), view.throws_used, preview), yatzy_pb2.Action()
                        )
                    )
                    sent = time.perf_counter()
                    snap = await stub.Act(
                        match_pb2.ActRequest(
                            match_id=snap.match_id, expected_version=snap.version, action=action
                        ),
                        metadata=auth,
                    )
                    latencies.append(time.perf_counter() - sent)

        return await run_clients(client)


def report(name: str, actions: int, latencies: list[float], elapsed: float, cpu: dict[str, float]) -> None:
    quantiles = statistics.quantiles(latencies, n=100)
    print(
        f"\n{name}: {actions} actions in {elapsed:.1f}s = {actions / elapsed:,.0f} actions/s "
        f"({CLIENTS} clients)"
    )
    print(
        f"  latency ms: p50 {quantiles[49] * 1e3:.2f}  p90 {quantiles[89] * 1e3:.2f}  "
        f"p99 {quantiles[98] * 1e3:.2f}"
    )
    for process, seconds in cpu.items():
        print(f"  CPU {process:<8} {seconds / actions * 1e3:.3f} ms/action")


async def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        stack = Stack(Path(root))
        try:
            stack.service("yatzy")
            stack.gateway()
            assert stack.redis and stack.redis.process
            processes = {
                "yatzy": stack.processes["yatzy"].pid,
                "gateway": stack.processes["gateway"].pid,
                "redis": stack.redis.process.pid,
            }

            def sample() -> dict[str, float]:
                return {name: cpu_seconds(pid) for name, pid in processes.items()}

            before = sample()
            actions, latencies, elapsed = await mobile_path(stack)
            after = sample()
            report(
                "mobile path (gRPC → service → Redis)",
                actions,
                latencies,
                elapsed,
                {k: after[k] - before[k] for k in ("yatzy", "redis")},
            )
            before = sample()
            actions, latencies, elapsed, received = await web_path(stack)
            after = sample()
            report(
                "web path (HTTP → gateway → gRPC → service → Redis, + WebSocket watcher)",
                actions,
                latencies,
                elapsed,
                {k: after[k] - before[k] for k in processes},
            )
            print(f"  events delivered to watchers: {received}")
        finally:
            stack.stop()


if __name__ == "__main__":
    asyncio.run(main())
