"""The Yatzy engine with exact dice: turns, throws, scoring, the end, ties,
leaving and inactivity claims, refusals and the view."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from rodada.yatzy.v1 import yatzy_pb2

from services.kit.engine import JSON, Event, InvalidAction, RulesError
from services.yatzy import scoring
from services.yatzy.engine import ENGINE
from tests.proto_shapes import assert_fits
from tests.rigged import RiggedRng, ctx

CLASSIC_BOXES = scoring.boxes(scoring.CLASSIC)


def start(seats: int = 2, card: str | None = None) -> JSON:
    state, events = ENGINE.new_match(seats, {} if card is None else {"card": card}, ctx())
    assert [(e.kind, e.data) for e in events] == [("turn_started", {"seat": 0, "round": 1})]
    return state


def act(state: JSON, seat: int, action: JSON, *faces: int, now: float = 1_000.0,
        last_action_at: float | None = None) -> tuple[JSON, list[Event]]:  # fmt: skip
    """Apply an action whose throws (if any) show ``faces``, all of them used."""
    assert_fits(yatzy_pb2.Action, action)
    rng = RiggedRng(faces)
    before = copy.deepcopy(state)
    new, events = ENGINE.apply(state, seat, action, ctx(rng, now=now, last_action_at=last_action_at))
    assert state == before, "apply mutated its input"
    assert not rng.queue, "not every rigged die was thrown"
    return new, events


def roll(state: JSON, seat: int, *faces: int, keep: Sequence[int] = ()) -> tuple[JSON, list[Event]]:
    action: JSON = {"roll": {"keep": list(keep)}} if keep else {"roll": {}}
    return act(state, seat, action, *faces)


def score(state: JSON, seat: int, box: str) -> tuple[JSON, list[Event]]:
    return act(state, seat, {"score": {"box": box}})


def turn(state: JSON, seat: int, dice: Sequence[int], box: str) -> tuple[JSON, list[Event]]:
    """One throw of ``dice``, then ``box``."""
    state, _ = roll(state, seat, *dice)
    return score(state, seat, box)


def leave(state: JSON, seat: int) -> tuple[JSON, list[Event]]:
    before = copy.deepcopy(state)
    new, events = ENGINE.leave(state, seat, ctx(RiggedRng()))
    assert state == before, "leave mutated its input"
    return new, events


def claim(state: JSON, seat: int, waited: float) -> tuple[JSON, list[Event]]:
    return act(state, seat, {"claim_inactivity": {}}, now=1_000.0 + waited, last_action_at=1_000.0)


def refused(state: JSON, seat: int, action: JSON, code: str, *, now: float = 1_000.0,
            last_action_at: float | None = None, invalid: bool = False) -> None:  # fmt: skip
    """The action is refused with ``code`` and draws no die; the state is untouched."""
    if not invalid:
        assert_fits(yatzy_pb2.Action, action)
    before = copy.deepcopy(state)
    with pytest.raises(RulesError) as raised:
        ENGINE.apply(state, seat, action, ctx(RiggedRng(), now=now, last_action_at=last_action_at))
    assert raised.value.code == code
    assert isinstance(raised.value, InvalidAction) == invalid
    assert state == before


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def play_out(state: JSON, dice_for: Callable[[int, int], Sequence[int]]) -> tuple[JSON, list[Event]]:
    """Play to the end: each turn one throw of ``dice_for(seat, round)``,
    scored in the first empty box of the card."""
    events: list[Event] = []
    while not state["over"]:
        (seat,) = ENGINE.to_act(state)
        card_view = ENGINE.view(state, None)["cards"][seat]
        box = next(b["box"] for b in card_view["boxes"] if not b["filled"])
        state, new_events = turn(state, seat, dice_for(seat, len(state["filled"][seat]) + 1), box)
        events += new_events
    return state, events


# --- Starting a match --------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "card"),
    [({}, "CLASSIC"), ({"card": "CARD_UNSPECIFIED"}, "CLASSIC"), ({"card": None}, "CLASSIC"),
     ({"card": "CLASSIC"}, "CLASSIC"), ({"card": "SCANDINAVIAN"}, "SCANDINAVIAN")],
)  # fmt: skip
def test_options_choose_the_card_classic_by_default(options: JSON, card: str) -> None:
    state, _ = ENGINE.new_match(3, options, ctx())
    view = ENGINE.view(state, None)
    assert view["card"] == card
    assert view["rounds"] == {"CLASSIC": 13, "SCANDINAVIAN": 15}[card]
    assert [len(c["boxes"]) for c in view["cards"]] == [view["rounds"]] * 3


@pytest.mark.parametrize("options", [{"card": "YAHTZEE"}, {"card": 2}, {"cards": "CLASSIC"}, {"rounds": 5}])
def test_bad_options_are_refused(options: JSON) -> None:
    with pytest.raises(InvalidAction) as raised:
        ENGINE.new_match(2, options, ctx())
    assert raised.value.code == "invalid_options"


@pytest.mark.parametrize("seats", [0, 9, -1])
def test_one_to_eight_seats(seats: int) -> None:
    with pytest.raises(InvalidAction) as raised:
        ENGINE.new_match(seats, {}, ctx())
    assert raised.value.code == "invalid_seat_count"
    assert ENGINE.new_match(1, {}, ctx())[0]["current"] == 0
    assert len(ENGINE.new_match(8, {}, ctx())[0]["filled"]) == 8


def test_no_cpu_seats() -> None:
    with pytest.raises(InvalidAction) as raised:
        ENGINE.new_match(2, {}, ctx(), cpu_seats=[1])
    assert raised.value.code == "cpu_seats_unsupported"


def test_seat_0_opens_with_no_dice_thrown() -> None:
    state = start(3)
    assert ENGINE.to_act(state) == [0]
    assert ENGINE.result(state) is None
    view = ENGINE.view(state, 0)
    assert view["current_seat"] == 0
    assert view["round"] == 1
    assert view["dice"] == []
    assert (view["throws_used"], view["throws_left"]) == (0, 3)
    assert view["preview"] == []


# --- Throwing -----------------------------------------------------------------------


def test_first_throw_throws_all_five() -> None:
    state, events = roll(start(), 0, 6, 1, 3, 3, 2)
    assert [(e.kind, e.data, e.audience) for e in events] == [
        ("rolled", {"seat": 0, "dice": [6, 1, 3, 3, 2], "kept": [], "throw_number": 1}, None)
    ]
    assert ENGINE.view(state, None)["dice"] == [6, 1, 3, 3, 2]


def test_first_throw_cannot_keep() -> None:
    refused(start(), 0, {"roll": {"keep": [0]}}, "nothing_to_keep")


def test_rethrow_keeps_the_chosen_positions() -> None:
    state, _ = roll(start(), 0, 6, 1, 3, 3, 2)
    state, events = roll(state, 0, 5, 4, keep=[3, 0, 2])
    assert events[0].data == {"seat": 0, "dice": [6, 5, 3, 3, 4], "kept": [0, 2, 3], "throw_number": 2}
    view = ENGINE.view(state, None)
    assert (view["throws_used"], view["throws_left"]) == (2, 1)


def test_at_most_three_throws() -> None:
    state, _ = roll(start(), 0, 1, 1, 1, 1, 1)
    state, _ = roll(state, 0, 2, 2, 2, 2, 2)
    state, events = roll(state, 0, 3, 3, 3, 3, 3)
    assert events[0].data["throw_number"] == 3
    assert ENGINE.view(state, None)["throws_left"] == 0
    refused(state, 0, {"roll": {}}, "no_throws_left")
    refused(state, 0, {"roll": {"keep": [0]}}, "no_throws_left")


def test_kept_dice_can_be_thrown_again_later() -> None:
    # Seed: "dados guardados depois da primeira jogada podem ser jogados de novo na terceira".
    state, _ = roll(start(), 0, 6, 6, 2, 3, 4)
    state, _ = roll(state, 0, 5, 5, 5, keep=[0, 1])
    state, events = roll(state, 0, 5, 5, keep=[2, 3, 4])
    assert events[0].data == {"seat": 0, "dice": [5, 5, 5, 5, 5], "kept": [2, 3, 4], "throw_number": 3}


def test_a_rethrow_must_throw_a_die() -> None:
    state, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(state, 0, {"roll": {"keep": [0, 1, 2, 3, 4]}}, "must_throw_a_die")


@pytest.mark.parametrize(
    ("keep", "code"),
    [([5], "invalid_die_index"), ([-1], "invalid_die_index"), (["1"], "invalid_die_index"),
     ([True], "invalid_die_index"), ([1.0], "invalid_die_index"), ([1, 1], "duplicate_die_index"),
     (3, "malformed_action"), ("0", "malformed_action")],
)  # fmt: skip
def test_malformed_keep(keep: Any, code: str) -> None:
    state, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(state, 0, {"roll": {"keep": keep}}, code, invalid=True)


# --- Scoring ------------------------------------------------------------------------


def test_score_fills_the_box_and_passes_the_turn() -> None:
    state, _ = roll(start(), 0, 3, 3, 3, 6, 6)
    state, events = score(state, 0, "FULL_HOUSE")
    assert [(e.kind, e.data) for e in events] == [
        ("scored", {"seat": 0, "box": "FULL_HOUSE", "points": 25, "total": 25}),
        ("turn_started", {"seat": 1, "round": 1}),
    ]
    assert all(e.audience is None for e in events)
    view = ENGINE.view(state, None)
    assert view["current_seat"] == 1
    assert view["dice"] == []
    assert (view["throws_used"], view["throws_left"]) == (0, 3)
    entry = next(b for b in view["cards"][0]["boxes"] if b["box"] == "FULL_HOUSE")
    assert entry == {"box": "FULL_HOUSE", "filled": True, "points": 25}
    assert sum(b["filled"] for c in view["cards"] for b in c["boxes"]) == 1


def test_score_after_any_throw_and_a_zero_is_allowed() -> None:
    state, _ = roll(start(), 0, 2, 3, 4, 5, 6)
    state, events = score(state, 0, "ONES")
    assert events[0].data == {"seat": 0, "box": "ONES", "points": 0, "total": 0}
    assert state["filled"][0] == {"ONES": 0}


def test_score_needs_a_throw() -> None:
    refused(start(), 0, {"score": {"box": "CHANCE"}}, "roll_first")


def test_a_filled_box_cannot_be_filled_again_even_with_zero() -> None:
    state, _ = turn(start(1), 0, (2, 3, 4, 5, 6), "ONES")
    state, _ = roll(state, 0, 1, 1, 1, 1, 1)
    refused(state, 0, {"score": {"box": "ONES"}}, "box_taken")
    state, events = score(state, 0, "YATZY")
    assert events[0].data["points"] == 50


def test_a_box_of_the_other_card_is_invalid() -> None:
    state, _ = roll(start(), 0, 6, 6, 5, 5, 1)
    refused(state, 0, {"score": {"box": "ONE_PAIR"}}, "box_not_on_card", invalid=True)
    refused(state, 0, {"score": {"box": "TWO_PAIRS"}}, "box_not_on_card", invalid=True)
    scandinavian, _ = roll(start(card="SCANDINAVIAN"), 0, 6, 6, 5, 5, 1)
    assert score(scandinavian, 0, "TWO_PAIRS")[1][0].data["points"] == 22


@pytest.mark.parametrize("body", [{"box": "FOO"}, {"box": "BOX_UNSPECIFIED"}, {}, {"box": 3}, {"box": None}])
def test_unknown_box(body: JSON) -> None:
    state, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(state, 0, {"score": body}, "unknown_box", invalid=True)


@pytest.mark.parametrize(
    ("action", "code"),
    [({}, "malformed_action"), ({"roll": {}, "score": {"box": "ONES"}}, "malformed_action"),
     ([], "malformed_action"), ({"bid": {}}, "unknown_action"), ({"roll": []}, "malformed_action"),
     ({"roll": {"keep": [], "cup": True}}, "malformed_action"),
     ({"score": {"box": "ONES", "seat": 1}}, "malformed_action"),
     ({"claim_inactivity": {"seat": 1}}, "malformed_action")],
)  # fmt: skip
def test_malformed_actions(action: Any, code: str) -> None:
    state, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(state, 0, action, code, invalid=True)
    refused(state, 1, action, code, invalid=True)


def test_an_empty_roll_may_come_as_null() -> None:
    # json_format omits empty repeated fields, so {"roll": {}} and a null body both mean "no keep".
    _, events = act(start(), 0, {"roll": None}, 1, 2, 3, 4, 5)
    assert events[0].data["kept"] == []


@pytest.mark.parametrize("seat", [2, -1, 7])
def test_unknown_seat(seat: int) -> None:
    refused(start(), seat, {"roll": {}}, "invalid_seat", invalid=True)
    with pytest.raises(InvalidAction) as raised:
        ENGINE.leave(start(), seat, ctx())
    assert raised.value.code == "invalid_seat"


def test_only_the_seat_to_act_throws_and_scores() -> None:
    state = start(3)
    refused(state, 1, {"roll": {}}, "not_your_turn")
    state, _ = roll(state, 0, 1, 2, 3, 4, 5)
    refused(state, 2, {"roll": {"keep": [0]}}, "not_your_turn")
    refused(state, 1, {"score": {"box": "CHANCE"}}, "not_your_turn")


def test_preview_shows_every_empty_box_of_the_seat_to_act() -> None:
    state, _ = turn(start(), 0, (4, 4, 4, 4, 4), "YATZY")
    state, _ = turn(state, 1, (1, 1, 1, 1, 1), "ONES")
    state, _ = roll(state, 0, 3, 3, 3, 6, 6)
    views = [ENGINE.view(state, seat) for seat in (0, 1, None)]
    assert views[0] == views[1] == views[2]
    preview = {p["box"]: p["points"] for p in views[0]["preview"]}
    assert list(preview) == [b for b in CLASSIC_BOXES if b != "YATZY"]
    assert preview == {
        "ONES": 0, "TWOS": 0, "THREES": 9, "FOURS": 0, "FIVES": 0, "SIXES": 12,
        "THREE_OF_A_KIND": 21, "FOUR_OF_A_KIND": 0, "FULL_HOUSE": 25,
        "SMALL_STRAIGHT": 0, "LARGE_STRAIGHT": 0, "CHANCE": 21,
    }  # fmt: skip
    assert views[0]["round"] == 2


# --- The end, totals and ties -------------------------------------------------------

# One seat's classic game: three of each face (63, bonus 35) and every combination.
CLASSIC_GAME = [
    ((1, 1, 1, 2, 3), "ONES", 3), ((2, 2, 2, 1, 3), "TWOS", 6), ((3, 3, 3, 1, 2), "THREES", 9),
    ((4, 4, 4, 1, 2), "FOURS", 12), ((5, 5, 5, 1, 2), "FIVES", 15), ((6, 6, 6, 1, 2), "SIXES", 18),
    ((6, 6, 6, 5, 4), "THREE_OF_A_KIND", 27), ((5, 5, 5, 5, 6), "FOUR_OF_A_KIND", 26),
    ((3, 3, 3, 2, 2), "FULL_HOUSE", 25), ((1, 2, 3, 4, 4), "SMALL_STRAIGHT", 30),
    ((2, 3, 4, 5, 6), "LARGE_STRAIGHT", 40), ((5, 5, 5, 5, 5), "YATZY", 50), ((6, 6, 6, 6, 5), "CHANCE", 29),
]  # fmt: skip


def test_a_full_classic_card_ends_the_solo_game() -> None:
    state = start(1)
    for number, (dice, box, points) in enumerate(CLASSIC_GAME, start=1):
        assert ENGINE.view(state, None)["round"] == number
        state, events = turn(state, 0, dice, box)
        assert events[0].data["points"] == points
        expected_next = "game_over" if number == 13 else "turn_started"
        assert kinds(events) == ["scored", expected_next]
    assert events[1].data == {"ranks": [1], "scores": [325], "reason": "COMPLETED", "forfeited": []}
    card = ENGINE.view(state, None)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (63, 35, 325)
    result = ENGINE.result(state)
    assert result is not None
    assert (result.ranks, result.scores, result.reason, result.forfeited) == ([1], [325], "completed", [])
    assert ENGINE.to_act(state) == []


def test_the_bonus_needs_63_not_62() -> None:
    state = start(1)
    at_62 = [((1, 1, 2, 3, 4), "ONES", 2), *CLASSIC_GAME[1:]]
    for dice, box, _ in at_62:
        state, _ = turn(state, 0, dice, box)
    card = ENGINE.view(state, None)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (62, 0, 325 - 1 - 35)


def test_a_scandinavian_game_lasts_15_rounds_with_bonus_50() -> None:
    state = start(2, "SCANDINAVIAN")
    state, events = play_out(state, lambda seat, rnd: (6, 6, 6, 5, 5) if seat == 0 else (1, 2, 3, 4, 6))
    assert sum(k == "scored" for k in kinds(events)) == 30
    turns = [e.data for e in events if e.kind == "turn_started"]
    assert turns[-1] == {"seat": 1, "round": 15}
    # 6-6-6-5-5 everywhere: Fives 10 and Sixes 18 (no bonus), one pair 12, two pairs 22,
    # three of a kind 18, full house 28, chance 28.
    # 1-2-3-4-6 everywhere: 1 + 2 + 3 + 4 + 6 up top and chance 16; not a small straight.
    cards = ENGINE.view(state, None)["cards"]
    assert [c["total"] for c in cards] == [136, 32]
    assert cards[0]["total"] == sum(b["points"] for b in cards[0]["boxes"])
    assert events[-1].data == {"ranks": [1, 2], "scores": [136, 32], "reason": "COMPLETED", "forfeited": []}


def test_the_upper_bonus_is_50_on_the_scandinavian_card() -> None:
    state = start(1, "SCANDINAVIAN")
    for dice, box, _ in CLASSIC_GAME[:6]:
        state, _ = turn(state, 0, dice, box)
    card = ENGINE.view(state, None)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (63, 50, 113)


def test_equal_totals_share_the_rank() -> None:
    state, events = play_out(start(2), lambda seat, rnd: (2, 2, 3, 3, 3))
    assert events[-1].data["ranks"] == [1, 1]
    result = ENGINE.result(state)
    assert result is not None
    assert result.ranks == [1, 1]
    assert result.scores[0] == result.scores[1]


@pytest.mark.parametrize(
    ("chance", "ranks"),
    [((6, 6, 5), [1, 1, 3]), ((6, 5, 5), [1, 2, 2]), ((5, 5, 5), [1, 1, 1]), ((4, 5, 6), [3, 2, 1])],
)
def test_ties_skip_the_next_ranks(chance: tuple[int, ...], ranks: list[int]) -> None:
    # The same throw everywhere except the last box, Chance, whose first die differs.
    def dice_for(seat: int, rnd: int) -> tuple[int, ...]:
        return (1, 1, 1, 1, 1) if rnd < 13 else (chance[seat], 1, 1, 1, 1)

    state, events = play_out(start(3), dice_for)
    assert events[-1].data["ranks"] == ranks
    result = ENGINE.result(state)
    assert result is not None
    assert result.ranks == ranks


def test_nothing_is_accepted_after_the_end() -> None:
    state, _ = play_out(start(2), lambda seat, rnd: (1, 2, 3, 4, 5))
    actions: list[JSON] = [{"roll": {}}, {"score": {"box": "CHANCE"}}, {"claim_inactivity": {}}]
    for action in actions:
        refused(state, 0, action, "game_over", now=5_000.0, last_action_at=1_000.0)
    with pytest.raises(RulesError) as raised:
        ENGINE.leave(state, 1, ctx())
    assert raised.value.code == "game_over"
    view = ENGINE.view(state, None)
    assert "current_seat" not in view
    assert (view["over"], view["round"], view["dice"], view["preview"], view["throws_left"]) == (
        True, 13, [], [], 0,
    )  # fmt: skip


# --- Leaving --------------------------------------------------------------------------


def test_the_seat_to_act_leaves_mid_turn_and_play_passes_on() -> None:
    state, _ = roll(start(3), 0, 6, 6, 6, 6, 6)
    state, events = leave(state, 0)
    assert [(e.kind, e.data, e.audience) for e in events] == [
        ("seat_left", {"seat": 0}, None),
        ("turn_started", {"seat": 1, "round": 1}, None),
    ]
    view = ENGINE.view(state, None)
    assert (view["current_seat"], view["dice"], view["throws_used"]) == (1, [], 0)
    assert view["cards"][0]["forfeited"] is True
    assert view["cards"][0]["removed_for_inactivity"] is False
    refused(state, 0, {"roll": {}}, "not_in_game")
    with pytest.raises(RulesError) as raised:
        ENGINE.leave(state, 0, ctx())
    assert raised.value.code == "not_in_game"


def test_a_seat_leaving_out_of_turn_does_not_disturb_the_turn_and_is_skipped() -> None:
    state, _ = roll(start(3), 0, 1, 2, 3, 4, 5)
    state, events = leave(state, 1)
    assert kinds(events) == ["seat_left"]
    assert ENGINE.view(state, None)["dice"] == [1, 2, 3, 4, 5]
    state, events = score(state, 0, "LARGE_STRAIGHT")
    assert events[1].data == {"seat": 2, "round": 1}
    state, events = turn(state, 2, (1, 1, 1, 1, 1), "YATZY")
    assert events[1].data == {"seat": 0, "round": 2}


def test_a_forfeit_ranks_last_whatever_its_score() -> None:
    state, _ = turn(start(3), 0, (6, 6, 6, 6, 6), "YATZY")
    state, _ = leave(state, 0)
    state, events = play_out(state, lambda seat, rnd: (1, 2, 3, 4, 6) if seat == 1 else (1, 1, 1, 2, 2))
    game_over = events[-1].data
    assert game_over["ranks"][0] == 3
    assert game_over["scores"][0] == 50
    assert game_over["reason"] == "FORFEIT"
    assert game_over["forfeited"] == [0]
    result = ENGINE.result(state)
    assert result is not None
    assert (result.reason, result.forfeited) == ("forfeit", [0])
    # Seat 1: 1+2+3+4+6 up top, small straight 30, chance 16; seat 2: 3+4, three of a kind 7,
    # full house 25, chance 7.
    assert (result.ranks, result.scores) == ([3, 1, 2], [50, 62, 46])
    assert len(state["filled"][0]) == 1
    assert all(len(state["filled"][seat]) == 13 for seat in (1, 2))


def test_the_last_seat_standing_wins_and_the_earlier_forfeit_ranks_lower() -> None:
    state, _ = turn(start(3), 0, (6, 6, 6, 6, 6), "YATZY")
    state, _ = leave(state, 2)
    state, events = leave(state, 1)
    assert [(e.kind, e.data) for e in events] == [
        ("seat_left", {"seat": 1}),
        ("game_over", {"ranks": [1, 2, 3], "scores": [50, 0, 0], "reason": "FORFEIT", "forfeited": [2, 1]}),
    ]
    assert ENGINE.to_act(state) == []


def test_a_higher_scoring_leaver_still_ranks_below_the_one_left() -> None:
    state, _ = turn(start(2), 0, (6, 6, 6, 6, 6), "YATZY")
    state, events = leave(state, 0)
    assert events[-1].data == {"ranks": [2, 1], "scores": [50, 0], "reason": "FORFEIT", "forfeited": [0]}


def test_a_solo_player_leaving_ends_the_game() -> None:
    state, events = leave(start(1), 0)
    assert kinds(events) == ["seat_left", "game_over"]
    result = ENGINE.result(state)
    assert result is not None
    assert (result.ranks, result.reason, result.forfeited) == ([1], "forfeit", [0])


def test_leaving_in_the_last_round_ends_the_game_when_the_others_are_full() -> None:
    state = start(3)
    for _ in range(12):
        for seat in range(3):
            state, _ = turn(state, seat, (1, 2, 3, 4, 5), CLASSIC_BOXES[len(state["filled"][seat])])
    state, _ = turn(state, 0, (1, 2, 3, 4, 5), "CHANCE")
    state, _ = turn(state, 1, (1, 2, 3, 4, 5), "CHANCE")
    state, events = leave(state, 2)
    assert kinds(events) == ["seat_left", "game_over"]
    assert events[-1].data["ranks"] == [1, 1, 3]


def test_two_players_play_on_after_two_leave() -> None:
    state = start(4)
    state, _ = leave(state, 3)
    state, _ = leave(state, 1)
    state, events = play_out(state, lambda seat, rnd: (5, 5, 5, 5, 5) if seat == 2 else (1, 1, 1, 1, 1))
    assert {e.data["seat"] for e in events if e.kind == "scored"} == {0, 2}
    assert events[-1].data["ranks"] == [2, 3, 1, 4]  # seat 3 forfeited first, so it ranks lowest
    assert events[-1].data["forfeited"] == [3, 1]


# --- Inactivity claims ------------------------------------------------------------------


def test_a_claim_before_120_s_is_too_early() -> None:
    state, _ = roll(start(3), 0, 1, 2, 3, 4, 5)
    refused(state, 1, {"claim_inactivity": {}}, "too_early", now=1_119.9, last_action_at=1_000.0)


def test_the_seat_to_act_cannot_claim_against_itself() -> None:
    refused(
        start(3), 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=2_000.0, last_action_at=1_000.0
    )


def test_a_claim_at_120_s_removes_the_seat_to_act() -> None:
    state, _ = roll(start(3), 0, 6, 6, 6, 6, 6)
    state, events = claim(state, 2, 120.0)
    assert [(e.kind, e.data) for e in events] == [
        ("seat_removed", {"seat": 0, "by": 2}),
        ("turn_started", {"seat": 1, "round": 1}),
    ]
    card = ENGINE.view(state, None)["cards"][0]
    assert (card["forfeited"], card["removed_for_inactivity"]) == (True, True)
    refused(state, 0, {"claim_inactivity": {}}, "not_in_game", now=5_000.0, last_action_at=1_000.0)


def test_a_claim_that_leaves_one_seat_ends_the_game_for_inactivity() -> None:
    state, events = claim(start(2), 1, 600.0)
    assert events[-1] == Event(
        "game_over", {"ranks": [2, 1], "scores": [0, 0], "reason": "INACTIVITY", "forfeited": [0]}
    )
    result = ENGINE.result(state)
    assert result is not None
    assert (result.reason, result.forfeited, result.ranks) == ("inactivity", [0], [2, 1])


def test_a_leave_outweighs_a_claim_in_the_reason() -> None:
    state, _ = claim(start(3), 1, 130.0)
    state, events = leave(state, 2)
    assert events[-1].data["reason"] == "FORFEIT"
    assert events[-1].data["forfeited"] == [0, 2]
    assert events[-1].data["ranks"] == [3, 1, 2]


def test_a_forfeited_seat_cannot_claim() -> None:
    state, _ = leave(start(3), 2)
    refused(state, 2, {"claim_inactivity": {}}, "not_in_game", now=5_000.0, last_action_at=1_000.0)
