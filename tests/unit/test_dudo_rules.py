"""Dudo rules, one by one, with rigged dice, played through the kit
(RULES.md "Dudo", seed 001)."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import pytest
from rodada.dudo.v1 import dudo_pb2

from services.dudo.bids import count_matching, lowest_raise
from services.dudo.game import GAME
from services.kit import play
from services.kit.engine import EndReason, Event, InvalidAction, Outcome, RulesError
from services.kit.play import Happening, Notice
from services.kit.rng import MatchRng
from tests import playing
from tests.proto_shapes import assert_event_fits
from tests.rigged import RiggedRng, ctx

START = playing.NOW
DUDO: dict[str, Any] = {"dudo": {}}
CALZA: dict[str, Any] = {"calza": {}}
CLAIM: dict[str, Any] = {"claim_inactivity": {}}


def bid(quantity: int, face: int) -> dict[str, Any]:
    return {"bid": {"quantity": quantity, "face": face}}


def set_assist(on: bool) -> dict[str, Any]:
    return {"set_assist": {"on": on}}


def to_act(table: Table) -> list[int]:
    return GAME.to_act(table.state)


def outcome(table: Table) -> Outcome:
    result = GAME.outcome(table.state)
    assert result is not None
    return result


class Table:
    """A match whose dice are chosen by the test, played through the kit
    (``tests.playing``): ``hands`` is the first round's throw by seat,
    ``opener`` the drawn first opener. ``happened`` holds what the last
    accepted step produced (the game's events and the kit's notices)."""

    def __init__(self, hands: Sequence[Sequence[int]], opener: int = 0, **options: Any) -> None:
        options.setdefault("dice_per_player", max(len(hand) for hand in hands))
        rng = RiggedRng([opener, *chain.from_iterable(hands)])
        self.table, self.happened = playing.start(GAME, len(hands), options, rng=rng)
        assert not rng.queue, "the rigged dice were not all thrown"
        self._check()

    @property
    def state(self) -> dict[str, Any]:
        return self.table.state

    def act(
        self, seat: int, action: dict[str, Any], then: Iterable[Sequence[int]] = (), now: float = START
    ) -> list[Happening]:
        """Play an accepted action; ``then`` is the next round's throw (seats
        still in only), drawn exactly if the action ends the round."""
        self.table, self.happened = playing.act(
            GAME, self.table, seat, action, *chain.from_iterable(then), now=now
        )
        self._check()
        return self.happened

    def leave(self, seat: int, then: Iterable[Sequence[int]] = ()) -> list[Happening]:
        self.table, self.happened = playing.leave(GAME, self.table, seat, *chain.from_iterable(then))
        self._check()
        return self.happened

    def refuse(
        self, seat: int, action: Any, code: str, now: float = START, invalid: bool = False
    ) -> RulesError:
        """The action is refused with ``code``, draws nothing and changes nothing."""
        before = copy.deepcopy(self.table)
        with pytest.raises(RulesError) as refused:
            play.act(GAME, copy.deepcopy(self.table), seat, action, ctx(RiggedRng(), now=now))
        assert refused.value.code == code, refused.value.message
        assert isinstance(refused.value, InvalidAction) == invalid
        assert self.table == before
        return refused.value

    def view(self, seat: int | None) -> dict[str, Any]:
        view = GAME.view(self.state, seat)
        playing.assert_fits(dudo_pb2.View, view)
        return view

    def kinds(self) -> list[str]:
        return playing.kinds(self.happened)

    def event(self, kind: str) -> dict[str, Any]:
        (found,) = [event for event in playing.events(self.happened) if event.kind == kind]
        assert found.audience is None
        return found.data

    def _check(self) -> None:
        for event in playing.events(self.happened):
            assert_event_fits(dudo_pb2.Event, event)


# --- Starting a match ---------------------------------------------------------


def test_first_round_throws_every_seat_in_secret() -> None:
    table = Table([[2, 3, 5], [1, 1, 6], [4, 4, 4]], opener=1)
    assert table.kinds() == ["round_started", "dice_rolled", "dice_rolled", "dice_rolled"]
    assert table.event("round_started") == {
        "round": 1, "opener": 1, "dice_counts": [3, 3, 3], "dice_in_play": 9, "palifico": False,
    }  # fmt: skip
    rolled = [(event.audience, event.data) for event in playing.events(table.happened)[1:]]
    assert rolled == [
        ((0,), {"round": 1, "seat": 0, "dice": [2, 3, 5]}),
        ((1,), {"round": 1, "seat": 1, "dice": [1, 1, 6]}),
        ((2,), {"round": 1, "seat": 2, "dice": [4, 4, 4]}),
    ]
    assert to_act(table) == [1]
    assert table.view(0)["my_dice"] == [2, 3, 5]
    assert table.view(2)["my_dice"] == [4, 4, 4]
    assert table.view(None)["my_dice"] == []
    assert GAME.outcome(table.state) is None


def test_a_seat_sees_the_table_and_only_its_own_dice() -> None:
    table = Table([[5, 1, 2], [5, 5, 3], [1, 6, 6]])
    table.act(0, bid(3, 5))
    # The viewer's seat, the seat to act and its clock are the Snapshot's.
    assert table.view(1) == {
        "players": [
            {"seat": 0, "dice_count": 3, "out": False},
            {"seat": 1, "dice_count": 3, "out": False},
            {"seat": 2, "dice_count": 3, "out": False},
        ],
        "my_dice": [5, 5, 3],
        "round": 1,
        "opener": 0,
        "current_bid": {"quantity": 3, "face": 5},
        "bidder": 0,
        "round_bids": [{"seat": 0, "quantity": 3, "face": 5}],
        "dice_in_play": 9,
        "assist": False,
        "options": {"dice_per_player": 3, "palifico": False, "calza": False, "open_on_ones": False},
        "palifico_round": False,
    }
    spectator = table.view(None)
    assert spectator["my_dice"] == []
    assert {key: value for key, value in table.view(1).items() if key != "my_dice"} == {
        key: value for key, value in spectator.items() if key != "my_dice"
    }


def test_first_opener_is_drawn_by_the_match_generator() -> None:
    openers = []
    for n in range(40):
        seed = n.to_bytes(32, "big")
        table, _ = playing.start(GAME, 4, {}, rng=MatchRng(seed))
        assert table.state["opener"] == MatchRng(seed).randbelow(4)
        assert GAME.to_act(table.state) == [table.state["opener"]]
        openers.append(table.state["opener"])
    assert set(openers) == {0, 1, 2, 3}


def test_defaults_are_the_lizumo_table() -> None:
    table, _ = playing.start(GAME, 2)
    view = GAME.view(table.state, 0)
    assert view["options"] == {"dice_per_player": 3, "palifico": False, "calza": False, "open_on_ones": False}
    assert [player["dice_count"] for player in view["players"]] == [3, 3]
    assert len(view["my_dice"]) == 3
    assert view["dice_in_play"] == 6
    assert table.mode == "standard"


@pytest.mark.parametrize("dice", [1, 5])
def test_dice_per_player_is_chosen_by_the_creator(dice: int) -> None:
    table, _ = playing.start(GAME, 6, {"dice_per_player": dice, "calza": True})
    assert GAME.view(table.state, None)["dice_in_play"] == 6 * dice
    assert all(len(GAME.view(table.state, seat)["my_dice"]) == dice for seat in range(6))


@pytest.mark.parametrize(
    "options",
    [
        {"dice_per_player": 0},
        {"dice_per_player": 6},
        {"dice_per_player": -1},
        {"dice_per_player": True},
        {"dice_per_player": 2.5},
        {"calza": 1},
        {"palifico": "yes"},
        {"open_on_ones": 0},
        {"wild_ones": False},
        ["calza"],
    ],
)
def test_bad_options_are_refused(options: Any) -> None:
    with pytest.raises(InvalidAction) as refused:
        playing.start(GAME, 3, options)
    assert refused.value.code == "invalid_options"


def test_absent_option_values_mean_the_default() -> None:
    table, _ = playing.start(GAME, 2, {"dice_per_player": None, "calza": None})
    assert table.state["options"] == {
        "dice_per_player": 3,
        "palifico": False,
        "calza": False,
        "open_on_ones": False,
    }


def test_a_number_in_a_string_is_a_number() -> None:
    # proto3 JSON takes "3" for an int32 (the kit parses options with protobuf).
    table, _ = playing.start(GAME, 2, {"dice_per_player": "3"})
    assert table.state["options"]["dice_per_player"] == 3


@pytest.mark.parametrize("seats", [0, 1, 7, True])
def test_two_to_six_players(seats: int) -> None:
    with pytest.raises(InvalidAction) as refused:
        playing.start(GAME, seats)
    assert refused.value.code == "invalid_seats"


# --- Counting and raising (bids.py) -------------------------------------------


def test_ones_are_wild_except_for_a_bid_on_ones() -> None:
    dice = [5, 1, 2, 5, 1, 6]
    assert count_matching(dice, 5, ones_wild=True) == 4
    assert count_matching(dice, 3, ones_wild=True) == 2
    assert count_matching(dice, 1, ones_wild=True) == 2
    assert count_matching(dice, 5, ones_wild=False) == 2


def _rules_say_raise(q0: int, f0: int, q: int, f: int) -> bool:
    """RULES.md's raising table, literally."""
    if f0 != 1 and f != 1:
        return q > q0 or (q == q0 and f > f0)
    if f0 != 1:
        return q >= math.ceil(q0 / 2)
    if f == 1:
        return q > q0
    return q >= 2 * q0 + 1


def test_lowest_raise_matches_the_rules_table_exhaustively() -> None:
    checked = 0
    for q0 in range(1, 31):
        for f0 in range(1, 7):
            for f in range(1, 7):
                lowest = lowest_raise(q0, f0, f)
                for q in range(1, 63):
                    assert (q >= lowest) == _rules_say_raise(q0, f0, q, f), (q0, f0, q, f)
                    checked += 1
    assert checked == 30 * 36 * 62


def _table_with_bid(quantity: int, face: int) -> Table:
    """Six players with five dice each (30 in play); seat 1 has made the
    standing bid and seat 2 is to act."""
    table = Table([[2, 3, 4, 5, 6]] * 6)
    table.act(0, bid(1, 2))
    table.act(1, bid(quantity, face))
    return table


@pytest.mark.parametrize(
    ("standing", "raised"),
    [
        ((4, 5), (4, 6)),  # "Depois de «quatro 5» você pode dizer «quatro 6»"
        ((4, 5), (5, 2)),  # "… ou então «cinco 2», «cinco 3» e assim por diante"
        ((4, 5), (5, 3)),
        ((4, 5), (9, 6)),
        ((6, 4), (3, 1)),  # "De «seis 4» você pode dizer «três 1»"
        ((5, 4), (3, 1)),  # "de «cinco 4» também pode dizer «três 1»"
        ((6, 4), (4, 1)),
        ((3, 1), (7, 2)),  # "De «três 1» você tem que dizer pelo menos «sete»"
        ((3, 1), (7, 6)),
        ((3, 1), (4, 1)),  # ones to ones: more dice
    ],
)
def test_seed_raises_are_accepted(standing: tuple[int, int], raised: tuple[int, int]) -> None:
    table = _table_with_bid(*standing)
    table.act(2, bid(*raised))
    assert table.state["bid"] == {"quantity": raised[0], "face": raised[1]}
    assert table.event("bid_made") == {"seat": 2, "quantity": raised[0], "face": raised[1]}
    assert to_act(table) == [3]


@pytest.mark.parametrize(
    ("standing", "refused", "lowest"),
    [
        ((4, 5), (4, 3), 5),  # "Você não pode dizer «quatro 3»"
        ((4, 5), (4, 5), 5),
        ((4, 5), (3, 6), 4),
        ((6, 4), (2, 1), 3),
        ((5, 4), (2, 1), 3),
        ((3, 1), (6, 6), 7),  # "pelo menos «sete»"
        ((3, 1), (6, 2), 7),
        ((3, 1), (3, 1), 4),
        ((3, 1), (2, 1), 4),
    ],
)
def test_seed_non_raises_are_refused(
    standing: tuple[int, int], refused: tuple[int, int], lowest: int
) -> None:
    table = _table_with_bid(*standing)
    error = table.refuse(2, bid(*refused), "bid_too_low")
    assert f"at least {lowest} dice" in error.message


def test_the_opening_bid_may_not_be_on_ones() -> None:
    table = Table([[1, 1, 1], [1, 1, 1]])
    table.refuse(0, bid(2, 1), "opening_on_ones")
    table.act(0, bid(2, 6))
    table.act(1, bid(1, 1))  # ones are fine once the round is open
    assert table.state["bid"] == {"quantity": 1, "face": 1}


def test_open_on_ones_variant_allows_it() -> None:
    table = Table([[1, 1, 1], [1, 1, 1]], open_on_ones=True)
    table.act(0, bid(2, 1))
    assert table.view(1)["current_bid"] == {"quantity": 2, "face": 1}


def test_quantity_is_at_most_the_dice_in_play() -> None:
    table = Table([[2, 2, 2], [3, 3, 3], [4, 4, 4]])
    error = table.refuse(0, bid(10, 2), "quantity_too_high")
    assert "9" in error.message
    table.act(0, bid(9, 2))
    # From nine 2s only ones can still be bid (five 1s); anything else is too many.
    table.refuse(1, bid(10, 3), "quantity_too_high")
    table.refuse(1, bid(9, 2), "bid_too_low")
    table.act(1, bid(5, 1))


# --- Malformed input and turn order -------------------------------------------


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({}, "malformed_action"),
        ({"bid": {"quantity": 2, "face": 3}, "dudo": {}}, "malformed_action"),
        ("dudo", "malformed_action"),
        ({"dudo": 1}, "malformed_action"),
        ({"dudo": {"loud": True}}, "malformed_action"),
        ({"bid": {"quantity": 2, "face": 3, "seat": 1}}, "malformed_action"),
        ({"raise": {}}, "malformed_action"),  # was unknown_action: now the kit's parse
        ({"bid": {"face": 3}}, "invalid_quantity"),
        ({"bid": {"quantity": 0, "face": 3}}, "invalid_quantity"),
        ({"bid": {"quantity": -2, "face": 3}}, "invalid_quantity"),
        ({"dudo": None}, "malformed_action"),  # null sets nothing: no action at all
        ({"bid": {"quantity": 2.5, "face": 3}}, "malformed_action"),  # types: the kit's parse
        ({"bid": {"quantity": True, "face": 3}}, "malformed_action"),
        ({"bid": {"quantity": 2}}, "invalid_face"),
        ({"bid": {"quantity": 2, "face": 7}}, "invalid_face"),
        ({"bid": {"quantity": 2, "face": -1}}, "invalid_face"),
        ({"set_assist": {"on": "yes"}}, "malformed_action"),  # was invalid_flag
        ({"set_assist": {"on": 1}}, "malformed_action"),
    ],
)
def test_malformed_actions_are_refused(action: Any, code: str) -> None:
    table = Table([[2, 3, 4], [5, 6, 6]])
    table.refuse(0, action, code, invalid=True)


def test_a_quantity_in_a_string_is_a_number() -> None:
    # proto3 JSON takes "2" for an int32: the kit parses actions with protobuf.
    table = Table([[2, 3, 4], [5, 6, 6]])
    table.act(0, {"bid": {"quantity": "2", "face": 3}})
    assert table.state["bid"] == {"quantity": 2, "face": 3}


def test_the_turn_is_checked_before_the_bid() -> None:
    # The kit checks the turn before the move sees the bid or the variant.
    table = Table([[2, 3, 4], [5, 6, 6]])
    table.refuse(1, bid(0, 3), "not_your_turn")
    table.refuse(1, CALZA, "not_your_turn")
    table.refuse(0, bid(0, 3), "invalid_quantity", invalid=True)
    table.refuse(0, CALZA, "calza_disabled")


def test_only_the_seat_to_act_bids_or_calls() -> None:
    table = Table([[2, 3, 4], [5, 6, 6], [1, 2, 2]], opener=1, calza=True)
    table.refuse(0, bid(1, 2), "not_your_turn")
    table.refuse(2, bid(1, 2), "not_your_turn")
    table.act(1, bid(2, 2))
    table.refuse(1, bid(3, 2), "not_your_turn")
    table.refuse(0, DUDO, "not_your_turn")
    table.refuse(0, CALZA, "not_your_turn")
    table.refuse(1, DUDO, "not_your_turn")  # not on your own bid either


def test_a_call_needs_a_bid() -> None:
    table = Table([[2, 3, 4], [5, 6, 6]], calza=True)
    table.refuse(0, DUDO, "no_bid")
    table.refuse(0, CALZA, "no_bid")


def test_calza_is_off_at_the_lizumo_table() -> None:
    table = Table([[2, 3, 4], [5, 6, 6]])
    table.act(0, bid(2, 5))
    table.refuse(1, CALZA, "calza_disabled")


def test_turn_goes_left_skipping_players_who_are_out() -> None:
    table = Table([[2], [3], [4], [5]], opener=3)
    table.act(3, bid(1, 3))
    assert to_act(table) == [0]  # seat 3's left is seat 0
    table.act(0, DUDO, then=[[6], [6], [6]])  # one 3 on the table: caller 0 is out
    assert table.state["counts"] == [0, 1, 1, 1]
    assert to_act(table) == [1]  # 0 is out: the first to its left opens
    table.act(1, bid(1, 6))
    table.act(2, bid(2, 6))
    table.act(3, bid(3, 6))
    assert to_act(table) == [1]  # seat 0 is skipped


# --- Dudo: the reveal and who loses a die -------------------------------------

HANDS = [[5, 1, 2], [5, 5, 3], [1, 6, 6]]  # 5s with wild ones: 5, 5, 5, 1, 1 = five


def test_dudo_reveals_every_die_and_counts_wild_ones() -> None:
    table = Table(HANDS)
    table.act(0, bid(5, 5))
    table.act(1, DUDO, then=[[2, 2, 2], [3, 3], [4, 4, 4]])
    assert table.kinds()[:2] == ["revealed", "round_started"]
    reveal = table.event("revealed")
    assert reveal == {
        "round": 1,
        "caller": 1,
        "call": "DUDO",
        "bidder": 0,
        "bid": {"quantity": 5, "face": 5},
        "ones_wild": True,
        "hands": [
            {"seat": 0, "dice": [5, 1, 2]},
            {"seat": 1, "dice": [5, 5, 3]},
            {"seat": 2, "dice": [1, 6, 6]},
        ],
        "count": 5,
        "outcome": "CALLER_LOSES",  # at least the bid: the caller loses
        "loser": 1,
    }
    assert table.state["counts"] == [3, 2, 3]
    for seat in (0, 1, 2, None):
        assert table.view(seat)["last_reveal"] == reveal


def test_dudo_on_a_bluff_costs_the_bidder_a_die() -> None:
    table = Table(HANDS)
    table.act(0, bid(5, 5))
    table.act(1, bid(6, 5))
    table.act(2, DUDO, then=[[2, 2, 2], [3, 3], [4, 4, 4]])
    reveal = table.event("revealed")
    assert (reveal["count"], reveal["outcome"], reveal["loser"]) == (5, "BIDDER_LOSES", 1)
    assert table.state["counts"] == [3, 2, 3]


def test_a_bid_on_ones_counts_only_ones() -> None:
    table = Table(HANDS)
    table.act(0, bid(3, 5))
    table.act(1, bid(2, 1))  # two 1s: true
    table.act(2, DUDO, then=[[2, 2, 2], [3, 3, 3], [4, 4]])
    reveal = table.event("revealed")
    assert (reveal["count"], reveal["ones_wild"], reveal["loser"]) == (2, False, 2)

    table = Table(HANDS)
    table.act(0, bid(3, 5))
    table.act(1, bid(3, 1))  # three 1s: only two, the 5s do not count
    table.act(2, DUDO, then=[[2, 2, 2], [3, 3], [4, 4, 4]])
    assert table.event("revealed")["outcome"] == "BIDDER_LOSES"


def test_the_loser_opens_the_next_round() -> None:
    table = Table(HANDS)
    table.act(0, bid(5, 5))
    table.act(1, DUDO, then=[[2, 2, 2], [3, 3], [4, 4, 4]])
    started = table.event("round_started")
    assert started == {
        "round": 2,
        "opener": 1,
        "dice_counts": [3, 2, 3],
        "dice_in_play": 8,
        "palifico": False,
    }
    assert to_act(table) == [1]
    view = table.view(1)
    assert (view["round"], view["opener"], view["my_dice"], view["round_bids"]) == (2, 1, [3, 3], [])
    assert "current_bid" not in view


def test_a_loser_who_is_out_passes_the_opening_to_the_left() -> None:
    table = Table([[2], [3], [4]], opener=1)
    table.act(1, bid(1, 5))
    table.act(2, DUDO, then=[[6], [6]])  # no 5 and no 1: bidder 1 is out
    assert table.event("player_out") == {"seat": 1, "reason": "NO_DICE", "place": 3}
    assert table.event("round_started")["opener"] == 2


def test_elimination_order_gives_the_placings() -> None:
    table = Table([[2], [3], [4], [5]])
    table.act(0, bid(1, 3))
    table.act(1, DUDO, then=[[6], [6], [6]])  # seat 1 holds the 3: caller 1 is out, 4th
    assert table.event("player_out") == {"seat": 1, "reason": "NO_DICE", "place": 4}
    assert to_act(table) == [2]  # loser 1 is out: the next player in opens
    table.act(2, bid(1, 6))
    table.act(3, bid(2, 6))
    table.act(0, DUDO, then=[[2], [3]])  # three 6s: caller 0 is out, 3rd
    assert table.event("player_out") == {"seat": 0, "reason": "NO_DICE", "place": 3}
    assert to_act(table) == [2]  # left of 0: 1 is out, so 2
    table.act(2, bid(1, 4))
    table.act(3, DUDO)  # no 4: bidder 2 is out, 2nd; seat 3 wins
    # The end is the final event's Result now, not a game_over event.
    assert table.kinds() == ["revealed", "player_out"]
    result = outcome(table)
    assert (result.ranks, result.reason, result.forfeited, result.scores) == (
        [3, 4, 2, 1],
        EndReason.COMPLETED,
        [],
        [],
    )
    assert table.state["winner"] == 3
    assert to_act(table) == []
    view = table.view(3)
    assert view["my_dice"] == []
    assert [player.get("place") for player in view["players"]] == [3, 4, 2, 1]
    assert [player["out"] for player in view["players"]] == [True, True, True, False]
    after_the_end: list[dict[str, Any]] = [bid(1, 2), DUDO, set_assist(True), CLAIM]
    for action in after_the_end:
        table.refuse(3, action, "game_over")
    with pytest.raises(RulesError) as refused:
        playing.leave(GAME, table.table, 3)
    assert refused.value.code == "game_over"


def test_a_player_who_is_out_cannot_act() -> None:
    table = Table([[2], [3], [4]])
    table.act(0, bid(1, 3))
    table.act(1, DUDO, then=[[6], [6]])  # caller 1 is out
    table.refuse(1, bid(1, 2), "not_in_game")
    table.refuse(1, CLAIM, "not_in_game", now=START + 500)
    with pytest.raises(RulesError) as refused:
        playing.leave(GAME, table.table, 1)
    assert refused.value.code == "not_in_game"
    # The kit refuses every move of a seat out of play, anytime moves too: an
    # out player can no longer switch assisted mode (it showed them nothing).
    table.refuse(1, set_assist(True), "not_in_game")


# --- Leaving and inactivity ---------------------------------------------------


def test_leaving_on_your_turn_passes_the_standing_bid_on() -> None:
    table = Table([[5, 5, 2], [5, 5, 5], [1, 3, 4]])
    table.act(0, bid(4, 5))
    table.leave(1)
    assert table.kinds() == ["notice:LEFT", "player_out"]
    assert table.event("player_out") == {"seat": 1, "reason": "LEFT", "place": 3}
    assert to_act(table) == [2]
    assert table.view(2)["current_bid"] == {"quantity": 4, "face": 5}
    assert table.view(2)["dice_in_play"] == 6
    table.act(2, DUDO, then=[[6, 6], [6, 6, 6]])
    reveal = table.event("revealed")
    # The leaver's dice left the table unseen: only 5, 5 and a one count.
    assert [hand["seat"] for hand in reveal["hands"]] == [0, 2]
    assert (reveal["count"], reveal["loser"]) == (3, 0)


def test_leaving_with_the_standing_bid_voids_the_round() -> None:
    table = Table([[5, 5, 2], [5, 5, 5], [1, 3, 4]])
    table.act(0, bid(4, 5))
    table.leave(0, then=[[2, 2, 2], [3, 3, 3]])
    assert table.kinds() == [
        "notice:LEFT", "player_out", "round_voided", "round_started", "dice_rolled", "dice_rolled",
    ]  # fmt: skip
    assert table.event("round_voided") == {"round": 1, "seat": 0}
    # Seat 1 had to answer the withdrawn bid: it opens the replayed round.
    assert table.event("round_started") == {
        "round": 2, "opener": 1, "dice_counts": [0, 3, 3], "dice_in_play": 6, "palifico": False,
    }  # fmt: skip
    assert table.view(1)["my_dice"] == [2, 2, 2]
    assert "current_bid" not in table.view(1)


def test_the_opener_leaving_before_a_bid_passes_the_opening_on() -> None:
    table = Table([[5, 5, 2], [5, 5, 5], [1, 3, 4]], opener=2)
    table.leave(2)
    assert to_act(table) == [0]
    view = table.view(0)
    assert (view["round"], view["opener"], view["my_dice"]) == (1, 0, [5, 5, 2])  # same round, same dice


def test_leaving_off_turn_leaves_the_round_going() -> None:
    table = Table([[5, 5, 2], [5, 5, 5], [1, 3, 4], [6, 6, 6]])
    table.act(0, bid(4, 5))
    table.leave(2)
    assert to_act(table) == [1]
    table.act(1, bid(5, 5))
    assert to_act(table) == [3]  # 2 is skipped


def test_the_last_player_left_wins() -> None:
    table = Table([[2, 3], [4, 5], [6, 6]])
    table.act(0, bid(1, 2))
    table.act(1, DUDO, then=[[2, 2], [3], [4, 4]])  # caller 1 loses a die
    table.leave(2)
    table.leave(0)
    assert table.happened == [
        Notice("LEFT", 0),
        Event("player_out", {"seat": 0, "reason": "LEFT", "place": 2}),
    ]
    result = outcome(table)
    assert (result.ranks, result.reason, result.forfeited) == ([2, 1, 3], EndReason.FORFEIT, [2, 0])
    assert table.state["winner"] == 1


def test_inactivity_claim_after_120_seconds_of_turn() -> None:
    table = Table([[2, 3], [4, 5], [6, 6]])
    table.act(0, bid(1, 2), now=START + 10)  # seat 1's turn begins at START + 10
    assert table.table.idle_since == START + 10
    table.refuse(2, CLAIM, "too_early", now=START + 129.9)
    table.refuse(1, CLAIM, "cannot_claim_yourself", now=START + 500)
    # Another player toggling assist touches nobody's clock.
    table.act(0, set_assist(True), now=START + 100)
    assert table.table.idle_since == START + 10
    table.act(2, CLAIM, now=START + 130)
    # The claimant is named by the kit's CLAIMED notice (PlayerOut.claimed_by is gone).
    assert table.happened == [
        Notice("CLAIMED", 1, by=2),
        Event("player_out", {"seat": 1, "reason": "REMOVED_INACTIVE", "place": 3}),
    ]
    assert to_act(table) == [2]  # on the standing bid
    assert table.state["bid"] == {"quantity": 1, "face": 2}
    # The new turn has its own 120 s.
    assert table.table.idle_since == START + 130
    table.refuse(0, CLAIM, "too_early", now=START + 200)
    table.act(0, CLAIM, now=START + 250)
    assert table.kinds() == ["notice:CLAIMED", "player_out"]
    result = outcome(table)
    assert (result.ranks, result.reason, result.forfeited) == ([1, 3, 2], EndReason.INACTIVITY, [1, 2])
    assert table.state["winner"] == 0
    assert table.view(None)["players"][1]["out_reason"] == "REMOVED_INACTIVE"


def test_switching_assist_never_holds_off_a_claim() -> None:
    # set_assist is a setting, not play (the game declares it quiet): the seat
    # to act switching it every 119 s must not escape the 120 s claim.
    table = Table([[2, 3], [4, 5], [6, 6]])
    table.act(0, bid(1, 2), now=START + 10)
    table.act(1, set_assist(True), now=START + 100)
    assert table.table.idle_since == START + 10
    table.act(2, CLAIM, now=START + 130)
    assert table.event("player_out")["seat"] == 1


def test_a_match_played_to_its_end_after_a_leave_is_completed() -> None:
    # match.proto: FORFEIT is for a match that leaving ended; one played on
    # to its last die is COMPLETED, the leaver listed as forfeited.
    table = Table([[2], [4], [6]])
    table.leave(2)
    table.act(0, bid(1, 2))
    table.act(1, DUDO)  # one 2 on the table: the bid stands, caller 1 loses its last die
    result = outcome(table)
    assert (result.ranks, result.reason, result.forfeited) == ([1, 2, 3], EndReason.COMPLETED, [2])


def test_the_departure_that_ends_the_match_gives_the_reason() -> None:
    table = Table([[2, 3], [4, 5], [6, 6]])
    table.act(1, CLAIM, now=START + 120)  # removes opener 0
    table.leave(2)
    result = outcome(table)
    assert (result.ranks, result.reason, result.forfeited) == ([3, 1, 2], EndReason.FORFEIT, [0, 2])


# --- Assisted mode ------------------------------------------------------------


def test_assisted_mode_shows_the_viewer_the_odds_of_the_current_bid() -> None:
    # The seed's example: 12 dice in play, you hold 3, two of them 5s.
    table = Table([[2, 2, 2], [5, 5, 3], [4, 4, 4], [6, 6, 6]])
    events = playing.events(table.act(1, set_assist(True)))  # off turn
    assert [(event.kind, event.data, event.audience) for event in events] == [
        ("assist_changed", {"seat": 1, "on": True}, (1,))
    ]
    assert "current_bid_probability" not in table.view(1)  # no bid yet
    table.act(0, bid(4, 5))
    # four 5s, holding two: two of the nine unseen dice must be a 5 or a 1.
    expected = 1 - sum(math.comb(9, x) * (1 / 3) ** x * (2 / 3) ** (9 - x) for x in range(2))
    view = table.view(1)
    assert view["assist"] is True
    assert view["current_bid_probability"] == pytest.approx(expected, abs=1e-12)
    for other in (0, 2, None):
        assert "current_bid_probability" not in table.view(other)
        assert table.view(other)["assist"] is False
    table.act(1, {"set_assist": {}})  # proto3 JSON leaves out a false `on`
    assert "current_bid_probability" not in table.view(1)
    assert table.view(1)["assist"] is False


# --- Calza --------------------------------------------------------------------


def test_calza_right_wins_a_die_back() -> None:
    table = Table([[2, 2, 2], [3, 3, 3], [4, 4, 4]], calza=True)
    table.act(0, bid(3, 2))
    table.act(1, DUDO, then=[[5, 1, 2], [5, 3], [6, 6, 6]])  # three 2s: caller 1 loses a die
    table.act(1, bid(2, 2))
    table.act(2, bid(2, 3))
    table.act(0, bid(3, 5))
    assert table.view(None)["dice_in_play"] == 8
    table.act(1, CALZA, then=[[2, 2, 2], [3, 3, 3], [4, 4, 4]])  # 5, 1, 5: exactly three
    reveal = table.event("revealed")
    assert (reveal["call"], reveal["count"], reveal["outcome"], reveal["gainer"]) == (
        "CALZA",
        3,
        "CALZA_RIGHT",
        1,
    )
    assert "loser" not in reveal
    assert table.state["counts"] == [3, 3, 3]
    assert table.event("round_started")["opener"] == 1  # the caller opens


def test_calza_right_never_goes_above_the_starting_count() -> None:
    table = Table([[5, 1, 2], [5, 3, 3], [6, 6, 6]], calza=True)
    table.act(0, bid(3, 5))
    table.act(1, CALZA, then=[[2, 2, 2], [3, 3, 3], [4, 4, 4]])
    reveal = table.event("revealed")
    assert (reveal["outcome"], "gainer" in reveal, "loser" in reveal) == ("CALZA_RIGHT", False, False)
    assert table.state["counts"] == [3, 3, 3]
    assert table.event("round_started")["opener"] == 1


def test_calza_wrong_costs_the_caller_a_die_even_when_there_are_more() -> None:
    table = Table([[5, 1, 2], [5, 3, 3], [6, 6, 6]], calza=True)
    table.act(0, bid(2, 5))  # three 5s: true for Dudo, but not exact
    table.act(1, CALZA, then=[[2, 2, 2], [3, 3], [4, 4, 4]])
    reveal = table.event("revealed")
    assert (reveal["count"], reveal["outcome"], reveal["loser"]) == (3, "CALZA_WRONG", 1)
    assert table.state["counts"] == [3, 2, 3]
    assert table.event("round_started")["opener"] == 1


def test_calza_wrong_on_the_last_die_puts_the_caller_out() -> None:
    table = Table([[5], [3], [6]], opener=2, calza=True)
    table.act(2, bid(1, 4))
    table.act(0, CALZA, then=[[3], [6]])  # no 4 and no 1: wrong, and seat 0 had one die
    assert table.event("player_out") == {"seat": 0, "reason": "NO_DICE", "place": 3}
    assert table.event("round_started")["opener"] == 1  # the caller is out: its left opens


# --- Palifico -----------------------------------------------------------------


def _palifico_table(**options: Any) -> Table:
    """Two players with two dice; seat 0 bluffs and drops to one die."""
    table = Table([[2, 3], [4, 5]], palifico=True, **options)
    table.act(0, bid(1, 6))
    return table


def test_dropping_to_one_die_makes_the_next_round_palifico() -> None:
    table = _palifico_table()
    table.act(1, DUDO, then=[[1], [5, 5]])
    assert table.event("round_started") == {
        "round": 2, "opener": 0, "dice_counts": [1, 2], "dice_in_play": 3,
        "palifico": True, "palifico_seat": 0,
    }  # fmt: skip
    view = table.view(None)
    assert (view["palifico_round"], view["palifico_seat"]) == (True, 0)


def test_in_a_palifico_round_ones_are_not_wild_and_the_face_is_fixed() -> None:
    table = _palifico_table()
    table.act(1, DUDO, then=[[1], [5, 5]])
    table.act(0, bid(1, 5))
    table.refuse(1, bid(2, 6), "face_locked")
    table.refuse(1, bid(1, 1), "face_locked")
    table.refuse(1, bid(1, 5), "bid_too_low")
    table.act(1, bid(2, 5))
    table.act(0, bid(3, 5))  # true if ones were wild: 5, 5 and the one
    table.act(1, DUDO)
    reveal = table.event("revealed")
    assert (reveal["ones_wild"], reveal["count"], reveal["outcome"]) == (False, 2, "BIDDER_LOSES")
    assert outcome(table).ranks == [2, 1]
    assert table.view(None)["palifico_round"] is False


def test_a_palifico_round_may_open_on_ones() -> None:
    table = _palifico_table()
    table.act(1, DUDO, then=[[1], [5, 1]])
    table.act(0, bid(2, 1))
    table.refuse(1, bid(3, 2), "face_locked")  # no leaving the ones either
    table.act(1, bid(3, 1))
    assert table.view(0)["current_bid"] == {"quantity": 3, "face": 1}


def test_palifico_comes_once_per_player() -> None:
    table = _palifico_table(calza=True)
    table.act(1, DUDO, then=[[4], [4, 1]])  # seat 0 drops to one: palifico
    table.act(0, bid(1, 4))
    table.act(1, bid(2, 4))
    table.act(0, CALZA, then=[[2, 3], [4, 5]])  # two 4s, the one is not wild: right
    assert table.event("revealed")["gainer"] == 0
    assert table.event("round_started")["palifico"] is False
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[2], [3, 3]])  # seat 0 drops to one again: no second palifico
    assert table.event("round_started")["palifico"] is False
    assert table.view(0)["palifico_round"] is False
    table.act(0, bid(1, 3))
    table.act(1, bid(1, 4))
    table.act(0, DUDO, then=[[2], [3]])  # seat 1 drops to one for the first time
    assert table.event("round_started") == {
        "round": 5, "opener": 1, "dice_counts": [1, 1], "dice_in_play": 2,
        "palifico": True, "palifico_seat": 1,
    }  # fmt: skip


def test_no_palifico_without_the_variant() -> None:
    table = Table([[2, 3], [4, 5]])
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[1], [5, 5]])
    assert table.event("round_started")["palifico"] is False
    table.refuse(0, bid(1, 1), "opening_on_ones")


def test_no_palifico_with_a_single_die_each() -> None:
    table = Table([[2], [3], [4]], palifico=True)
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[5], [5]])  # seat 0 is out, nobody "drops to one"
    assert table.event("round_started")["palifico"] is False


def _palifico_for_seat_1() -> Table:
    """Three players; seat 1 drops to one die and opens a palifico round."""
    table = Table([[2, 3], [4, 5], [6, 6]], palifico=True)
    table.act(0, bid(1, 2))
    table.act(1, DUDO, then=[[2, 2], [3], [4, 4]])  # a 2 is there: caller 1 loses a die
    assert table.event("round_started")["palifico_seat"] == 1
    return table


def test_a_replayed_round_stays_palifico() -> None:
    table = _palifico_for_seat_1()
    table.act(1, bid(1, 4))
    table.act(2, bid(2, 4))
    table.leave(2, then=[[5, 5], [6]])
    assert table.kinds()[:3] == ["notice:LEFT", "player_out", "round_voided"]
    started = table.event("round_started")
    assert (started["opener"], started["palifico"], started["palifico_seat"]) == (0, True, 1)


def test_a_round_replayed_without_its_palifico_player_is_ordinary() -> None:
    table = _palifico_for_seat_1()
    table.act(1, bid(1, 4))
    table.leave(1, then=[[5, 5], [6, 6]])
    started = table.event("round_started")
    assert (started["opener"], started["palifico"]) == (2, False)
