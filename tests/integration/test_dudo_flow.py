"""Dudo end to end: real Redis, the real Dudo gRPC service and the real gateway."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import websockets

from tests.integration.http_client import ApiRefused, Player, register, seated_table
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("dudo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def follow(stack: Stack, table_id: str, player: Player) -> list[dict[str, Any]]:
    """Every event this player's WebSocket receives, until the match ends."""
    url = stack.gateway().replace("http", "ws") + f"/v1/tables/{table_id}/events"
    events = []
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": player.token, "after_event_id": 0}))
        async for message in ws:
            body = json.loads(message)
            if body.get("end"):
                return events
            assert "error" not in body, body
            events.append(body)
    raise AssertionError("the feed closed before the end of the match")


def decide(view: dict[str, Any]) -> dict[str, Any]:
    """A plain player: open with one 2, raise the face's count while it is
    plausible, else call Dudo."""
    bid = view.get("current_bid") or {}
    if not bid.get("quantity"):
        return {"bid": {"quantity": 1, "face": 2}}
    if bid["quantity"] >= max(1, view["dice_in_play"] // 3):
        return {"dudo": {}}
    return {"bid": {"quantity": bid["quantity"] + 1, "face": bid["face"]}}


async def test_full_four_player_game_and_no_seat_sees_anothers_dice(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table_id, snap = await seated_table(players, "dudo")
    feeds = [asyncio.create_task(follow(stack, table_id, p)) for p in players]

    # Assisted mode for Ana: the odds of the standing bid and of any bid she asks about.
    ana = players[0]
    snap = await ana.act(table_id, snap["version"], {"set_assist": {"on": True}})
    assert snap["view"]["assist"] is True
    with pytest.raises(ApiRefused) as refused:
        await players[1].call(
            "POST", f"/v1/tables/{table_id}/ask", {"question": {"bid_odds": {"quantity": 2, "face": 5}}}
        )
    assert refused.value.code == "assist_off"
    answer = await ana.call(
        "POST", f"/v1/tables/{table_id}/ask", {"question": {"bid_odds": {"quantity": 2, "face": 5}}}
    )
    chance = answer["answer"]["bid_odds"]["probability"]
    own = sum(1 for d in snap["view"]["my_dice"] if d in (1, 5))
    if own >= 2:
        assert chance == 1.0
    else:
        assert 0 < chance < 1

    actions = 0
    while snap["status"] == "ACTIVE":
        (seat,) = snap["to_act"]
        view = (await players[seat].view(table_id))["view"]
        for other in view["players"]:
            assert "dice" not in other  # counts only
        snap = await players[seat].act(
            table_id, (await players[seat].view(table_id))["version"], decide(view)
        )
        actions += 1
        assert actions < 500
    ranks = snap["result"]["ranks"]
    assert sorted(ranks) == [1, 2, 3, 4]

    for seat, task in enumerate(feeds):
        events = await asyncio.wait_for(task, 20)
        rolled = [e for e in events if "dice_rolled" in e["event"]]
        assert rolled, "every seat receives its own dice each round"
        for event in rolled:
            assert event["event"]["dice_rolled"]["seat"] == seat and event["audience"] == [seat]
        # Each seat's private dice are what the reveal later shows of its hand.
        own_by_round = {e["event"]["dice_rolled"]["round"]: e["event"]["dice_rolled"]["dice"] for e in rolled}
        for event in events:
            reveal = event["event"].get("revealed")
            if reveal:
                hands = {h["seat"]: h["dice"] for h in reveal["hands"]}
                if hands.get(seat):  # a seat already out has no hand
                    assert sorted(hands[seat]) == sorted(own_by_round[reveal["round"]])
        # Ids grow and nothing is delivered twice.
        ids = [e["id"] for e in events]
        assert ids == sorted(set(ids))
