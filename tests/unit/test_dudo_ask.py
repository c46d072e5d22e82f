"""Dudo's questions (MatchService.Ask): the odds of any bid, in assisted mode only."""

from __future__ import annotations

import pytest

from services.dudo.engine import ENGINE
from services.kit.engine import InvalidAction, RulesError
from tests.proto_shapes import assert_fits
from tests.rigged import ctx
from tests.unit.test_dudo_odds import SEED_TABLE, _state, direct_sum


def with_assist(seat: int) -> dict[str, object]:
    state = _state(SEED_TABLE)
    state, _ = ENGINE.apply(state, seat, {"set_assist": {"on": True}}, ctx())
    return state


def test_a_seat_in_assisted_mode_gets_the_exact_odds_of_any_bid() -> None:
    from rodada.dudo.v1 import dudo_pb2

    question = {"bid_odds": {"quantity": 4, "face": 5}}
    assert_fits(dudo_pb2.Question, question)
    answer = ENGINE.ask(with_assist(0), 0, question)
    assert_fits(dudo_pb2.Answer, answer)
    odds = answer["bid_odds"]
    assert (odds["quantity"], odds["face"]) == (4, 5)
    assert odds["probability"] == pytest.approx(direct_sum(2, 9, 1 / 3), abs=1e-12)  # holds two 5s, 9 unseen


def test_asking_needs_a_seat_with_assist_on_and_a_well_formed_bid() -> None:
    state = with_assist(0)
    with pytest.raises(RulesError) as error:
        ENGINE.ask(state, 1, {"bid_odds": {"quantity": 4, "face": 5}})
    assert error.value.code == "assist_off"
    with pytest.raises(RulesError) as error:
        ENGINE.ask(state, None, {"bid_odds": {"quantity": 4, "face": 5}})
    assert error.value.code == "not_seated"
    for question, code in [
        ({}, "malformed_question"),
        ({"bid_odds": {"quantity": 0, "face": 5}}, "invalid_quantity"),
        ({"bid_odds": {"quantity": 2, "face": 7}}, "invalid_face"),
    ]:
        with pytest.raises(InvalidAction) as invalid:
            ENGINE.ask(state, 0, question)
        assert invalid.value.code == code
