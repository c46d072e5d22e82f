"""Dominó end to end: real Redis, the real Dominó gRPC service and the real
gateway. Dominó tables are open (the seed: "não existe mesa privada"): listed,
no invites, friends choose seats, and the table starts when full. Each seat's
feed carries its own hand (``dealt``, audience = that seat) and its own
snapshots; a spectator's, neither."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from tests.integration.http_client import (
    ACTIVE,
    FINISHED,
    ApiRefused,
    Feed,
    Player,
    Views,
    assert_same,
    game_events,
    register,
)
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("domino")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


def tile(t: dict[str, int]) -> tuple[int, int]:
    a, b = t.get("a", 0), t.get("b", 0)
    return (min(a, b), max(a, b))


def check_hands(seat: int, items: list[dict[str, Any]]) -> None:
    """What one seat's feed carried: its own hand each round (only its own),
    which is what it played plus what the round's reveal shows."""
    dealt: dict[int, set[tuple[int, int]]] = {}
    played: dict[int, set[tuple[int, int]]] = defaultdict(set)
    ended = []
    round_no = 0
    for kind, body, event in game_events(items):
        if kind == "round_started":
            round_no = body["round"]
        elif kind == "dealt":
            assert body["seat"] == seat and event["audience"] == [seat]  # only my own hand
            dealt[round_no] = {tile(t) for t in body["tiles"]}
        elif kind == "played" and body["seat"] == seat:
            played[round_no].add(tile(body["tile"]))
        elif kind == "round_ended":
            ended.append(body["round"])
            assert body["round"] in dealt, f"seat {seat}: its hand of round {body['round']} never came"
            hand = next(h for h in body["hands"] if h["seat"] == seat)
            # What I was dealt is what I played plus what the reveal shows.
            assert dealt[body["round"]] == played[body["round"]] | {tile(t) for t in hand["tiles"]}
    # One round may be the whole match (a batida can score 50 on its own).
    assert ended and sorted(dealt) == sorted(ended)


async def test_open_table_and_a_full_match_to_50_with_hidden_hands(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    base = stack.gateway()
    ana, bia, caio, davi = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    eve = await register(http, "eve")
    table = await ana.create_table("domino", 4)
    table_id = table["id"]
    assert table["open"] and table["invite_code"] == "" and table["invites"] == []
    assert [(t["name"], t["seats"]) for t in table["teams"]] == [("TEAM_0", [0, 2]), ("TEAM_1", [1, 3])]
    with pytest.raises(ApiRefused) as refused:
        await ana.call("POST", f"/v1/tables/{table_id}/invites", {})
    assert (refused.value.status, refused.value.code) == (409, "open_table")
    listed = await caio.call("GET", "/v1/tables?game=domino")
    assert table_id in [t["id"] for t in listed["tables"]]

    async with AsyncExitStack() as opened:

        async def open_feed(player: Player) -> Feed:
            feed = await opened.enter_async_context(player.feed(base, table_id))
            await feed.until(lambda item: "table" in item or "snapshot" in item)
            return feed

        # Ana, Bia and Caio follow from the lobby; Davi's seat starts the
        # match, and he and the spectator catch up from the history.
        lobby = {ana.user_id: await open_feed(ana)}
        # Bia sits opposite Ana, as her partner; Caio takes any seat; Davi the last.
        sat = await bia.sit(table_id, 2)
        assert sat["table"]["players"][2]["name"] == bia.name and "match" not in sat  # not started yet
        lobby[bia.user_id] = await open_feed(bia)
        with pytest.raises(ApiRefused) as refused:
            await caio.sit(table_id, 2)
        assert (refused.value.status, refused.value.code) == (409, "seat_taken")
        await caio.sit(table_id)
        lobby[caio.user_id] = await open_feed(caio)
        started = await davi.sit(table_id)
        assert started["table"]["status"] == "playing"
        snap = started["match"]
        assert snap["status"] == ACTIVE and snap["mode"] == "standard"
        listed = await caio.call("GET", "/v1/tables?game=domino")
        assert table_id not in [t["id"] for t in listed["tables"]]
        by_user = {p.user_id: p for p in (ana, bia, caio, davi)}
        players = {seat: by_user[s["user_id"]] for seat, s in enumerate(snap["seats"])}
        assert players[0] is ana and players[2] is bia and players[snap["seat"]] is davi
        feeds = {seat: lobby[p.user_id] for seat, p in players.items() if p is not davi}
        feeds[snap["seat"]] = await open_feed(davi)
        feeds[-1] = await open_feed(eve)
        # Read every feed all along (one that stops reading is dropped).
        reading = {seat: asyncio.create_task(feed.to_end()) for seat, feed in feeds.items()}
        views = Views(table_id, {**players, -1: eve})
        now = await views.record()
        assert_same(snap, now[snap["seat"]])

        plays = 0
        while snap["status"] == ACTIVE:
            (seat,) = snap["to_act"]
            mine = now[seat]
            view = mine["view"]
            assert len(view["hand"]) == view["hand_counts"][seat] and now[-1]["view"]["hand"] == []
            assert all(now[s]["view"]["playable"] == [] for s in range(4) if s != seat)
            choice = view["playable"][0]
            action = {
                "play": {"tile": choice["tile"], **({"end": choice["ends"][0]} if choice["ends"] else {})}
            }
            snap = await players[seat].act(table_id, mine["version"], action)
            now = await views.record()
            assert_same(snap, now[seat], "the move's reply and GET /view")
            plays += 1
            assert plays < 2000
        assert snap["status"] == FINISHED
        # Team scores are the snapshot's, per seat (partners repeat their team's).
        scores = snap["scores"]
        assert scores[0] == scores[2] and scores[1] == scores[3]
        assert (
            max(scores) >= snap["view"]["target"] == 50 and snap["result"]["reason"] == "END_REASON_COMPLETED"
        )
        winners = 0 if scores[0] > scores[1] else 1
        assert snap["result"]["ranks"] == [1 if s % 2 == winners else 2 for s in range(4)]

        failures = []
        for seat in range(4):
            items = await asyncio.wait_for(reading[seat], 60)
            try:
                assert views.check(seat, items) >= 2
                check_hands(seat, items)
            except AssertionError as failure:
                came = "after the start" if players[seat] is davi else "in the lobby"
                failures.append(f"seat {seat}'s feed (opened {came}): {str(failure).splitlines()[0]}")
        assert not failures, failures
        watched = await asyncio.wait_for(reading[-1], 60)
        assert views.check(-1, watched) >= 2
        assert all(
            item["event"]["audience"] == [] and not item["event"]["host_only"]
            for item in watched
            if "event" in item
        )
        kinds = {kind for kind, _, _ in game_events(watched)}
        assert "dealt" not in kinds and {"round_started", "played", "round_ended"} <= kinds
