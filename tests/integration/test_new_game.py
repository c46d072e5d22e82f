"""A sixth game, Nim, that exists only for the tests (tests/games/nim: its
rules, its proto, a four-line service): the gateway learns it from Describe,
tables and feeds serve it, and it plays to the end like any other."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.integration.http_client import FINISHED, game_event, register, seated_table
from tools.stack import Stack


async def test_the_gateway_learns_nim_and_plays_it(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        games = {g["name"]: g for g in (await http.get("/v1/games")).json()["games"]}
        assert {"bozo", "dudo", "bozu_mekuri", "domino", "yatzy", "nim"} <= set(games)
        nim = games["nim"]
        assert nim["title"] == "Nim" and nim["proto_package"] == "rodada.nim.v1"
        assert nim["modes"][0]["seat_counts"] == [2, 3, 4]
        assert nim["leaving"] == "LEAVING_POLICY_SEAT_OUT" and nim["claims"] == "CLAIM_POLICY_OTHERS"

        ana, bia = await register(http, "ana"), await register(http, "bia")
        table_id, snap = await seated_table([ana, bia], "nim", {"heap": 7, "max_take": 2})
        players = {0: ana, 1: bia}
        async with bia.feed(stack.gateway(), table_id) as feed:
            while snap["status"] != FINISHED:
                (seat,) = snap["to_act"]
                current = await players[seat].view(table_id)
                heap = current["view"]["heap"]
                snap = await players[seat].act(
                    table_id, current["version"], {"take": {"stones": min(2, heap)}}
                )
            items: list[dict[str, Any]] = await feed.until(lambda item: "end" in item)
            await feed.socket.wait_closed()
        took = [
            data for item in items if (found := game_event(item)) for kind, data in [found] if kind == "took"
        ]
        assert sum(t["stones"] for t in took) == 7 and took[-1]["heap"] == 0
        winner = took[-1]["seat"]
        assert snap["result"]["ranks"][winner] == 1 and sorted(snap["result"]["ranks"]) == [1, 2]
        assert items[-2]["snapshot"]["status"] == FINISHED and feed.close_code == 1000
        # Its trophy, declared in its folder, is found by its service and
        # awarded by the platform.
        assert "nim_last_stone" in {t["id"] for t in nim["trophies"]}
        taker = players[winner]
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            held = await taker.call("GET", f"/v1/users/{taker.user_id}/trophies")
            if "nim_last_stone" in {t["kind"]["id"] for t in held.get("trophies", [])}:
                break
            assert asyncio.get_running_loop().time() < deadline, held
            await asyncio.sleep(0.2)


async def test_a_version_without_events_reaches_the_feeds(stack: Stack) -> None:
    """Nim's setup says nothing (no event): its first version's snapshot
    still reaches a feed opened in the lobby, as every version's does."""
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        ana, bia = await register(http, "ana"), await register(http, "bia")
        table = await ana.create_table("nim", 2, {})
        await bia.join(table["invite_code"])
        async with bia.feed(stack.gateway(), table["id"]) as feed:
            await feed.until(lambda item: "table" in item)
            started = await ana.start(table["id"])
            first = await feed.until(lambda item: "snapshot" in item)
        snapshot = first[-1]["snapshot"]
        assert snapshot["version"] == started["version"] == 1 and snapshot["seat"] == 1
