"""A burst of tickets on one gateway (issue 15, point 5, at test size): 400
casual Bozó duel tickets queued over HTTP at once, each followed over its
WebSocket, are all seated exactly once. How fast is the benchmark's business
(``tools/bench_matchmaking.py``); this checks only what was formed."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from services.core.tokens import Identity
from tests.integration.http_client import Player
from tests.integration.test_matchmaking import check_table, metric_of
from tools.stack import Stack

TICKETS = 400
AT_ONCE = 50  # requests in flight, as a client pool would
DUEL = {"mode": "DUEL"}

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def burst_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # Production timing but no bot fill, so every table is two of the burst.
    with Stack(
        tmp_path_factory.mktemp("burst"), games=["bozo"], env={"MATCHMAKER_CPU_WAIT_SECONDS": "0"}
    ) as stack:
        stack.gateway()
        yield stack


async def follow_to_the_end(url: str, token: str) -> dict[str, Any]:
    """The ticket's final update (generous timeouts: a busy machine)."""
    async with websockets.connect(url, open_timeout=120) as ws:
        await ws.send(json.dumps({"token": token}))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if "queue" not in message:
                return dict(message)


async def test_a_burst_of_tickets_on_one_gateway_is_seated_exactly_once(burst_stack: Stack) -> None:
    base = burst_stack.gateway()
    before = await metric_of(
        [burst_stack.gateway_metrics_url()], "rodada_matchmaking_matches_total", game="bozo", mode="duel"
    )
    limits = httpx.Limits(max_connections=AT_ONCE)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        players = [
            Player(
                http, burst_stack.token(Identity(f"g_burst{i:04d}", f"b{i}", "guest")), f"g_burst{i:04d}", ""
            )
            for i in range(TICKETS)
        ]
        gate = asyncio.Semaphore(AT_ONCE)
        ws_base = base.replace("http", "ws", 1)

        async def queue_and_follow(player: Player) -> tuple[str, dict[str, Any]]:
            async with gate:
                made = await player.call("POST", "/v1/matchmaking/tickets", {"game": "bozo", "options": DUEL})
            url = f"{ws_base}/v1/matchmaking/tickets/{made['id']}/events"
            return made["id"], await follow_to_the_end(url, player.token)

        outcomes = await asyncio.gather(*(queue_and_follow(p) for p in players))

        # Every ticket matched, each player in one seat, each table two people.
        finals = [final for _, final in outcomes]
        assert all("matched" in final for final in finals), [f for f in finals if "matched" not in f][:3]
        assert len({ticket_id for ticket_id, _ in outcomes}) == TICKETS
        tables: dict[str, dict[str, int]] = {}
        for player, final in zip(players, finals, strict=True):
            matched = final["matched"]
            assert matched["cpu_seats"] == []
            assert player.user_id not in tables.setdefault(matched["table_id"], {})
            tables[matched["table_id"]][player.user_id] = matched["seat"]
        assert len(tables) == TICKETS // 2
        assert all(sorted(seats.values()) == [0, 1] for seats in tables.values())
        assert Counter(u for seats in tables.values() for u in seats) == Counter(p.user_id for p in players)
        # The tables agree with what the tickets said (a sample: each read is a game call).
        by_user = {p.user_id: p for p in players}
        for table_id, seats in list(tables.items())[:20]:
            await check_table(by_user[next(iter(seats))], table_id, seats)
        # The gateway formed (and counted) exactly these tables, and the tickets say so too.
        after = await metric_of(
            [burst_stack.gateway_metrics_url()], "rodada_matchmaking_matches_total", game="bozo", mode="duel"
        )
        assert after - before == len(tables)
        for player, (ticket_id, final) in list(zip(players, outcomes, strict=True))[:40]:
            found = await player.call("GET", f"/v1/matchmaking/tickets/{ticket_id}")
            assert (found["state"], found["table_id"], found["seat"]) == (
                "matched",
                final["matched"]["table_id"],
                final["matched"]["seat"],
            )
