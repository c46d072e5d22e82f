"""CPU seats over the real stack (issue 17): for every game whose facts offer
CPU seats (``Game.cpu_seats``: a game that gains them is tested here without
a change), one person and CPUs play a whole match through the gateway, the
services playing the CPU seats; and a table with a CPU seat is never rated,
not even one whose record says ranked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from services.core import keys
from services.kit.game import Game
from tests.integration.cpu_play import cpu_games, cpu_table, play_as_cpu
from tests.integration.http_client import FINISHED, Player, follow, register, snapshots
from tests.integration.waiting import until
from tools.stack import Stack

GAMES = cpu_games()

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
async def http(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def cpu_match(
    http: httpx.AsyncClient, stack: Stack, game: Game, ranked_record: bool = False
) -> tuple[Player, str, dict[str, Any], list[dict[str, Any]]]:
    """A person at seat 0 and CPUs at every other seat play a match to its
    end; with ``ranked_record`` the table's record is marked ranked first
    (as the matchmaker's ranked queues mark theirs). Returns the person, the
    table id, the final snapshot and the person's feed."""
    stack.service(game.name)
    ana = await register(http, "ana")
    seats, options = cpu_table(game)
    cpus = list(range(1, seats))
    table = await ana.create_table(game.name, seats, options, cpu_seats=cpus)
    assert [p["cpu"] for p in table["players"]] == [False, *[True] * len(cpus)]
    if ranked_record:
        redis = Redis.from_url(stack.redis_url)
        try:
            record = orjson.loads(await redis.hget(keys.table(table["id"]), "doc") or b"{}")
            await redis.hset(keys.table(table["id"]), "doc", orjson.dumps({**record, "ranked": True}))
        finally:
            await redis.aclose()
        assert (await ana.table(table["id"]))["ranked"] is True
    feed = asyncio.create_task(follow(ana, stack.gateway(), table["id"]))
    snap = await ana.start(table["id"])
    assert [s["cpu_controlled"] for s in snap["seats"]] == [False, *[True] * len(cpus)]
    final, moves = await play_as_cpu(ana, game, table["id"], 0, snap)
    assert moves > 0
    return ana, table["id"], final, await asyncio.wait_for(feed, 60)


async def history(player: Player) -> list[dict[str, Any]]:
    """The player's finished matches, once the results stream recorded one."""
    found: list[dict[str, Any]] = []

    async def recorded() -> bool:
        found[:] = (await player.call("GET", f"/v1/users/{player.user_id}/matches"))["matches"]
        return bool(found)

    await until(recorded, timeout=30)
    return found


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
async def test_cpu_seats_complete_a_match(http: httpx.AsyncClient, stack: Stack, game: Game) -> None:
    ana, table_id, final, items = await cpu_match(http, stack, game)
    assert final["status"] == FINISHED and final["result"]["ranks"]
    seats = len(final["seats"])
    assert len(final["result"]["ranks"]) == seats
    # Nobody but the services played the CPU seats, and they did: after each
    # of the person's moves the person was to act again, or the match was
    # over (play_as_cpu checks), and every seat has its place.
    pushed = snapshots(items)
    assert pushed[-1]["status"] == FINISHED and pushed[-1]["version"] == final["version"]
    assert sorted(final["result"]["ranks"])[0] == 1
    (entry,) = await history(ana)
    assert entry["match_id"] == table_id and entry["ranked"] is False
    assert [p["cpu"] for p in entry["players"]] == [False, *[True] * (seats - 1)]


async def test_a_cpu_table_is_never_rated(http: httpx.AsyncClient, stack: Stack) -> None:
    """Even a table whose record says ranked (which bot fill never makes): a
    rating moves only between people."""
    game = next(g for g in GAMES if g.name == "dudo")
    ana, table_id, final, _ = await cpu_match(http, stack, game, ranked_record=True)
    assert final["status"] == FINISHED
    (entry,) = await history(ana)
    assert entry["match_id"] == table_id and entry["ranked"] is False
    ratings = await ana.call("GET", f"/v1/users/{ana.user_id}/ratings")
    assert ratings["ratings"] == []
    mode = final["mode"]
    board = await ana.call("GET", f"/v1/leaderboards/{game.name}/{mode}")
    assert ana.user_id not in {e["user_id"] for e in board["entries"]}
    redis = Redis.from_url(stack.redis_url)
    try:
        assert not await redis.exists(keys.rating(game.name, mode, ana.user_id))
    finally:
        await redis.aclose()


def test_the_games_with_cpu_seats_are_found() -> None:
    """Not vacuous: the parametrisation covers at least the three games that
    had CPU seats when this was written."""
    assert {"dudo", "domino", "bozu_mekuri"} <= {g.name for g in GAMES}
    for game in GAMES:
        seats, _ = cpu_table(game)
        assert seats >= 2 and game.cpu is not None
