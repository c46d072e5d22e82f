"""Legal actions in every snapshot (Snapshot.legal), on both faces: every
game played to the end through the gateway by players who know nothing of
the game but what the snapshots list — each move picked at random from the
listed actions, and accepted; and at every step an action near a listed one
but not listed (a number one past a range, a list one longer than a
family's longest) is refused and changes nothing. The gRPC face carries the
same lists."""

from __future__ import annotations

import random
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.kit.legal import expand
from tests.integration.grpc_client import bearer
from tests.integration.http_client import FINISHED, ApiRefused, Player, register, seated_table
from tools.stack import Stack

# (game, seats, options): every game, a small table that ends soon.
TABLES = [
    ("bozo", 2, {"mode": "DUEL"}),
    ("bozu_mekuri", 2, {}),
    ("domino", 4, {}),
    ("dudo", 3, {"dice_per_player": 2}),
    ("yatzy", 2, {}),
    ("nim", 3, {"heap": 20, "max_take": 4}),
]
MAX_STEPS = 2_000


def _unlisted(legal: dict[str, Any]) -> list[dict[str, Any]]:
    """Actions next to the listed families but outside them."""
    near = []
    for item in legal.get("ranges", []):
        near += expand({"ranges": [{**item, "min": item["max"] + 1, "max": item["max"] + 1}]})
    for item in legal.get("subsets", []):
        size = item["max_size"] + 1
        if size <= len(item["values"]):
            near += expand({"subsets": [{**item, "min_size": size, "max_size": size}]})[:1]
    return near


@pytest.mark.parametrize(("game", "seats", "options"), TABLES, ids=[t[0] for t in TABLES])
async def test_a_game_played_from_its_listed_actions(
    stack: Stack, game: str, seats: int, options: dict[str, Any]
) -> None:
    rnd = random.Random(game)
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        players = [await register(http, "legal") for _ in range(seats)]
        if game == "domino":  # an open table: sit down, the last seat starts it
            table_id = (await players[0].create_table(game, seats, options))["id"]
            for player in players[1:]:
                sat = await player.sit(table_id)
            by_user = {p.user_id: p for p in players}
            players = [by_user[s["user_id"]] for s in sat["match"]["seats"]]
            snap = await players[0].view(table_id)
        else:
            table_id, snap = await seated_table(players, game, options)
        refused = 0
        for _ in range(MAX_STEPS):
            if snap["status"] == FINISHED:
                break
            seat = snap["to_act"][0]
            player: Player = players[seat]
            current = await player.view(table_id)
            assert current["seat"] == seat and current["legal"] == (
                snap["legal"] if snap["seat"] == seat else current["legal"]
            )
            listed = expand(current["legal"])
            assert listed, f"{game}: the seat to act has nothing listed"
            for action in _unlisted(current["legal"]):
                with pytest.raises(ApiRefused) as refusal:
                    await player.act(table_id, current["version"], action)
                assert refusal.value.status in (400, 409, 422), refusal.value
                refused += 1
            # A seat not to act (Dudo's assist switch aside) has nothing to play.
            other = players[(seat + 1) % seats]
            waiting = await other.view(table_id)
            if waiting["seat"] not in waiting["to_act"]:
                assert all("set_assist" in action for action in expand(waiting["legal"])), waiting["legal"]
            snap = await player.act(table_id, current["version"], rnd.choice(listed))
        else:
            pytest.fail(f"{game}: no end after {MAX_STEPS} moves")
        assert snap["legal"] == {"actions": [], "ranges": [], "subsets": []}
        if game in ("dudo", "yatzy", "bozo"):
            assert refused, "some unlisted action was tried"


async def test_the_grpc_face_lists_the_same_actions(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        players = [await register(http, "legal") for _ in range(2)]
        table_id, snap = await seated_table(players, "dudo", {"dice_per_player": 3})
        seat = snap["to_act"][0]
        over_http = (await players[seat].view(table_id))["legal"]
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        reply = await api.GetView(
            platform_pb2.GetViewRequest(table_id=table_id), metadata=bearer(players[seat].token)
        )
    legal: match_pb2.LegalActions = reply.match.legal
    over_grpc = json_format.MessageToDict(legal, preserving_proto_field_name=True)
    # proto3 JSON over HTTP prints fields at their default; the same lists.
    assert over_grpc["ranges"] == over_http["ranges"]
    assert len(over_grpc["actions"]) == len(over_http["actions"]) == 2  # assist on and off
    bids = [a for a in expand(over_grpc) if "bid" in a]
    # Six dice in play, no bid yet: 1 to 6 of each face but ones.
    assert sorted((b["bid"]["face"], b["bid"]["quantity"]) for b in bids) == [
        (face, q) for face in range(2, 7) for q in range(1, 7)
    ]
    assert {r["path"] for r in over_grpc["ranges"]} == {"bid.quantity"} and len(over_grpc["ranges"]) == 5
