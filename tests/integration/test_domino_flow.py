"""Dominó end to end: real Redis, the real Dominó gRPC service and the real
gateway. Dominó tables are open (the seed: "não existe mesa privada"): listed,
no invites, friends choose seats, and the table starts when full."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import httpx
import pytest

from tests.integration.http_client import ApiRefused, register
from tests.integration.test_dudo_flow import follow
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("domino")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


def tile(t: dict[str, int]) -> tuple[int, int]:
    a, b = t.get("a", 0), t.get("b", 0)
    return (min(a, b), max(a, b))


async def test_open_table_and_a_full_match_to_50_with_hidden_hands(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    ana, bia, caio, davi = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table = await ana.create_table("domino", 4)
    assert table["open"] and "invite_code" not in table
    with pytest.raises(ApiRefused) as refused:
        await ana.call("POST", f"/v1/tables/{table['id']}/invites", {})
    assert refused.value.code == "open_table"
    listed = await caio.call("GET", "/v1/tables?game=domino")
    assert table["id"] in [t["id"] for t in listed["tables"]]

    # Bia sits opposite Ana, as her partner; Caio takes any seat; Davi the last.
    assert (await bia.call("POST", f"/v1/tables/{table['id']}/sit", {"seat": 2}))["table"]["players"][2][
        "name"
    ] == bia.name
    with pytest.raises(ApiRefused) as refused:
        await caio.call("POST", f"/v1/tables/{table['id']}/sit", {"seat": 2})
    assert refused.value.code == "seat_taken"
    await caio.call("POST", f"/v1/tables/{table['id']}/sit", {})
    started = await davi.call("POST", f"/v1/tables/{table['id']}/sit", {})
    snap = started["match"]
    assert snap["status"] == "ACTIVE"
    assert table["id"] not in [t["id"] for t in (await caio.call("GET", "/v1/tables?game=domino"))["tables"]]
    players = {
        s: p
        for p in (ana, bia, caio, davi)
        for s, seat in enumerate(snap["seats"])
        if seat["user_id"] == p.user_id
    }
    assert players[0] is ana and players[2] is bia
    feeds = {seat: asyncio.create_task(follow(stack, table["id"], p)) for seat, p in players.items()}

    plays = 0
    while snap["status"] == "ACTIVE":
        (seat,) = snap["to_act"]
        mine = await players[seat].view(table["id"])
        view = mine["view"]
        assert len(view["hand"]) == view["hand_counts"][seat]
        choice = view["playable"][0]
        action = {"play": {"tile": choice["tile"], **({"end": choice["ends"][0]} if choice["ends"] else {})}}
        snap = await players[seat].act(table["id"], mine["version"], action)
        plays += 1
        assert plays < 2000
    scores = snap["view"]["scores"]
    assert max(scores) >= 50 and snap["result"]["reason"] == "completed"
    winners = 0 if scores[0] > scores[1] else 1
    assert snap["result"]["ranks"] == [1 if s % 2 == winners else 2 for s in range(4)]

    for seat, task in feeds.items():
        events = await asyncio.wait_for(task, 30)
        dealt: dict[int, set[tuple[int, int]]] = {}
        played: dict[int, set[tuple[int, int]]] = defaultdict(set)
        round_no = 0
        for event in events:
            body = event["event"]
            if "round_started" in body:
                round_no = body["round_started"]["round"]
            elif "dealt" in body:
                assert body["dealt"]["seat"] == seat and event["audience"] == [seat]  # only my own hand
                dealt[round_no] = {tile(t) for t in body["dealt"]["tiles"]}
            elif "played" in body and body["played"]["seat"] == seat:
                played[round_no].add(tile(body["played"]["tile"]))
            elif "round_ended" in body:
                summary = body["round_ended"]
                hand = next(h for h in summary["hands"] if h.get("seat", 0) == seat)
                # What I was dealt is what I played plus what the reveal shows.
                assert dealt[summary["round"]] == played[summary["round"]] | {
                    tile(t) for t in hand.get("tiles", [])
                }
        assert len(dealt) >= 2
