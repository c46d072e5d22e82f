"""Bozu Mekuri end to end: real Redis, the real gRPC service and the real gateway."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.http_client import Player, register
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("bozu_mekuri")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def play_my_turns(player: Player, table_id: str, seat: int, snap: dict[str, Any]) -> dict[str, Any]:
    """Flip while it is my turn; take extra flips half the time."""
    while snap["status"] == "ACTIVE" and snap["to_act"] == [seat]:
        view = snap["view"]
        action = (
            {"stop": {}}
            if view["extra_flip_offered"] and view["can_stop"] and view["deck_count"] % 2
            else {"flip": {}}
        )
        snap = await player.act(table_id, snap["version"], action)
    return snap


async def test_one_person_against_three_cpus(http: httpx.AsyncClient) -> None:
    ana = await register(http, "ana")
    table = await ana.call("POST", "/v1/tables", {"game": "bozu_mekuri", "seats": 4, "cpu_seats": [1, 2, 3]})
    assert [bool(p and p.get("cpu")) for p in table["players"]] == [False, True, True, True]
    snap = await ana.start(table["id"])
    assert [s["cpu"] for s in snap["seats"]] == [False, True, True, True]
    while snap["status"] == "ACTIVE":
        assert snap["to_act"] == [0]  # the CPUs play their own turns
        snap = await play_my_turns(ana, table["id"], 0, snap)
    view = snap["view"]
    assert view["game_over"]
    counts = [s["card_count"] for s in view["seats"]]
    assert snap["result"]["scores"] == counts
    assert sum(counts) + view["pile_count"] <= 100
    for seat_view in view["seats"]:
        for card in seat_view["cards"]:
            assert (
                card["name_romaji"] and card["name_ja"] and 1 <= card["number"] <= 100
            )  # cards carry their poet


async def test_a_leaver_is_played_by_the_cpu_and_takes_the_seat_back(http: httpx.AsyncClient) -> None:
    ana, bia, caio = [await register(http, n) for n in ("ana", "bia", "caio")]
    table = await ana.create_table("bozu_mekuri", 3, {"turn_timer_seconds": 30})
    for player in (bia, caio):
        await player.join(table["invite_code"])
    snap = await ana.start(table["id"])
    players = {0: ana, 1: bia, 2: caio}
    left = (await bia.leave(table["id"]))["match"]
    assert left["view"]["seats"][1]["left"] and left["view"]["seats"][1]["cpu_controlled"]
    snap = await ana.view(table["id"])
    rounds = 0
    while snap["status"] == "ACTIVE" and rounds < 6:
        (seat,) = snap["to_act"]
        assert seat != 1  # Bia's turns are played by the CPU while she is away
        snap = await play_my_turns(players[seat], table["id"], seat, await players[seat].view(table["id"]))
        rounds += 1
    assert snap["status"] == "ACTIVE"
    back = await bia.act(table["id"], (await bia.view(table["id"]))["version"], {"take_over": {}})
    assert not back["view"]["seats"][1]["cpu_controlled"]
    snap = back
    bia_turns = 0
    while snap["status"] == "ACTIVE":
        (seat,) = snap["to_act"]
        bia_turns += seat == 1
        snap = await play_my_turns(players[seat], table["id"], seat, await players[seat].view(table["id"]))
    assert snap["result"]["reason"] == "completed"
    # Back in her seat, Bia plays her own turns, unless her CPU flipped
    # Semimaru while she was away (out at once, by default).
    assert bia_turns > 0 or snap["view"]["seats"][1]["eliminated"]
    assert sorted(snap["result"]["ranks"])[0] == 1
