"""Spectators watch a match's public view and feed: from the first event on,
nothing a seat keeps hidden reaches them."""

from __future__ import annotations

import asyncio

import httpx

from tests.integration.http_client import register, seated_table
from tests.integration.test_dudo_flow import decide, follow
from tools.stack import Stack


async def test_a_spectator_sees_the_public_dudo_table_only(stack: Stack) -> None:
    stack.service("dudo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        players = [await register(http, n) for n in ("ana", "bia")]
        eve = await register(http, "eve")
        table_id, snap = await seated_table(players, "dudo")
        watching = asyncio.create_task(follow(stack, table_id, eve))
        public = await eve.view(table_id)
        assert public["seat"] == -1 and public["view"]["my_dice"] == []
        assert [p["dice_count"] for p in public["view"]["players"]] == [3, 3]
        while snap["status"] == "ACTIVE":
            (seat,) = snap["to_act"]
            mine = await players[seat].view(table_id)
            snap = await players[seat].act(table_id, mine["version"], decide(mine["view"]))
        events = await asyncio.wait_for(watching, 20)
    kinds = {next(k for k in e["event"] if k != "@type") for e in events}
    assert "dice_rolled" not in kinds and {"round_started", "bid_made", "revealed", "game_over"} <= kinds
    assert all(e["audience"] == [] for e in events)  # public events only
    # Reveals are public: the spectator sees every hand once Dudo is called.
    reveals = [e["event"]["revealed"] for e in events if "revealed" in e["event"]]
    assert reveals and all(len(r["hands"]) >= 2 for r in reveals)
