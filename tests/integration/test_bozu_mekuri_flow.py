"""Bozu Mekuri end to end: real Redis, the real gRPC service and the real
gateway. The kit plays CPU seats (given at the table's creation) and the
seats of players who left, until they take them back."""

from __future__ import annotations

import asyncio
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
    follow,
    game_events,
    notices,
    register,
)
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("bozu_mekuri")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def play_my_turns(
    player: Player, views: Views, seat: int, snap: dict[str, Any], feed: Feed | None = None
) -> dict[str, Any]:
    """Flip while it is my turn, deciding on my own snapshot (the move's
    reply, or with ``feed`` the one my feed pushed: the same); take extra
    flips half the time. Every viewer's GET /view is read after every move."""
    while snap["status"] == ACTIVE and snap["to_act"] == [seat]:
        view = snap["view"]
        action = (
            {"stop": {}}
            if view["extra_flip_offered"] and view["can_stop"] and view["deck_count"] % 2
            else {"flip": {}}
        )
        snap = await player.act(views.table_id, snap["version"], action)
        assert_same(snap, (await views.record())[seat], "the move's reply and GET /view")
        if feed is not None:
            pushed = await feed.snapshot_at(snap["version"])
            assert_same(pushed, snap, "the pushed snapshot and the move's reply")
            snap = pushed
    return snap


def check_cards(view: dict[str, Any]) -> list[int]:
    """Each seat's card count, after checking the cards carry their poet."""
    for seat_view in view["seats"]:
        assert len(seat_view["cards"]) == seat_view["card_count"]
        for card in seat_view["cards"]:
            assert card["name_romaji"] and card["name_ja"] and 1 <= card["number"] <= 100
    return [s["card_count"] for s in view["seats"]]


async def test_one_person_against_three_cpus(http: httpx.AsyncClient, stack: Stack) -> None:
    ana = await register(http, "ana")
    table = await ana.create_table("bozu_mekuri", 4, cpu_seats=[1, 2, 3])
    assert [p["cpu"] for p in table["players"]] == [False, True, True, True]
    assert [p["user_id"] for p in table["players"]] == [ana.user_id, "", "", ""]
    snap = await ana.start(table["id"])
    assert [s["cpu"] for s in snap["seats"]] == [False, True, True, True]
    assert [s["cpu_controlled"] for s in snap["seats"]] == [False, True, True, True]
    views = Views(table["id"], {0: ana})
    await views.record()
    async with ana.feed(stack.gateway(), table["id"]) as feed:
        # Ana plays from what her feed pushes: no GET /view needed.
        snap = await feed.snapshot_at(snap["version"])
        while snap["status"] == ACTIVE:
            assert snap["to_act"] == [0]  # the CPUs play their own turns
            snap = await play_my_turns(ana, views, 0, snap, feed)
        items = await feed.to_end(30)
    assert snap["status"] == FINISHED and snap["result"]["reason"] == "END_REASON_COMPLETED"
    view = snap["view"]
    counts = check_cards(view)
    assert snap["result"]["scores"] == counts and snap["scores"] == counts
    assert sum(counts) + view["pile_count"] <= 100
    assert sorted(snap["result"]["ranks"])[0] == 1 and snap["result"]["forfeited"] == []
    assert views.check(0, items) >= 2
    # The CPUs' moves reach the table like anyone's.
    flipped_by = {data["seat"] for kind, data, _ in game_events(items) if kind == "card_flipped"}
    assert flipped_by & {1, 2, 3}
    last = [item["event"] for item in items if "event" in item][-1]
    assert last["final"] and last["result"] == snap["result"]


async def test_a_leaver_is_played_by_the_cpu_and_takes_the_seat_back(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    ana, bia, caio = [await register(http, n) for n in ("ana", "bia", "caio")]
    table = await ana.create_table("bozu_mekuri", 3, {"turn_timer_seconds": 30})
    table_id = table["id"]
    for player in (bia, caio):
        await player.join(table["invite_code"])
    snap = await ana.start(table_id)
    assert snap["view"]["turn_timer_seconds"] == 30 and snap["deadline_at"] == snap["idle_since"] + 30
    players = {0: ana, 1: bia, 2: caio}
    feeds = {s: asyncio.create_task(follow(p, stack.gateway(), table_id)) for s, p in players.items()}
    views = Views(table_id, players)
    await views.record()
    left = (await bia.leave(table_id))["match"]
    assert left["seat"] == 1 and left["status"] == ACTIVE
    assert [s["cpu_controlled"] for s in left["seats"]] == [False, True, False]
    assert [s["cpu"] for s in left["seats"]] == [False, False, False]  # still Bia's seat
    now = await views.record()
    # While the CPU plays it, the seat is not hers to play, nor to leave again.
    with pytest.raises(ApiRefused) as refused:
        await bia.act(table_id, now[1]["version"], {"flip": {}})
    assert (refused.value.status, refused.value.code) == (409, "cpu_seat")
    with pytest.raises(ApiRefused) as refused:
        await bia.leave(table_id)
    assert refused.value.code == "cpu_seat"
    snap = now[0]
    cpu_played = False
    # Until Ana has played a turn: Bia's comes next, and the CPU plays it in
    # the same write. (Six rounds, as before, let a quick deal end the match
    # while she was away: about one run in five.)
    while snap["status"] == ACTIVE and not cpu_played:
        (seat,) = snap["to_act"]
        assert seat != 1  # Bia's turns are played by the CPU while she is away
        snap = await play_my_turns(players[seat], views, seat, views.seen[(seat, snap["version"])])
        cpu_played = seat == 0
    assert snap["status"] == ACTIVE
    back = await bia.act(table_id, (await bia.view(table_id))["version"], {"take_over": {}})
    assert [s["cpu_controlled"] for s in back["seats"]] == [False, False, False]
    now = await views.record()
    with pytest.raises(ApiRefused) as refused:
        await bia.act(table_id, back["version"], {"take_over": {}})
    assert (refused.value.status, refused.value.code) == (409, "not_left")
    snap = back
    bia_turns = 0
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        bia_turns += seat == 1
        snap = await play_my_turns(players[seat], views, seat, views.seen[(seat, snap["version"])])
    assert snap["result"]["reason"] == "END_REASON_COMPLETED"
    # Back in her seat, Bia plays her own turns, unless her CPU flipped
    # Semimaru while she was away (out at once, by default); she came back,
    # so nobody forfeited.
    assert bia_turns > 0 or snap["view"]["seats"][1]["eliminated"]
    assert sorted(snap["result"]["ranks"])[0] == 1 and snap["result"]["forfeited"] == []
    for seat, task in feeds.items():
        items = await asyncio.wait_for(task, 30)
        assert views.check(seat, items) >= 2
        told = [(n["kind"], n["seat"]) for n in notices(items)]
        assert told == [
            ("NOTICE_KIND_LEFT", 1),
            ("NOTICE_KIND_CPU_TOOK_OVER", 1),
            ("NOTICE_KIND_SEAT_TAKEN_BACK", 1),
        ]
        # Between the takeover and her return, the CPU played her seat.
        events = [item["event"] for item in items if "event" in item]
        away = [i for i, e in enumerate(events) if e.get("notice")]
        during = [e for e in events[away[1] : away[2]] if e.get("event")]
        assert any(next(v for k, v in e["event"].items() if k != "@type").get("seat") == 1 for e in during)
