"""Fairness through the real stack: one match of each game played over HTTP
(random moves, CPU seats where the game has them, a player leaving Yatzy),
and what the feeds delivered — each person's and a spectator's WebSocket
feed, a gRPC FollowTable as a mobile app receives it — verified by the
stand-alone verifier, which also refuses it with another seed."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from tests.integration.grpc_client import follow_table, pack
from tests.integration.http_client import FINISHED, Player, follow, register
from tests.integration.test_dudo_flow import decide as dudo_decide
from tools.stack import Stack
from tools.verify import Difference, verify_text

Decide = Callable[[dict[str, Any], random.Random], dict[str, Any]]
REPO = Path(__file__).resolve().parents[2]


def _some(rnd: random.Random, items: list[int], most: int) -> list[int]:
    return sorted(rnd.sample(items, rnd.randint(0, most)))


def yatzy(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    if view["throws_used"] == 0:
        return {"roll": {}}
    if view["throws_left"] and rnd.random() < 0.6:
        return {"roll": {"keep": _some(rnd, list(range(5)), 4)}}
    return {"score": {"box": rnd.choice(view["preview"])["box"]}}


def bozo(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    if view["cup_pending"]:
        return {"declare": {"side": rnd.choice(["TOP", "BOTTOM"])}}
    cup = rnd.random() < 0.3
    if view["throw_number"] == 0:
        return {"throw": {"cup": cup}}
    if view["throws_left"] and rnd.random() < 0.5:
        return {"throw": {"keep": _some(rnd, list(range(5)), 4), "cup": cup}}
    return {"score": {"box": rnd.choice(view["open_boxes"])}}


def dudo(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    return dudo_decide(view)


def domino(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    choice = rnd.choice(view["playable"])
    play: dict[str, Any] = {"tile": choice["tile"]}
    if choice["ends"]:
        play["end"] = rnd.choice(choice["ends"])
    return {"play": play}


def bozu_mekuri(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    return {"stop": {}} if view["can_stop"] and rnd.random() < 0.5 else {"flip": {}}


async def play_and_record(
    http: httpx.AsyncClient,
    base: str,
    game: str,
    seats: int,
    options: dict[str, Any],
    decide: Decide,
    cpu_seats: list[int] | None = None,
    leaves_after: int | None = None,
) -> tuple[dict[int, list[dict[str, Any]]], dict[str, Any]]:
    """Play one match at random over HTTP; every person's feed and a
    spectator's (viewer -1), recorded from before the start, and the final
    snapshot. With ``leaves_after``, the last seat leaves after that many
    moves."""
    rnd = random.Random(game)
    cpu = cpu_seats or []
    humans = [await register(http, game[:4]) for _ in range(seats - len(cpu))]
    eve = await register(http, "eve")
    table = await humans[0].create_table(game, seats, options, cpu_seats=cpu)
    for player in humans[1:]:
        await player.join(table["invite_code"])
    seat_of = {seat: humans[i] for i, seat in enumerate(s for s in range(seats) if s not in cpu)}
    viewers: dict[int, Player] = {**seat_of, -1: eve}
    feeds = {v: asyncio.create_task(follow(p, base, table["id"])) for v, p in viewers.items()}
    snap = await humans[0].start(table["id"])
    moves = 0
    while snap["status"] != FINISHED:
        if moves == leaves_after:
            leaver = max(seat_of)
            snap = (await seat_of.pop(leaver).leave(table["id"]))["match"]
            leaves_after = None
            continue
        (seat,) = snap["to_act"]
        mine = await seat_of[seat].view(table["id"])
        snap = await seat_of[seat].act(table["id"], mine["version"], decide(mine["view"], rnd))
        moves += 1
        assert moves < 2_000
    snap = await humans[0].view(table["id"])
    items = {viewer: await asyncio.wait_for(task, 60) for viewer, task in feeds.items()}
    return items, snap


def verified(items: dict[int, list[dict[str, Any]]], game: str) -> int:
    """Every feed verified; the generator blocks the match read (the same for all)."""
    blocks = set()
    for viewer, feed in items.items():
        report = verify_text(json.dumps(feed))
        assert (report.game, report.viewer) == (game, viewer)
        assert report.events == sum(1 for item in feed if "event" in item and "table" not in item["event"])
        blocks.add(report.blocks)
    assert len(blocks) == 1
    (count,) = blocks
    return count


def refused_with_another_seed(feed: list[dict[str, Any]]) -> None:
    with pytest.raises(Difference) as raised:
        verify_text(json.dumps(feed), seed="ab" * 32)
    assert raised.value.field == "fairness.seed_sha256"


GAMES: list[tuple[str, int, dict[str, Any], Decide, list[int], int | None]] = [
    ("yatzy", 3, {"card": "SCANDINAVIAN"}, yatzy, [], 25),
    ("bozo", 2, {}, bozo, [], None),
    ("dudo", 3, {"dice_per_player": 3, "calza": True, "palifico": True}, dudo, [2], None),
    ("domino", 4, {}, domino, [1, 2, 3], None),
    ("bozu_mekuri", 3, {"lady": "TAKE_PILE_AND_FLIP_AGAIN"}, bozu_mekuri, [1], None),
]


@pytest.mark.parametrize(("game", "seats", "options", "decide", "cpu_seats", "leaves_after"), GAMES)
async def test_the_feeds_of_a_match_played_over_http_are_verified(
    stack: Stack,
    game: str,
    seats: int,
    options: dict[str, Any],
    decide: Decide,
    cpu_seats: list[int],
    leaves_after: int | None,
) -> None:
    base = stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        items, final = await play_and_record(
            http, base, game, seats, options, decide, cpu_seats, leaves_after
        )
    assert final["fairness"]["seed"] and final["status"] == FINISHED
    assert verified(items, game) > 0
    refused_with_another_seed(items[-1])
    if leaves_after is not None:
        assert final["result"]["forfeited"] == [seats - 1]


async def test_the_command_verifies_a_spectators_feed_saved_to_a_file(stack: Stack, tmp_path: Path) -> None:
    base = stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        items, final = await play_and_record(http, base, "bozo", 1, {}, bozo)
    path = tmp_path / "bozo.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in items[-1]), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tools.verify", str(path), "--seed", final["fairness"]["seed"]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"verified: bozo match {final['match_id']} as a spectator")


async def test_a_grpc_follow_table_feed_is_verified(stack: Stack) -> None:
    """A mobile app's record: FollowTable responses as proto3 JSON with
    defaults left out (json_format's default), a solo Yatzy."""
    rnd = random.Random(7)
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        session = (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name="app"))).session
        auth = (("authorization", f"Bearer {session.access_token}"),)
        options = pack(yatzy_pb2.Options(card=yatzy_pb2.CLASSIC))
        table = (
            await api.CreateTable(
                platform_pb2.CreateTableRequest(game="yatzy", seats=1, options=options), metadata=auth
            )
        ).table
        snap = (await api.StartTable(platform_pb2.StartTableRequest(table_id=table.id), metadata=auth)).match
        while snap.status != match_pb2.MATCH_STATUS_FINISHED:
            view = json_format.MessageToDict(snap, preserving_proto_field_name=True)["view"]
            view.setdefault("throws_used", 0)
            view.setdefault("throws_left", 0)
            action = yatzy_pb2.Action()
            json_format.ParseDict(yatzy(view, rnd), action)
            request = platform_pb2.ActRequest(
                table_id=table.id, expected_version=snap.version, action=pack(action)
            )
            snap = (await api.Act(request, metadata=auth)).match
        feed = [
            json_format.MessageToDict(item, preserving_proto_field_name=True)
            async for item in follow_table(api, session.access_token, table.id)
        ]
    report = verify_text(json.dumps(feed))
    assert (report.game, report.viewer) == ("yatzy", 0) and report.draws >= 13 * 5
