"""Deadlines, inactivity policies and presence with two gateway replicas on one
Redis. Time is made to pass by moving stored times back: a deadline's score in
``clocks:<game>`` (when the platform acts) and the match's last-action time
(what the game checks)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import orjson
import pytest
import websockets
from redis.asyncio import Redis

from services.kit.store import clock_member, clocks_key, match_key
from tests.integration.http_client import ApiRefused, Player, register, seated_table
from tests.integration.waiting import until
from tools.stack import Stack


@pytest.fixture
async def redis(stack: Stack) -> Any:
    client = Redis.from_url(stack.redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
async def replicas(stack: Stack) -> Any:
    for game in ("bozo", "dudo", "yatzy", "domino", "bozu_mekuri"):
        stack.service(game)
    first, second = stack.gateway(0), stack.gateway(1)
    async with (
        httpx.AsyncClient(base_url=first, timeout=15) as a,
        httpx.AsyncClient(base_url=second, timeout=15) as b,
    ):
        yield a, b


async def make_due(redis: Redis, game: str, match_id: str, version: int) -> None:
    """The deadline set for ``version`` is due now."""
    await redis.zadd(clocks_key(game), {clock_member(match_id, version): time.time() - 1})


async def rewind(redis: Redis, match_id: str, seconds: float) -> None:
    """Make the match's last action look ``seconds`` older."""
    doc = orjson.loads(await redis.hget(match_key(match_id), "doc"))
    doc["last_action_at"] -= seconds
    if "turn_since" in doc["state"]:  # Dudo times the turn, not the last action
        doc["state"]["turn_since"] -= seconds
    await redis.hset(match_key(match_id), "doc", orjson.dumps(doc))


async def fired(stack: Stack, game: str, action: str) -> float:
    """rodada_timers_fired_total{game, action}, summed over both replicas."""
    total = 0.0
    async with httpx.AsyncClient(timeout=5) as http:
        for replica in (0, 1):
            text = (await http.get(stack.gateway(replica) + "/metrics")).text
            prefix = f'rodada_timers_fired_total{{action="{action}",game="{game}"}} '
            total += sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(prefix))
    return total


async def test_a_deadline_fires_exactly_once_and_tells_the_table(
    replicas: Any, stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    ana, bia = await register(a, "ana"), await register(b, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")
    before = await fired(stack, "yatzy", "notified")
    url = stack.gateway(1).replace("http", "ws") + f"/v1/tables/{table_id}/events"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": bia.token, "after_event_id": snap["last_event_id"]}))
        await asyncio.sleep(0.3)  # subscribed
        await make_due(redis, "yatzy", table_id, snap["version"])
        notice = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert notice == {
            "notice": {
                "kind": "inactive",
                "seat": 0,
                "version": snap["version"],
                "since": snap["last_action_at"],
            }
        }
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(ws.recv(), 1.5)  # and only once
    assert await fired(stack, "yatzy", "notified") == before + 1
    assert await redis.zscore(clocks_key("yatzy"), clock_member(table_id, snap["version"])) is None


async def test_many_deadlines_through_two_replicas_each_fire_once(
    replicas: Any, stack: Stack, redis: Redis
) -> None:
    a, _ = replicas
    players = [await register(a, f"p{i}") for i in range(12)]
    tables = [await seated_table(players[i : i + 1], "yatzy") for i in range(12)]
    before = await fired(stack, "yatzy", "notified")
    for table_id, snap in tables:
        await make_due(redis, "yatzy", table_id, snap["version"])
    await until(lambda: _fired_at_least(stack, before + 12))
    await asyncio.sleep(1)
    assert await fired(stack, "yatzy", "notified") == before + 12


async def _fired_at_least(stack: Stack, count: float) -> bool:
    return await fired(stack, "yatzy", "notified") >= count


async def test_a_move_made_in_time_makes_the_deadline_a_no_op(
    replicas: Any, stack: Stack, redis: Redis
) -> None:
    a, _ = replicas
    ana, bia, caio = [await register(a, n) for n in ("ana", "bia", "caio")]
    table_id, snap = await seated_table([ana, bia, caio], "bozu_mekuri", {"turn_timer_seconds": 30})
    (seat,) = snap["to_act"]
    player = [ana, bia, caio][seat]
    stale_version = snap["version"]
    moved = await player.act(table_id, stale_version, {"flip": {}})
    # The deadline of the old version comes due only now (as if its replica
    # had taken it just before the move landed): firing it must change nothing.
    before = await fired(stack, "bozu_mekuri", "moved")
    await make_due(redis, "bozu_mekuri", table_id, stale_version)
    await until(lambda: _fired(stack, "bozu_mekuri", "moved", before + 1))
    after = await player.view(table_id)
    assert after["version"] == moved["version"] and after["to_act"] == moved["to_act"]


async def _fired(stack: Stack, game: str, action: str, count: float) -> bool:
    return await fired(stack, game, action) >= count


async def test_bozu_mekuri_timer_hands_the_turn_to_the_cpu_and_the_player_takes_it_back(
    replicas: Any, stack: Stack, redis: Redis
) -> None:
    a, _ = replicas
    ana, bia = await register(a, "ana"), await register(a, "bia")
    table_id, snap = await seated_table([ana, bia], "bozu_mekuri", {"turn_timer_seconds": 30})
    (seat,) = snap["to_act"]
    idle = [ana, bia][seat]
    await rewind(redis, table_id, 31)  # the game checks the 30 s itself
    await make_due(redis, "bozu_mekuri", table_id, snap["version"])
    await until(lambda: _moved_past(idle, table_id, snap["version"]))
    after = await idle.view(table_id)
    assert after["to_act"] != [seat] or after["status"] == "FINISHED"
    flips = after["view"]["last_flipped"]
    assert flips and after["view"]["seats"][seat]["cpu_controlled"] is False  # one turn, not the seat


async def _moved_past(player: Player, table_id: str, version: int) -> bool:
    return (await player.view(table_id))["version"] > version


async def test_an_idle_solo_bozo_match_expires(replicas: Any, stack: Stack, redis: Redis) -> None:
    a, _ = replicas
    ana = await register(a, "ana")
    table_id, snap = await seated_table([ana], "bozo")
    await make_due(redis, "bozo", table_id, snap["version"])
    await until(lambda: _finished(ana, table_id))
    result = (await ana.view(table_id))["result"]
    assert result["reason"] == "forfeit" and result["forfeited"] == [0]


async def _finished(player: Player, table_id: str) -> bool:
    return (await player.view(table_id))["status"] == "FINISHED"


@pytest.mark.parametrize("game", ["yatzy", "dudo"])
async def test_removal_after_120s_by_any_other_player(replicas: Any, redis: Redis, game: str) -> None:
    a, _ = replicas
    players = [await register(a, n) for n in ("ana", "bia", "caio")]
    table_id, snap = await seated_table(players, game)
    (idle,) = snap["to_act"]
    other = players[(idle + 1) % 3]
    with pytest.raises(ApiRefused) as refused:
        await other.act(table_id, snap["version"], {"claim_inactivity": {}})
    assert refused.value.code == "too_early"
    await rewind(redis, table_id, 121)
    removed = await other.act(table_id, snap["version"], {"claim_inactivity": {}})
    assert removed["status"] == "ACTIVE" and idle not in removed["to_act"]  # the others play on


async def test_domino_claim_after_120s_by_the_opposing_team_not_the_partner(
    replicas: Any, redis: Redis
) -> None:
    a, _ = replicas
    players = [await register(a, n) for n in ("ana", "bia", "caio", "davi")]
    table = await players[0].create_table("domino", 4)
    for player in players[1:3]:
        await player.call("POST", f"/v1/tables/{table['id']}/sit", {})
    snap = (await players[3].call("POST", f"/v1/tables/{table['id']}/sit", {}))["match"]
    by_seat = {i: p for p in players for i, s in enumerate(snap["seats"]) if s["user_id"] == p.user_id}
    (idle,) = snap["to_act"]
    await rewind(redis, table["id"], 121)
    with pytest.raises(ApiRefused) as refused:
        await by_seat[(idle + 2) % 4].act(table["id"], snap["version"], {"claim_inactivity": {}})
    assert refused.value.code == "partner_cannot_claim"
    claimed = await by_seat[(idle + 1) % 4].act(table["id"], snap["version"], {"claim_inactivity": {}})
    assert claimed["status"] == "FINISHED" and claimed["result"]["reason"] == "inactivity"
    assert claimed["result"]["ranks"][idle] == 2 and claimed["result"]["ranks"][(idle + 1) % 4] == 1


async def test_presence_follows_the_newest_connection(replicas: Any, stack: Stack) -> None:
    a, _ = replicas
    ana, bia = await register(a, "ana"), await register(a, "bia")
    table_id, _ = await seated_table([ana, bia], "yatzy")

    async def connected() -> list[str]:
        return list((await ana.call("GET", f"/v1/tables/{table_id}/presence"))["connected"])

    old = await websockets.connect(stack.gateway(0).replace("http", "ws") + f"/v1/tables/{table_id}/events")
    await old.send(json.dumps({"token": bia.token}))
    await until(lambda: _equals(connected, [bia.user_id]))
    # Bia reconnects on the other replica; then the old connection closes late.
    new = await websockets.connect(stack.gateway(1).replace("http", "ws") + f"/v1/tables/{table_id}/events")
    await new.send(json.dumps({"token": bia.token}))
    await asyncio.sleep(0.5)
    await old.close()
    await asyncio.sleep(0.5)
    assert await connected() == [bia.user_id]  # the old "leave" did not unseat the new connection
    await new.close()
    await until(lambda: _equals(connected, []))


async def _equals(get: Any, expected: list[str]) -> bool:
    return bool(await get() == expected)
