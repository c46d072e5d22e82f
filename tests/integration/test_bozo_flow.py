"""Bozó end to end: real Redis, the real Bozó gRPC service and the real gateway."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import orjson
import pytest
import websockets
from redis.asyncio import Redis

from services.kit.store import match_key
from tests.integration.http_client import ApiRefused, Player, register
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("bozo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def play_turn(player: Player, table_id: str, cup: bool, side: str = "TOP") -> dict[str, Any]:
    """Throw once (with the cup, declaring ``side``) and score the best open box."""
    snap = await player.view(table_id)
    snap = await player.act(table_id, snap["version"], {"throw": {"cup": cup}})
    if cup:
        assert snap["view"]["cup_pending"] and all(d["hidden"] for d in snap["view"]["dice"])
        assert snap["view"]["preview"] == []
        snap = await player.act(table_id, snap["version"], {"declare": {"side": side}})
    assert not any(d["hidden"] for d in snap["view"]["dice"])
    best = max(snap["view"]["preview"], key=lambda p: p["points"])
    return await player.act(table_id, snap["version"], {"score": {"box": best["box"]}})


async def play_to_the_end(players: dict[int, Player], table_id: str, snap: dict[str, Any], cup: bool) -> int:
    turns = 0
    while snap["status"] == "ACTIVE":
        (seat,) = snap["to_act"]
        snap = await play_turn(players[seat], table_id, cup, "BOTTOM" if turns % 2 else "TOP")
        turns += 1
    return turns


async def test_full_duel(http: httpx.AsyncClient) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table = await ana.create_table("bozo", 2, {"mode": "DUEL"})
    await bia.join(table["invite_code"])
    snap = await ana.start(table["id"])
    assert await play_to_the_end({0: ana, 1: bia}, table["id"], snap, cup=False) == 20
    final = await bia.view(table["id"])
    cards = final["view"]["cards"]
    assert [len(card["boxes"]) for card in cards] == [10, 10]
    totals = [card["total"] for card in cards]
    assert final["result"]["scores"] == totals and final["result"]["reason"] == "completed"
    assert final["result"]["ranks"] == [1 + (totals[1] > totals[0]), 1 + (totals[0] > totals[1])]


async def test_full_duplas_with_team_invites_and_arranged_seats(http: httpx.AsyncClient) -> None:
    ana, bia, caio, davi, eva = [await register(http, n) for n in ("ana", "bia", "caio", "davi", "eva")]
    table = await ana.create_table("bozo", 4, {"mode": "DUPLAS"})
    assert [t["name"] for t in table["teams"]] == ["JADE", "AMBAR"]
    partner = await ana.call("POST", f"/v1/tables/{table['id']}/invites", {"team": "JADE"})
    joined = await bia.join(partner["code"])
    assert joined["players"][2]["user_id"] == bia.user_id  # Jade's free seat, opposite the host
    assert "invites" not in joined and "invite_code" not in joined  # only the host sees invites
    # Jade is full now: its invite no longer seats anyone, the table invite still does.
    with pytest.raises(ApiRefused) as refused:
        await eva.join(partner["code"])
    assert (refused.value.status, refused.value.code) == (409, "team_full")
    await caio.join(table["invite_code"])
    await davi.join(table["invite_code"])
    with pytest.raises(ApiRefused) as refused:
        await eva.join(table["invite_code"])
    assert refused.value.code == "table_full"
    # The host swaps the Âmbar players; nobody else may arrange.
    order = [ana.user_id, davi.user_id, bia.user_id, caio.user_id]
    with pytest.raises(ApiRefused) as refused:
        await caio.call("PUT", f"/v1/tables/{table['id']}/seats", {"seats": order})
    assert refused.value.code == "not_host"
    with pytest.raises(ApiRefused) as refused:
        await ana.call("PUT", f"/v1/tables/{table['id']}/seats", {"seats": [*order[:3], eva.user_id]})
    assert refused.value.code == "invalid_arrangement"
    arranged = await ana.call("PUT", f"/v1/tables/{table['id']}/seats", {"seats": order})
    assert [p["user_id"] for p in arranged["players"]] == order
    snap = await ana.start(table["id"])
    assert [s["user_id"] for s in snap["seats"]] == order
    players = {0: ana, 1: davi, 2: bia, 3: caio}
    assert await play_to_the_end(players, table["id"], snap, cup=True) == 20
    final = await ana.view(table["id"])
    jade, ambar = final["view"]["cards"]
    assert (jade["team"], jade["seats"], ambar["team"], ambar["seats"]) == ("JADE", [0, 2], "AMBAR", [1, 3])
    assert len(jade["boxes"]) == len(ambar["boxes"]) == 10
    # Both partners filled boxes of their shared card: five turns each.
    assert sorted(b["seat"] for b in jade["boxes"]) == [0] * 5 + [2] * 5
    ranks = final["result"]["ranks"]
    assert ranks[0] == ranks[2] and ranks[1] == ranks[3]
    if jade["total"] != ambar["total"]:
        assert sorted({ranks[0], ranks[1]}) == [1, 2]
        assert (ranks[0] == 1) == (jade["total"] > ambar["total"])


async def test_leaving_concedes_the_duel(http: httpx.AsyncClient) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table = await ana.create_table("bozo", 2)
    await bia.join(table["invite_code"])
    await ana.start(table["id"])
    await play_turn(ana, table["id"], cup=False)
    left = (await bia.leave(table["id"]))["match"]
    assert left["status"] == "FINISHED"
    assert left["result"]["reason"] == "forfeit" and left["result"]["forfeited"] == [1]
    assert left["result"]["ranks"] == [1, 2]
    with pytest.raises(ApiRefused) as refused:
        await ana.act(table["id"], left["version"], {"throw": {}})
    assert refused.value.code == "game_over"


async def rewind_clock(stack: Stack, match_id: str, seconds: float) -> None:
    """Make the match's last action look ``seconds`` older, as if time had passed."""
    redis = Redis.from_url(stack.redis_url)
    try:
        doc = orjson.loads(await redis.hget(match_key(match_id), "doc"))  # type: ignore[misc]
        doc["last_action_at"] -= seconds
        await redis.hset(match_key(match_id), "doc", orjson.dumps(doc))  # type: ignore[misc]
    finally:
        await redis.aclose()


async def test_inactivity_claims(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table = await players[0].create_table("bozo", 4)
    for player in players[1:]:
        await player.join(table["invite_code"])
    snap = await players[0].start(table["id"])
    assert snap["to_act"] == [0]
    claim = {"claim_inactivity": {}}

    async def refused(player: Player, code: str) -> None:
        before = await player.view(table["id"])
        with pytest.raises(ApiRefused) as error:
            await player.act(table["id"], before["version"], claim)
        assert (error.value.status, error.value.code) == (409, code)
        assert await player.view(table["id"]) == before

    await refused(players[1], "too_early")  # an opponent, but before 120 s
    await refused(players[2], "partner_cannot_claim")
    await rewind_clock(stack, table["id"], 121)
    await refused(players[2], "partner_cannot_claim")  # never the partner
    snap = await players[3].view(table["id"])
    claimed = await players[3].act(table["id"], snap["version"], claim)
    assert claimed["status"] == "FINISHED"
    assert claimed["result"]["reason"] == "inactivity" and claimed["result"]["ranks"] == [2, 1, 2, 1]


async def stored_state(stack: Stack, match_id: str) -> dict[str, Any]:
    redis = Redis.from_url(stack.redis_url)
    try:
        doc: dict[str, Any] = orjson.loads(await redis.hget(match_key(match_id), "doc"))  # type: ignore[misc]
        return doc["state"]  # type: ignore[no-any-return]
    finally:
        await redis.aclose()


async def feed(stack: Stack, table_id: str, player: Player, until: int) -> list[dict[str, Any]]:
    url = stack.gateway().replace("http", "ws") + f"/v1/tables/{table_id}/events"
    events: list[dict[str, Any]] = []
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": player.token, "after_event_id": 0}))
        while not events or events[-1]["id"] < until:
            events.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    return events


async def test_cup_faces_reach_nobody_before_the_declaration(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    spectator = await register(http, "eve")
    table = await players[0].create_table("bozo", 4)
    for player in players[1:]:
        await player.join(table["invite_code"])
    snap = await players[0].start(table["id"])
    snap = await players[0].act(table["id"], snap["version"], {"throw": {"cup": True}})
    hidden = await stored_state(stack, table["id"])
    assert hidden["cup_pending"] and sorted(hidden["just_thrown"]) == [0, 1, 2, 3, 4]
    faces = hidden["dice"]
    assert all(1 <= face <= 6 for face in faces)

    for viewer in [*players, spectator]:
        view = (await viewer.view(table["id"]))["view"]
        assert view["dice"] == [{"face": 0, "hidden": True}] * 5 and view["preview"] == []
        for event in await feed(stack, table["id"], viewer, snap["last_event_id"]):
            thrown = event["event"].get("thrown")
            assert "revealed" not in event["event"]
            if thrown:
                assert thrown["cup"] and thrown["faces"] == []
    with pytest.raises(ApiRefused) as refused:
        await players[0].act(table["id"], snap["version"], {"score": {"box": "GENERAL"}})
    assert refused.value.code == "cup_pending"
    logs = stack.log_path("bozo").read_text() + stack.log_path("gateway").read_text()
    assert str(faces) not in logs and json.dumps(faces) not in logs

    # The declaration reveals exactly what was stored: the check above was looking at the right dice.
    revealed = await players[0].act(table["id"], snap["version"], {"declare": {"side": "TOP"}})
    assert [d["face"] for d in revealed["view"]["dice"]] == faces
