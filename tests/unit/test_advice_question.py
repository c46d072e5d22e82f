"""The advice question of Yatzy's and Bozó's practice tables (issue 17): the
answer is the advisor's, computed from the asker's view, and every refusal
has its code."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format
from rodada.bozo.v1 import bozo_pb2
from rodada.yatzy.v1 import yatzy_pb2

from services.bozo import advisor as bozo_advisor
from services.bozo.game import GAME as BOZO
from services.kit import play
from services.kit.engine import Context, InvalidAction, RulesError
from services.kit.game import Game
from services.kit.play import Table
from services.kit.rng import MatchRng
from services.yatzy import advisor as yatzy_advisor
from services.yatzy import scoring as yatzy_scoring
from services.yatzy.game import GAME as YATZY

JSON = dict[str, Any]
NOW = 1_000.0
ADVICE: JSON = {"advice": {}}


def start(game: Game, seats: int, options: JSON, seed: int = 1) -> tuple[Table, Context]:
    ctx = Context(MatchRng(bytes([seed]) * 32), NOW, NOW)
    table, _ = play.start(game, seats, options, ctx)
    return table, ctx


def ask(game: Game, table: Table, seat: int | None, question: JSON | None = None) -> JSON:
    """Ask as the service does: the decoded Question, the answer fitting the
    game's Answer message (checked strictly, as the conformance suite does)."""
    assert game.ask is not None
    message = json_format.ParseDict(ADVICE if question is None else question, game.messages.Question())
    before = copy.deepcopy(table.state)
    answer = game.ask(table.state, seat, message)
    assert table.state == before  # a question changes nothing
    json_format.ParseDict(answer, game.messages.Answer())
    return answer


def refused(game: Game, table: Table, seat: int | None, code: str) -> None:
    with pytest.raises(RulesError) as raised:
        ask(game, table, seat)
    assert raised.value.code == code and not isinstance(raised.value, InvalidAction)


def test_yatzy_advice_is_the_advisors_through_a_whole_game() -> None:
    for card in ("CLASSIC", "SCANDINAVIAN"):
        table, ctx = start(YATZY, 2, {"card": card, "advice": True})
        advised = 0
        while YATZY.outcome(table.state) is None:
            (seat,) = YATZY.to_act(table.state)
            state = table.state
            answer = ask(YATZY, table, seat)["advice"]
            best = yatzy_advisor.advise(state["filled"][seat], state["dice"], state["throws"], card)
            assert answer["expected_final_score"] == best.expected_final_score
            assert [(o["action"], o["expected_final_score"]) for o in answer["options"]] == [
                (o.action, o.expected_final_score) for o in best.options
            ]
            values = [o["expected_final_score"] for o in answer["options"]]
            assert values == sorted(values, reverse=True)
            # The seat waiting: its card's value from its next turn start, nothing to do.
            other = ask(YATZY, table, 1 - seat)["advice"]
            filled = state["filled"][1 - seat]
            if len(filled) < len(yatzy_scoring.boxes(card)):
                assert other == {
                    "expected_final_score": yatzy_advisor.expected_total(filled, card),
                    "options": [],
                }
            play.act(YATZY, table, seat, answer["options"][0]["action"], ctx)
            advised += 1
        assert advised > 2 * len(yatzy_scoring.boxes(card))
        refused(YATZY, table, 0, "game_over")


def test_yatzy_advice_from_an_empty_card_is_the_optimum() -> None:
    table, _ = start(YATZY, 1, {"advice": True})
    answer = ask(YATZY, table, 0)["advice"]
    assert answer["expected_final_score"] == pytest.approx(245.870775, abs=1e-6)
    assert answer["options"] == [
        {"action": {"roll": {}}, "expected_final_score": answer["expected_final_score"]}
    ]


def test_yatzy_refusals() -> None:
    table, ctx = start(YATZY, 2, {})
    refused(YATZY, table, 0, "advice_off")  # the option is off by default
    table, ctx = start(YATZY, 3, {"advice": True})
    refused(YATZY, table, None, "not_seated")  # a spectator
    play.leave(YATZY, table, 2, ctx)
    refused(YATZY, table, 2, "not_in_game")
    ask(YATZY, table, 1)  # the others still may
    with pytest.raises(InvalidAction) as raised:
        ask(YATZY, table, 0, {})
    assert raised.value.code == "malformed_question"


def test_bozo_advice_in_every_mode_is_the_advisors_from_the_askers_view() -> None:
    """Solo, duel and duplas, with the cup now and then: the seat to act gets
    the advisor's options (throws with and without the cup); its partner the
    value of the team card's position; the other side its card's value from
    a turn start. Under the cup the answer is the same whatever the faces."""
    for seats, mode in ((1, "SOLO"), (2, "DUEL"), (4, "DUPLAS")):
        table, ctx = start(BOZO, seats, {"mode": mode, "advice": True}, seed=seats)
        cups = 0
        while BOZO.outcome(table.state) is None:
            (seat,) = BOZO.to_act(table.state)
            state = table.state
            cards = 2 if mode == "DUPLAS" else seats
            for asker in range(seats):
                answer = ask(BOZO, table, asker)["advice"]
                card = state["cards"][asker % cards]
                if asker % cards != seat % cards:
                    assert answer == {
                        "expected_final_score": bozo_advisor.expected_total(card),
                        "options": [],
                    }
                    continue
                view = BOZO.view(state, asker)
                dice = [d["face"] for d in view["dice"]]
                best = bozo_advisor.advise(
                    card, dice, state["throws"], cup_pending=state["cup_pending"], with_cup=True
                )
                assert answer["expected_final_score"] == best.expected_final_score
                if asker != seat:
                    assert answer["options"] == []
                    continue
                assert [(o["action"], o["expected_final_score"]) for o in answer["options"]] == [
                    (o.action, o.expected_final_score) for o in best.options
                ]
            if state["cup_pending"]:
                cups += 1
                # Whatever the faces under the cup, the same answer.
                other = copy.deepcopy(table)
                for i in other.state["just_thrown"]:
                    other.state["dice"][i] = 7 - other.state["dice"][i]
                assert ask(BOZO, other, seat) == ask(BOZO, table, seat)
            answer = ask(BOZO, table, seat)["advice"]
            action = answer["options"][0]["action"]
            if "throw" in action and state["turn"] % 3 == 0:
                action = {"throw": {**action["throw"], "cup": True}}
            play.act(BOZO, table, seat, action, ctx)
        assert cups > 0
        refused(BOZO, table, 0, "game_over")


def test_bozo_solo_advice_from_an_empty_card_is_the_optimum() -> None:
    table, _ = start(BOZO, 1, {"mode": "SOLO", "advice": True})
    answer = ask(BOZO, table, 0)["advice"]
    assert answer["expected_final_score"] == pytest.approx(146.930347, abs=1e-6)
    assert [o["action"] for o in answer["options"]] == [
        {"throw": {"keep": [], "cup": False}},
        {"throw": {"keep": [], "cup": True}},
    ]


def test_bozo_refusals() -> None:
    table, _ = start(BOZO, 2, {"mode": "DUEL"})
    refused(BOZO, table, 0, "advice_off")
    table, ctx = start(BOZO, 2, {"mode": "DUEL", "advice": True})
    refused(BOZO, table, None, "not_seated")
    with pytest.raises(InvalidAction) as raised:
        ask(BOZO, table, 0, {})
    assert raised.value.code == "malformed_question"
    play.leave(BOZO, table, 1, ctx)  # conceding ends the duel
    refused(BOZO, table, 0, "game_over")


def test_advice_is_a_practice_option_off_by_default() -> None:
    for game, message in ((YATZY, yatzy_pb2.Options), (BOZO, bozo_pb2.Options)):
        assert game.practice_options == frozenset({"advice"})
        assert "advice" in message.DESCRIPTOR.fields_by_name
        assert not game.options({}).advice  # type: ignore[attr-defined]
        assert list(game.info().practice_options) == ["advice"]
        assert game.info().questions and game.info().cpu_seats
