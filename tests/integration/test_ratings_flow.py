"""Finished matches reach match history, and ranked ones the ratings and
leaderboards, through the results stream. Tables are made ranked here by
marking their record, as the matchmaker's ranked queues do."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from tests.integration.http_client import Player, register
from tests.integration.test_bozo_flow import play_to_the_end
from tests.integration.test_yatzy_flow import play_turn_http
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("yatzy")
    stack.service("bozo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def ranked_table(
    stack: Stack, players: list[Player], game: str, options: dict[str, Any]
) -> tuple[str, Any]:
    table = await players[0].create_table(game, len(players), options)
    for player in players[1:]:
        await player.join(table["invite_code"])
    redis = Redis.from_url(stack.redis_url)
    try:
        record = orjson.loads(await redis.get(f"table:{table['id']}"))
        record["ranked"] = True
        await redis.set(f"table:{table['id']}", orjson.dumps(record))
    finally:
        await redis.aclose()
    return table["id"], await players[0].start(table["id"])


async def eventually(get: Any, check: Any, timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await get()
        if check(value):
            return value
        assert time.monotonic() < deadline, value
        await asyncio.sleep(0.2)


async def test_a_ranked_duel_moves_ratings_and_fills_histories(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table_id, snap = await ranked_table(stack, [ana, bia], "yatzy", {})
    players = {0: ana, 1: bia}
    while snap["status"] == "ACTIVE":
        (seat,) = snap["to_act"]
        snap = await play_turn_http(players[seat], table_id, await players[seat].view(table_id))
    scores = snap["result"]["scores"]

    history = await eventually(
        lambda: ana.call("GET", f"/v1/users/{ana.user_id}/matches"), lambda h: len(h["matches"]) == 1
    )
    entry = history["matches"][0]
    assert (entry["match"], entry["game"], entry["ranked"], entry["seat"]) == (table_id, "yatzy", True, 0)
    ratings = {
        p.user_id: (await p.call("GET", f"/v1/users/{p.user_id}/ratings"))["ratings"][0] for p in (ana, bia)
    }
    a, b = ratings[ana.user_id]["rating"], ratings[bia.user_id]["rating"]
    if scores[0] > scores[1]:
        assert a > 1500 > b
    elif scores[0] < scores[1]:
        assert a < 1500 < b
    else:
        assert a == b == 1500
    assert all(r["provisional"] and r["games"] == 1 for r in ratings.values())
    board = await ana.call("GET", "/v1/leaderboards/yatzy/standard?limit=100")
    positions = {e["user_id"]: e["position"] for e in board["entries"]}
    assert (positions[ana.user_id] < positions[bia.user_id]) == (a > b) or a == b
    assert entry["rating"]["after"] == round(a, 1)
    history = await bia.call("GET", f"/v1/users/{bia.user_id}/ratings/yatzy/standard/history")
    assert len(history["history"]) == 1 and history["history"][0]["before"] == 1500


async def test_a_ranked_duplas_moves_partners_together(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table_id, snap = await ranked_table(stack, players, "bozo", {"mode": "DUPLAS"})
    await play_to_the_end(dict(enumerate(players)), table_id, snap, cup=False)
    final = await players[0].view(table_id)
    ranks = final["result"]["ranks"]

    async def rating(player: Player) -> float:
        found = await eventually(
            lambda: player.call("GET", f"/v1/users/{player.user_id}/ratings"), lambda r: r["ratings"]
        )
        (entry,) = found["ratings"]
        assert (entry["game"], entry["mode"]) == ("bozo", "duplas")
        return float(entry["rating"])

    values = [await rating(p) for p in players]
    for seat in range(4):
        if ranks[seat] == 1 and ranks[(seat + 1) % 4] == 2:
            assert values[seat] > 1500
        elif ranks[seat] == 2:
            assert values[seat] < 1500
    assert values[0] == pytest.approx(values[2]) and values[1] == pytest.approx(
        values[3]
    )  # equal partners, equal moves


async def test_casual_matches_are_history_but_not_rated(http: httpx.AsyncClient) -> None:
    ana = await register(http, "ana")
    table = await ana.create_table("bozo", 1)
    snap = await ana.start(table["id"])
    await ana.leave(table["id"])
    history = await eventually(
        lambda: ana.call("GET", f"/v1/users/{ana.user_id}/matches"), lambda h: len(h["matches"]) == 1
    )
    assert history["matches"][0]["ranked"] is False and history["matches"][0]["reason"] == "forfeit"
    assert (await ana.call("GET", f"/v1/users/{ana.user_id}/ratings"))["ratings"] == []
    assert snap["status"] == "ACTIVE"
