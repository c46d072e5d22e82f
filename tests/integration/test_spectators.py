"""Spectators watch a match's public view and feed: from the first event on
(the lobby included), nothing a seat keeps hidden reaches them, and what the
feed pushes is the spectator's snapshot, as GET /view gives it."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.integration.http_client import (
    FINISHED,
    ApiRefused,
    Views,
    game_events,
    register,
    table_change,
)
from tests.integration.test_dudo_flow import play_to_the_end
from tools.stack import Stack


async def test_a_spectator_sees_the_public_dudo_table_only(stack: Stack) -> None:
    base = stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        ana, bia = players = [await register(http, n) for n in ("ana", "bia")]
        eve = await register(http, "eve")
        table = await ana.create_table("dudo", 2)
        table_id = table["id"]
        async with eve.feed(base, table_id) as feed:
            # From the lobby on: the table as anyone may see it (no invites).
            lobby = (await feed.until(lambda item: "table" in item))[-1]["table"]
            assert lobby["id"] == table_id and lobby["invite_code"] == "" and lobby["invites"] == []
            watching = asyncio.create_task(feed.to_end())
            await bia.join(table["invite_code"])
            snap = await ana.start(table_id)
            views = Views(table_id, {0: ana, 1: bia, -1: eve})
            now = await views.record()
            public = now[-1]
            assert public["seat"] == -1 and public["view"]["my_dice"] == []
            assert [p["dice_count"] for p in public["view"]["players"]] == [3, 3]
            with pytest.raises(ApiRefused) as refused:
                await eve.act(table_id, snap["version"], {"dudo": {}})
            assert (refused.value.status, refused.value.code) == (403, "not_seated")
            final = await play_to_the_end(dict(enumerate(players)), table_id, views, now)
            items = await asyncio.wait_for(watching, 20)
    assert final["status"] == FINISHED
    assert all(v["view"]["my_dice"] == [] for (seat, _), v in views.seen.items() if seat == -1)
    # Every snapshot the feed pushed is the spectator's, as GET /view gave it.
    assert views.check(-1, items) >= 2
    events = [item["event"] for item in items if "event" in item]
    assert all(e["audience"] == [] and not e["host_only"] for e in events)  # public events only
    changes = [c for item in items if (c := table_change(item))]
    assert [c["kind"] for c in changes] == [
        "TABLE_CHANGE_KIND_OPENED",
        "TABLE_CHANGE_KIND_JOINED",
        "TABLE_CHANGE_KIND_STARTED",
    ]
    assert all(c["table"]["invites"] == [] and c["table"]["invite_code"] == "" for c in changes)
    kinds = {kind for kind, _, _ in game_events(items)}
    assert "dice_rolled" not in kinds and {"round_started", "bid_made", "revealed"} <= kinds
    # The end is the final event's result (there is no game-over event).
    assert events[-1]["final"] and events[-1]["result"] == final["result"]
    # Reveals are public: the spectator sees every hand once Dudo is called.
    reveals = [data for kind, data, _ in game_events(items) if kind == "revealed"]
    assert reveals and all(len(r["hands"]) >= 2 for r in reveals)
