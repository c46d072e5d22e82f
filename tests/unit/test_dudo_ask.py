"""Dudo's questions (MatchService.Ask): the odds of any bid, in assisted mode only."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.message import Message
from rodada.dudo.v1 import dudo_pb2

from services.dudo.game import GAME
from services.kit.engine import InvalidAction, RulesError
from tests import playing
from tests.proto_shapes import assert_fits
from tests.rigged import RiggedRng
from tests.unit.test_dudo_odds import SEED_TABLE, direct_sum


def with_assist(seat: int) -> dict[str, Any]:
    """The seed's table (seat 0 holds 5, 5, 3) with ``seat``'s assisted mode on."""
    table, _ = playing.start(GAME, 4, rng=RiggedRng([0, *(die for hand in SEED_TABLE for die in hand)]))
    table, _ = playing.act(GAME, table, seat, {"set_assist": {"on": True}})
    return table.state


def question(data: dict[str, Any]) -> Message:
    """What the service hands the game: the parsed Question message."""
    return assert_fits(dudo_pb2.Question, data)


def test_a_seat_in_assisted_mode_gets_the_exact_odds_of_any_bid() -> None:
    assert GAME.ask is not None
    answer = GAME.ask(with_assist(0), 0, question({"bid_odds": {"quantity": 4, "face": 5}}))
    assert_fits(dudo_pb2.Answer, answer)
    odds = answer["bid_odds"]
    assert (odds["quantity"], odds["face"]) == (4, 5)
    assert odds["probability"] == pytest.approx(direct_sum(2, 9, 1 / 3), abs=1e-12)  # holds two 5s, 9 unseen


def test_asking_needs_a_seat_with_assist_on_and_a_well_formed_bid() -> None:
    assert GAME.ask is not None
    state = with_assist(0)
    with pytest.raises(RulesError) as error:
        GAME.ask(state, 1, question({"bid_odds": {"quantity": 4, "face": 5}}))
    assert error.value.code == "assist_off"
    with pytest.raises(RulesError) as error:
        GAME.ask(state, None, question({"bid_odds": {"quantity": 4, "face": 5}}))
    assert error.value.code == "not_seated"
    for asked, code in [
        ({}, "malformed_question"),
        ({"bid_odds": {"quantity": 0, "face": 5}}, "invalid_quantity"),
        ({"bid_odds": {"quantity": 2, "face": 7}}, "invalid_face"),
    ]:
        with pytest.raises(InvalidAction) as invalid:
            GAME.ask(state, 0, question(asked))
        assert invalid.value.code == code
