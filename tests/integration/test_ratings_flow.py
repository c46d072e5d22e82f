"""Finished matches reach match history, and ranked ones the ratings and
leaderboards, through the results stream. Tables are made ranked here by
marking their record (the ``table`` field of the match's hash), as the
matchmaker's ranked queues do.

Ratings are the platform's ``Rating`` messages: Glicko-2 rating, deviation
and volatility, unrounded (they were rounded to 0.1 and shown without the
deviation and volatility), so each is checked against the pure Glicko-2
arithmetic (gateway/ratings.py) applied to the match's placings."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from gateway.ratings import Rating, update_placings, update_teams
from services.core import keys
from tests.integration.http_client import ACTIVE, FINISHED, ApiRefused, Player, register
from tests.integration.test_yatzy_flow import play_turn_http
from tools.stack import Stack

NEWCOMER = {"rating": 1500.0, "deviation": 350.0, "volatility": 0.06, "provisional": True, "games": 0}


@pytest.fixture
async def http(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def ranked_table(
    stack: Stack, players: list[Player], game: str, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Host (players[0]) opens a table, the others join by invite; the
    table's record is marked ranked, then the host starts it."""
    table = await players[0].create_table(game, len(players), options)
    for player in players[1:]:
        await player.join(table["invite_code"])
    redis = Redis.from_url(stack.redis_url)
    try:
        stored = await redis.hget(keys.table(table["id"]), "doc")
        assert stored is not None
        record = orjson.loads(stored)
        record["ranked"] = True
        await redis.hset(keys.table(table["id"]), "doc", orjson.dumps(record))
    finally:
        await redis.aclose()
    assert (await players[0].table(table["id"]))["ranked"] is True
    return table["id"], await players[0].start(table["id"])


async def eventually(
    get: Callable[[], Awaitable[Any]], check: Callable[[Any], bool], timeout: float = 10
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await get()
        if check(value):
            return value
        assert time.monotonic() < deadline, value
        await asyncio.sleep(0.2)


def as_rating(shown: dict[str, Any]) -> Rating:
    return Rating(shown["rating"], shown["deviation"], shown["volatility"])


def assert_shows(shown: dict[str, Any], expected: Rating, games: int) -> None:
    """A Rating message is exactly ``expected`` (unrounded), with its flags."""
    assert shown["rating"] == pytest.approx(expected.rating, rel=1e-12)
    assert shown["deviation"] == pytest.approx(expected.deviation, rel=1e-12)
    assert shown["volatility"] == pytest.approx(expected.volatility, rel=1e-12)
    assert shown["provisional"] is expected.provisional and shown["games"] == games


async def play_bozo_turn(player: Player, table_id: str) -> dict[str, Any]:
    """Throw once and score the best open box."""
    snap = await player.view(table_id)
    snap = await player.act(table_id, snap["version"], {"throw": {}})
    best = max(snap["view"]["preview"], key=lambda p: p["points"])
    return await player.act(table_id, snap["version"], {"score": {"box": best["box"]}})


async def test_a_ranked_duel_moves_ratings_and_fills_histories(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table_id, snap = await ranked_table(stack, [ana, bia], "yatzy", {})
    players = {0: ana, 1: bia}
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        snap = await play_turn_http(players[seat], table_id, await players[seat].view(table_id))
    assert snap["status"] == FINISHED
    scores, ranks = snap["result"]["scores"], snap["result"]["ranks"]

    history = await eventually(
        lambda: ana.call("GET", f"/v1/users/{ana.user_id}/matches"), lambda h: len(h["matches"]) == 1
    )
    entry = history["matches"][0]
    assert (entry["match_id"], entry["game"], entry["mode"], entry["ranked"], entry["seat"]) == (
        table_id,
        "yatzy",
        "standard",
        True,
        0,
    )
    assert (entry["rank"], entry["score"], entry["reason"], entry["forfeited"]) == (
        ranks[0],
        scores[0],
        "completed",
        False,
    )
    assert [p["user_id"] for p in entry["players"]] == [ana.user_id, bia.user_id]
    ratings: dict[str, dict[str, Any]] = {}

    async def listed_ratings(player: Player) -> dict[str, Any]:
        return await player.call("GET", f"/v1/users/{player.user_id}/ratings")

    for player in (ana, bia):
        listed = await eventually(functools.partial(listed_ratings, player), lambda r: r["ratings"])
        (rated,) = listed["ratings"]
        assert (listed["user_id"], rated["game"], rated["mode"]) == (player.user_id, "yatzy", "standard")
        ratings[player.user_id] = rated["rating"]
    a, b = ratings[ana.user_id]["rating"], ratings[bia.user_id]["rating"]
    if scores[0] > scores[1]:
        assert a > 1500 > b
    elif scores[0] < scores[1]:
        assert a < 1500 < b
    else:
        assert a == b == 1500
    # Glicko-2 of this head-to-head, unrounded, with deviation and volatility.
    expected = update_placings([Rating(), Rating()], ranks)
    assert_shows(ratings[ana.user_id], expected[0], games=1)
    assert_shows(ratings[bia.user_id], expected[1], games=1)
    assert all(r["provisional"] and r["deviation"] < 350 for r in ratings.values())
    board = await ana.call("GET", "/v1/leaderboards/yatzy/standard?limit=100")
    assert (board["game"], board["mode"], board["offset"]) == ("yatzy", "standard", 0)
    rows = {e["user_id"]: e for e in board["entries"]}
    assert [e["position"] for e in board["entries"]] == list(range(1, len(board["entries"]) + 1))
    assert (rows[ana.user_id]["position"] < rows[bia.user_id]["position"]) == (a > b) or a == b
    assert rows[ana.user_id]["rating"] == ratings[ana.user_id] and rows[ana.user_id]["name"] == ana.name
    for player, seat in ((ana, 0), (bia, 1)):
        changes = await player.call("GET", f"/v1/users/{player.user_id}/ratings/yatzy/standard/history")
        (change,) = changes["history"]
        assert change["match_id"] == table_id and change["before"] == NEWCOMER
        assert change["after"] == ratings[player.user_id]
        assert_shows(change["after"], expected[seat], games=1)


async def test_a_ranked_duplas_moves_partners_together(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table_id, snap = await ranked_table(stack, players, "bozo", {"mode": "DUPLAS"})
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        snap = await play_bozo_turn(players[seat], table_id)
    final = await players[0].view(table_id)
    assert final["status"] == FINISHED and final["mode"] == "duplas"
    ranks = final["result"]["ranks"]

    async def rating(player: Player) -> dict[str, Any]:
        found = await eventually(
            lambda: player.call("GET", f"/v1/users/{player.user_id}/ratings"), lambda r: r["ratings"]
        )
        (entry,) = found["ratings"]
        assert (entry["game"], entry["mode"]) == ("bozo", "duplas")
        return dict(entry["rating"])

    shown = [await rating(p) for p in players]
    values = [r["rating"] for r in shown]
    for seat in range(4):
        if ranks[seat] == 1 and ranks[(seat + 1) % 4] == 2:
            assert values[seat] > 1500
        elif ranks[seat] == 2:
            assert values[seat] < 1500
    # Equal partners, equal moves: Jade (0 & 2) against Âmbar (1 & 3) as teams.
    assert values[0] == pytest.approx(values[2]) and values[1] == pytest.approx(values[3])
    jade = 0.5 if ranks[0] == ranks[1] else float(ranks[0] < ranks[1])
    new_jade, new_ambar = update_teams([Rating(), Rating()], [Rating(), Rating()], jade)
    for seat, expected in ((0, new_jade[0]), (2, new_jade[1]), (1, new_ambar[0]), (3, new_ambar[1])):
        assert_shows(shown[seat], expected, games=1)
    board = await players[0].call("GET", "/v1/leaderboards/bozo/duplas?limit=100")
    rows = {e["user_id"]: e["rating"] for e in board["entries"]}
    assert [rows[p.user_id] for p in players] == shown


async def test_casual_matches_are_history_but_not_rated(http: httpx.AsyncClient) -> None:
    ana = await register(http, "ana")
    table = await ana.create_table("bozo", 1)
    snap = await ana.start(table["id"])
    assert snap["status"] == ACTIVE and snap["mode"] == "solo"
    left = await ana.leave(table["id"])
    assert left["match"]["status"] == FINISHED
    assert left["match"]["result"]["reason"] == "END_REASON_FORFEIT"
    history = await eventually(
        lambda: ana.call("GET", f"/v1/users/{ana.user_id}/matches"), lambda h: len(h["matches"]) == 1
    )
    (entry,) = history["matches"]
    assert (entry["match_id"], entry["mode"], entry["ranked"]) == (table["id"], "solo", False)
    assert (entry["reason"], entry["forfeited"], entry["rank"]) == ("forfeit", True, 1)
    assert (await ana.call("GET", f"/v1/users/{ana.user_id}/ratings"))["ratings"] == []
    # Solo has no ratings at all, and nobody is on a leaderboard from a casual match.
    with pytest.raises(ApiRefused) as refused:
        await ana.call("GET", f"/v1/users/{ana.user_id}/ratings/bozo/solo/history")
    assert (refused.value.status, refused.value.code) == (404, "unknown_leaderboard")
    assert (await ana.call("GET", f"/v1/users/{ana.user_id}/ratings/bozo/duel/history"))["history"] == []
    board = await ana.call("GET", "/v1/leaderboards/bozo/duel?limit=100")
    assert ana.user_id not in {e["user_id"] for e in board["entries"]}
