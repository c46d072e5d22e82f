"""A gateway pod with WORKERS=2: two processes on the same HTTP, gRPC and
metrics ports (SO_REUSEPORT). Both serve; a feed on one worker carries the
moves made through the other, and tickets queued through different workers
are matched once (each worker is a replica to the rest of the platform: they
share only Redis); the pod's one metrics page adds its workers up; a
SIGTERM drains both (each closes its feeds 1012 "draining") and the pod
exits cleanly.

Where the kernel put a connection is read from /proc (which worker holds
its server end), not asked of the gateway."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import websockets
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.http_client import Feed, Player, register, seated_table
from tools.bench import cpu_seconds
from tools.sockets_held import children, connections, holder, listens
from tools.stack import Stack

pytestmark = pytest.mark.timeout(90)

# Each new connection goes to one of the two workers by a hash of its
# addresses: of this many, the chance that all go to one is 2 in 65,536.
CONNECTIONS = 16
MATCHMAKER = {
    "MATCHMAKER_CYCLE_SECONDS": "0.2",
    "MATCHMAKER_FILL_WAIT_SECONDS": "1",
    # No bot fill within the test: a lone ticket waits for the other person.
    "MATCHMAKER_CPU_WAIT_SECONDS": "60",
}


@pytest.fixture
def pod(tmp_path: Path) -> Iterator[Stack]:
    with Stack(tmp_path, games=["yatzy", "bozo"], gateway_workers=2, env=MATCHMAKER) as stack:
        stack.gateway()
        deadline = time.monotonic() + 30
        while not (
            len(workers(stack)) == 2
            and all(
                listens(pid, stack.gateway_port) and listens(pid, stack.platform_grpc_ports[0])
                for pid in workers(stack)
            )
        ):
            assert time.monotonic() < deadline, "the gateway's two workers did not both start"
            time.sleep(0.1)
        yield stack


Pin = Callable[[int], Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def pin(pod: Stack) -> AsyncIterator[Pin]:
    """``await pin(pid)``: a new HTTP client whose connection the kernel gave
    to worker ``pid``. Taken right before use: uvicorn closes a connection
    idle for 5 s, and the next one may land on the other worker."""
    clients: list[httpx.AsyncClient] = []

    async def pinned(pid: int) -> httpx.AsyncClient:
        for _ in range(4 * CONNECTIONS):
            client = httpx.AsyncClient(base_url=pod.gateway(), timeout=15)
            clients.append(client)
            if worker_of(pod, workers(pod), await client.get("/livez")) == pid:
                return client
        raise AssertionError(f"no connection reached worker {pid}")

    yield pinned
    for client in clients:
        await client.aclose()


def workers(stack: Stack) -> list[int]:
    return children(stack.processes["gateway"].pid)


def worker_of(stack: Stack, pids: list[int], response: httpx.Response) -> int | None:
    """The worker holding the connection ``response`` came over."""
    stream = response.extensions["network_stream"]
    client_port = stream.get_extra_info("socket").getsockname()[1]
    return holder(pids, stack.gateway_port, client_port)


async def feed_on(pod: Stack, player: Player, table_id: str, pid: int) -> Feed:
    """A table feed whose WebSocket the kernel gave to worker ``pid``."""
    for _ in range(4 * CONNECTIONS):
        feed = await player.feed(pod.gateway(), table_id).__aenter__()
        client_port = feed.socket.transport.get_extra_info("sockname")[1]
        if holder(workers(pod), pod.gateway_port, client_port) == pid:
            return feed
        await feed.__aexit__()
    raise AssertionError(f"no WebSocket reached worker {pid}")


def families(stack: Stack) -> dict[str, Any]:
    text = httpx.get(stack.gateway_metrics_url(), timeout=10).text
    return {family.name: family for family in text_string_to_metric_families(text)}


def total(stack: Stack, name: str, **labels: str) -> float:
    family = families(stack).get(name)
    return sum(
        s.value
        for s in (family.samples if family else [])
        if not s.name.endswith("_created") and all(s.labels.get(k) == v for k, v in labels.items())
    )


async def test_both_workers_serve_http_and_grpc(pod: Stack) -> None:
    pids = workers(pod)
    served = set()
    for _ in range(CONNECTIONS):
        async with httpx.AsyncClient(base_url=pod.gateway(), timeout=15) as http:
            response = await http.get("/healthz")
            assert response.status_code == 200, response.text
            served.add(worker_of(pod, pids, response))
    assert served == set(pids)

    grpc_port = pod.platform_grpc_ports[0]
    options = [("grpc.use_local_subchannel_pool", 1)]  # a TCP connection per channel
    channels = [grpc.aio.insecure_channel(pod.platform_grpc(), options=options) for _ in range(CONNECTIONS)]
    try:
        for channel in channels:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert all(connections(pid, grpc_port) > 0 for pid in pids), "a worker holds no gRPC connection"
    finally:
        for channel in channels:
            await channel.close()


async def test_a_feed_on_one_worker_carries_moves_made_through_the_other(pod: Stack, pin: Pin) -> None:
    first, second = workers(pod)
    ana = await register(await pin(first), "ana")  # signed by the first worker …
    table_id, snap = await seated_table([ana], "yatzy")
    feed = await feed_on(pod, ana, table_id, first)
    try:
        await feed.until(lambda item: "snapshot" in item)
        for action in ({"roll": {}}, {"roll": {"keep": [0]}}, {"score": {"box": "CHANCE"}}):
            http = await pin(second)  # … good at the second
            response = await http.post(
                f"/v1/tables/{table_id}/actions",
                json={"expected_version": snap["version"], "action": action},
                headers=ana.headers,
            )
            assert response.status_code == 200, response.text
            assert worker_of(pod, [first, second], response) == second
            snap = response.json()
            assert (await feed.snapshot_at(snap["version"]))["version"] == snap["version"]
    finally:
        await feed.__aexit__()


async def test_tickets_queued_through_different_workers_are_matched_once(pod: Stack, pin: Pin) -> None:
    before = total(pod, "rodada_matchmaking_matches", game="bozo", mode="duel")
    players, made = [], []
    for pid in workers(pod):
        player = await register(await pin(pid), "mm")
        http = await pin(pid)
        body = {"game": "bozo", "options": {"mode": "DUEL"}}
        response = await http.post("/v1/matchmaking/tickets", json=body, headers=player.headers)
        assert response.status_code == 201, response.text
        assert worker_of(pod, workers(pod), response) == pid
        players.append(player)
        made.append(response.json())

    async def matched(player: Player, ticket_id: str) -> dict[str, Any]:
        url = pod.gateway().replace("http", "ws", 1) + f"/v1/matchmaking/tickets/{ticket_id}/events"
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps({"token": player.token}))
            while True:
                message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if "queue" not in message:
                    return message

    finals = await asyncio.gather(*(matched(p, t["id"]) for p, t in zip(players, made, strict=True)))
    assert all("matched" in final and final["matched"]["cpu_seats"] == [] for final in finals), finals
    (table_id,) = {final["matched"]["table_id"] for final in finals}
    assert sorted(final["matched"]["seat"] for final in finals) == [0, 1]
    table = await players[0].table(table_id)
    assert sorted(p["user_id"] for p in table["players"]) == sorted(p.user_id for p in players)
    # Formed by one worker, counted once on the pod's page.
    assert total(pod, "rodada_matchmaking_matches", game="bozo", mode="duel") == before + 1


async def test_the_pods_metrics_add_its_workers_up(pod: Stack) -> None:
    pids = workers(pod)
    before = total(pod, "rodada_http_requests", method="GET", route="/healthz", status="200")
    served = []
    for _ in range(20):  # each on a new connection: the kernel deals them over both
        async with httpx.AsyncClient(base_url=pod.gateway(), timeout=15) as http:
            response = await http.get("/healthz")
            assert response.status_code == 200
            served.append(worker_of(pod, pids, response))
    assert set(served) == set(pids)
    assert total(pod, "rodada_http_requests", method="GET", route="/healthz", status="200") == before + 20

    # Gauges of open things sum over the workers: a feed held by each.
    async with httpx.AsyncClient(base_url=pod.gateway(), timeout=15) as http:
        ana = await register(http, "ana")
        table_id, _ = await seated_table([ana], "yatzy")
    feeds = [await feed_on(pod, ana, table_id, pid) for pid in pids]
    try:
        for feed in feeds:
            await feed.until(lambda item: "snapshot" in item)
        found = families(pod)
        for name in ("rodada_feeds_open", "rodada_websocket_connections"):
            # One sample for the pod (livesum), not one per worker's pid.
            assert [(s.labels, s.value) for s in found[name].samples] == [({}, 2.0)], name
    finally:
        for feed in feeds:
            await feed.__aexit__()
    found = families(pod)
    assert found["rodada_build_info"].samples[0].value == 1
    assert found["process_cpu_seconds"].samples[0].value >= sum(cpu_seconds(pid) for pid in pids) - 0.05


async def test_sigterm_drains_both_workers(pod: Stack) -> None:
    pids = workers(pod)
    async with httpx.AsyncClient(base_url=pod.gateway(), timeout=15) as http:
        ana = await register(http, "ana")
        table_id, _ = await seated_table([ana], "yatzy")
    feeds = [await feed_on(pod, ana, table_id, pid) for pid in pids]
    for feed in feeds:
        await feed.until(lambda item: "snapshot" in item)
    supervisor = pod.processes["gateway"]
    supervisor.send_signal(signal.SIGTERM)
    for feed in feeds:  # each worker closes its own feed, as a replica draining
        with pytest.raises(websockets.ConnectionClosed):
            while True:
                await feed.next(timeout=10)
        assert (feed.close_code, feed.socket.close_reason) == (1012, "draining")
    assert await asyncio.to_thread(supervisor.wait, 15) == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
