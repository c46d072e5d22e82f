"""WORKERS=2: one game service, two processes on one port (SO_REUSEPORT).
Connections are spread over both, the one metrics port reports the pod's
calls summed and its process metrics together, SIGTERM drains every worker
and the pod exits cleanly; a worker that dies takes the pod down with it,
so it restarts whole."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rodada.common.v1 import match_pb2, match_pb2_grpc

from tests.integration.http_client import register, seated_table
from tools.bench import cpu_seconds
from tools.sockets_held import children, connections
from tools.stack import Stack

CALLS_PER_CONNECTION = 25
CONNECTIONS = 24


@pytest.fixture
def pod(tmp_path: Path) -> Iterator[Stack]:
    # The gateway's connections are spread by the kernel, one hash each: with
    # 16 the chance that both workers get none is 2 in 65,536.
    env = {"WORKERS": "2", "GAME_CHANNELS": "16"}
    with Stack(tmp_path, games=["yatzy"], env=env) as stack:
        stack.service("yatzy")
        deadline = time.monotonic() + 30
        while stack.log_path("yatzy").read_text().count("serving gRPC") < 2:
            assert time.monotonic() < deadline, "the workers did not both start"
            time.sleep(0.1)
        yield stack


def workers(stack: Stack) -> list[int]:
    return children(stack.processes["yatzy"].pid)


def describes(stack: Stack) -> float:
    text = httpx.get(stack.metrics_url("yatzy"), timeout=10).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "rodada_grpc_requests"
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels.get("method") == "Describe"
    )


async def test_connections_spread_over_the_workers_and_metrics_add_up(pod: Stack) -> None:
    pids = workers(pod)
    assert len(pids) == 2
    before = {pid: cpu_seconds(pid) for pid in pids}
    counted = describes(pod)

    async def connection() -> None:
        # Each its own TCP connection (channels of one process share them by default).
        options = [("grpc.use_local_subchannel_pool", 1)]
        async with grpc.aio.insecure_channel(pod.service("yatzy"), options=options) as channel:
            stub = match_pb2_grpc.MatchServiceStub(channel)
            for _ in range(CALLS_PER_CONNECTION):
                await stub.Describe(match_pb2.DescribeRequest())

    await asyncio.gather(*(connection() for _ in range(CONNECTIONS)))
    assert all(cpu_seconds(pid) > before[pid] for pid in pids), "a worker served nothing"
    assert describes(pod) - counted == CONNECTIONS * CALLS_PER_CONNECTION
    text = httpx.get(pod.metrics_url("yatzy"), timeout=10).text
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families["rodada_build_info"].samples[0].value == 1
    pod_cpu = families["process_cpu_seconds"].samples[0].value
    assert pod_cpu >= sum(cpu_seconds(pid) for pid in pids) - 0.05


async def test_the_gateway_reaches_every_worker(pod: Stack) -> None:
    port = int(pod.service("yatzy").rsplit(":", 1)[1])
    async with httpx.AsyncClient(base_url=pod.gateway(), timeout=15) as http:
        ana = await register(http, "ana")
        match_id, _ = await seated_table([ana], "yatzy")
        for _ in range(40):  # every call on the next of the gateway's channels
            assert (await ana.view(match_id))["version"] == 1
    assert all(connections(pid, port) > 0 for pid in workers(pod)), "a worker has no connection"


def test_sigterm_drains_every_worker(pod: Stack) -> None:
    pids = workers(pod)
    supervisor = pod.processes["yatzy"]
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(15) == 0
    assert pod.log_path("yatzy").read_text().count("draining") == 2
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_a_worker_that_dies_takes_the_pod_down(pod: Stack) -> None:
    first, second = workers(pod)
    subprocess.run(["kill", "-KILL", str(first)], check=True)
    assert pod.processes["yatzy"].wait(15) != 0
    assert "draining" in pod.log_path("yatzy").read_text()  # the other one drained
    assert not Path(f"/proc/{second}").exists()
