"""Yatzy end to end: real Redis, the real Yatzy gRPC service and the real gateway."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from typing import Any

import grpc
import httpx
import pytest
import websockets
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.core.errors import error_reason
from services.core.tokens import Identity
from services.kit import play
from services.kit.engine import Context, Event
from services.kit.rng import MatchRng
from services.yatzy.game import GAME
from tests.integration.grpc_client import as_dict, bearer, event_kind, pack, unpack
from tests.integration.http_client import (
    ACTIVE,
    FINISHED,
    ApiRefused,
    Player,
    game_event,
    register,
    seated_table,
)
from tools.stack import Stack


def keep_most_common(dice: list[int]) -> list[int]:
    face, _ = Counter(dice).most_common(1)[0]
    return [i for i, d in enumerate(dice) if d == face]


async def play_turn_http(player: Player, table_id: str, snap: dict[str, Any]) -> dict[str, Any]:
    snap = await player.act(table_id, snap["version"], {"roll": {}})
    keep = keep_most_common(snap["view"]["dice"])
    if len(keep) < 5:
        snap = await player.act(table_id, snap["version"], {"roll": {"keep": keep}})
    best = max(snap["view"]["preview"], key=lambda p: p["points"])
    return await player.act(table_id, snap["version"], {"score": {"box": best["box"]}})


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("yatzy")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as client:
        yield client


async def test_two_player_scandinavian_game_over_http(http: httpx.AsyncClient) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy", {"card": "SCANDINAVIAN"})
    assert snap["seat"] == 0 and snap["status"] == ACTIVE
    published_hash = snap["fairness"]["seed_sha256"]
    assert snap["fairness"]["seed"] == ""
    players = {0: ana, 1: bia}
    turns = Counter[int]()
    while snap["status"] == ACTIVE:
        (seat,) = snap["to_act"]
        # Each player decides on what they see: re-read the view as that seat.
        snap = await play_turn_http(players[seat], table_id, await players[seat].view(table_id))
        turns[seat] += 1
    assert turns == {0: 15, 1: 15}
    cards = snap["view"]["cards"]
    assert all(len(card["boxes"]) == 15 and all(b["filled"] for b in card["boxes"]) for card in cards)
    totals = [card["total"] for card in cards]
    for card in cards:
        upper = sum(
            b["points"]
            for b in card["boxes"]
            if b["box"] in ("ONES", "TWOS", "THREES", "FOURS", "FIVES", "SIXES")
        )
        assert card["bonus"] == (50 if upper >= 63 else 0)
        assert card["total"] == sum(b["points"] for b in card["boxes"]) + card["bonus"]
    result = snap["result"]
    assert result["scores"] == totals and result["reason"] == "END_REASON_COMPLETED"
    assert snap["scores"] == totals and snap["to_act"] == []
    expected_ranks = [1 + sum(other > mine for other in totals) for mine in totals]
    assert result["ranks"] == expected_ranks
    seed = snap["fairness"]["seed"]
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == published_hash
    # The other player sees the same finished match.
    other = await bia.view(table_id)
    assert other["status"] == FINISHED and other["result"] == result and other["seat"] == 1


async def test_solo_classic_game_over_grpc_replays_from_the_revealed_seed(stack: Stack) -> None:
    me = Identity(f"u_{secrets.token_hex(6)}", "solo", "user")
    auth = bearer(stack.token(me))
    async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            match_pb2.CreateMatchRequest(
                seats=[match_pb2.Seat(user_id=me.user_id, display_name=me.name)],
                options=pack(yatzy_pb2.Options(card=yatzy_pb2.CLASSIC)),
            ),
            metadata=stack.platform_metadata(),
        )
        snap = created.snapshot
        match_id = snap.match_id
        assert snap.seat == -1 and snap.fairness.seed == "" and len(snap.fairness.seed_sha256) == 64
        actions: list[dict[str, Any]] = []

        async def act(action: yatzy_pb2.Action) -> match_pb2.Snapshot:
            nonlocal snap
            reply = await stub.Act(
                match_pb2.ActRequest(match_id=match_id, expected_version=snap.version, action=pack(action)),
                metadata=auth,
            )
            snap = reply.snapshot
            actions.append(as_dict(action))
            return snap

        for _ in range(13):
            await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
            for _ in range(2):
                keep = keep_most_common(list(unpack(snap.view, yatzy_pb2.View).dice))
                if len(keep) < 5:
                    await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=keep)))
            preview = unpack(snap.view, yatzy_pb2.View).preview
            best = max(preview, key=lambda p: p.points)
            await act(yatzy_pb2.Action(score=yatzy_pb2.Score(box=best.box)))
        assert snap.status == match_pb2.MATCH_STATUS_FINISHED
        view = unpack(snap.view, yatzy_pb2.View)
        assert list(snap.result.scores) == [view.cards[0].total] and list(snap.result.ranks) == [1]
        assert all(box.filled for box in view.cards[0].boxes) and len(view.cards[0].boxes) == 13

        items = [item async for item in stub.Watch(match_pb2.WatchRequest(match_id=match_id), metadata=auth)]
        observed = [
            body["dice"]
            for item in items
            if item.HasField("event")
            for kind, body in [event_kind(item.event, yatzy_pb2.Event)]
            if kind == "rolled"
        ]
        # A finished match's feed ends with its final event and the final snapshot.
        assert items[-1].snapshot.status == match_pb2.MATCH_STATUS_FINISHED
        assert [i for i in items if i.HasField("event")][-1].event.final
        assert len(observed) == sum(1 for a in actions if "roll" in a) >= 13

    # Anyone holding the revealed seed replays the match to the same dice;
    # any other seed gives other dice.
    seed = bytes.fromhex(snap.fairness.seed)
    assert hashlib.sha256(seed).hexdigest() == snap.fairness.seed_sha256
    assert replay_dice(seed, actions) == observed
    assert replay_dice(bytes(32), actions) != observed


def replay_dice(seed: bytes, actions: list[dict[str, Any]]) -> list[list[int]]:
    rng = MatchRng(seed)
    table, _ = play.start(GAME, 1, {"card": "CLASSIC"}, Context(rng, 0.0, 0.0))
    dice = []
    for action in actions:
        events = play.act(GAME, table, 0, action, Context(rng, 0.0, 0.0))
        dice += [e.data["dice"] for e in events if isinstance(e, Event) and e.kind == "rolled"]
    return dice


async def test_websocket_feed_resumes_without_gap_or_duplicate(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia = await register(http, "ana"), await register(http, "bia")
    table_id, snap = await seated_table([ana, bia], "yatzy")
    players = {0: ana, 1: bia}

    async def play_turns(count: int) -> None:
        nonlocal snap
        for _ in range(count):
            (seat,) = snap["to_act"]
            snap = await play_turn_http(players[seat], table_id, await players[seat].view(table_id))

    await play_turns(3)
    received: list[dict[str, Any]] = []
    async with bia.feed(stack.gateway(), table_id) as feed:
        while feed.last_event_id < snap["last_event_id"]:
            await feed.next()
        received += feed.items
    # Disconnected: the game goes on without this client.
    await play_turns(5)
    async with bia.feed(stack.gateway(), table_id, after_event_id=feed.last_event_id) as feed:
        await play_turns(2)
        while feed.last_event_id < snap["last_event_id"]:
            await feed.next()
        received += feed.items
    events = [item["event"] for item in received if "event" in item]
    ids = [event["id"] for event in events]
    # The table's whole history, all public in Yatzy but for the host's invite (event 2).
    assert ids == [1, *range(3, snap["last_event_id"] + 1)]
    kinds = [kind for item in received if (found := game_event(item)) for kind, _ in [found]]
    assert kinds.count("scored") == 10
    # Each connection drew from a snapshot: the caller's seat, as GET /view gives it.
    states = [item["snapshot"] for item in received if "snapshot" in item]
    assert states and all(state["seat"] == 1 for state in states)


async def test_websocket_rejects_a_bad_hello(http: httpx.AsyncClient, stack: Stack) -> None:
    ana = await register(http, "ana")
    table_id, _ = await seated_table([ana], "yatzy")
    ws_url = stack.gateway().replace("http", "ws") + f"/v1/tables/{table_id}/events"
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"token": "not-a-token"}))
        reply = json.loads(await ws.recv())
        assert reply["error"]["code"] == "unauthenticated"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


async def test_concurrent_actions_on_one_version_apply_exactly_once(http: httpx.AsyncClient) -> None:
    ana = await register(http, "ana")
    table_id, _ = await seated_table([ana], "yatzy")
    for _ in range(5):
        before = await ana.view(table_id)
        outcomes = await asyncio.gather(
            *(
                ana.act(
                    table_id,
                    before["version"],
                    {"roll": {}} if before["view"]["throws_used"] == 0 else {"roll": {"keep": [0]}},
                )
                for _ in range(2)
            ),
            return_exceptions=True,
        )
        applied = [o for o in outcomes if isinstance(o, dict)]
        refused = [o for o in outcomes if isinstance(o, ApiRefused)]
        assert len(applied) == 1 and len(refused) == 1, outcomes
        assert refused[0].status == 409 and refused[0].code == "stale_version"
        after = await ana.view(table_id)
        assert after["version"] == before["version"] + 1
        if after["view"]["throws_left"] == 0:
            await ana.act(table_id, after["version"], {"score": {"box": after["view"]["preview"][0]["box"]}})


async def test_refused_requests_change_nothing(http: httpx.AsyncClient, stack: Stack) -> None:
    ana, bia, eve = await register(http, "ana"), await register(http, "bia"), await register(http, "eve")
    table_id, _ = await seated_table([ana, bia], "yatzy")
    before = await ana.view(table_id)
    version = before["version"]

    async def refused(player: Player | None, body: Any, status: int, code: str) -> None:
        headers = player.headers if player else {}
        response = await http.post(f"/v1/tables/{table_id}/actions", json=body, headers=headers)
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code
        assert await ana.view(table_id) == before

    await refused(bia, {"expected_version": version, "action": {"roll": {}}}, 409, "not_your_turn")
    await refused(eve, {"expected_version": version, "action": {"roll": {}}}, 403, "not_seated")
    await refused(None, {"expected_version": version, "action": {"roll": {}}}, 401, "unauthenticated")
    await refused(ana, {"expected_version": version, "action": {"jump": {}}}, 422, "malformed_action")
    await refused(
        ana, {"expected_version": version, "action": {"roll": {"keep": "all"}}}, 422, "malformed_action"
    )
    await refused(
        ana, {"expected_version": version, "action": {"score": {"box": "CHANCE"}}}, 409, "roll_first"
    )
    await refused(ana, {"expected_version": version, "action": {}}, 422, "malformed_action")
    await refused(ana, {"expected_version": 2**32, "action": {"roll": {}}}, 422, "invalid_request")
    await refused(ana, {"expected_version": version + 7, "action": {"roll": {}}}, 409, "stale_version")
    # Proto3 has no required fields: a missing expected_version is 0, a
    # version no match is at (it starts at 1), as over gRPC.
    await refused(ana, {"action": {"roll": {}}}, 409, "stale_version")
    await refused(
        ana, {"expected_version": version, "action": {"score": {"box": 2.5}}}, 422, "malformed_action"
    )
    await refused(ana, {"expected_version": 1.5, "action": {"roll": {}}}, 422, "invalid_request")
    await refused(
        ana, {"expected_version": version, "action": {"roll": {}}, "extra": 1}, 422, "invalid_request"
    )
    wrong_game = {"@type": "type.googleapis.com/rodada.dudo.v1.Action", "dudo": {}}
    await refused(ana, {"expected_version": version, "action": wrong_game}, 422, "malformed_action")
    forged = Player(http, stack.token(Identity(ana.user_id, "ana", "user")) + "x", ana.user_id, "ana")
    await refused(forged, {"expected_version": version, "action": {"roll": {}}}, 401, "unauthenticated")
    # The same refusals straight over gRPC carry their status and reason.
    async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        request = match_pb2.ActRequest(
            match_id=table_id, expected_version=version, action=pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
        )
        for metadata, code, reason in [
            (bearer(bia.token), grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn"),
            (bearer(eve.token), grpc.StatusCode.PERMISSION_DENIED, "not_seated"),
            ((), grpc.StatusCode.UNAUTHENTICATED, "unauthenticated"),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as failure:
                await stub.Act(request, metadata=metadata)
            assert failure.value.code() == code and error_reason(failure.value) == reason
        wrong_type = match_pb2.ActRequest(
            match_id=table_id, expected_version=version, action=pack(yatzy_pb2.View())
        )
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Act(wrong_type, metadata=bearer(ana.token))
        assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.CreateMatch(match_pb2.CreateMatchRequest(), metadata=bearer(ana.token))
        assert error_reason(failure.value) == "platform_only"
    assert await ana.view(table_id) == before
