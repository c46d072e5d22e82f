"""Practice tables and CPU seats in Yatzy and Bozó over the real stack (issue
17): real Redis, the real game services and gateway, HTTP and the gateway's
gRPC face.

A person plays a whole game against CPU seats taking the advisor's best
option each turn; every answer equals the advisor's own computation (made
here from the public view, with the same tables); the CPU seats play their
turns and the match completes. Advice is refused without the option, to a
spectator, on a finished match, and a ranked ticket with it is refused."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from rodada.bozo.v1 import bozo_pb2
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.bozo import advisor as bozo_advisor
from services.yatzy import advisor as yatzy_advisor
from services.yatzy.advisor import Advice
from tests.integration.grpc_client import as_dict, bearer, pack, refusal, unpack
from tests.integration.http_client import ACTIVE, FINISHED, ApiRefused, register
from tools.stack import Stack

JSON = dict[str, Any]
ADVICE: JSON = {"advice": {}}


@pytest.fixture
async def http(stack: Stack) -> Any:
    stack.service("yatzy")
    stack.service("bozo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=30) as client:
        yield client


def yatzy_expected(view: JSON, seat: int) -> Advice:
    filled = {e["box"]: e.get("points", 0) for e in view["cards"][seat]["boxes"] if e.get("filled")}
    return yatzy_advisor.advise(filled, view.get("dice", []), view.get("throws_used", 0), view["card"])


def bozo_expected(view: JSON, seat: int) -> Advice:
    cards = view["cards"]
    filled = {e["box"]: e.get("points", 0) for e in cards[seat % len(cards)].get("boxes", [])}
    dice = [d.get("face", 0) for d in view.get("dice", [])]
    return bozo_advisor.advise(
        filled, dice, view.get("throw_number", 0), cup_pending=view.get("cup_pending", False), with_cup=True
    )


def same(answer: JSON, expected: Any, message: type[Any]) -> None:
    """The HTTP answer (proto JSON) is the advisor's, value for value, with
    every action as the game's Action message."""
    assert answer["expected_final_score"] == pytest.approx(expected.expected_final_score, abs=1e-9)
    got = [(o["action"], o["expected_final_score"]) for o in answer["options"]]
    assert len(got) == len(expected.options)
    for (action, value), option in zip(got, expected.options, strict=True):
        assert json_format.ParseDict(action, message()) == json_format.ParseDict(option.action, message())
        assert value == pytest.approx(option.expected_final_score, abs=1e-9)


async def refused(call: Any, status: int, code: str) -> None:
    with pytest.raises(ApiRefused) as raised:
        await call
    assert (raised.value.status, raised.value.code) == (status, code)


async def test_yatzy_against_a_cpu_with_advice_over_http(http: httpx.AsyncClient) -> None:
    ana, eve = await register(http, "ana"), await register(http, "eve")
    table = await ana.create_table("yatzy", 2, {"card": "SCANDINAVIAN", "advice": True}, cpu_seats=[1])
    assert table["options"] == {
        "@type": "type.googleapis.com/rodada.yatzy.v1.Options",
        "card": "SCANDINAVIAN",
        "advice": True,
    }
    snap = await ana.start(table["id"])
    asked = 0
    while snap["status"] == ACTIVE:
        assert snap["to_act"] == [0]  # the CPU's turns are played at once
        answer = (await ana.ask(table["id"], ADVICE))["answer"]["advice"]
        same(answer, yatzy_expected(snap["view"], 0), yatzy_pb2.Action)
        asked += 1
        snap = await ana.act(table["id"], snap["version"], answer["options"][0]["action"])
    assert snap["status"] == FINISHED and asked > 2 * 15
    cards = snap["view"]["cards"]
    assert all(all(box.get("filled") for box in card["boxes"]) for card in cards)
    assert snap["result"]["reason"] == "END_REASON_COMPLETED"
    await refused(ana.ask(table["id"], ADVICE), 409, "game_over")
    await refused(eve.ask(table["id"], ADVICE), 409, "not_seated")


async def test_advice_refusals_over_http(http: httpx.AsyncClient) -> None:
    ana, eve = await register(http, "ana"), await register(http, "eve")
    plain = await ana.create_table("yatzy", 1)
    await ana.start(plain["id"])
    await refused(ana.ask(plain["id"], ADVICE), 409, "advice_off")
    practice = await ana.create_table("bozo", 2, {"mode": "DUEL", "advice": True}, cpu_seats=[1])
    await ana.start(practice["id"])
    await refused(eve.ask(practice["id"], ADVICE), 409, "not_seated")  # a spectator
    await refused(ana.ask(practice["id"], {}), 422, "malformed_question")
    # A practice table is never ranked: the ranked queue refuses it, casual takes it.
    for game, options in (("yatzy", {"advice": True}), ("bozo", {"mode": "DUEL", "advice": True})):
        body = {"game": game, "options": options, "ranked": True}
        await refused(ana.call("POST", "/v1/matchmaking/tickets", body), 422, "practice_unranked")
    casual = await ana.call("POST", "/v1/matchmaking/tickets", {"game": "yatzy", "options": {"advice": True}})
    response = await http.delete(f"/v1/matchmaking/tickets/{casual['id']}", headers=ana.headers)
    assert response.status_code == 204


async def test_bozo_duel_against_a_cpu_with_advice_over_grpc(http: httpx.AsyncClient, stack: Stack) -> None:
    """The whole game over the gateway's gRPC face: CreateTable with a CPU
    seat, Ask (packed Question and Answer) before every move, Act with the
    best option; the cup once, and the advice under it."""
    ana = await register(http, "ana")
    auth = bearer(ana.token)
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        options = bozo_pb2.Options(mode=bozo_pb2.DUEL, advice=True)
        created = await api.CreateTable(
            platform_pb2.CreateTableRequest(game="bozo", seats=2, options=pack(options), cpu_seats=[1]),
            metadata=auth,
        )
        table_id = created.table.id
        match = (await api.StartTable(platform_pb2.StartTableRequest(table_id=table_id), metadata=auth)).match
        question = pack(bozo_pb2.Question(advice=bozo_pb2.AdviceRequest()))
        cup_seen = False
        while match.status == match_pb2.MATCH_STATUS_ACTIVE:
            assert list(match.to_act) == [0]
            view = as_dict(unpack(match.view, bozo_pb2.View))
            reply = await api.Ask(
                platform_pb2.AskRequest(table_id=table_id, question=question), metadata=auth
            )
            assert reply.version == match.version
            answer = unpack(reply.answer, bozo_pb2.Answer)
            same(as_dict(answer.advice), bozo_expected(view, 0), bozo_pb2.Action)
            action = answer.advice.options[0].action
            if action.HasField("throw") and not cup_seen:
                action.throw.cup = True  # as good as without: the advice says so
                assert (
                    answer.advice.options[1].expected_final_score
                    == answer.advice.options[0].expected_final_score
                )
                cup_seen = True
            request = platform_pb2.ActRequest(
                table_id=table_id, expected_version=match.version, action=pack(action)
            )
            match = (await api.Act(request, metadata=auth)).match
            if as_dict(unpack(match.view, bozo_pb2.View)).get("cup_pending"):
                # Under the cup: both sides worth the same, and the faces unknown to the advice.
                under = unpack(
                    (
                        await api.Ask(
                            platform_pb2.AskRequest(table_id=table_id, question=question), metadata=auth
                        )
                    ).answer,
                    bozo_pb2.Answer,
                ).advice
                assert [o.action.declare.side for o in under.options] == [bozo_pb2.TOP, bozo_pb2.BOTTOM]
                assert under.options[0].expected_final_score == under.options[1].expected_final_score
        assert cup_seen
        cards = as_dict(unpack(match.view, bozo_pb2.View))["cards"]
        assert [len(card["boxes"]) for card in cards] == [10, 10]  # the CPU filled its card too
        assert match.result.reason == match_pb2.END_REASON_COMPLETED
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await api.Ask(platform_pb2.AskRequest(table_id=table_id, question=question), metadata=auth)
        assert refusal(failure.value) == (grpc.StatusCode.FAILED_PRECONDITION, "game_over")

        # Without the option, and a ranked ticket with it.
        plain = await api.CreateTable(platform_pb2.CreateTableRequest(game="yatzy", seats=1), metadata=auth)
        await api.StartTable(platform_pb2.StartTableRequest(table_id=plain.table.id), metadata=auth)
        yatzy_question = pack(yatzy_pb2.Question(advice=yatzy_pb2.AdviceRequest()))
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await api.Ask(
                platform_pb2.AskRequest(table_id=plain.table.id, question=yatzy_question), metadata=auth
            )
        assert refusal(failure.value) == (grpc.StatusCode.FAILED_PRECONDITION, "advice_off")
        find = platform_pb2.FindMatchRequest(
            game="yatzy", options=pack(yatzy_pb2.Options(advice=True)), ranked=True
        )
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            async for _ in api.FindMatch(find, metadata=auth):
                pass
        assert refusal(failure.value) == (grpc.StatusCode.INVALID_ARGUMENT, "practice_unranked")


async def test_bozo_duplas_with_three_cpus_over_http(http: httpx.AsyncClient) -> None:
    """A person with a CPU partner against a CPU team: the partner is told
    the team card's value while the CPU partner plays it, never options."""
    ana = await register(http, "ana")
    table = await ana.create_table("bozo", 4, {"mode": "DUPLAS", "advice": True}, cpu_seats=[1, 2, 3])
    snap = await ana.start(table["id"])
    while snap["status"] == ACTIVE:
        answer = (await ana.ask(table["id"], ADVICE))["answer"]["advice"]
        same(answer, bozo_expected(snap["view"], 0), bozo_pb2.Action)
        snap = await ana.act(table["id"], snap["version"], answer["options"][0]["action"])
    assert [len(card["boxes"]) for card in snap["view"]["cards"]] == [10, 10]
    assert snap["result"]["reason"] == "END_REASON_COMPLETED"
