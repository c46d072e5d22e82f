"""Trophies and tournaments over the real stack: two gateway replicas, the
games' services, Redis; the players are the test's own bots over HTTP (and
the trophies and the tournament read over gRPC too)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

import grpc
import httpx
import pytest
import websockets
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis
from rodada.platform.v1 import competitions_pb2, competitions_pb2_grpc

from gateway.competitions import rules
from services.core import keys
from tests.integration.grpc_client import bearer, refusal
from tests.integration.http_client import ACTIVE, FINISHED, ApiRefused, Player, register
from tests.integration.social_client import SocialFeed
from tests.integration.test_dudo_flow import decide as dudo_decide
from tests.integration.time_travel import pass_round_deadline, rewind_idle
from tests.integration.waiting import until
from tools.stack import Stack

GAMES = ("bozo", "domino", "dudo")
Move = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="module")
def comp_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of its own with two gateway replicas (one is killed here)."""
    env = {"COMPETITIONS_CHECK_SECONDS": "0.5", "LEAGUE_DIVISIONS": "2", "LEAGUE_MOVES": "2"}
    with Stack(tmp_path_factory.mktemp("competitions"), games=GAMES, env=env) as stack:
        stack.gateway(0)
        stack.gateway(1)
        yield stack


@pytest.fixture
async def redis(comp_stack: Stack) -> AsyncIterator[Redis]:
    client = Redis.from_url(comp_stack.redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
async def http(comp_stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=comp_stack.gateway(0), timeout=30) as a,
        httpx.AsyncClient(base_url=comp_stack.gateway(1), timeout=30) as b,
    ):
        yield a, b


# -- bots ---------------------------------------------------------------------------


def bozo_move(snap: dict[str, Any]) -> dict[str, Any]:
    """Throw in the open once, then score the best box."""
    preview = snap["view"].get("preview") or []
    if preview:
        return {"score": {"box": max(preview, key=lambda p: p.get("points", 0))["box"]}}
    return {"throw": {"cup": False}}


def domino_move(snap: dict[str, Any]) -> dict[str, Any]:
    choice = snap["view"]["playable"][0]
    return {"play": {"tile": choice["tile"], **({"end": choice["ends"][0]} if choice.get("ends") else {})}}


async def first_view(player: Player, table_id: str) -> dict[str, Any]:
    """The player's view of a tournament's table once it has started: a
    round's tables start just after the round does, each on its own."""
    views: list[dict[str, Any]] = []

    async def started() -> bool:
        try:
            views.append(await player.view(table_id))
        except ApiRefused:
            return False
        return True

    await until(started, timeout=60, every=0.2)
    return views[-1]


async def play_table(players: dict[str, Player], table_id: str, move: Move) -> dict[str, Any]:
    """Play a started table to its end, each seat's move from its own view."""
    anyone = next(iter(players.values()))
    await first_view(anyone, table_id)
    while True:
        try:
            snap = await anyone.view(table_id)
            if snap["status"] == FINISHED:
                return snap
            assert snap["status"] == ACTIVE
            for seat in snap["to_act"]:
                player = players[snap["seats"][seat]["user_id"]]
                mine = await player.view(table_id)
                if mine["status"] != ACTIVE or seat not in mine["to_act"]:
                    continue
                await player.act(table_id, mine["version"], move(mine))
        except ApiRefused as refused:
            if refused.code not in ("stale_version", "not_your_turn", "game_over"):
                raise
        except httpx.TransportError:
            # The replica went away mid-call (the test killed it): the move
            # landed or not; read again, from the replica the player now uses.
            await asyncio.sleep(0.2)


async def play_tournament(
    admin: Player,
    tournament_id: str,
    players: dict[str, Player],
    move: Move,
    between_rounds: Callable[[int], Awaitable[None]] | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Every round's tables, each seat played by its own bot, until the end;
    the tournament as it ends, and each table's final snapshot."""
    finished: dict[str, dict[str, Any]] = {}
    while True:
        tournament = await admin.call("GET", f"/v1/tournaments/{tournament_id}")
        if tournament["status"] == "TOURNAMENT_STATUS_FINISHED":
            return tournament, finished
        current = tournament["current_round"]
        boards = tournament["rounds"][current - 1]["boards"]
        todo = [b for b in boards if b["table_id"] not in finished]
        snaps = await asyncio.gather(*(play_table(players, b["table_id"], move) for b in todo))
        finished.update((b["table_id"], s) for b, s in zip(todo, snaps, strict=True))

        async def advanced(current: int = current) -> bool:
            now = await admin.call("GET", f"/v1/tournaments/{tournament_id}")
            return now["current_round"] > current or now["status"] == "TOURNAMENT_STATUS_FINISHED"

        await until(advanced, timeout=180, every=0.3)
        if between_rounds is not None:
            await between_rounds(current)


# -- setup ----------------------------------------------------------------------------


async def make_admin(http: httpx.AsyncClient, stack: Stack) -> Player:
    """An account granted the admin role with the operator's tool, logged in again."""
    account = await register(http, "director")
    done = subprocess.run(
        [sys.executable, "-m", "tools.admin", "grant", account.name],
        env={**os.environ, "REDIS_URL": stack.redis_url},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reply = await http.post("/v1/auth/login", json={"username": account.name, "password": "correct horse"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["user"]["role"] == "admin"
    return Player(http, body["access_token"], account.user_id, account.name)


async def open_tournament(
    admin: Player, body: dict[str, Any], entrants: Iterable[Player] = ()
) -> tuple[dict[str, Any], str]:
    """Announce a tournament and register each of `entrants` on their own;
    returns what the announcement answered and the tournament's path."""
    created = await admin.call("POST", "/v1/tournaments", body)
    path = f"/v1/tournaments/{created['id']}"
    for player in entrants:
        await player.call("POST", f"{path}/register", {})
    return created, path


def entrant_players(tournament: dict[str, Any]) -> dict[str, list[str]]:
    return {e["id"]: [p["user_id"] for p in e["players"]] for e in tournament["entrants"]}


def check_swiss(tournament: dict[str, Any]) -> None:
    """Every round is the pairing the rules make from the rounds before it,
    with no rematch, and the standings are the rules' (score, Buchholz,
    seed), with Buchholz recomputed here from the boards."""
    seeds = {e["id"]: e["seed"] for e in tournament["entrants"]}
    ids = list(seeds)
    boards: list[list[str]] = []
    points: list[list[float]] = []
    byes: list[str] = []
    seen: set[frozenset[str]] = set()
    for played in tournament["rounds"]:
        expected, expected_byes = rules.swiss_round(rules.tally(ids, boards, points, byes), seeds, 2)
        actual = [b["entrant_ids"] for b in played["boards"]]
        assert actual == expected and played.get("byes", []) == expected_byes
        for board in played["boards"]:
            pair = frozenset(board["entrant_ids"])
            assert pair not in seen, "a rematch"
            seen.add(pair)
            assert board["finished"]
            assert sorted(board["points"]) in ([0.0, 1.0], [0.5, 0.5])
            boards.append(board["entrant_ids"])
            points.append(board["points"])
        byes += played.get("byes", [])
    scores = {e: 0.0 for e in ids}
    met: dict[str, list[str]] = {e: [] for e in ids}
    for seated, got in zip(boards, points, strict=True):
        for entrant, value in zip(seated, got, strict=True):
            scores[entrant] += value
            met[entrant] += [o for o in seated if o != entrant]
    for entrant in byes:
        scores[entrant] += 1.0  # a bye is a full point, and meets nobody
    buchholz = {e: sum(scores[o] for o in met[e]) for e in ids}
    standings = tournament["standings"]
    assert [s["place"] for s in standings] == list(range(1, len(ids) + 1))
    for standing in standings:
        assert standing.get("score", 0.0) == scores[standing["entrant_id"]]
        assert standing.get("buchholz", 0.0) == buchholz[standing["entrant_id"]]
    keyed = [
        (-scores[s["entrant_id"]], -buchholz[s["entrant_id"]], seeds[s["entrant_id"]]) for s in standings
    ]
    assert keyed == sorted(keyed)


async def follow_grpc(stack: Stack, token: str, tournament_id: str, seen: list[dict[str, Any]]) -> None:
    """Every tournament FollowTournament sends, as the HTTP API's JSON, into ``seen``."""
    from gateway.protojson import message_json

    async with grpc.aio.insecure_channel(stack.platform_grpc(0)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        request = competitions_pb2.FollowTournamentRequest(tournament_id=tournament_id)
        async for item in stub.FollowTournament(request, metadata=bearer(token)):
            seen.append(message_json(item.tournament))


async def follow_ws(stack: Stack, token: str, tournament_id: str, seen: list[dict[str, Any]]) -> None:
    """Every tournament the WebSocket feed sends, until its end, into ``seen``."""
    url = stack.gateway(1).replace("http", "ws", 1) + f"/v1/tournaments/{tournament_id}/events"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"token": token}))
        async for text in ws:
            message = json.loads(text)
            if "end" in message:
                assert message["end"]["reason"] == "tournament_over"
                break
            seen.append(message["tournament"])


def check_boards(tournament: dict[str, Any], snaps: dict[str, dict[str, Any]]) -> None:
    """Each board's places are its match's, its points the rules' from them."""
    members = entrant_players(tournament)
    for played in tournament["rounds"]:
        for board in played["boards"]:
            snap = snaps[board["table_id"]]
            seat_of = {s["user_id"]: i for i, s in enumerate(snap["seats"])}
            ranks = [snap["result"]["ranks"][seat_of[members[e][0]]] for e in board["entrant_ids"]]
            assert board["ranks"] == ranks
            assert board["points"] == rules.placement_points(ranks)


# -- trophies ---------------------------------------------------------------------------


async def test_a_result_delivered_twice_awards_trophies_once(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack, redis: Redis
) -> None:
    a, b = http
    ana, bia = await register(a, "ana"), await register(b, "bia")
    table = await ana.create_table("bozo", 2, {"mode": "DUEL"})
    await bia.join(table["invite_code"])
    await ana.start(table["id"])
    final = await play_table({ana.user_id: ana, bia.user_id: bia}, table["id"], bozo_move)
    ranks = final["result"]["ranks"]
    if ranks[0] == ranks[1]:
        pytest.skip("a drawn duel wins no trophy")  # about 1 in 100 games
    winner = (ana, bia)[ranks.index(1)]
    loser = (ana, bia)[ranks.index(2)]

    async def recorded() -> bool:
        return bool(await redis.exists(keys.rated(table["id"])))

    await until(recorded, timeout=30)
    first = await loser.call("GET", f"/v1/users/{winner.user_id}/trophies")
    assert "first_win" in [t["kind"]["id"] for t in first["trophies"]]
    assert [
        t["kind"]["id"]
        for t in (await ana.call("GET", f"/v1/users/{loser.user_id}/trophies")).get("trophies", [])
    ] == []

    # The same entry again, as if a replica had died before marking it
    # recorded: the whole recording runs again.
    stream = keys.results(keys.group(table["id"]))
    entry = next(fields for _, fields in await redis.xrange(stream) if fields["match"] == table["id"])
    await redis.delete(keys.rated(table["id"]))
    await redis.xadd(stream, entry)
    await until(recorded, timeout=60)
    again = await loser.call("GET", f"/v1/users/{winner.user_id}/trophies")
    assert again == first

    # And over gRPC, the same.
    async with grpc.aio.insecure_channel(comp_stack.platform_grpc(1)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        reply = await stub.ListTrophies(
            competitions_pb2.ListTrophiesRequest(user_id=winner.user_id), metadata=bearer(loser.token)
        )
        assert [t.kind.id for t in reply.trophies] == [t["kind"]["id"] for t in first["trophies"]]
        assert reply.trophies[0].awarded_at == first["trophies"][0]["awarded_at"]
        kinds = await stub.ListTrophyKinds(
            competitions_pb2.ListTrophyKindsRequest(), metadata=bearer(ana.token)
        )
        # The platform's trophies and those of the games this stack serves
        # (GAMES: Yatzy's come with Yatzy, declared in its folder).
        assert {
            "first_win",
            "bozo_general",
            "domino_batida",
            "tournament_podium",
        } == {k.id for k in kinds.kinds}
        assert {k.game for k in kinds.kinds} == {"", "bozo", "domino"}


# -- tournaments ---------------------------------------------------------------------------


async def test_only_admins_announce_and_registration_rules(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, _ = http
    ana = await register(a, "ana")
    body = {
        "name": "Copa",
        "game": "bozo",
        "options": {"mode": "DUEL"},
        "format": "TOURNAMENT_FORMAT_SWISS",
        "max_entrants": 2,
    }
    with pytest.raises(ApiRefused) as refused:
        await ana.call("POST", "/v1/tournaments", body)
    assert refused.value.status == 403 and refused.value.code == "admin_required"
    admin = await make_admin(a, comp_stack)
    with pytest.raises(ApiRefused) as refused:
        await admin.call(
            "POST",
            "/v1/tournaments",
            {**body, "game": "dudo", "options": {}, "format": "TOURNAMENT_FORMAT_SINGLE_ELIMINATION"},
        )
    assert refused.value.code == "invalid_tournament"
    tournament, path = await open_tournament(admin, body)
    assert tournament["status"] == "TOURNAMENT_STATUS_REGISTRATION" and tournament["table_size"] == 2
    await ana.call("POST", f"{path}/register", {})
    with pytest.raises(ApiRefused) as refused:
        await ana.call("POST", f"{path}/register", {})
    assert refused.value.code == "already_registered"
    bia, caio = await register(a, "bia"), await register(a, "caio")
    await bia.call("POST", f"{path}/register", {})
    with pytest.raises(ApiRefused) as refused:
        await caio.call("POST", f"{path}/register", {})
    assert refused.value.code == "tournament_full"
    await bia.call("POST", f"{path}/withdraw")
    await caio.call("POST", f"{path}/register", {})
    listed = await ana.call("GET", "/v1/tournaments?game=bozo&status=TOURNAMENT_STATUS_REGISTRATION")
    assert tournament["id"] in [t["id"] for t in listed["tournaments"]]


async def test_a_16_player_swiss_bozo_duel_tournament_survives_a_killed_replica(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, b = http
    admin = await make_admin(a, comp_stack)
    # Half the players on each replica; after the kill, everyone on replica 0.
    players = [await register(a if i % 2 else b, f"p{i}") for i in range(16)]
    created, path = await open_tournament(
        admin,
        {
            "name": "Copa Bozó",
            "game": "bozo",
            "options": {"mode": "DUEL"},
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 16,
        },
        players,
    )
    started = await admin.call("POST", f"{path}/start")
    assert started["status"] == "TOURNAMENT_STATUS_RUNNING" and started["rounds_planned"] == 4
    assert sorted(e["seed"] for e in started["entrants"]) == list(range(1, 17))
    by_user = {p.user_id: p for p in players}

    killed: list[asyncio.Task[None]] = []

    async def kill_when_a_match_ends(table_ids: list[str]) -> None:
        """SIGKILL replica 1 the moment a round-3 match ends: its result is in
        the stream, perhaps taken by replica 1 and never acknowledged."""

        async def one_ended() -> bool:
            views = [await admin.view(t) for t in table_ids]
            return any(v["status"] == FINISHED for v in views)

        await until(one_ended, timeout=300, every=0.05)
        comp_stack.stop("gateway-1", signal.SIGKILL)

    async def kill_replica_1(finished_round: int) -> None:
        if finished_round == 2:
            for player in [admin, *players]:
                player.http = a  # the bots' requests go to the survivor from now on
            now = await admin.call("GET", path)
            tables = [b["table_id"] for b in now["rounds"][2]["boards"]]
            killed.append(asyncio.create_task(kill_when_a_match_ends(tables)))

    final, snaps = await play_tournament(admin, created["id"], by_user, bozo_move, kill_replica_1)
    await killed[0]
    assert comp_stack.processes["gateway-1"].poll() is not None
    assert final["current_round"] == 4 and len(final["rounds"]) == 4
    assert all(len(r["boards"]) == 8 for r in final["rounds"])
    check_swiss(final)
    check_boards(final, snaps)
    # The podium won its trophies (over gRPC from the surviving replica).
    members = entrant_players(final)
    async with grpc.aio.insecure_channel(comp_stack.platform_grpc(0)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        got = await stub.GetTournament(
            competitions_pb2.GetTournamentRequest(tournament_id=created["id"]), metadata=bearer(admin.token)
        )
        assert got.tournament.status == competitions_pb2.TOURNAMENT_STATUS_FINISHED
        assert [s.entrant_id for s in got.tournament.standings] == [
            s["entrant_id"] for s in final["standings"]
        ]
        for standing in final["standings"]:
            (user_id,) = members[standing["entrant_id"]]

            async def podium_known(user: str = user_id) -> bool:
                reply = await stub.ListTrophies(
                    competitions_pb2.ListTrophiesRequest(user_id=user), metadata=bearer(admin.token)
                )
                return any(t.kind.id == "tournament_podium" for t in reply.trophies)

            if standing["place"] <= 3:
                await until(podium_known, timeout=30)
            else:
                assert not await podium_known()
    # Restore the replica for the next tests.
    comp_stack.gateway(1)


async def test_an_8_team_single_elimination_domino_tournament(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, b = http
    admin = await make_admin(a, comp_stack)
    created, path = await open_tournament(
        admin,
        {
            "name": "Taça Dominó",
            "game": "domino",
            "format": "TOURNAMENT_FORMAT_SINGLE_ELIMINATION",
            "max_entrants": 8,
        },
    )
    assert created["team_size"] == 2 and created["table_size"] == 4
    players = [await register(a if i % 2 else b, f"d{i}") for i in range(16)]
    for first, second in zip(players[::2], players[1::2], strict=True):
        mine = await first.call("POST", f"{path}/register", {})
        assert mine["team_code"] and not mine["entrant"].get("complete", False)
        joined = await second.call("POST", f"{path}/register", {"team_code": mine["team_code"]})
        assert joined["entrant"]["complete"] and joined["entrant"]["id"] == mine["entrant"]["id"]
    started = await admin.call("POST", f"{path}/start")
    assert started["rounds_planned"] == 3 and len(started["rounds"][0]["boards"]) == 4
    seeds = {e["id"]: e["seed"] for e in started["entrants"]}
    by_seed = sorted(seeds, key=seeds.__getitem__)
    assert [b["entrant_ids"] for b in started["rounds"][0]["boards"]] == rules.bracket(by_seed)[0]
    members = entrant_players(started)
    # Partners sit opposite each other (the game's teams: seats 0 & 2, 1 & 3).
    table = await admin.call("GET", f"/v1/tables/{started['rounds'][0]['boards'][0]['table_id']}")
    first_side = members[started["rounds"][0]["boards"][0]["entrant_ids"][0]]
    assert [table["players"][0]["user_id"], table["players"][2]["user_id"]] == first_side

    final, snaps = await play_tournament(admin, created["id"], {p.user_id: p for p in players}, domino_move)
    check_boards(final, snaps)
    assert [len(r["boards"]) for r in final["rounds"]] == [4, 2, 1]
    # Winners go through, in bracket order.
    for played, after in zip(final["rounds"], final["rounds"][1:], strict=False):
        through = [rules.winner(b["entrant_ids"], b["ranks"], seeds) for b in played["boards"]]
        assert [e for board in after["boards"] for e in board["entrant_ids"]] == through
    champion = rules.winner(
        final["rounds"][-1]["boards"][0]["entrant_ids"], final["rounds"][-1]["boards"][0]["ranks"], seeds
    )
    places = {s["entrant_id"]: s["place"] for s in final["standings"]}
    assert places[champion] == 1
    assert sorted(places.values()) == [1, 2, 3, 3, 5, 5, 5, 5]


async def test_a_dudo_swiss_tournament_of_multi_player_tables(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, b = http
    admin = await make_admin(a, comp_stack)
    players = [await register(a if i % 2 else b, f"u{i}") for i in range(10)]
    created, path = await open_tournament(
        admin,
        {
            "name": "Dudo aberto",
            "game": "dudo",
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 12,
            "rounds": 2,
            "table_size": 6,
        },
        players,
    )
    assert created["table_size"] == 6 and created["team_size"] == 1
    # Both replicas asked at once: one start, one first round.
    other_face = Player(b, admin.token, admin.user_id, admin.name)
    started, again = await asyncio.gather(
        admin.call("POST", f"{path}/start"), other_face.call("POST", f"{path}/start")
    )
    assert started["rounds"] == again["rounds"] or len(again["rounds"]) == len(started["rounds"]) == 1
    # Ten players at tables of at most six: two tables of five.
    assert [len(b["entrant_ids"]) for b in started["rounds"][0]["boards"]] == [5, 5]
    final, snaps = await play_tournament(
        admin, created["id"], {p.user_id: p for p in players}, lambda snap: dudo_decide(snap["view"])
    )
    check_boards(final, snaps)
    assert len(final["rounds"]) == 2
    seeds = {e["id"]: e["seed"] for e in final["entrants"]}
    first = final["rounds"][0]["boards"]
    for board in first:
        assert sorted(board["points"]) == [0.0, 1.0, 2.0, 3.0, 4.0]
    # Round two groups the field by score (then seed), strongest together.
    played = rules.tally(list(seeds), [b["entrant_ids"] for b in first], [b["points"] for b in first], [])
    expected, _ = rules.swiss_round(played, seeds, 6)
    assert [b["entrant_ids"] for b in final["rounds"][1]["boards"]] == expected
    totals = {e: 0.0 for e in seeds}
    for played_round in final["rounds"]:
        for board in played_round["boards"]:
            for entrant, value in zip(board["entrant_ids"], board["points"], strict=True):
                totals[entrant] += value
    standings = final["standings"]
    assert [s.get("score", 0.0) for s in standings] == sorted(totals.values(), reverse=True)
    # Each round was paired once across the two replicas (the metric counts
    # the pairings each replica wrote).
    paired = sum(
        count(comp_stack, replica, "rodada_tournament_rounds_total", game="dudo") for replica in (0, 1)
    )
    assert paired == 2


def count(stack: Stack, replica: int, name: str, **labels: str) -> float:
    text = httpx.get(stack.gateway_metrics_url(replica), timeout=10).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


async def test_a_tournament_starts_at_its_time_and_an_absent_player_forfeits(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack, redis: Redis
) -> None:
    a, b = http
    admin = await make_admin(a, comp_stack)
    # Accounts first (signing up takes a while): registering is quick.
    players = [await register(a if i % 2 else b, f"t{i}") for i in range(3)]
    _, path = await open_tournament(
        admin,
        {
            "name": "Relâmpago",
            "game": "bozo",
            "options": {"mode": "DUEL"},
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 3,
            "rounds": 1,
            "starts_at": time.time() + 5,
        },
        players,
    )

    async def running() -> bool:
        now = await admin.call("GET", path)
        return now["status"] == "TOURNAMENT_STATUS_RUNNING"

    await until(running, timeout=60, every=0.3)  # nobody started it: the start time did
    tournament = await admin.call("GET", path)
    (board,) = tournament["rounds"][0]["boards"]
    (bye,) = tournament["rounds"][0]["byes"]
    assert bye not in board["entrant_ids"]
    members = entrant_players(tournament)
    by_user = {p.user_id: p for p in players}
    seated = [by_user[members[e][0]] for e in board["entrant_ids"]]
    snap = await first_view(seated[0], board["table_id"])
    (idle,) = snap["to_act"]
    absent = by_user[snap["seats"][idle]["user_id"]]
    present = next(p for p in seated if p is not absent)
    # The absent player never moves: after the game's 120 s (made to pass),
    # the opponent claims the match, as at any table.
    await rewind_idle(redis, board["table_id"], 121)
    claimed = await present.act(board["table_id"], snap["version"], {"claim_inactivity": {}})
    assert claimed["status"] == FINISHED

    async def over() -> bool:
        now = await admin.call("GET", path)
        return now["status"] == "TOURNAMENT_STATUS_FINISHED"

    await until(over, timeout=60, every=0.3)
    final = await admin.call("GET", path)
    scores = {s["entrant_id"]: s.get("score", 0.0) for s in final["standings"]}
    entrant_of = {members[e][0]: e for e in members}
    assert scores[bye] == 1.0 and scores[entrant_of[present.user_id]] == 1.0
    assert scores[entrant_of[absent.user_id]] == 0.0
    assert final["standings"][-1]["entrant_id"] == entrant_of[absent.user_id]

    # The board's result delivered again changes nothing.
    table_id = board["table_id"]
    stream = keys.results(keys.group(table_id))
    entry = next(fields for _, fields in await redis.xrange(stream) if fields["match"] == table_id)
    await redis.delete(keys.rated(table_id))
    await redis.xadd(stream, entry)
    await until(lambda: redis.exists(keys.rated(table_id)), timeout=60)
    assert await admin.call("GET", path) == final


# -- the two faces ------------------------------------------------------------------------


async def test_the_faces_refuse_alike(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, _ = http
    ana = await register(a, "ana")
    async with grpc.aio.insecure_channel(comp_stack.platform_grpc(0)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        cases = [
            (
                lambda: ana.call("GET", "/v1/tournaments/nosuch"),
                lambda: stub.GetTournament(
                    competitions_pb2.GetTournamentRequest(tournament_id="nosuch"), metadata=bearer(ana.token)
                ),
                404,
                grpc.StatusCode.NOT_FOUND,
                "tournament_not_found",
            ),
            (
                lambda: ana.call(
                    "POST",
                    "/v1/tournaments",
                    {"name": "x", "game": "bozo", "format": "TOURNAMENT_FORMAT_SWISS", "max_entrants": 4},
                ),
                lambda: stub.CreateTournament(
                    competitions_pb2.CreateTournamentRequest(
                        name="x", game="bozo", format=competitions_pb2.TOURNAMENT_FORMAT_SWISS, max_entrants=4
                    ),
                    metadata=bearer(ana.token),
                ),
                403,
                grpc.StatusCode.PERMISSION_DENIED,
                "admin_required",
            ),
            (
                lambda: ana.call("GET", "/v1/tournaments"),
                lambda: stub.ListTournaments(competitions_pb2.ListTournamentsRequest()),
                None,
                grpc.StatusCode.UNAUTHENTICATED,
                "unauthenticated",
            ),
        ]
        for over_http, over_grpc, status, code, reason in cases:
            if status is not None:
                with pytest.raises(ApiRefused) as refused:
                    await over_http()
                assert (refused.value.status, refused.value.code) == (status, reason)
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await over_grpc()
            assert refusal(failed.value) == (code, reason)


async def test_openapi_types_the_competition_routes(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    schema = (await http[0].get("/openapi.json")).json()
    reply = schema["paths"]["/v1/tournaments/{tournament_id}"]["get"]["responses"]["200"]
    ref = reply["content"]["application/json"]["schema"]["$ref"]
    tournament = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert {"entrants", "rounds", "standings", "status", "format"} <= tournament["properties"].keys()
    trophies = schema["paths"]["/v1/users/{user_id}/trophies"]["get"]["responses"]["200"]
    assert trophies["content"]["application/json"]["schema"]["$ref"].endswith("ListTrophiesResponse")


# -- leagues ---------------------------------------------------------------------------------


async def test_a_season_closes_and_moves_players_between_divisions(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack, redis: Redis
) -> None:
    """Two divisions, two moves each way (the module's stack): ranked duels
    score placement points; closing a season (its end made to pass) sends the
    best of division 2 up and, once division 1 has players, its worst down."""
    from tests.integration.test_ratings_flow import ranked_table

    a, b = http
    players = [await register(a if i % 2 else b, f"l{i}") for i in range(4)]
    by_user = {p.user_id: p for p in players}
    league_path = "/v1/leagues/bozo/duel"

    async def ranked_duel(first: Player, second: Player) -> str:
        table_id, _ = await ranked_table(comp_stack, [first, second], "bozo", {"mode": "DUEL"})
        await play_table({first.user_id: first, second.user_id: second}, table_id, bozo_move)
        return table_id

    async def league() -> dict[str, Any]:
        return await players[0].call("GET", league_path)

    async def played(count: int, season: int) -> None:
        async def recorded() -> bool:
            now = await league()
            rows = [row for d in now["divisions"] for row in d.get("standings", [])]
            ours = [row for row in rows if row["user_id"] in by_user]
            return now["season"] == season and sum(row.get("played", 0) for row in ours) == count

        await until(recorded, timeout=60, every=0.3)

    async def close_season(number: int) -> dict[str, Any]:
        await redis.hset(keys.league_season("bozo", "duel"), "ends_at", time.time() - 1)

        async def closed() -> bool:
            return (await league())["season"] == number + 1

        await until(closed, timeout=60, every=0.3)
        return await league()

    def division_rows(league: dict[str, Any], number: int) -> list[dict[str, Any]]:
        (division,) = [d for d in league["divisions"] if d["number"] == number]
        return list(division.get("standings", []))

    # Season 1: everyone starts in the lowest division.
    first = await league()
    assert first["division_count"] == 2 and first["ends_at"] > time.time()
    start_season = first["season"]
    table_id = await ranked_duel(players[0], players[1])
    await ranked_duel(players[2], players[3])
    await played(4, start_season)
    before = await league()
    assert division_rows(before, 1) == []
    rows = division_rows(before, 2)
    assert sorted(r["user_id"] for r in rows) == sorted(by_user)
    assert sorted(r.get("points", 0.0) for r in rows) in (
        [0.0, 0.0, 1.0, 1.0],
        [0.0, 0.5, 0.5, 1.0],
        [0.5, 0.5, 0.5, 0.5],
    )
    points = [r.get("points", 0.0) for r in rows]
    assert points == sorted(points, reverse=True)

    # A result delivered again counts once.
    stream = keys.results(keys.group(table_id))
    entry = next(fields for _, fields in await redis.xrange(stream) if fields["match"] == table_id)
    await redis.delete(keys.rated(table_id))
    await redis.xadd(stream, entry)
    await until(lambda: redis.exists(keys.rated(table_id)), timeout=60)
    assert division_rows(await league(), 2) == rows

    after = await close_season(start_season)
    up = [r["user_id"] for r in rows[:2]]
    expected = [{"user_id": u, "from_division": 2, "to_division": 1} for u in sorted(up)]
    assert sorted(after["last_moves"], key=lambda m: m["user_id"]) == expected
    assert division_rows(after, 1) == division_rows(after, 2) == []  # a new season, empty

    # Season 2: the promoted pair meet in division 1, the others in division 2.
    top = [by_user[u] for u in up]
    rest = [p for p in players if p.user_id not in up]
    await ranked_duel(top[0], top[1])
    await ranked_duel(rest[0], rest[1])
    await played(4, start_season + 1)
    season2 = await league()
    division1, division2 = division_rows(season2, 1), division_rows(season2, 2)
    assert sorted(r["user_id"] for r in division1) == sorted(up)
    moved = rules.season_moves(
        {1: [r["user_id"] for r in division1], 2: [r["user_id"] for r in division2]}, 2, 2
    )
    assert moved == {division1[1]["user_id"]: 2, division2[0]["user_id"]: 1}
    final = await close_season(start_season + 1)
    assert {m["user_id"]: m["to_division"] for m in final["last_moves"]} == moved

    # Over gRPC, the same league.
    async with grpc.aio.insecure_channel(comp_stack.platform_grpc(0)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        got = await stub.GetLeague(
            competitions_pb2.GetLeagueRequest(game="bozo", mode="duel"), metadata=bearer(players[0].token)
        )
        assert got.league.season == final["season"]
        assert {m.user_id: m.to_division for m in got.league.last_moves} == moved
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.GetLeague(
                competitions_pb2.GetLeagueRequest(game="bozo", mode="solo"), metadata=bearer(players[0].token)
            )
        assert refusal(failed.value) == (grpc.StatusCode.NOT_FOUND, "unknown_league")


async def test_the_periodic_check_starts_a_round_whose_tables_could_not_start(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    """The game is down when the tournament starts: the round is paired (once)
    but its table cannot start. When the game is back, a replica's periodic
    check starts it, and the tournament plays on."""
    a, _ = http
    admin = await make_admin(a, comp_stack)
    players = [await register(a, f"c{i}") for i in range(2)]
    created, path = await open_tournament(
        admin,
        {
            "name": "Apagão",
            "game": "bozo",
            "options": {"mode": "DUEL"},
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 2,
        },
        players,
    )
    comp_stack.stop("bozo")
    try:
        with pytest.raises(ApiRefused) as refused:
            await admin.call("POST", f"{path}/start")
        assert refused.value.status == 503
        paired = await admin.call("GET", path)
        assert paired["status"] == "TOURNAMENT_STATUS_RUNNING" and len(paired["rounds"]) == 1
        (board,) = paired["rounds"][0]["boards"]
    finally:
        comp_stack.service("bozo")

    async def started() -> bool:
        try:
            return (await players[0].view(board["table_id"]))["status"] == ACTIVE
        except ApiRefused:
            return False

    await until(started, timeout=90, every=0.3)
    final, _ = await play_tournament(admin, created["id"], {p.user_id: p for p in players}, bozo_move)
    assert final["status"] == "TOURNAMENT_STATUS_FINISHED" and len(final["rounds"]) == 1
    assert [b["table_id"] for b in final["rounds"][0]["boards"]] == [board["table_id"]]


async def test_bozo_duplas_swiss_with_teams_and_a_bye(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    a, b = http
    admin = await make_admin(a, comp_stack)
    created, path = await open_tournament(
        admin,
        {
            "name": "Duplas",
            "game": "bozo",
            "options": {"mode": "DUPLAS"},
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 3,
        },
    )
    assert (created["mode"], created["team_size"], created["table_size"]) == ("duplas", 2, 4)
    players = [await register(a if i % 2 else b, f"j{i}") for i in range(7)]
    for first, second in zip(players[:6:2], players[1:6:2], strict=True):
        code = (await first.call("POST", f"{path}/register", {}))["team_code"]
        await second.call("POST", f"{path}/register", {"team_code": code})
    # A fourth team never finds its partner: it is full (three entrants), and
    # a code is needed to join a team.
    with pytest.raises(ApiRefused) as refused:
        await players[6].call("POST", f"{path}/register", {})
    assert refused.value.code == "tournament_full"
    with pytest.raises(ApiRefused) as refused:
        await players[6].call("POST", f"{path}/register", {"team_code": "nope"})
    assert refused.value.code == "team_code_not_found"
    # Followed over both faces from before the start to the end.
    over_grpc: list[dict[str, Any]] = []
    over_ws: list[dict[str, Any]] = []
    following = [
        asyncio.create_task(follow_grpc(comp_stack, players[0].token, created["id"], over_grpc)),
        asyncio.create_task(follow_ws(comp_stack, players[1].token, created["id"], over_ws)),
    ]

    async def both_following() -> bool:
        return bool(over_grpc and over_ws)

    await until(both_following, timeout=30)
    started = await admin.call("POST", f"{path}/start")
    assert started["rounds_planned"] == 2
    (board,) = started["rounds"][0]["boards"]
    (bye,) = started["rounds"][0]["byes"]
    members = entrant_players(started)
    table = await admin.call("GET", f"/v1/tables/{board['table_id']}")
    seated = [p["user_id"] for p in table["players"]]
    first, second = (members[e] for e in board["entrant_ids"])
    # JADE sits 0 & 2, AMBAR 1 & 3: partners opposite.
    assert [seated[0], seated[2]] == first and [seated[1], seated[3]] == second
    final, snaps = await play_tournament(admin, created["id"], {p.user_id: p for p in players[:6]}, bozo_move)
    check_boards(final, snaps)
    check_swiss(final)
    await asyncio.gather(*following)
    for seen in (over_grpc, over_ws):
        # Every state it went through, in order: registration, round 1, round
        # 2, the end, exactly as GET reads it at the end.
        statuses = [t["status"] for t in seen]
        assert statuses[0] == "TOURNAMENT_STATUS_REGISTRATION" and seen[-1] == final
        rounds = [len(t.get("rounds", [])) for t in seen]
        assert rounds == sorted(rounds) and {1, 2} <= set(rounds)
    # The round-one bye sits out no more: round two seats it.
    assert bye in final["rounds"][1]["boards"][0]["entrant_ids"]
    assert final["rounds"][1]["byes"] != [bye]


async def test_an_admin_removes_a_no_show_and_calls_a_tournament_off(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    """Before the start an admin takes an entrant off the list; running, the
    tournament can be called off, on either replica, and not twice."""
    a, b = http
    admin = await make_admin(a, comp_stack)
    players = [await register(a, n) for n in ("nia", "oto", "pia")]
    body = {
        "name": "Copa",
        "game": "dudo",
        "format": "TOURNAMENT_FORMAT_SWISS",
        "max_entrants": 4,
        "table_size": 2,
    }
    _, path = await open_tournament(admin, body, players)
    no_show = next(
        e
        for e in (await admin.call("GET", path))["entrants"]
        if e["players"][0]["user_id"] == players[2].user_id
    )
    with pytest.raises(ApiRefused) as refused:
        await players[0].call("POST", f"{path}/entrants/{no_show['id']}/remove", {})
    assert (refused.value.status, refused.value.code) == (403, "admin_required")
    left = await admin.call("POST", f"{path}/entrants/{no_show['id']}/remove", {})
    assert sorted(e["players"][0]["user_id"] for e in left["entrants"]) == sorted(
        p.user_id for p in players[:2]
    )
    started = await admin.call("POST", f"{path}/start", {})
    assert started["status"] == "TOURNAMENT_STATUS_RUNNING"
    with pytest.raises(ApiRefused) as closed:
        await admin.call("POST", f"{path}/entrants/{no_show['id']}/remove", {})
    assert (closed.value.status, closed.value.code) == (409, "registration_closed")
    off = await b.post(f"{path}/cancel", json={}, headers=admin.headers)
    assert off.status_code == 200 and off.json()["status"] == "TOURNAMENT_STATUS_CANCELLED"
    again = await a.post(f"{path}/cancel", json={}, headers=admin.headers)
    assert again.status_code == 409 and again.json()["error"]["code"] == "tournament_over"


async def test_a_round_deadline_forfeits_no_shows_and_the_tournament_finishes_by_itself(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack, redis: Redis
) -> None:
    """At the round's deadline whoever never acted at a table still playing
    forfeits: a lone no-show loses to the opponent who acted, a table where
    nobody acted is a double forfeit scoring nobody, and the tournament goes
    on and finishes with nobody's help."""
    a, b = http
    admin = await make_admin(a, comp_stack)
    body = {
        "name": "Prazo",
        "game": "bozo",
        "options": {"mode": "DUEL"},
        "format": "TOURNAMENT_FORMAT_SWISS",
        "max_entrants": 4,
        "rounds": 1,
    }
    with pytest.raises(ApiRefused) as short:
        await admin.call("POST", "/v1/tournaments", {**body, "round_seconds": 10})
    assert (short.value.status, short.value.code) == (422, "invalid_tournament")
    players = [await register(a if i % 2 else b, f"prazo{i}") for i in range(4)]
    created, path = await open_tournament(admin, body, players)
    assert created["round_seconds"] == 3600  # the default
    await admin.call("POST", f"{path}/start", {})
    tournament = await admin.call("GET", path)
    members = entrant_players(tournament)
    by_user = {p.user_id: p for p in players}
    acting_board, empty_board = tournament["rounds"][0]["boards"]
    seated = [by_user[members[e][0]] for e in acting_board["entrant_ids"]]
    snap = await first_view(seated[0], acting_board["table_id"])
    (to_act,) = snap["to_act"]
    present = by_user[snap["seats"][to_act]["user_id"]]
    absent = next(p for p in seated if p is not present)
    await present.act(acting_board["table_id"], snap["version"], {"throw": {"cup": False}})
    # Nothing moves until the deadline: a round waits for its tables.
    await asyncio.sleep(1.5)
    assert (await admin.call("GET", path))["status"] == "TOURNAMENT_STATUS_RUNNING"

    await pass_round_deadline(redis, created["id"])

    async def over() -> bool:
        now = await admin.call("GET", path)
        return now["status"] == "TOURNAMENT_STATUS_FINISHED"

    await until(over, timeout=60, every=0.3)
    final = await admin.call("GET", path)
    boards = {bd["table_id"]: bd for bd in final["rounds"][0]["boards"]}
    entrant_of = {members[e][0]: e for e in members}
    decided = boards[acting_board["table_id"]]
    assert decided["finished"] and decided["forfeited_entrant_ids"] == [entrant_of[absent.user_id]]
    points = dict(zip(decided["entrant_ids"], decided.get("points", []), strict=True))
    assert points == {entrant_of[present.user_id]: 1.0, entrant_of[absent.user_id]: 0.0}
    double = boards[empty_board["table_id"]]
    assert double["finished"]
    assert sorted(double["forfeited_entrant_ids"]) == sorted(empty_board["entrant_ids"])
    assert double.get("points", []) == [0.0, 0.0]  # a double forfeit scores nobody
    scores = {s["entrant_id"]: s.get("score", 0.0) for s in final["standings"]}
    assert scores[entrant_of[present.user_id]] == 1.0
    assert sum(scores.values()) == 1.0
    assert final["standings"][0]["entrant_id"] == entrant_of[present.user_id]


def tournament_notice(event: dict[str, Any]) -> bool:
    return "tournament" in event


def removal(event: dict[str, Any]) -> bool:
    return bool(event.get("tournament", {}).get("kind") == "TOURNAMENT_NOTICE_KIND_REMOVED")


async def test_a_partner_who_withdraws_leaves_the_other_registered_and_told(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    """Dominó teams: a withdrawing partner leaves the team registered,
    incomplete, and the other player is told on their social feed (on
    another replica) with the code a new partner registers with; an admin
    removing a team tells both players."""
    a = http[0]
    admin = await make_admin(a, comp_stack)
    first, second, third, fourth, fifth = [await register(a, f"parceiro{i}") for i in range(5)]
    created, path = await open_tournament(
        admin, {"name": "Duplas", "game": "domino", "format": "TOURNAMENT_FORMAT_SWISS", "max_entrants": 4}
    )
    code = (await first.call("POST", f"{path}/register", {}))["team_code"]
    await second.call("POST", f"{path}/register", {"team_code": code})
    async with SocialFeed(comp_stack.gateway(1), second.token) as told:
        await first.call("POST", f"{path}/withdraw")
        notice = (await told.until(tournament_notice))["tournament"]
    assert notice == {
        "kind": "TOURNAMENT_NOTICE_KIND_PARTNER_WITHDREW",
        "tournament_id": created["id"],
        "tournament_name": "Duplas",
        "user_id": first.user_id,
        "name": first.name,
        "team_code": code,
    }
    (team,) = (await admin.call("GET", path))["entrants"]
    assert [p["user_id"] for p in team["players"]] == [second.user_id]
    assert not team.get("complete", False)
    # A new partner takes the place with the code the notice gave.
    await third.call("POST", f"{path}/register", {"team_code": notice["team_code"]})
    (team,) = (await admin.call("GET", path))["entrants"]
    assert [p["user_id"] for p in team["players"]] == [second.user_id, third.user_id]
    assert team["complete"]

    # The last player of a team withdrawing takes the team off: nobody to tell.
    other = (await fourth.call("POST", f"{path}/register", {}))["team_code"]
    await fourth.call("POST", f"{path}/withdraw")
    assert [e["id"] for e in (await admin.call("GET", path))["entrants"]] == [team["id"]]

    # An admin removing a team tells both of its players.
    async with (
        SocialFeed(comp_stack.gateway(0), second.token) as second_feed,
        SocialFeed(comp_stack.gateway(1), third.token) as third_feed,
    ):
        await admin.call("POST", f"{path}/entrants/{team['id']}/remove", {})
        for feed in (second_feed, third_feed):
            removed = (await feed.until(removal))["tournament"]
            assert (removed["tournament_id"], removed["user_id"]) == (created["id"], admin.user_id)
            assert removed.get("team_code", "") == ""
    assert (await admin.call("GET", path))["entrants"] == []
    with pytest.raises(ApiRefused) as gone:
        await fifth.call("POST", f"{path}/register", {"team_code": other})
    assert (gone.value.status, gone.value.code) == (404, "team_code_not_found")


async def test_an_admin_edits_a_tournament_before_its_start_on_both_faces(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack
) -> None:
    """Only the fields given change; bad values change nothing; once it has
    started both faces refuse alike with `tournament_started`."""
    a, b = http
    admin = await make_admin(a, comp_stack)
    players = [await register(b, f"edita{i}") for i in range(3)]
    created, path = await open_tournament(
        admin,
        {
            "name": "Copa",
            "game": "bozo",
            "options": {"mode": "DUEL"},
            "format": "TOURNAMENT_FORMAT_SWISS",
            "max_entrants": 8,
        },
        players,
    )
    later = time.time() + 3600
    edited = await admin.call(
        "POST",
        f"{path}/edit",
        {"name": " Copa de Verão ", "starts_at": later, "rounds": 2, "round_seconds": 900},
    )
    assert (edited["name"], edited["starts_at"], edited["round_seconds"]) == ("Copa de Verão", later, 900)
    assert (edited["max_entrants"], edited["game"], edited["format"]) == (
        8,
        "bozo",
        "TOURNAMENT_FORMAT_SWISS",
    )
    assert len(edited["entrants"]) == 3
    for bad, reason in (
        ({"max_entrants": 2}, "invalid_tournament"),  # under the 3 registered
        ({"name": "  "}, "invalid_tournament"),
        ({"starts_at": time.time() - 60}, "invalid_tournament"),
        ({"round_seconds": 5}, "invalid_tournament"),
    ):
        with pytest.raises(ApiRefused) as refused:
            await admin.call("POST", f"{path}/edit", bad)
        assert (refused.value.status, refused.value.code) == (422, reason), bad
    with pytest.raises(ApiRefused) as not_admin:
        await players[0].call("POST", f"{path}/edit", {"name": "Minha"})
    assert (not_admin.value.status, not_admin.value.code) == (403, "admin_required")
    assert await admin.call("GET", path) == edited  # nothing refused changed anything
    # The limit lowered to what is registered closes the list.
    assert (await admin.call("POST", f"{path}/edit", {"max_entrants": 3}))["max_entrants"] == 3
    with pytest.raises(ApiRefused) as full:
        await (await register(b, "edita9")).call("POST", f"{path}/register", {})
    assert full.value.code == "tournament_full"

    started = await admin.call("POST", f"{path}/start", {})
    assert (started["status"], started["rounds_planned"]) == ("TOURNAMENT_STATUS_RUNNING", 2)
    with pytest.raises(ApiRefused) as late:
        await admin.call("POST", f"{path}/edit", {"name": "Tarde"})
    assert (late.value.status, late.value.code) == (409, "tournament_started")
    async with grpc.aio.insecure_channel(comp_stack.platform_grpc(1)) as channel:
        stub = competitions_pb2_grpc.CompetitionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.EditTournament(
                competitions_pb2.EditTournamentRequest(tournament_id=created["id"], name="Tarde"),
                metadata=bearer(admin.token),
            )
        assert refusal(failed.value) == (grpc.StatusCode.FAILED_PRECONDITION, "tournament_started")
    assert (await admin.call("GET", path))["name"] == "Copa de Verão"
    await admin.call("POST", f"{path}/cancel", {})


async def test_a_schedule_announces_each_tournament_once_across_replicas(
    http: tuple[httpx.AsyncClient, httpx.AsyncClient], comp_stack: Stack, redis: Redis
) -> None:
    """An admin's daily Swiss: both replicas check every half second, the
    tournament due is announced once, with the schedule's settings and its
    start time; the next one waits for its own time; a deleted schedule
    announces nothing more."""
    a, b = http
    admin = await make_admin(a, comp_stack)
    first_at = time.time() + 30
    body = {
        "name": "Diário",
        "game": "bozo",
        "options": {"mode": "DUEL"},
        "format": "TOURNAMENT_FORMAT_SWISS",
        "max_entrants": 16,
        "round_seconds": 600,
        "first_at": first_at,
        "every_seconds": 86400,
        "announce_seconds": 3600,
    }
    player = await register(b, "agenda")
    with pytest.raises(ApiRefused) as not_admin:
        await player.call("POST", "/v1/tournament-schedules", body)
    assert (not_admin.value.status, not_admin.value.code) == (403, "admin_required")
    for bad, reason in (
        ({**body, "every_seconds": 60}, "invalid_schedule"),
        ({**body, "first_at": time.time() - 1}, "invalid_schedule"),
        ({**body, "max_entrants": 1}, "invalid_tournament"),
    ):
        with pytest.raises(ApiRefused) as refused:
            await admin.call("POST", "/v1/tournament-schedules", bad)
        assert (refused.value.status, refused.value.code) == (422, reason)
    schedule = await admin.call("POST", "/v1/tournament-schedules", body)
    assert (schedule["every_seconds"], schedule["next_at"]) == (86400, first_at)
    listed = await admin.call("GET", "/v1/tournament-schedules")
    assert schedule["id"] in [s["id"] for s in listed["schedules"]]

    async def announced() -> list[dict[str, Any]]:
        found = (await b.get("/v1/tournaments", headers=player.headers)).json()["tournaments"]
        return [t for t in found if t["id"].startswith(schedule["id"])]

    await until(announced, timeout=30, every=0.3)
    await asyncio.sleep(2)  # four checks more on each replica: still one
    (tournament,) = await announced()
    assert tournament["id"] == f"{schedule['id']}n0"
    assert (tournament["name"], tournament["game"], tournament["round_seconds"]) == ("Diário", "bozo", 600)
    assert (tournament["status"], tournament["starts_at"]) == ("TOURNAMENT_STATUS_REGISTRATION", first_at)
    await player.call("POST", f"/v1/tournaments/{tournament['id']}/register", {})

    await admin.call("DELETE", f"/v1/tournament-schedules/{schedule['id']}")
    with pytest.raises(ApiRefused) as gone:
        await admin.call("DELETE", f"/v1/tournament-schedules/{schedule['id']}")
    assert (gone.value.status, gone.value.code) == (404, "schedule_not_found")
    # Announced already, it goes on; it is cancelled here to leave the stack quiet.
    await admin.call("POST", f"/v1/tournaments/{tournament['id']}/cancel", {})
