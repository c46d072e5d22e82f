"""Matchmaking end to end: two gateway replicas on one Redis, the real game
services, players driving the HTTP API and following their tickets over the
WebSocket. A stack of its own, with the matcher's clock sped up.

The ticket and its updates are the platform protos' JSON (``Ticket``,
``TicketUpdate``): every field present but the optional ones (position,
queue_length, estimated_wait_seconds, seat, closed_at …), which appear only
when set. A ticket follower's last message is ``{"end": {"reason":
"ticket_closed"}}`` before the socket closes 1000."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest
import websockets
from redis.asyncio import Redis
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.core import keys
from services.dudo.game import GAME as DUDO_GAME
from tests.conftest import TEST_PACKAGES
from tests.integration.cpu_play import play_as_cpu
from tests.integration.http_client import ACTIVE, FINISHED, ApiRefused, Player, register
from tests.integration.waiting import until
from tools.stack import Stack

CYCLE, FILL_WAIT, CPU_WAIT, HEARTBEAT, GRACE = 0.2, 1.0, 2.0, 1.0, 2.0
# Default windows: ±100, +50 per cycle, ±400 at most.
WINDOW_START, WINDOW_STEP, WINDOW_CAP = 100, 50, 400
TICKET_CLOSED = {"end": {"reason": "ticket_closed"}}
CONNECTION_LOST = {"state": "dropped", "reason": "connection_lost"}

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def mm_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(
        tmp_path_factory.mktemp("matchmaking"),
        packages=TEST_PACKAGES,  # Nim: the one game without CPU seats, whose lone tickets wait
        env={
            "MATCHMAKER_CYCLE_SECONDS": str(CYCLE),
            "MATCHMAKER_FILL_WAIT_SECONDS": str(FILL_WAIT),
            "MATCHMAKER_CPU_WAIT_SECONDS": str(CPU_WAIT),
            "MATCHMAKER_HEARTBEAT_SECONDS": str(HEARTBEAT),
            "MATCHMAKER_GRACE_SECONDS": str(GRACE),
        },
    ) as stack:
        stack.gateway(0)
        stack.gateway(1)
        yield stack


@pytest.fixture
async def replicas(mm_stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=mm_stack.gateway(0), timeout=15) as a,
        httpx.AsyncClient(base_url=mm_stack.gateway(1), timeout=15) as b,
    ):
        yield a, b


@pytest.fixture
async def redis(mm_stack: Stack) -> AsyncIterator[Redis]:
    client = Redis.from_url(mm_stack.redis_url, decode_responses=True)
    yield client
    await client.aclose()


async def guest(http: httpx.AsyncClient, name: str) -> Player:
    response = await http.post("/v1/auth/guest", json={"name": name})
    assert response.status_code == 201, response.text
    body = response.json()
    return Player(http, body["access_token"], body["user"]["id"], body["user"]["name"])


def elsewhere(player: Player, a: httpx.AsyncClient, b: httpx.AsyncClient) -> Player:
    """The same player through the other replica."""
    return Player(b if player.http is a else a, player.token, player.user_id, player.name)


async def queue(
    player: Player, game: str, options: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    body = {"game": game, "options": options or {}, **extra}
    return await player.call("POST", "/v1/matchmaking/tickets", body)


async def ticket(player: Player, ticket_id: str) -> dict[str, Any]:
    return await player.call("GET", f"/v1/matchmaking/tickets/{ticket_id}")


async def cancel(player: Player, ticket_id: str) -> None:
    response = await player.http.delete(f"/v1/matchmaking/tickets/{ticket_id}", headers=player.headers)
    assert response.status_code == 204 and not response.content, response.text


async def refused(call: Any, status: int, code: str) -> None:
    with pytest.raises(ApiRefused) as error:
        await call
    assert (error.value.status, error.value.code) == (status, code), error.value


def ticket_url(player: Player, ticket_id: str) -> str:
    return str(player.http.base_url).replace("http", "ws", 1) + f"/v1/matchmaking/tickets/{ticket_id}/events"


async def follow(
    player: Player, ticket_id: str, seen: list[dict[str, Any]] | None = None, timeout: float = 20
) -> list[dict[str, Any]]:
    """Follow a ticket over the WebSocket of the player's replica until its
    final update (or an error); every update lands in ``seen`` (without the
    ticket id, which is checked), the last one final. A final update is
    followed by the end and a normal close."""
    seen = [] if seen is None else seen
    async with websockets.connect(ticket_url(player, ticket_id)) as ws:
        await ws.send(json.dumps({"token": player.token}))
        while not seen or "queue" in seen[-1]:
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
            if "error" not in message:
                assert message.pop("ticket_id") == ticket_id, message
            seen.append(message)
        if "error" not in seen[-1]:
            assert json.loads(await asyncio.wait_for(ws.recv(), 5)) == TICKET_CLOSED
            await asyncio.wait_for(ws.wait_closed(), 5)
            assert ws.close_code == 1000
    return seen


async def metric(stack: Stack, name: str, **labels: str) -> float:
    """A counter's value, summed over both replicas."""
    return await metric_of([stack.gateway_metrics_url(0), stack.gateway_metrics_url(1)], name, **labels)


async def metric_of(pages: list[str], name: str, **labels: str) -> float:
    """A counter's value, summed over these gateways' /metrics pages."""
    total = 0.0
    async with httpx.AsyncClient(timeout=5) as http:
        for page in pages:
            text = (await http.get(page)).text
            for line in text.splitlines():
                match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
                if match and all(f'{k}="{v}"' in match.group(1) for k, v in labels.items()):
                    total += float(match.group(2))
    return total


def options_of(message: dict[str, Any]) -> dict[str, Any]:
    """An Any-packed Options as the game's fields (the canonical form has them all)."""
    return {k: v for k, v in message["options"].items() if k != "@type"}


async def check_table(player: Player, table_id: str, seated: dict[str, int]) -> dict[str, Any]:
    """The table record and the game service's own snapshot agree with the
    seats the matchmaker announced; returns the record."""
    table = await player.table(table_id)
    assert table["status"] == "playing" and table["host"] == ""  # nobody hosts a matchmade table
    assert table["invite_code"] == "" and table["invites"] == [] and table["open"] is False
    record = {p["user_id"]: seat for seat, p in enumerate(table["players"]) if p["user_id"]}
    assert record == seated
    snapshot = await player.view(table_id)  # from the game service
    assert snapshot["match_id"] == table_id and snapshot["seat"] == seated[player.user_id]
    assert [s["user_id"] for s in snapshot["seats"]] == [p["user_id"] for p in table["players"]]
    assert [s["cpu"] for s in snapshot["seats"]] == [p["cpu"] for p in table["players"]]
    assert snapshot["mode"] == table["mode"]
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
    tickets: dict[str, Player] = {}
    for wave in range(6):
        batch = players[wave * 10 : (wave + 1) * 10]
        created = await asyncio.gather(
            *(queue(p, "bozo", duel) if i < 6 else queue(p, "domino") for i, p in enumerate(batch))
        )
        for player, made in zip(batch, created, strict=True):
            tickets[made["id"]] = player
            followers[made["id"]] = asyncio.create_task(follow(elsewhere(player, a, b), made["id"]))
        await asyncio.sleep(3 * CYCLE)
    finals = {ticket_id: (await task)[-1] for ticket_id, task in followers.items()}

    # Every ticket was matched, once; every player sits at exactly one table.
    assert all("matched" in final for final in finals.values()), finals
    assert all(final["matched"]["cpu_seats"] == [] for final in finals.values())  # people only
    tables: dict[str, dict[str, int]] = {}
    for ticket_id, final in finals.items():
        tables.setdefault(final["matched"]["table_id"], {})[tickets[ticket_id].user_id] = final["matched"][
            "seat"
        ]
    seated = Counter(user for table in tables.values() for user in table)
    assert sorted(seated) == sorted(p.user_id for p in players) and set(seated.values()) == {1}
    assert Counter(len(table) for table in tables.values()) == {2: 18, 4: 6}
    for table_id, seats in tables.items():
        player = next(p for p in players if p.user_id in seats)
        table = await check_table(player, table_id, seats)
        assert table["ranked"] is False and table["mode"] == ("duel" if len(seats) == 2 else "standard")
        assert sorted(seats.values()) == list(range(len(seats)))  # people only: no CPU filled in
    # The tickets say the same, and every player is free to queue again.
    for ticket_id, player in tickets.items():
        found = await ticket(player, ticket_id)
        assert found["state"] == "matched" and found["table_id"] == finals[ticket_id]["matched"]["table_id"]
        assert found["seat"] == finals[ticket_id]["matched"]["seat"] and found["cpu_seats"] == []
        assert await redis.get(keys.mm_player(player.user_id)) is None
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
    # Nim (a test game): a flexible table with no CPU seats, so a lone ticket
    # waits. (Dudo, then Yatzy, which the test used, now seat a lone casual
    # ticket with CPUs.) Each test here has a queue of its own: each heap size
    # is a queue.
    options = {"heap": 11}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(a, "caio")
    made = await queue(ana, "nim", options)
    assert (made["state"], made["position"], made["queue_length"]) == ("waiting", 1, 1)
    assert (made["game"], made["mode"], options_of(made)) == ("nim", "standard", {**options, "max_take": 0})
    assert made["options"]["@type"] == "type.googleapis.com/rodada.nim.v1.Options"
    assert made["members"] == [{"id": ana.user_id, "name": "ana", "role": "guest", "guest": True}]
    assert made["ranked"] is False and made["party"] is False and made["party_code"] == ""
    assert "estimated_wait_seconds" not in made  # no history in this queue yet
    path = f"/v1/matchmaking/tickets/{made['id']}"

    # One live ticket per player, even when both replicas are asked at once.
    other_ana = elsewhere(ana, a, b)
    await refused(queue(other_ana, "bozo", {"mode": "DUEL"}), 409, "already_queued")
    for _ in range(5):
        race = await asyncio.gather(
            *(queue(Player(h, bia.token, bia.user_id, bia.name), "dudo") for h in (a, b) * 4),
            return_exceptions=True,
        )
        won = [r for r in race if isinstance(r, dict)]
        assert len(won) == 1, race
        assert [r.code for r in race if isinstance(r, ApiRefused)] == ["already_queued"] * 7
        await cancel(bia, won[0]["id"])

    # Bad input: a clear 4xx, and nothing changes.
    await refused(queue(bia, "chess"), 404, "unknown_game")
    await refused(queue(bia, "yatzy", {"dice": 3}), 422, "invalid_options")
    malformed: dict[str, Any]
    for malformed, status, code in (
        ({"game": "yatzy", "options": [1]}, 422, "invalid_options"),  # not the game's Options
        ({"options": {}}, 404, "unknown_game"),  # no game is the game ""
        ({"game": "yatzy", "ranked": "often"}, 422, "invalid_request"),
        ({"game": "yatzy", "ranked": True, "turbo": True}, 422, "invalid_request"),
    ):
        await refused(bia.call("POST", "/v1/matchmaking/tickets", malformed), status, code)
    await refused(queue(bia, "bozo", {"mode": "SOLO"}), 422, "invalid_mode")
    await refused(queue(bia, "bozo"), 422, "invalid_mode")
    await refused(queue(bia, "yatzy", party=True), 422, "party_not_allowed")
    await refused(queue(bia, "domino", ranked=True), 403, "account_required")  # guests play casual
    await refused(bia.call("GET", path), 403, "not_your_ticket")
    await refused(bia.call("DELETE", path), 403, "not_your_ticket")
    await refused(bia.call("GET", "/v1/matchmaking/tickets/nope"), 404, "ticket_not_found")
    await refused(bia.call("GET", "/v1/matchmaking/tickets/" + "0" * 32), 404, "ticket_not_found")
    no_party = {"party_code": "nope"}
    await refused(bia.call("POST", "/v1/matchmaking/parties/join", no_party), 404, "party_not_found")
    assert await redis.get(keys.mm_player(bia.user_id)) is None
    assert (await ana.call("GET", path))["state"] == "waiting"

    # Cancelling closes the ticket for good; doing it again is harmless.
    await cancel(ana, made["id"])
    cancelled = await ana.call("GET", path)
    assert (cancelled["state"], cancelled["reason"]) == ("cancelled", "cancelled")
    assert "position" not in cancelled and cancelled["closed_at"] >= cancelled["created_at"]
    await cancel(other_ana, made["id"])
    assert await redis.get(keys.mm_player(ana.user_id)) is None

    # A cancelled ticket is never taken: Bia, queueing next, waits alone,
    # until Caio makes two.
    bia_ticket = await queue(bia, "nim", options)
    assert (bia_ticket["position"], bia_ticket["queue_length"]) == (1, 1)
    bia_seen: list[dict[str, Any]] = []
    bia_follows = asyncio.create_task(follow(bia, bia_ticket["id"], bia_seen))
    await asyncio.sleep(FILL_WAIT + 3 * CYCLE)
    assert bia_seen and all("queue" in m for m in bia_seen) and not bia_follows.done()
    caio_ticket = await queue(caio, "nim", options)
    caio_final = (await follow(caio, caio_ticket["id"]))[-1]
    bia_final = (await bia_follows)[-1]
    assert caio_final["matched"]["table_id"] == bia_final["matched"]["table_id"]
    table = await caio.table(caio_final["matched"]["table_id"])
    assert sorted(p["user_id"] for p in table["players"]) == sorted([bia.user_id, caio.user_id])
    # ... and a matched ticket can no longer be cancelled.
    await refused(bia.call("DELETE", f"/v1/matchmaking/tickets/{bia_ticket['id']}"), 409, "already_matched")
    # Ana, free again, may queue.
    again = await queue(ana, "nim", options)
    assert (again["state"], again["position"], again["queue_length"]) == ("waiting", 1, 1)
    await cancel(ana, again["id"])


# -- connections --------------------------------------------------------------------------


async def test_a_ticket_whose_connection_is_gone_is_dropped(replicas: Any, redis: Redis) -> None:
    a, b = replicas
    # Nim: no CPU seats, so a lone followed ticket waits as long as it is followed.
    options = {"heap": 12}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(b, "caio")
    made = await queue(ana, "nim", options)
    async with websockets.connect(ticket_url(elsewhere(ana, a, b), made["id"])) as ws:
        await ws.send(json.dumps({"token": ana.token}))
        first = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert first == {
            "ticket_id": made["id"],
            "queue": {"state": "waiting", "position": 1, "queue_length": 1, "party_code": ""},
        }
        await asyncio.sleep(GRACE + HEARTBEAT)  # followed: outlives its grace and many heartbeats
        assert (await ticket(ana, made["id"]))["state"] == "waiting"

    async def dropped(player: Player, ticket_id: str) -> bool:
        found = await ticket(player, ticket_id)
        return bool((found["state"], found["reason"]) == ("dropped", "connection_lost"))

    # Its only follower left: dropped at once (was: after the heartbeat ran out).
    # (Well within HEARTBEAT, which would have dropped it the old way.)
    await until(lambda: dropped(ana, made["id"]), timeout=CYCLE + 0.5, every=0.02)

    async def unlocked() -> bool:  # the player's lock goes right after the drop, a step later
        return await redis.get(keys.mm_player(ana.user_id)) is None

    await until(unlocked, timeout=5)
    # A ticket nobody ever follows is dropped after the grace period.
    never = await queue(bia, "nim", options)
    await asyncio.sleep(GRACE - 0.5)
    assert (await ticket(bia, never["id"]))["state"] == "waiting"
    await until(lambda: dropped(bia, never["id"]), timeout=0.5 + 10 * CYCLE)
    # A following connection after the drop hears it, and Caio queues alone.
    assert (await follow(bia, never["id"]))[-1] == {"closed": CONNECTION_LOST}
    caio_ticket = await queue(caio, "nim", options)
    assert (caio_ticket["position"], caio_ticket["queue_length"]) == (1, 1)
    await cancel(caio, caio_ticket["id"])


@pytest.mark.parametrize("wait_for_first_update", [False, True], ids=["at_once", "after_first_update"])
async def test_a_ticket_whose_socket_closes_right_away_is_never_seated(
    replicas: Any, redis: Redis, wait_for_first_update: bool
) -> None:
    """The follower says hello and goes (at once, or after the first
    update): the ticket is dropped within one matcher cycle, well before its
    grace or a heartbeat would run out, and never seated with the player who
    queues next. (Before tickets were dropped when their follower left, such
    a ticket stayed in the queue for the heartbeat and was seated.)"""
    a, b = replicas
    # Nim: no CPU seats, so Bia's lone ticket waits (a Bozó duel would be
    # seated with a CPU once it has waited long enough).
    duel = {"heap": 13}
    ana, bia = await guest(a, "ana"), await guest(b, "bia")
    made = await queue(ana, "nim", duel)
    ws = await websockets.connect(ticket_url(elsewhere(ana, a, b), made["id"]))
    await ws.send(json.dumps({"token": ana.token}))
    if wait_for_first_update:
        assert "queue" in json.loads(await asyncio.wait_for(ws.recv(), 5))
    await ws.close()
    closed = time.monotonic()

    async def dropped() -> bool:
        found = await ticket(ana, made["id"])
        return bool((found["state"], found["reason"]) == ("dropped", "connection_lost"))

    await until(dropped, timeout=CYCLE + 0.3, every=0.02)
    assert time.monotonic() - closed < CYCLE + 0.3

    async def released() -> bool:
        return await redis.get(keys.mm_player(ana.user_id)) is None

    # The dropper frees the player's lock one round trip after the drop (a
    # queue call in between takes a closed ticket's lock over anyway).
    await until(released, timeout=1, every=0.02)
    # Bia queues next, and waits alone: Ana's ticket is not there to pair with.
    bia_ticket = await queue(bia, "nim", duel)
    assert (bia_ticket["position"], bia_ticket["queue_length"]) == (1, 1)
    bia_seen: list[dict[str, Any]] = []
    bia_follows = asyncio.create_task(follow(bia, bia_ticket["id"], bia_seen))
    await asyncio.sleep(GRACE + HEARTBEAT + 3 * CYCLE)  # past everything the old code waited for
    assert not bia_follows.done() and all(m == {"queue": m["queue"]} for m in bia_seen)
    assert {m["queue"]["queue_length"] for m in bia_seen} == {1}
    found = await ticket(ana, made["id"])
    assert (found["state"], found["table_id"]) == ("dropped", "") and "seat" not in found
    await cancel(bia, bia_ticket["id"])
    assert (await bia_follows)[-1] == {"closed": {"state": "cancelled", "reason": "cancelled"}}


async def test_a_ticket_taken_while_nobody_follows_it_tells_its_player_later(
    replicas: Any, redis: Redis
) -> None:
    """The take checks heartbeats, not sockets: a table may take a ticket
    whose follower has not come yet (within the grace period) or whose socket
    dropped after the take. The player still learns the table: the ticket
    keeps it and the seat, for a ``GET`` and for a follower that comes later;
    a follower that leaves after the take changes nothing."""
    a, b = replicas
    duel = {"mode": "DUEL"}
    ana, bia = await guest(a, "ana"), await guest(b, "bia")
    made = await asyncio.gather(queue(ana, "bozo", duel), queue(bia, "bozo", duel))
    pairs = list(zip((ana, bia), (t["id"] for t in made), strict=True))

    async def both_matched() -> bool:
        return all([(await ticket(p, t))["state"] == "matched" for p, t in pairs])

    await until(both_matched)  # nobody followed: seated within the grace period
    found = [await ticket(p, t) for p, t in pairs]
    (table_id,) = {f["table_id"] for f in found}
    seats = {p.user_id: f["seat"] for (p, _), f in zip(pairs, found, strict=True)}
    assert sorted(seats.values()) == [0, 1] and all(f["cpu_seats"] == [] for f in found)
    await check_table(ana, table_id, seats)
    for player, _ in pairs:
        assert await redis.get(keys.mm_player(player.user_id)) is None
    # Bia follows late, on the other replica: the match at once, then the end.
    bia_hears = await follow(elsewhere(bia, a, b), pairs[1][1])
    assert bia_hears == [{"matched": {"table_id": table_id, "seat": seats[bia.user_id], "cpu_seats": []}}]
    # Ana's socket says hello and drops: her seat stays hers, and she can still learn it.
    async with websockets.connect(ticket_url(ana, pairs[0][1])) as ws:
        await ws.send(json.dumps({"token": ana.token}))
    await asyncio.sleep(3 * CYCLE)
    again = await ticket(ana, pairs[0][1])
    assert (again["state"], again["table_id"], again["seat"]) == ("matched", table_id, seats[ana.user_id])
    ana_hears = await follow(ana, pairs[0][1])
    assert ana_hears == [{"matched": {"table_id": table_id, "seat": seats[ana.user_id], "cpu_seats": []}}]
    await check_table(ana, table_id, seats)


# -- parties ------------------------------------------------------------------------------


async def test_a_party_is_seated_as_partners(replicas: Any) -> None:
    a, b = replicas
    leader, friend, s1, s2 = [await guest(h, n) for h, n in ((a, "lia"), (b, "leo"), (a, "sol"), (b, "sam"))]
    duplas = {"mode": "DUPLAS"}
    party = await queue(leader, "bozo", duplas, party=True)
    assert party["state"] == "party_open" and party["party_code"] and "position" not in party
    assert "enqueued_at" not in party  # not in the queue until the friend joins
    leader_seen: list[dict[str, Any]] = []
    leader_follows = asyncio.create_task(follow(leader, party["id"], leader_seen))
    join = {"party_code": party["party_code"]}
    await refused(leader.call("POST", "/v1/matchmaking/parties/join", join), 409, "own_party")
    joined = await friend.call("POST", "/v1/matchmaking/parties/join", join)
    assert joined["id"] == party["id"] and joined["state"] == "waiting" and joined["party_code"] == ""
    assert [m["id"] for m in joined["members"]] == [leader.user_id, friend.user_id]
    await refused(s1.call("POST", "/v1/matchmaking/parties/join", join), 404, "party_not_found")
    friend_follows = asyncio.create_task(follow(friend, party["id"]))
    solos = [await queue(s, "bozo", duplas) for s in (s1, s2)]
    solo_finals = [(await follow(s, t["id"]))[-1] for s, t in zip((s1, s2), solos, strict=True)]
    leader_final, friend_final = (await leader_follows)[-1], (await friend_follows)[-1]
    # The leader's follower saw the party wait for the friend, with its code.
    assert leader_seen[0]["queue"]["state"] == "party_open"
    assert leader_seen[0]["queue"]["party_code"] == party["party_code"]
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
    table = await check_table(players[0], finals[0][-1]["matched"]["table_id"], seats)
    assert not any(p["cpu"] for p in table["players"])
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
            await redis.hset(
                keys.rating("bozo", "duel", player.user_id),
                mapping={"rating": rating, "deviation": 80, "volatility": 0.06, "games": 30},
            )
        pairs[name] = pair
    tickets: dict[str, list[dict[str, Any]]] = {}
    followers = {}
    for name, pair in pairs.items():
        tickets[name] = [await queue(p, "bozo", duel, ranked=True) for p in pair]
        assert all(t["ranked"] is True for t in tickets[name])
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
    lo, hi = [await ticket(p, t["id"]) for p, t in zip(pairs["wide"], tickets["wide"], strict=True)]
    cycles_needed = (300 - WINDOW_START) / WINDOW_STEP
    assert lo["closed_at"] - max(lo["enqueued_at"], hi["enqueued_at"]) >= cycles_needed * CYCLE
    # 450 apart: beyond the cap, still waiting well after every window is at it.
    await asyncio.sleep((WINDOW_CAP - WINDOW_START) / WINDOW_STEP * CYCLE + 5 * CYCLE)
    assert not any(f.done() for f in followers["never"])
    for player, made in zip(pairs["never"], tickets["never"], strict=True):
        assert (await ticket(player, made["id"]))["state"] == "waiting"
        await cancel(player, made["id"])
    finals = [(await f)[-1] for f in followers["never"]]
    assert finals == [{"closed": {"state": "cancelled", "reason": "cancelled"}}] * 2


# -- the feed, the largest table, CPUs --------------------------------------------------


async def test_the_feed_shows_position_then_the_match(replicas: Any, mm_stack: Stack) -> None:
    a, b = replicas
    # A queue nobody has been matched in yet: Dudo with two dice and palifico.
    rules: dict[str, Any] = {"dice_per_player": 2, "palifico": True}
    ana, bia, caio = await guest(a, "ana"), await guest(b, "bia"), await guest(a, "caio")
    seen: dict[str, list[dict[str, Any]]] = {"ana": [], "bia": [], "caio": []}
    ana_ticket = await queue(ana, "dudo", rules)
    ana_follows = asyncio.create_task(follow(ana, ana_ticket["id"], seen["ana"]))

    async def ana_heard() -> bool:
        return bool(seen["ana"])

    await until(ana_heard)
    bia_ticket = await queue(bia, "dudo", rules)
    bia_follows = asyncio.create_task(follow(bia, bia_ticket["id"], seen["bia"]))
    caio_ticket = await queue(caio, "dudo", rules)
    caio_follows = asyncio.create_task(follow(caio, caio_ticket["id"], seen["caio"]))
    finals = [(await f)[-1] for f in (ana_follows, bia_follows, caio_follows)]

    # Ana saw the queue grow behind her, then the match; Caio was third.
    waiting = [m["queue"] for m in seen["ana"] if "queue" in m and m["queue"]["state"] == "waiting"]
    alone = {"state": "waiting", "position": 1, "queue_length": 1, "party_code": ""}  # no estimate yet
    assert waiting[0] == alone
    assert [w["queue_length"] for w in waiting][-1] == 3 and {w["position"] for w in waiting} == {1}
    assert seen["caio"][0]["queue"]["position"] == 3
    # One table of three after the short wait: the largest there was.
    (table_id,) = {f["matched"]["table_id"] for f in finals}
    seats = {p.user_id: f["matched"]["seat"] for p, f in zip((ana, bia, caio), finals, strict=True)}
    table = await check_table(bia, table_id, seats)
    assert options_of(table) == {**rules, "calza": False, "open_on_ones": False} and table["seats"] == 3
    # Later tickets of the queue get an estimate from these waits.
    dan = await guest(b, "dan")
    dan_ticket = await queue(dan, "dudo", rules)
    assert isinstance(dan_ticket["estimated_wait_seconds"], int | float)
    assert 0 <= dan_ticket["estimated_wait_seconds"] <= FILL_WAIT + 2

    # A bad hello, or someone else's ticket, is refused on the socket.
    url = ticket_url(Player(b, "", "", ""), ana_ticket["id"])
    for hello, code in (({"token": "forged"}, 4401), ({"token": dan.token}, 4403)):
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps(hello))
            assert "error" in json.loads(await ws.recv())
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == code
    await cancel(dan, dan_ticket["id"])


@pytest.mark.parametrize(
    ("game", "options"),
    [("bozu_mekuri", {"turn_timer_seconds": 30}), ("dudo", {"dice_per_player": 3})],
)
async def test_a_lonely_casual_ticket_is_seated_with_cpus(
    replicas: Any, mm_stack: Stack, game: str, options: dict[str, Any]
) -> None:
    """Every game with CPU seats (was: Bozu Mekuri only). The update and the
    ticket say the table was filled with CPUs, and it is counted."""
    a, b = replicas
    bot_filled = await metric(mm_stack, "rodada_matchmaking_cpu_tables_total", game=game, mode="standard")
    ana = await guest(a, "ana")
    made = await queue(ana, game, options)
    assert made["cpu_seats"] == []
    started = time.monotonic()
    final = (await follow(ana, made["id"]))[-1]
    assert time.monotonic() - started >= CPU_WAIT - 0.5
    assert final["matched"]["cpu_seats"] == [1, 2, 3] and final["matched"]["seat"] == 0
    found = await ticket(elsewhere(ana, a, b), made["id"])
    assert found["state"] == "matched" and found["cpu_seats"] == [1, 2, 3]
    assert await metric(mm_stack, "rodada_matchmaking_cpu_tables_total", game=game, mode="standard") == (
        bot_filled + 1
    )
    table = await check_table(ana, final["matched"]["table_id"], {ana.user_id: 0})
    assert [p["cpu"] for p in table["players"]] == [False, True, True, True]
    assert table["ranked"] is False and options_of(table).items() >= options.items()
    snapshot = await ana.view(table["id"])
    assert [s["cpu_controlled"] for s in snapshot["seats"]] == [False, True, True, True]


async def test_a_bot_filled_match_plays_to_the_end_and_is_not_rated(replicas: Any) -> None:
    """A registered player alone in a casual queue: seated with CPUs after
    the wait, the match is played to its end against them (the services
    play the CPU seats), and it moves no rating."""
    a, _ = replicas
    game = DUDO_GAME
    ana = await register(a, "ana")
    made = await queue(ana, game.name, {"dice_per_player": 1})
    final = (await follow(ana, made["id"]))[-1]
    table_id = final["matched"]["table_id"]
    assert final["matched"]["cpu_seats"] == [1, 2, 3]
    snap = await ana.view(table_id)
    assert [s["cpu_controlled"] for s in snap["seats"]] == [False, True, True, True]
    assert snap["status"] == ACTIVE and snap["to_act"] == [0]  # CPUs never keep the person waiting
    end, moves = await play_as_cpu(ana, game, table_id, 0, snap)
    assert end["status"] == FINISHED and moves > 0 and sorted(end["result"]["ranks"])[0] == 1
    found: list[dict[str, Any]] = []

    async def recorded() -> bool:
        found[:] = (await ana.call("GET", f"/v1/users/{ana.user_id}/matches"))["matches"]
        return bool(found)

    await until(recorded, timeout=30)
    (entry,) = found
    assert entry["match_id"] == table_id and entry["ranked"] is False
    assert [p["cpu"] for p in entry["players"]] == [False, True, True, True]
    assert (await ana.call("GET", f"/v1/users/{ana.user_id}/ratings"))["ratings"] == []


async def test_bot_fill_over_grpc_seats_a_lone_domino_player_with_a_cpu_partner(mm_stack: Stack) -> None:
    """The gRPC face says the same: FindMatch's last update is ``matched``
    with the CPU seats, and so is GetTicket. Alone in a partnership game, the
    player gets a CPU partner and two CPU opponents."""
    async with grpc.aio.insecure_channel(mm_stack.platform_grpc(1)) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        session = (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name="ana"))).session
        metadata = (("authorization", f"Bearer {session.access_token}"),)
        request = platform_pb2.FindMatchRequest(game="domino")
        updates = [r.update async for r in api.FindMatch(request, metadata=metadata, timeout=60)]
        assert updates[0].WhichOneof("update") == "queue"
        last = updates[-1]
        assert last.WhichOneof("update") == "matched"
        assert (last.matched.seat, list(last.matched.cpu_seats)) == (0, [1, 2, 3])
        got = await api.GetTicket(platform_pb2.GetTicketRequest(ticket_id=last.ticket_id), metadata=metadata)
        assert got.ticket.state == "matched" and list(got.ticket.cpu_seats) == [1, 2, 3]
        table = (
            await api.GetTable(
                platform_pb2.GetTableRequest(table_id=last.matched.table_id), metadata=metadata
            )
        ).table
        assert [p.cpu for p in table.players] == [False, True, True, True]
        assert not table.ranked


async def test_a_lonely_party_fills_its_team_with_cpus(replicas: Any) -> None:
    a, b = replicas
    ana, bia = await guest(a, "ana"), await guest(b, "bia")
    party = await queue(ana, "domino", party=True)
    await bia.call("POST", "/v1/matchmaking/parties/join", {"party_code": party["party_code"]})
    finals = await asyncio.gather(follow(ana, party["id"]), follow(bia, party["id"]))
    seats = {p.user_id: f[-1]["matched"]["seat"] for p, f in zip((ana, bia), finals, strict=True)}
    assert sorted(seats.values()) == [0, 2]  # partners: the first team
    assert [f[-1]["matched"]["cpu_seats"] for f in finals] == [[1, 3], [1, 3]]  # two CPU opponents
    table = await check_table(bia, finals[0][-1]["matched"]["table_id"], seats)
    assert [p["cpu"] for p in table["players"]] == [False, True, False, True]
    assert table["ranked"] is False


async def test_a_ranked_ticket_is_never_seated_with_cpus(replicas: Any) -> None:
    a, _ = replicas
    ana = await register(a, "ana")
    made = await queue(ana, "bozu_mekuri", {"turn_timer_seconds": 60}, ranked=True)
    seen: list[dict[str, Any]] = []
    follower = asyncio.create_task(follow(ana, made["id"], seen))
    await asyncio.sleep(CPU_WAIT + 5 * CYCLE)
    assert not follower.done() and all("queue" in m for m in seen)
    assert (await ticket(ana, made["id"]))["state"] == "waiting"
    await cancel(ana, made["id"])
    assert (await follower)[-1] == {"closed": {"state": "cancelled", "reason": "cancelled"}}


async def test_unset_options_and_their_defaults_are_one_queue(replicas: Any) -> None:
    """Yatzy's card left unset is the classic card: the ticket says so, and
    a ticket asking for CLASSIC waits behind it in the same queue."""
    a, b = replicas
    ana, bia = await guest(a, "ana"), await guest(b, "bia")
    unset = await queue(ana, "yatzy", {})
    assert options_of(unset) == {"card": "CLASSIC", "advice": False}
    classic = await queue(bia, "yatzy", {"card": "CLASSIC"})
    assert options_of(classic) == {"card": "CLASSIC", "advice": False}
    assert (await ticket(bia, classic["id"]))["queue_length"] == 2
    await cancel(ana, unset["id"])
    await cancel(bia, classic["id"])
