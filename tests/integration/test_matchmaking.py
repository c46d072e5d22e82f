"""Matchmaking end to end: two gateway replicas on one Redis, the real game
services, players driving the HTTP API and following their tickets over the
WebSocket. A stack of its own, with the matcher's clock sped up."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets
from redis.asyncio import Redis

from tests.integration.http_client import ApiRefused, Player, register
from tests.integration.waiting import until
from tools.stack import Stack

CYCLE, FILL_WAIT, CPU_WAIT, HEARTBEAT, GRACE = 0.2, 1.0, 2.0, 1.0, 2.0
# Default windows: ±100, +50 per cycle, ±400 at most.
WINDOW_START, WINDOW_STEP, WINDOW_CAP = 100, 50, 400

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def mm_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(
        tmp_path_factory.mktemp("matchmaking"),
        env={
            "MATCHMAKER_CYCLE_SECONDS": str(CYCLE),
            "MATCHMAKER_FILL_WAIT_SECONDS": str(FILL_WAIT),
            "MATCHMAKER_CPU_WAIT_SECONDS": str(CPU_WAIT),
            "MATCHMAKER_HEARTBEAT_SECONDS": str(HEARTBEAT),
            "MATCHMAKER_GRACE_SECONDS": str(GRACE),
        },
    )
    try:
        for game in ("bozo", "dudo", "bozu_mekuri", "domino", "yatzy"):
            stack.service(game)
        stack.gateway(0)
        stack.gateway(1)
        yield stack
    finally:
        stack.stop()


@pytest.fixture
async def replicas(mm_stack: Stack) -> Any:
    async with (
        httpx.AsyncClient(base_url=mm_stack.gateway(0), timeout=15) as a,
        httpx.AsyncClient(base_url=mm_stack.gateway(1), timeout=15) as b,
    ):
        yield a, b


@pytest.fixture
async def redis(mm_stack: Stack) -> Any:
    client = Redis.from_url(mm_stack.redis_url, decode_responses=True)
    yield client
    await client.aclose()


async def guest(http: httpx.AsyncClient, name: str) -> Player:
    response = await http.post("/v1/auth/guest", json={"name": name})
    assert response.status_code == 201, response.text
    body = response.json()
    return Player(http, body["access_token"], body["user"]["id"], body["user"]["name"])


async def queue(
    player: Player, game: str, options: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    body = {"game": game, "options": options or {}, **extra}
    return await player.call("POST", "/v1/matchmaking/tickets", body)


async def cancel(player: Player, ticket_id: str) -> None:
    response = await player.http.delete(f"/v1/matchmaking/tickets/{ticket_id}", headers=player.headers)
    assert response.status_code == 204 and not response.content, response.text


async def refused(call: Any, status: int, code: str) -> None:
    with pytest.raises(ApiRefused) as error:
        await call
    assert (error.value.status, error.value.code) == (status, code), error.value


async def follow(
    player: Player, ticket_id: str, seen: list[dict[str, Any]] | None = None, timeout: float = 20
) -> list[dict[str, Any]]:
    """Follow a ticket over the WebSocket of the player's replica until its
    final message (or an error); every message lands in ``seen``."""
    seen = [] if seen is None else seen
    url = str(player.http.base_url).replace("http", "ws", 1) + f"/v1/matchmaking/tickets/{ticket_id}/events"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": player.token}))
        while not seen or "queue" in seen[-1]:
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
    return seen


async def metric(stack: Stack, name: str, **labels: str) -> float:
    """A counter's value, summed over both replicas."""
    total = 0.0
    async with httpx.AsyncClient(timeout=5) as http:
        for replica in (0, 1):
            text = (await http.get(stack.gateway(replica) + "/metrics")).text
            for line in text.splitlines():
                match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
                if match and all(f'{k}="{v}"' in match.group(1) for k, v in labels.items()):
                    total += float(match.group(2))
    return total


async def check_table(player: Player, table_id: str, seated: dict[str, int]) -> dict[str, Any]:
    """The table record and the game service's own view agree with the seats
    the matchmaker announced; returns the record."""
    table = await player.call("GET", f"/v1/tables/{table_id}")
    assert table["status"] == "playing" and table["host"] is None
    record = {p["user_id"]: seat for seat, p in enumerate(table["players"]) if p.get("user_id")}
    assert record == seated
    snapshot = await player.view(table_id)  # from the game service
    assert [s["user_id"] for s in snapshot["seats"]] == [p.get("user_id", "") for p in table["players"]]
    assert [s.get("cpu", False) for s in snapshot["seats"]] == [p.get("cpu", False) for p in table["players"]]
    return table


# -- exactly once, through two replicas ---------------------------------------------------


async def test_tickets_through_both_replicas_are_matched_exactly_once(
    replicas: Any, mm_stack: Stack, redis: Redis
) -> None:
    a, b = replicas
    duel = {"mode": "DUEL"}
    before = {
        "duel": await metric(mm_stack, "rodada_matchmaking_matches_total", game="bozo", mode="duel"),
        "domino": await metric(mm_stack, "rodada_matchmaking_matches_total", game="domino", mode="standard"),
    }
    # 36 duelists and 24 Dominó players, in waves a few cycles apart, each
    # queueing through one replica and following the ticket on the other.
    players = await asyncio.gather(*(guest(a if i % 2 else b, f"p{i}") for i in range(60)))
    followers: dict[str, asyncio.Task[list[dict[str, Any]]]] = {}
    tickets: dict[str, tuple[Player, str]] = {}
    for wave in range(6):
        batch = players[wave * 10 : (wave + 1) * 10]
        created = await asyncio.gather(
            *(queue(p, "bozo", duel) if i < 6 else queue(p, "domino") for i, p in enumerate(batch))
        )
        for player, ticket in zip(batch, created, strict=True):
            other = Player(b if player.http is a else a, player.token, player.user_id, player.name)
            tickets[ticket["id"]] = (player, ticket["game"])
            followers[ticket["id"]] = asyncio.create_task(follow(other, ticket["id"]))
        await asyncio.sleep(3 * CYCLE)
    finals = {ticket_id: (await task)[-1] for ticket_id, task in followers.items()}

    # Every ticket was matched, once; every player sits at exactly one table.
    assert all("matched" in final for final in finals.values()), finals
    tables: dict[str, dict[str, int]] = {}
    for ticket_id, final in finals.items():
        player, _ = tickets[ticket_id]
        tables.setdefault(final["matched"]["table_id"], {})[player.user_id] = final["matched"]["seat"]
    seated = Counter(user for table in tables.values() for user in table)
    assert sorted(seated) == sorted(p.user_id for p in players) and set(seated.values()) == {1}
    sizes = Counter(len(table) for table in tables.values())
    assert sizes == {2: 18, 4: 6}
    for table_id, seats in tables.items():
        player = next(p for p in players if p.user_id in seats)
        table = await check_table(player, table_id, seats)
        assert table["ranked"] is False and table["mode"] == ("duel" if len(seats) == 2 else "standard")
        assert sorted(seats.values()) == list(range(len(seats)))
    # The tickets say the same, and every player is free to queue again.
    for ticket_id, (player, _) in tickets.items():
        ticket = await player.call("GET", f"/v1/matchmaking/tickets/{ticket_id}")
        assert ticket["state"] == "matched" and ticket["table_id"] == finals[ticket_id]["matched"]["table_id"]
        assert await redis.get(f"mm:player:{player.user_id}") is None
    # No formation is left half done, and each was counted once.
    for key in await redis.keys("{mm:*}:forming"):
        assert await redis.zcard(key) == 0
    assert await metric(mm_stack, "rodada_matchmaking_matches_total", game="bozo", mode="duel") == (
        before["duel"] + 18
    )
    assert await metric(mm_stack, "rodada_matchmaking_matches_total", game="domino", mode="standard") == (
        before["domino"] + 6
    )


# -- cancelling, one ticket per player, bad input -------------------------------------------


async def test_cancel_one_live_ticket_and_bad_input_changes_nothing(replicas: Any, redis: Redis) -> None:
    a, b = replicas
    options = {"dice_per_player": 1}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(a, "caio")
    ticket = await queue(ana, "dudo", options)
    assert (ticket["state"], ticket["position"], ticket["queue_length"]) == ("waiting", 1, 1)
    assert (ticket["game"], ticket["mode"], ticket["options"]) == ("dudo", "standard", options)
    path = f"/v1/matchmaking/tickets/{ticket['id']}"

    # One live ticket per player, even when both replicas are asked at once.
    other_ana = Player(b, ana.token, ana.user_id, ana.name)
    await refused(queue(other_ana, "bozo", {"mode": "DUEL"}), 409, "already_queued")
    for _ in range(5):
        race = await asyncio.gather(
            *(queue(Player(h, bia.token, bia.user_id, bia.name), "yatzy") for h in (a, b) * 4),
            return_exceptions=True,
        )
        won = [r for r in race if isinstance(r, dict)]
        assert len(won) == 1, race
        assert [r.code for r in race if isinstance(r, ApiRefused)] == ["already_queued"] * 7
        await cancel(bia, won[0]["id"])

    # Bad input: a clear 4xx, and nothing changes.
    await refused(queue(bia, "chess"), 404, "unknown_game")
    await refused(queue(bia, "dudo", {"dice": 3}), 422, "invalid_options")
    for malformed in ({"game": "dudo", "options": [1]}, {"options": {}}, {"game": "dudo", "ranked": "often"}):
        await refused(bia.call("POST", "/v1/matchmaking/tickets", malformed), 422, "invalid_request")
    await refused(queue(bia, "bozo", {"mode": "SOLO"}), 422, "invalid_mode")
    await refused(queue(bia, "bozo"), 422, "invalid_mode")
    await refused(queue(bia, "dudo", party=True), 422, "party_not_allowed")
    await refused(queue(bia, "domino", ranked=True), 403, "account_required")  # guests play casual
    await refused(bia.call("GET", path), 403, "not_your_ticket")
    await refused(bia.call("DELETE", path), 403, "not_your_ticket")
    await refused(bia.call("GET", "/v1/matchmaking/tickets/nope"), 404, "ticket_not_found")
    await refused(bia.call("GET", "/v1/matchmaking/tickets/" + "0" * 32), 404, "ticket_not_found")
    no_party = {"party_code": "nope"}
    await refused(bia.call("POST", "/v1/matchmaking/parties/join", no_party), 404, "party_not_found")
    assert await redis.get(f"mm:player:{bia.user_id}") is None
    assert (await ana.call("GET", path))["state"] == "waiting"

    # Cancelling closes the ticket for good; doing it again is harmless.
    await cancel(ana, ticket["id"])
    assert (await ana.call("GET", path))["state"] == "cancelled"
    await cancel(other_ana, ticket["id"])

    # A cancelled ticket is never taken: Bia, queueing next, waits alone,
    # until Caio makes two.
    bia_ticket = await queue(bia, "dudo", options)
    assert (bia_ticket["position"], bia_ticket["queue_length"]) == (1, 1)
    bia_seen: list[dict[str, Any]] = []
    bia_follows = asyncio.create_task(follow(bia, bia_ticket["id"], bia_seen))
    await asyncio.sleep(FILL_WAIT + 3 * CYCLE)
    assert bia_seen and all("queue" in m for m in bia_seen)
    caio_ticket = await queue(caio, "dudo", options)
    caio_final = (await follow(caio, caio_ticket["id"]))[-1]
    bia_final = (await bia_follows)[-1]
    assert caio_final["matched"]["table_id"] == bia_final["matched"]["table_id"]
    table = await caio.call("GET", f"/v1/tables/{caio_final['matched']['table_id']}")
    assert sorted(p["user_id"] for p in table["players"]) == sorted([bia.user_id, caio.user_id])
    # ... and a matched ticket can no longer be cancelled.
    await refused(bia.call("DELETE", f"/v1/matchmaking/tickets/{bia_ticket['id']}"), 409, "already_matched")
    # Ana, free again, may queue.
    assert (await queue(ana, "dudo", {"dice_per_player": 5}))["state"] == "waiting"


# -- connections --------------------------------------------------------------------------


async def test_a_ticket_whose_connection_is_gone_is_dropped(replicas: Any, redis: Redis) -> None:
    a, b = replicas
    options = {"dice_per_player": 2}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(b, "caio")
    ticket = await queue(ana, "dudo", options)
    url = str(b.base_url).replace("http", "ws", 1) + f"/v1/matchmaking/tickets/{ticket['id']}/events"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": ana.token}))
        first = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert first == {
            "queue": {"state": "waiting", "position": 1, "queue_length": 1, "estimated_wait_seconds": None}
        }
        await asyncio.sleep(GRACE + HEARTBEAT)  # followed: outlives its grace
        assert (await ana.call("GET", f"/v1/matchmaking/tickets/{ticket['id']}"))["state"] == "waiting"

    async def dropped(player: Player, ticket_id: str) -> bool:
        found = await player.call("GET", f"/v1/matchmaking/tickets/{ticket_id}")
        return bool(found["state"] == "dropped" and found["reason"] == "connection_lost")

    await until(lambda: dropped(ana, ticket["id"]), timeout=HEARTBEAT + 10 * CYCLE)
    assert await redis.get(f"mm:player:{ana.user_id}") is None
    # A ticket nobody ever follows is dropped after the grace period.
    never = await queue(bia, "dudo", options)
    await asyncio.sleep(GRACE - 0.5)
    assert (await bia.call("GET", f"/v1/matchmaking/tickets/{never['id']}"))["state"] == "waiting"
    await until(lambda: dropped(bia, never["id"]), timeout=0.5 + 10 * CYCLE)
    # A following connection after the drop hears it, and Caio queues alone.
    gone = {"closed": {"state": "dropped", "reason": "connection_lost"}}
    assert (await follow(bia, never["id"]))[-1] == gone
    caio_ticket = await queue(caio, "dudo", options)
    assert (caio_ticket["position"], caio_ticket["queue_length"]) == (1, 1)
    await cancel(caio, caio_ticket["id"])


# -- parties ------------------------------------------------------------------------------


async def test_a_party_is_seated_as_partners(replicas: Any) -> None:
    a, b = replicas
    leader, friend, s1, s2 = [await guest(h, n) for h, n in ((a, "lia"), (b, "leo"), (a, "sol"), (b, "sam"))]
    duplas = {"mode": "DUPLAS"}
    party = await queue(leader, "bozo", duplas, party=True)
    assert party["state"] == "party_open" and party["party_code"] and "position" not in party
    leader_follows = asyncio.create_task(follow(leader, party["id"]))
    join = {"party_code": party["party_code"]}
    await refused(leader.call("POST", "/v1/matchmaking/parties/join", join), 409, "own_party")
    joined = await friend.call("POST", "/v1/matchmaking/parties/join", join)
    assert joined["id"] == party["id"] and joined["state"] == "waiting" and "party_code" not in joined
    assert [m["user_id"] for m in joined["members"]] == [leader.user_id, friend.user_id]
    await refused(s1.call("POST", "/v1/matchmaking/parties/join", join), 404, "party_not_found")
    friend_follows = asyncio.create_task(follow(friend, party["id"]))
    solos = [await queue(s, "bozo", duplas) for s in (s1, s2)]
    solo_finals = [(await follow(s, t["id"]))[-1] for s, t in zip((s1, s2), solos, strict=True)]
    leader_final, friend_final = (await leader_follows)[-1], (await friend_follows)[-1]
    table_id = leader_final["matched"]["table_id"]
    seats = {
        leader.user_id: leader_final["matched"]["seat"],
        friend.user_id: friend_final["matched"]["seat"],
        **{s.user_id: f["matched"]["seat"] for s, f in zip((s1, s2), solo_finals, strict=True)},
    }
    assert {f["matched"]["table_id"] for f in [friend_final, *solo_finals]} == {table_id}
    table = await check_table(friend, table_id, seats)
    teams = {t["name"]: set(t["seats"]) for t in table["teams"]}
    assert teams == {"JADE": {0, 2}, "AMBAR": {1, 3}}
    assert {seats[leader.user_id], seats[friend.user_id]} in teams.values()  # partners
    # The game agrees: the party shares one team's score card.
    view = (await leader.view(table_id))["view"]
    party_team = next(c for c in view["cards"] if seats[leader.user_id] in c["seats"])
    assert sorted(party_team["seats"]) == sorted([seats[leader.user_id], seats[friend.user_id]])

    # Two parties at a Dominó table: partners opposite, 0 & 2 against 1 & 3.
    players = [await guest(h, n) for h, n in ((a, "ana"), (b, "bia"), (b, "caio"), (a, "davi"))]
    first = await queue(players[0], "domino", party=True)
    second = await queue(players[2], "domino", party=True)
    await players[1].call("POST", "/v1/matchmaking/parties/join", {"party_code": first["party_code"]})
    await players[3].call("POST", "/v1/matchmaking/parties/join", {"party_code": second["party_code"]})
    finals = await asyncio.gather(
        *(follow(p, t["id"]) for p, t in zip(players, (first, first, second, second), strict=True))
    )
    seats = {p.user_id: f[-1]["matched"]["seat"] for p, f in zip(players, finals, strict=True)}
    await check_table(players[0], finals[0][-1]["matched"]["table_id"], seats)
    partners = [sorted(seats[p.user_id] for p in pair) for pair in (players[:2], players[2:])]
    assert sorted(partners) == [[0, 2], [1, 3]]


# -- ranked windows -----------------------------------------------------------------------


async def test_ranked_tickets_match_only_within_their_widening_windows(replicas: Any, redis: Redis) -> None:
    a, b = replicas
    duel = {"mode": "DUEL"}
    # Three pairs far apart (more than the cap from each other): one close, one
    # 300 apart (fits from 4 cycles waited), one 450 apart (beyond the cap).
    ratings = {"close": (1000, 1050), "wide": (2500, 2800), "never": (4000, 4450)}
    pairs: dict[str, tuple[Player, Player]] = {}
    for name, (low, high) in ratings.items():
        pair = (await register(a, f"{name}lo"), await register(b, f"{name}hi"))
        for player, rating in zip(pair, (low, high), strict=True):
            rating_key = f"rating:bozo:duel:{player.user_id}"
            await redis.hset(rating_key, mapping={"rating": rating, "deviation": 80})
        pairs[name] = pair
    tickets: dict[str, list[dict[str, Any]]] = {}
    followers = {}
    for name, pair in pairs.items():
        tickets[name] = [await queue(p, "bozo", duel, ranked=True) for p in pair]
        followers[name] = [
            asyncio.create_task(follow(p, t["id"])) for p, t in zip(pair, tickets[name], strict=True)
        ]
    for name in ("close", "wide"):
        finals = [(await f)[-1]["matched"] for f in followers[name]]
        assert finals[0]["table_id"] == finals[1]["table_id"]
        seats = {p.user_id: f["seat"] for p, f in zip(pairs[name], finals, strict=True)}
        table = await check_table(pairs[name][0], finals[0]["table_id"], seats)
        assert table["ranked"] is True and table["mode"] == "duel"
    # The 300 gap waited for the newer ticket's window to widen to it.
    lo, hi = [
        await p.call("GET", f"/v1/matchmaking/tickets/{t['id']}")
        for p, t in zip(pairs["wide"], tickets["wide"], strict=True)
    ]
    cycles_needed = (300 - WINDOW_START) / WINDOW_STEP
    assert lo["closed_at"] - max(lo["enqueued_at"], hi["enqueued_at"]) >= cycles_needed * CYCLE
    # 450 apart: beyond the cap, still waiting well after every window is at it.
    await asyncio.sleep((WINDOW_CAP - WINDOW_START) / WINDOW_STEP * CYCLE + 5 * CYCLE)
    assert not any(f.done() for f in followers["never"])
    for player, ticket in zip(pairs["never"], tickets["never"], strict=True):
        assert (await player.call("GET", f"/v1/matchmaking/tickets/{ticket['id']}"))["state"] == "waiting"
        await cancel(player, ticket["id"])
    finals = [(await f)[-1] for f in followers["never"]]
    assert finals == [{"closed": {"state": "cancelled", "reason": "cancelled"}}] * 2


# -- the feed, the largest table, CPUs --------------------------------------------------


async def test_the_feed_shows_position_then_the_match(replicas: Any, mm_stack: Stack) -> None:
    a, b = replicas
    card = {"card": "SCANDINAVIAN"}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(a, "caio")
    seen: dict[str, list[dict[str, Any]]] = {"ana": [], "bia": [], "caio": []}
    ana_ticket = await queue(ana, "yatzy", card)
    ana_follows = asyncio.create_task(follow(ana, ana_ticket["id"], seen["ana"]))

    async def ana_heard() -> bool:
        return bool(seen["ana"])

    await until(ana_heard)
    bia_ticket = await queue(bia, "yatzy", card)
    bia_follows = asyncio.create_task(follow(bia, bia_ticket["id"], seen["bia"]))
    caio_ticket = await queue(caio, "yatzy", card)
    caio_follows = asyncio.create_task(follow(caio, caio_ticket["id"], seen["caio"]))
    finals = [(await f)[-1] for f in (ana_follows, bia_follows, caio_follows)]

    # Ana saw the queue grow behind her, then the match; Caio was third.
    waiting = [m["queue"] for m in seen["ana"] if "queue" in m and m["queue"]["state"] == "waiting"]
    alone = {"state": "waiting", "position": 1, "queue_length": 1, "estimated_wait_seconds": None}
    assert waiting[0] == alone
    assert [w["queue_length"] for w in waiting][-1] == 3 and {w["position"] for w in waiting} == {1}
    assert seen["caio"][0]["queue"]["position"] == 3
    # One table of three after the short wait: the largest there was.
    (table_id,) = {f["matched"]["table_id"] for f in finals}
    seats = {p.user_id: f["matched"]["seat"] for p, f in zip((ana, bia, caio), finals, strict=True)}
    table = await check_table(bia, table_id, seats)
    assert table["options"] == card and table["seats"] == 3
    # Later tickets of the queue get an estimate from these waits.
    dan = await guest(b, "dan")
    dan_ticket = await queue(dan, "yatzy", card)
    assert isinstance(dan_ticket["estimated_wait_seconds"], int)
    assert 0 <= dan_ticket["estimated_wait_seconds"] <= FILL_WAIT + 2

    # A bad hello, or someone else's ticket, is refused on the socket.
    url = str(b.base_url).replace("http", "ws", 1) + f"/v1/matchmaking/tickets/{ana_ticket['id']}/events"
    for hello, code in (({"token": "forged"}, 4401), ({"token": dan.token}, 4403)):
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps(hello))
            assert "error" in json.loads(await ws.recv())
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == code
    await cancel(dan, dan_ticket["id"])


async def test_a_lonely_bozu_mekuri_ticket_is_seated_with_cpus(replicas: Any) -> None:
    a, _ = replicas
    ana = await guest(a, "ana")
    ticket = await queue(ana, "bozu_mekuri", {"turn_timer_seconds": 30})
    seen: list[dict[str, Any]] = []
    started = time.monotonic()
    final = (await follow(ana, ticket["id"], seen))[-1]
    assert time.monotonic() - started >= CPU_WAIT - 0.5
    table = await check_table(ana, final["matched"]["table_id"], {ana.user_id: 0})
    assert [bool(p.get("cpu")) for p in table["players"]] == [False, True, True, True]
    assert table["ranked"] is False
