"""Bozó end to end: real Redis, the real Bozó gRPC service and the real gateway."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from services.core import keys
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
    table_change,
)
from tests.integration.time_travel import rewind_idle
from tools.stack import Stack


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("bozo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def play_turn(
    player: Player,
    views: Views,
    snap: dict[str, Any],
    cup: bool,
    side: str = "TOP",
    feed: Feed | None = None,
) -> dict[str, Any]:
    """Throw once (with the cup, declaring ``side``) and score the best open
    box, each move decided on the seat's own snapshot: the move's reply, or
    with ``feed`` the one the seat's feed pushed (the same). Every viewer's
    GET /view is read after every move."""
    seat = snap["seat"]

    async def act(action: dict[str, Any]) -> dict[str, Any]:
        reply = await player.act(views.table_id, snap["version"], action)
        assert_same(reply, (await views.record())[seat], "the move's reply and GET /view")
        if feed is None:
            return reply
        pushed = await feed.snapshot_at(reply["version"])
        assert_same(pushed, reply, "the pushed snapshot and the move's reply")
        return pushed

    snap = await act({"throw": {"cup": cup}})
    if cup:
        assert snap["view"]["cup_pending"] and all(d["hidden"] for d in snap["view"]["dice"])
        assert snap["view"]["preview"] == []
        snap = await act({"declare": {"side": side}})
    assert not any(d["hidden"] for d in snap["view"]["dice"])
    best = max(snap["view"]["preview"], key=lambda p: p["points"])
    return await act({"score": {"box": best["box"]}})


async def play_to_the_end(
    players: dict[int, Player], views: Views, cup: bool, feeds: dict[int, Feed] | None = None
) -> tuple[int, dict[str, Any]]:
    """Every turn to the end; the number of turns and the last mover's final
    snapshot. With ``feeds``, each seat draws from its feed's pushed
    snapshots (a client that never calls GET /view); without, from GET /view."""
    now = await views.record()
    snap = now[0]
    turns = 0
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        side = "BOTTOM" if turns % 2 else "TOP"
        if feeds:
            mine = await feeds[seat].snapshot_at(snap["version"])
            snap = await play_turn(players[seat], views, mine, cup, side, feeds[seat])
        else:
            snap = await play_turn(players[seat], views, views.seen[(seat, snap["version"])], cup, side)
        turns += 1
    return turns, snap


async def test_full_duel(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table = await ana.create_table("bozo", 2, {"mode": "DUEL"})
    assert table["mode"] == "duel" and table["teams"] == []
    await bia.join(table["invite_code"])
    snap = await ana.start(table["id"])
    assert snap["mode"] == "duel" and snap["to_act"] == [0]
    views = Views(table["id"], {0: ana, 1: bia})
    async with (
        ana.feed(stack.gateway(), table["id"]) as ana_feed,
        bia.feed(stack.gateway(), table["id"]) as bia_feed,
    ):
        # Each feed's first snapshot is the state when it opened: both are
        # read before the first move, so each carries every version after it.
        for feed in (ana_feed, bia_feed):
            await feed.snapshot_at(snap["version"])
        # Both players draw from what their feeds push: no GET /view needed.
        turns, final = await play_to_the_end(
            {0: ana, 1: bia}, views, cup=False, feeds={0: ana_feed, 1: bia_feed}
        )
        fed = [await feed.to_end(30) for feed in (ana_feed, bia_feed)]
    assert turns == 20
    assert final["status"] == FINISHED and final["to_act"] == [] and final["idle_since"] == 0
    cards = final["view"]["cards"]
    assert [len(card["boxes"]) for card in cards] == [10, 10]
    totals = [card["total"] for card in cards]
    assert final["scores"] == totals
    assert final["result"]["scores"] == totals and final["result"]["reason"] == "END_REASON_COMPLETED"
    assert final["result"]["ranks"] == [1 + (totals[1] > totals[0]), 1 + (totals[0] > totals[1])]
    assert final["fairness"]["seed"]  # revealed at the end
    await asyncio.sleep(0.5)  # time for the gateway to let go of the closed feeds
    other = await bia.view(table["id"])  # the other player sees the same finished match
    assert other["seat"] == 1 and other["status"] == FINISHED and other["result"] == final["result"]
    # Nothing joins a finished match's history, not even the feeds closing at its end.
    assert other["last_event_id"] == final["last_event_id"]
    for seat, items in enumerate(fed):
        assert views.check(seat, items) == 1 + 40  # the first, then one per move (a throw and a score a turn)
        scored = [data for kind, data, _ in game_events(items) if kind == "scored"]
        assert len(scored) == 20 and [s["seat"] for s in scored] == [0, 1] * 10
        last = [item["event"] for item in items if "event" in item][-1]
        assert last["final"] and last["result"] == final["result"]


async def test_full_duplas_with_team_invites_and_arranged_seats(
    http: httpx.AsyncClient, stack: Stack
) -> None:
    ana, bia, caio, davi, eva = [await register(http, n) for n in ("ana", "bia", "caio", "davi", "eva")]
    table = await ana.create_table("bozo", 4, {"mode": "DUPLAS"})
    table_id = table["id"]
    assert table["mode"] == "duplas"
    assert [(t["name"], t["seats"]) for t in table["teams"]] == [("JADE", [0, 2]), ("AMBAR", [1, 3])]
    async with ana.feed(stack.gateway(), table_id) as host_feed:
        await host_feed.until(lambda item: "table" in item)
        host_reading = asyncio.create_task(host_feed.to_end())
        partner = await ana.call("POST", f"/v1/tables/{table_id}/invites", {"team": "JADE"})
        assert partner["team"] == "JADE" and partner["code"]
        joined = await bia.join(partner["code"])
        assert joined["players"][2]["user_id"] == bia.user_id  # Jade's free seat, opposite the host
        assert joined["invites"] == [] and joined["invite_code"] == ""  # only the host sees invites
        # Jade is full now: its invite no longer seats anyone, and a new Jade
        # invite is refused (changed: it used to be handed out anyway); the
        # table invite still seats.
        with pytest.raises(ApiRefused) as refused:
            await eva.join(partner["code"])
        assert (refused.value.status, refused.value.code) == (409, "team_full")
        with pytest.raises(ApiRefused) as refused:
            await ana.call("POST", f"/v1/tables/{table_id}/invites", {"team": "JADE"})
        assert (refused.value.status, refused.value.code) == (409, "team_full")
        await caio.join(table["invite_code"])
        await davi.join(table["invite_code"])
        with pytest.raises(ApiRefused) as refused:
            await eva.join(table["invite_code"])
        assert (refused.value.status, refused.value.code) == (409, "table_full")
        with pytest.raises(ApiRefused) as refused:
            await ana.call("POST", f"/v1/tables/{table_id}/invites", {"team": "AMBAR"})
        assert refused.value.code == "team_full"
        with pytest.raises(ApiRefused) as refused:
            await ana.call("POST", f"/v1/tables/{table_id}/invites", {})
        assert refused.value.code == "table_full"
        # The host swaps the Âmbar players; nobody else may arrange.
        order = [ana.user_id, davi.user_id, bia.user_id, caio.user_id]
        with pytest.raises(ApiRefused) as refused:
            await caio.call("PUT", f"/v1/tables/{table_id}/seats", {"seats": order})
        assert (refused.value.status, refused.value.code) == (403, "not_host")
        with pytest.raises(ApiRefused) as refused:
            await ana.call("PUT", f"/v1/tables/{table_id}/seats", {"seats": [*order[:3], eva.user_id]})
        assert (refused.value.status, refused.value.code) == (422, "invalid_arrangement")
        arranged = await ana.call("PUT", f"/v1/tables/{table_id}/seats", {"seats": order})
        assert [p["user_id"] for p in arranged["players"]] == order
        snap = await ana.start(table_id)
        assert [s["user_id"] for s in snap["seats"]] == order and snap["mode"] == "duplas"
        players = {0: ana, 1: davi, 2: bia, 3: caio}
        feeds = {
            s: asyncio.create_task(follow(p, stack.gateway(), table_id)) for s, p in players.items() if s
        }
        views = Views(table_id, players)
        turns, final = await play_to_the_end(players, views, cup=True)
        assert turns == 20
        host_items = await asyncio.wait_for(host_reading, 30)
    jade, ambar = final["view"]["cards"]
    assert (jade["team"], jade["seats"], ambar["team"], ambar["seats"]) == ("JADE", [0, 2], "AMBAR", [1, 3])
    assert len(jade["boxes"]) == len(ambar["boxes"]) == 10
    # Both partners filled boxes of their shared card: five turns each.
    assert sorted(b["seat"] for b in jade["boxes"]) == [0] * 5 + [2] * 5
    assert final["scores"] == [jade["total"], ambar["total"]] * 2  # partners repeat their team's total
    ranks = final["result"]["ranks"]
    assert ranks[0] == ranks[2] and ranks[1] == ranks[3]
    if jade["total"] != ambar["total"]:
        assert sorted({ranks[0], ranks[1]}) == [1, 2]
        assert (ranks[0] == 1) == (jade["total"] > ambar["total"])
    # The lobby as the host followed it: her invites (host only), the
    # arrangement, the start; the game from the same feed.
    changes = [c for item in host_items if (c := table_change(item))]
    kinds = [c["kind"] for c in changes]
    invites = [c["invite"] for c in changes if c["kind"] == "TABLE_CHANGE_KIND_INVITE_CREATED"]
    # The table's invite and the Jade one; the refused ones made none.
    assert [(i["team"], i["code"]) for i in invites] == [
        ("", table["invite_code"]),
        ("JADE", partner["code"]),
    ]
    assert kinds[-2:] == ["TABLE_CHANGE_KIND_ARRANGED", "TABLE_CHANGE_KIND_STARTED"]
    assert [c["seat"] for c in changes if c["kind"] == "TABLE_CHANGE_KIND_JOINED"] == [2, 1, 3]
    assert views.check(0, host_items) >= 2
    for seat, task in feeds.items():
        items = await asyncio.wait_for(task, 30)
        assert views.check(seat, items) >= 2
        others = [c["kind"] for item in items if (c := table_change(item))]
        assert "TABLE_CHANGE_KIND_INVITE_CREATED" not in others  # invites are the host's
        assert not any(item["event"]["host_only"] for item in items if "event" in item)
        revealed = [data for kind, data, _ in game_events(items) if kind == "revealed"]
        assert len(revealed) == 20  # every turn was a cup throw, declared


async def test_leaving_concedes_the_duel(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table = await ana.create_table("bozo", 2)
    await bia.join(table["invite_code"])
    snap = await ana.start(table["id"])
    watching = asyncio.create_task(follow(ana, stack.gateway(), table["id"]))
    views = Views(table["id"], {0: ana, 1: bia})
    await views.record()
    await play_turn(ana, views, snap, cup=False)
    left = (await bia.leave(table["id"]))["match"]
    assert left["seat"] == 1 and left["status"] == FINISHED
    assert_same(left, (await views.record())[1], "the leave's reply and GET /view")
    assert left["result"]["reason"] == "END_REASON_FORFEIT" and left["result"]["forfeited"] == [1]
    assert left["result"]["ranks"] == [1, 2]
    with pytest.raises(ApiRefused) as refused:
        await ana.act(table["id"], left["version"], {"throw": {}})
    assert (refused.value.status, refused.value.code) == (409, "game_over")
    # The table is told: the leave is the final event, with the result.
    items = await asyncio.wait_for(watching, 20)
    assert views.check(0, items) >= 2
    last = [item["event"] for item in items if "event" in item][-1]
    assert last["notice"] == {"kind": "NOTICE_KIND_LEFT", "seat": 1, "since": 0}
    assert last["final"] and last["result"] == left["result"]
    assert items[-2]["snapshot"]["status"] == FINISHED and items[-2]["snapshot"]["seat"] == 0


async def rewind_turn_clock(stack: Stack, match_id: str, seconds: float) -> None:
    """Make the seat to act look idle ``seconds`` longer, as if time had
    passed: claims count from the match record's ``idle_since`` (when that
    seat got the turn or last acted), no longer from anyone's last action."""
    redis = Redis.from_url(stack.redis_url)
    try:
        await rewind_idle(redis, match_id, seconds)
    finally:
        await redis.aclose()


async def test_inactivity_claims(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    table = await players[0].create_table("bozo", 4)
    for player in players[1:]:
        await player.join(table["invite_code"])
    snap = await players[0].start(table["id"])
    assert snap["to_act"] == [0] and snap["mode"] == "duplas"
    watching = asyncio.create_task(follow(players[1], stack.gateway(), table["id"]))
    claim = {"claim_inactivity": {}}

    async def refused(player: Player, code: str) -> None:
        before = await player.view(table["id"])
        with pytest.raises(ApiRefused) as error:
            await player.act(table["id"], before["version"], claim)
        assert (error.value.status, error.value.code) == (409, code)
        assert await player.view(table["id"]) == before

    await refused(players[1], "too_early")  # an opponent, but before 120 s
    await refused(players[2], "partner_cannot_claim")
    await refused(players[0], "cannot_claim_yourself")
    await rewind_turn_clock(stack, table["id"], 121)
    await refused(players[2], "partner_cannot_claim")  # never the partner
    await refused(players[0], "cannot_claim_yourself")
    snap = await players[3].view(table["id"])
    assert snap["idle_since"] < snap["last_action_at"] - 120
    claimed = await players[3].act(table["id"], snap["version"], claim)
    assert claimed["status"] == FINISHED
    result = claimed["result"]
    assert result["reason"] == "END_REASON_INACTIVITY" and result["forfeited"] == [0]
    assert result["ranks"] == [2, 1, 2, 1]
    items = await asyncio.wait_for(watching, 20)
    assert notices(items)[-1] == {"kind": "NOTICE_KIND_CLAIMED", "seat": 0, "since": 0, "by": 3}
    last = [item["event"] for item in items if "event" in item][-1]
    assert last["final"] and last["result"] == claimed["result"]


async def stored_state(stack: Stack, match_id: str) -> dict[str, Any]:
    redis = Redis.from_url(stack.redis_url)
    try:
        doc: dict[str, Any] = orjson.loads(await redis.hget(keys.match(match_id), "doc"))  # type: ignore[misc]
        return doc["state"]  # type: ignore[no-any-return]
    finally:
        await redis.aclose()


def spellings(faces: list[int]) -> list[str]:
    return [str(faces), json.dumps(faces), json.dumps(faces, separators=(",", ":"))]


async def test_cup_faces_reach_nobody_before_the_declaration(http: httpx.AsyncClient, stack: Stack) -> None:
    players = [await register(http, n) for n in ("ana", "bia", "caio", "davi")]
    spectator = await register(http, "eve")
    table = await players[0].create_table("bozo", 4)
    table_id = table["id"]
    for player in players[1:]:
        await player.join(table["invite_code"])
    snap = await players[0].start(table_id)
    viewers = {**dict(enumerate(players)), -1: spectator}
    views = Views(table_id, viewers)
    await views.record()
    feeds: dict[int, Feed] = {}
    async with AsyncExitStack() as opened:
        for seat, viewer in viewers.items():
            feeds[seat] = await opened.enter_async_context(viewer.feed(stack.gateway(), table_id))
            await feeds[seat].until(lambda item: "snapshot" in item)
        snap = await players[0].act(table_id, snap["version"], {"throw": {"cup": True}})
        hidden = await stored_state(stack, table_id)
        assert hidden["cup_pending"] and sorted(hidden["just_thrown"]) == [0, 1, 2, 3, 4]
        faces = hidden["dice"]
        assert all(1 <= face <= 6 for face in faces)

        now = await views.record()
        for seat, feed in feeds.items():
            view = now[seat]["view"]
            assert view["dice"] == [{"face": 0, "hidden": True}] * 5 and view["preview"] == []
            items = await feed.until(lambda item: item.get("snapshot", {}).get("version") == snap["version"])
            for kind, data, _ in game_events(feed.items):
                assert kind != "revealed"
                if kind == "thrown":
                    assert data["cup"] and data["faces"] == []
            pushed = items[-1]["snapshot"]["view"]
            assert pushed["dice"] == [{"face": 0, "hidden": True}] * 5 and pushed["preview"] == []
            assert views.check(seat, feed.items) == 2
        for attempt, code in [
            ({"score": {"box": "GENERAL"}}, "cup_pending"),
            ({"throw": {"keep": [0]}}, "cup_pending"),
        ]:
            with pytest.raises(ApiRefused) as refused:
                await players[0].act(table_id, snap["version"], attempt)
            assert refused.value.code == code
            assert not any(s in str(refused.value) for s in spellings(faces))
        with pytest.raises(ApiRefused) as refused:
            await players[1].act(table_id, snap["version"], {"claim_inactivity": {}})
        assert refused.value.code == "too_early"
        assert not any(s in str(refused.value) for s in spellings(faces))
        logs = stack.log_path("bozo").read_text() + stack.log_path("gateway").read_text()
        assert not any(s in logs for s in spellings(faces))

        # The declaration reveals exactly what was stored, to everyone: the
        # checks above were looking at the right dice.
        revealed = await players[0].act(table_id, snap["version"], {"declare": {"side": "TOP"}})
        assert [d["face"] for d in revealed["view"]["dice"]] == faces
        now = await views.record()
        for seat, feed in feeds.items():
            await feed.until(lambda item: item.get("snapshot", {}).get("version") == revealed["version"])
            (shown,) = [data for kind, data, _ in game_events(feed.items) if kind == "revealed"]
            assert shown["dice"] == [0, 1, 2, 3, 4] and shown["faces"] == faces
            assert views.check(seat, feed.items) == 3
            assert [d["face"] for d in now[seat]["view"]["dice"]] == faces
