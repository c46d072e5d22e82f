"""Dudo end to end: real Redis, the real Dudo gRPC service and the real gateway.

Hidden information: each seat's feed carries its own dice (``dice_rolled``,
audience = that seat) and its own snapshots, never another seat's; the
others' dice show only in the public reveal."""

from __future__ import annotations

import asyncio
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
    table_change,
)
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("dudo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


def decide(view: dict[str, Any]) -> dict[str, Any]:
    """A plain player: open with one 2, raise the face's count while it is
    plausible, else call Dudo."""
    bid = view.get("current_bid") or {}
    if not bid.get("quantity"):
        return {"bid": {"quantity": 1, "face": 2}}
    if bid["quantity"] >= max(1, view["dice_in_play"] // 3):
        return {"dudo": {}}
    return {"bid": {"quantity": bid["quantity"] + 1, "face": bid["face"]}}


async def play_to_the_end(
    players: dict[int, Player], table_id: str, views: Views, now: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    """Each seat decides on its own GET /view; every viewer's view is read
    after every move. The final snapshot."""
    snap = next(iter(now.values()))
    actions = 0
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        mine = now[seat]
        for other in mine["view"]["players"]:
            assert "dice" not in other  # counts only
        snap = await players[seat].act(table_id, mine["version"], decide(mine["view"]))
        now = await views.record()
        assert_same(snap, now[seat], "the move's reply and GET /view")
        actions += 1
        assert actions < 500
    return snap


def check_seat_feed(seat: int, items: list[dict[str, Any]], views: Views, result: dict[str, Any]) -> None:
    """What one seat's feed carried: its own dice each round it played, and
    nothing hidden of anyone else."""
    events = [item["event"] for item in items if "event" in item]
    ids = [e["id"] for e in events]
    assert ids == sorted(set(ids))  # ids grow and nothing is delivered twice
    assert events[-1]["final"] and events[-1]["result"] == result
    assert views.check(seat, items) >= 2
    for event in events:
        assert event["audience"] in ([], [seat]), event
        if event["host_only"]:
            assert seat == 0  # the host's invite reaches the host alone
    found = game_events(items)
    rolled = [(data, event) for kind, data, event in found if kind == "dice_rolled"]
    for data, event in rolled:
        assert data["seat"] == seat and event["audience"] == [seat]
    own_by_round = {data["round"]: data["dice"] for data, _ in rolled}
    played = {d["round"] for kind, d, _ in found if kind == "round_started" and d["dice_counts"][seat] > 0}
    missed = sorted(played - set(own_by_round))
    assert played and not missed, f"its own dice of round(s) {missed} never came"
    # Each seat's private dice are what the reveal later shows of its hand...
    for kind, reveal, _ in found:
        if kind == "revealed":
            hands = {h["seat"]: h["dice"] for h in reveal["hands"]}
            if hands.get(seat):  # a seat already out has no hand
                assert sorted(hands[seat]) == sorted(own_by_round[reveal["round"]])
    # ... and what its snapshots showed as its own.
    for (viewer, _), snap in views.seen.items():
        if viewer == seat and snap["status"] == ACTIVE and snap["view"]["my_dice"]:
            assert sorted(snap["view"]["my_dice"]) == sorted(own_by_round[snap["view"]["round"]])
    # Assisted mode is the seat's own business.
    assist = [(data, event) for kind, data, event in found if kind == "assist_changed"]
    assert assist == ([({"seat": 0, "on": True}, assist[0][1])] if seat == 0 else [])
    if assist:
        assert assist[0][1]["audience"] == [0]


async def test_full_four_player_game_and_no_seat_sees_anothers_dice(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    base = stack.gateway()
    ana, bia, caio, davi = players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    eve = await register(http, "eve")
    async with AsyncExitStack() as opened:

        async def open_feed(player: Player, table_id: str) -> Feed:
            return await opened.enter_async_context(player.feed(base, table_id))

        table = await ana.create_table("dudo", 4)
        table_id = table["id"]
        # Ana and Bia follow from the lobby; the spectator from the start;
        # Caio and Davi come in the middle of the first round and catch up
        # from the history.
        feeds = {0: await open_feed(ana, table_id)}
        await feeds[0].until(lambda item: "table" in item)
        await bia.join(table["invite_code"])
        feeds[1] = await open_feed(bia, table_id)
        await feeds[1].until(lambda item: "table" in item)
        for player in (caio, davi):
            await player.join(table["invite_code"])
        snap = await ana.start(table_id)
        assert [s["user_id"] for s in snap["seats"]] == [p.user_id for p in players]
        feeds[-1] = await open_feed(eve, table_id)
        views = Views(table_id, {**dict(enumerate(players)), -1: eve})
        now = await views.record()
        public = now[-1]["view"]
        assert now[-1]["seat"] == -1 and public["my_dice"] == []
        assert [p["dice_count"] for p in public["players"]] == [3] * 4  # the default, three dice each
        # Read every feed all along (a client that stops reading stops
        # answering the server's pings, and is dropped).
        reading = {seat: asyncio.create_task(feed.to_end()) for seat, feed in feeds.items()}

        # Assisted mode for Ana (off her turn too): the odds of the standing
        # bid and of any bid she asks about. Switching it is no play: it
        # does not restart the turn clock.
        before = now[0]
        snap = await ana.act(table_id, before["version"], {"set_assist": {"on": True}})
        assert snap["view"]["assist"] is True and snap["idle_since"] == before["idle_since"]
        now = await views.record()
        assert [now[s]["view"]["assist"] for s in range(4)] == [True, False, False, False]
        question = {"bid_odds": {"quantity": 2, "face": 5}}
        with pytest.raises(ApiRefused) as refused:
            await bia.ask(table_id, question)
        assert (refused.value.status, refused.value.code) == (409, "assist_off")
        answer = await ana.ask(table_id, question)
        assert answer["version"] == snap["version"]
        chance = answer["answer"]["bid_odds"]["probability"]
        own = sum(1 for d in snap["view"]["my_dice"] if d in (1, 5))
        assert chance == 1.0 if own >= 2 else 0 < chance < 1

        # The first bid of the match; then Caio and Davi open their feeds.
        (seat,) = snap["to_act"]
        snap = await players[seat].act(table_id, snap["version"], {"bid": {"quantity": 1, "face": 2}})
        now = await views.record()
        assert_same(snap, now[seat])
        assert snap["view"]["round"] == 1
        for seat, player in ((2, caio), (3, davi)):
            feeds[seat] = await open_feed(player, table_id)
            await feeds[seat].until(lambda item: "snapshot" in item)
            reading[seat] = asyncio.create_task(feeds[seat].to_end())

        final = await play_to_the_end(dict(enumerate(players)), table_id, views, now)
        assert final["status"] == FINISHED and final["to_act"] == []
        result = final["result"]
        assert sorted(result["ranks"]) == [1, 2, 3, 4] and result["reason"] == "END_REASON_COMPLETED"
        assert all(v["view"]["my_dice"] == [] for (seat, _), v in views.seen.items() if seat == -1)

        failures = []
        for seat in range(4):
            items = await asyncio.wait_for(reading[seat], 60)
            try:
                check_seat_feed(seat, items, views, result)
            except AssertionError as failure:
                came = "in the lobby" if seat < 2 else "during round 1"
                failures.append(f"seat {seat}'s feed (opened {came}): {str(failure).splitlines()[0]}")
        assert not failures, failures
        # The spectator: public events and the public snapshot only.
        watched = await asyncio.wait_for(reading[-1], 60)
        assert views.check(-1, watched) >= 2
        events = [item["event"] for item in watched if "event" in item]
        assert all(e["audience"] == [] and not e["host_only"] for e in events)
        assert "dice_rolled" not in {kind for kind, _, _ in game_events(watched)}
        kinds = [c["kind"] for item in watched if (c := table_change(item))]
        assert "TABLE_CHANGE_KIND_INVITE_CREATED" not in kinds and kinds[-1] == "TABLE_CHANGE_KIND_STARTED"
