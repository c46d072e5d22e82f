"""One gateway, three replicas of a game service: the gateway's calls reach
every replica about evenly (client-side round robin over the addresses, as
over a headless Service's pods), and a replica that drains takes no call down
with it — the players see nothing."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.http_client import Player, register, seated_table
from tools.stack import Stack

REPLICAS = 3
PLAYERS = 12


@pytest.fixture(scope="module")
def spread_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("spread"), games=["yatzy"], replicas={"yatzy": REPLICAS}) as stack:
        stack.gateway()
        yield stack


def calls(stack: Stack, replica: int, method: str) -> float:
    """rodada_grpc_requests_total for ``method`` on one replica, every code."""
    text = httpx.get(stack.metrics_url("yatzy", replica), timeout=10).text
    pattern = rf'^rodada_grpc_requests_total{{[^}}]*method="{method}"[^}}]*}} (\S+)$'
    return sum(float(value) for value in re.findall(pattern, text, re.M))


async def play(player: Player, table_id: str, version: int, turns: int) -> int:
    """Roll and score ``turns`` times; the actions made."""
    made = 0
    for _ in range(turns):
        snap = await player.act(table_id, version, {"roll": {}})
        preview = snap["view"]["preview"]
        snap = await player.act(table_id, snap["version"], {"score": {"box": preview[0]["box"]}})
        version, made = snap["version"], made + 2
    return made


async def test_calls_reach_every_replica_evenly_and_a_drain_fails_none(spread_stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=spread_stack.gateway(), timeout=30) as http:
        players = [await register(http, f"p{i}") for i in range(PLAYERS)]
        tables = [await seated_table([p], "yatzy") for p in players]
        before = [calls(spread_stack, r, "Act") for r in range(REPLICAS)]
        seated = list(zip(players, tables, strict=True))
        made = await asyncio.gather(*(play(p, tid, snap["version"], 5) for p, (tid, snap) in seated))
        shares = [calls(spread_stack, r, "Act") - before[r] for r in range(REPLICAS)]
        assert sum(shares) == sum(made)
        even = sum(made) / REPLICAS
        assert all(abs(share - even) <= 0.2 * even for share in shares), shares

        # Replica 1 drains while every player keeps playing: no call fails,
        # and calls go on to the other two.
        drained = asyncio.Event()
        versions = [(await p.view(table_id))["version"] for p, (table_id, _) in seated]

        async def keep_playing(player: Player, table_id: str, version: int) -> int:
            made = 0
            while not drained.is_set():  # a throw, then the first box open
                snap = await player.act(table_id, version, {"roll": {}})
                preview = snap["view"]["preview"]
                if len(preview) <= 1:
                    return made + 1  # the last box: stop short of the end
                snap = await player.act(table_id, snap["version"], {"score": {"box": preview[0]["box"]}})
                version, made = snap["version"], made + 2
            return made

        playing = [
            asyncio.create_task(keep_playing(p, table_id, version))
            for p, (table_id, _), version in zip(players, tables, versions, strict=True)
        ]
        await asyncio.sleep(0.2)
        replica = spread_stack.processes["yatzy-1"]
        replica.send_signal(signal.SIGTERM)
        before_exit = [calls(spread_stack, r, "Act") for r in (0, 2)]
        assert await asyncio.to_thread(replica.wait, 30) == 0
        await asyncio.sleep(0.5)
        drained.set()
        results = await asyncio.gather(*playing, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        assert not failures, failures
        after_exit = [calls(spread_stack, r, "Act") for r in (0, 2)]
        assert all(b > a for a, b in zip(before_exit, after_exit, strict=True)), (before_exit, after_exit)
