"""Dominó rules, one by one (RULES.md "Dominó", seed 003).

Deals are laid out exactly with ``Deals`` (each shuffle of the match lays out
the next given deal); positions in the middle of a round are built with
``position`` from a line of play and the hands, every one of the 28 tiles
accounted for.
"""

from __future__ import annotations

import copy
import itertools
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from google.protobuf import json_format
from rodada.domino.v1 import domino_pb2

from services.domino.engine import ENGINE
from services.domino.tiles import full_set, pips
from services.kit.engine import JSON, Event, InvalidAction, RulesError
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

Tile = tuple[int, int]


class Deals:
    """A match generator whose shuffles lay out the given deals, in order."""

    def __init__(self, *deals: Sequence[Sequence[Tile]]) -> None:
        self.deals = deque(deals)

    def shuffle(self, items: list[Any]) -> None:
        if not self.deals:
            raise AssertionError("no deal left for this shuffle")
        order = [tuple(tile) for hand in self.deals.popleft() for tile in hand]
        assert sorted(order) == sorted(items), "a deal must hold each of the 28 tiles once"
        items[:] = order

    def randbelow(self, n: int) -> int:
        raise AssertionError("Dominó draws nothing but shuffles")

    def randint(self, low: int, high: int) -> int:
        raise AssertionError("Dominó draws nothing but shuffles")


# The sorted set dealt in order: seat 0 holds 0-0 … 0-6, seat 3 holds 6-6.
IN_ORDER = [full_set()[seat * 7 : seat * 7 + 7] for seat in range(4)]


def act(state: JSON, seat: int, action: JSON, rng: Any = None, **when: float) -> tuple[JSON, list[Event]]:
    """Apply a well-formed action, checking first that it fits the proto."""
    assert_fits(domino_pb2.Action, action)
    return ENGINE.apply(state, seat, action, ctx(rng, **when))


def play(a: int, b: int, end: str | None = None) -> JSON:
    body: JSON = {"tile": {"a": a, "b": b}}
    if end is not None:
        body["end"] = end
    return {"play": body}


def refused(state: JSON, seat: int, action: JSON, code: str, **when: float) -> RulesError:
    """The action is refused with ``code`` and the state is left as it was."""
    before = copy.deepcopy(state)
    with pytest.raises(RulesError) as caught:
        ENGINE.apply(state, seat, action, ctx(**when))
    assert caught.value.code == code
    assert state == before
    return caught.value


def kinds(events: list[Event]) -> list[str]:
    return [event.kind for event in events]


def only(events: list[Event], kind: str) -> JSON:
    [found] = [event.data for event in events if event.kind == kind]
    return found


def key(tile: Tile) -> Tile:
    """The tile as a hand holds it, low half first."""
    return (min(tile), max(tile))


def tiles_json(tiles: Sequence[Tile]) -> list[JSON]:
    return [{"a": a, "b": b} for a, b in tiles]


def ends(state: JSON) -> tuple[int, int]:
    view = ENGINE.view(state, None)
    return view["left_end"], view["right_end"]


def new_match(*deals: Sequence[Sequence[Tile]]) -> tuple[JSON, list[Event]]:
    return ENGINE.new_match(4, {}, ctx(Deals(*deals)))


def position(
    line: Sequence[Tile],
    hands: Mapping[int, Sequence[Tile]],
    *,
    turn: int,
    round_no: int = 2,
    scores: tuple[int, int] = (0, 0),
) -> JSON:
    """A state in the middle of a round.

    ``line`` is left to right, each tile oriented as it lies; the one seat
    missing from ``hands`` holds the tiles left over.
    """
    state, _ = ENGINE.new_match(4, {}, ctx())
    used = [key(t) for t in line] + [key(t) for hand in hands.values() for t in hand]
    [rest_seat] = [seat for seat in range(4) if seat not in hands]
    rest = [tile for tile in full_set() if tile not in used]
    every = {**hands, rest_seat: rest}
    assert sorted(used + rest) == full_set(), "each of the 28 tiles exactly once"
    for left, right in itertools.pairwise(line):
        assert left[1] == right[0], "neighbouring halves match"
    state.update(
        round=round_no,
        hands=[sorted([min(t), max(t)] for t in every[seat]) for seat in range(4)],
        line=[{"tile": list(tile), "seat": i % 4, "order": i} for i, tile in enumerate(line)],
        passes=[],
        turn=turn,
        scores=list(scores),
        last_play=[None, None],
    )
    return state


# --- the match and the first round ------------------------------------------------------


def test_four_seats_in_two_teams_only() -> None:
    for seats in (2, 3, 5):
        with pytest.raises(InvalidAction) as caught:
            ENGINE.new_match(seats, {}, ctx())
        assert caught.value.code == "invalid_seat_count"
    with pytest.raises(InvalidAction) as caught:
        ENGINE.new_match(4, {}, ctx(), cpu_seats=[1])
    assert caught.value.code == "cpu_seats_unsupported"


def test_options_are_empty_the_target_is_fixed() -> None:
    assert_fits(domino_pb2.Options, {})
    with pytest.raises(InvalidAction) as caught:
        ENGINE.new_match(4, {"target": 100}, ctx())
    assert caught.value.code == "invalid_options"
    state, _ = ENGINE.new_match(4, {}, ctx())
    assert ENGINE.view(state, None)["target"] == 50


def test_all_28_tiles_are_dealt_seven_each_privately() -> None:
    state, events = new_match(IN_ORDER)
    assert kinds(events) == ["round_started"] + ["dealt"] * 4
    for seat in range(4):
        dealt = events[1 + seat]
        assert dealt.audience == (seat,)
        assert dealt.data == {"seat": seat, "tiles": tiles_json(IN_ORDER[seat])}
        assert ENGINE.view(state, seat)["hand"] == tiles_json(IN_ORDER[seat])
    assert ENGINE.view(state, None)["hand_counts"] == [7, 7, 7, 7]
    assert ENGINE.view(state, None)["hand"] == []


@pytest.mark.parametrize("holder", [0, 1, 2, 3])
def test_first_round_the_holder_of_double_six_opens_with_it(holder: int) -> None:
    deal = IN_ORDER[3 - holder :] + IN_ORDER[: 3 - holder]  # 6-6 is in IN_ORDER[3]
    state, events = new_match(deal)
    assert only(events, "round_started") == {
        "round": 1,
        "opener": holder,
        "opening_tile": {"a": 6, "b": 6},
        "scores": [0, 0],
    }
    assert ENGINE.to_act(state) == [holder]
    view = ENGINE.view(state, holder)
    assert view["opening_tile"] == {"a": 6, "b": 6}
    assert view["playable"] == [{"tile": {"a": 6, "b": 6}, "ends": [], "end_required": False}]
    refused(state, holder, play(5, 5), "must_open_with_double_six")
    refused(state, (holder + 1) % 4, play(6, 6), "not_your_turn")

    state, events = act(state, holder, play(6, 6))
    assert only(events, "played") == {
        "seat": holder,
        "tile": {"a": 6, "b": 6},
        "order": 0,
        "left_end": 6,
        "right_end": 6,
        "tiles_left": 6,
    }
    assert ENGINE.view(state, None)["line"] == [{"tile": {"a": 6, "b": 6}, "seat": holder, "order": 0}]
    assert "opening_tile" not in ENGINE.view(state, None)


def test_an_end_sent_with_the_opening_play_is_ignored() -> None:
    state, _ = new_match(IN_ORDER)
    state, events = act(state, 3, play(6, 6, "LEFT"))
    assert "end" not in only(events, "played")
    assert ends(state) == (6, 6)


def test_play_goes_clockwise_to_the_next_seat() -> None:
    state, _ = new_match(IN_ORDER)  # seat 0 holds 0-6, seat 1 holds 1-6
    state, _ = act(state, 3, play(6, 6))
    assert ENGINE.to_act(state) == [0]
    state, _ = act(state, 0, play(0, 6))
    assert ENGINE.to_act(state) == [1]
    state, events = act(state, 1, play(1, 6))
    assert ends(state) == (1, 0)  # seats 2 and 3 hold neither a 1 nor a 0
    assert [(e.kind, e.data["seat"]) for e in events] == [("played", 1), ("passed", 2), ("passed", 3)]
    assert ENGINE.to_act(state) == [0]


def test_the_set_is_the_28_tiles_of_the_double_six() -> None:
    tiles = full_set()
    assert len(tiles) == len(set(tiles)) == 28
    assert [t for t in tiles if t[0] == t[1]] == [(n, n) for n in range(7)]  # the 7 carroças
    assert all(sum(n in t for t in tiles) == 7 for n in range(7))  # seven tiles of each number
    assert pips([(3, 4)]) == 7 and pips([(6, 6)]) == 12 and pips([(0, 0)]) == 0
    assert pips(tiles) == 168


# --- laying a tile: matching and choosing the end -----------------------------------

# Seat 3 opened with 5-5; seat 0 holds 0-5 and six tiles that fit nothing; seats 1
# and 2 hold neither a 0 nor a 5; seat 3 holds the other 0s and 5s.
FIVES_HANDS: dict[int, Sequence[Tile]] = {
    0: [(0, 5), (6, 6), (0, 0), (0, 1), (0, 2), (0, 3), (0, 4)],
    1: [(1, 1), (1, 2), (1, 3), (1, 4), (1, 6), (2, 2), (2, 3)],
    2: [(2, 4), (2, 6), (3, 3), (3, 4), (3, 6), (4, 4), (4, 6)],
}


def fives() -> JSON:
    return position([(5, 5)], FIVES_HANDS, turn=0)


def test_a_tile_must_match_an_open_end() -> None:
    state = fives()
    refused(state, 0, play(0, 0), "tile_does_not_match")
    refused(state, 0, play(6, 6), "tile_does_not_match")
    refused(state, 0, play(5, 6), "tile_not_in_hand")  # seat 3 holds it
    view = ENGINE.view(state, 0)
    assert view["playable"] == [{"tile": {"a": 0, "b": 5}, "ends": ["LEFT", "RIGHT"], "end_required": False}]


def test_seed_example_any_tile_with_a_5_joins_an_open_5() -> None:
    state, _ = act(fives(), 0, play(0, 5))  # ends 5 and 0; seats 1 and 2 pass
    playable = {(p["tile"]["a"], p["tile"]["b"]): p["ends"] for p in ENGINE.view(state, 3)["playable"]}
    assert playable[(2, 5)] == ["LEFT"] and playable[(5, 6)] == ["LEFT"]
    assert playable[(0, 6)] == ["RIGHT"]
    after, _ = act(state, 3, play(5, 2))
    assert ends(after) == (2, 0)


def test_halves_may_be_sent_in_either_order() -> None:
    state, events = act(fives(), 0, play(5, 0))
    assert only(events, "played")["tile"] == {"a": 5, "b": 0}
    assert ends(state) == (5, 0)


def test_end_is_optional_when_both_ends_give_the_same_result() -> None:
    state, events = act(fives(), 0, play(0, 5))  # ends 5 and 5: either way 5 and 0 stay open
    assert only(events, "played")["end"] == "RIGHT"
    assert ends(state) == (5, 0)
    state, events = act(fives(), 0, play(0, 5, "LEFT"))
    assert only(events, "played")["end"] == "LEFT"
    assert ENGINE.view(state, None)["line"][0] == {"tile": {"a": 0, "b": 5}, "seat": 0, "order": 1}
    assert ends(state) == (0, 5)


# Seat 0 opened 3-2, seat 3 laid 2-1: the ends are 3 and 1. Seat 0 holds every
# other 3; nobody else holds a 3.
THREES_HANDS: dict[int, Sequence[Tile]] = {
    0: [(1, 3), (0, 3), (3, 3), (3, 4), (3, 5), (3, 6)],
    1: [(0, 0), (0, 1), (0, 2), (0, 4), (0, 5), (0, 6), (1, 1)],
    2: [(1, 4), (1, 5), (1, 6), (2, 2), (2, 4), (2, 5), (2, 6)],
}


def threes() -> JSON:
    return position([(3, 2), (2, 1)], THREES_HANDS, turn=0)


def test_a_tile_fitting_both_ends_differently_needs_the_end() -> None:
    state = threes()
    refused(state, 0, play(1, 3), "end_required")
    playable = {(p["tile"]["a"], p["tile"]["b"]): p for p in ENGINE.view(state, 0)["playable"]}
    assert playable[(1, 3)] == {"tile": {"a": 1, "b": 3}, "ends": ["LEFT", "RIGHT"], "end_required": True}
    assert playable[(0, 3)] == {"tile": {"a": 0, "b": 3}, "ends": ["LEFT"], "end_required": False}

    left, events = act(state, 0, play(1, 3, "LEFT"))
    assert ends(left) == (1, 1)
    assert ENGINE.view(left, None)["line"][0]["tile"] == {"a": 1, "b": 3}
    assert only(events, "played")["end"] == "LEFT"

    right, events = act(state, 0, play(3, 1, "RIGHT"))
    assert ends(right) == (3, 3)
    assert ENGINE.view(right, None)["line"][-1]["tile"] == {"a": 1, "b": 3}


def test_a_tile_fitting_one_end_goes_there_and_only_there() -> None:
    state = threes()
    refused(state, 0, play(0, 3, "RIGHT"), "end_does_not_match")
    after, events = act(state, 0, play(0, 3))
    assert only(events, "played")["end"] == "LEFT"
    assert ENGINE.view(after, None)["line"][0]["tile"] == {"a": 0, "b": 3}
    assert ends(after) == (0, 1)


# --- automatic passes --------------------------------------------------------------


def test_seats_that_cannot_play_pass_automatically_and_publicly() -> None:
    state, events = act(fives(), 0, play(0, 5))  # ends 5 and 0: seats 1 and 2 hold neither
    assert kinds(events) == ["played", "passed", "passed"]
    assert [event.audience for event in events] == [None, None, None]
    assert [event.data for event in events[1:]] == [
        {"seat": 1, "left_end": 5, "right_end": 0, "line_length": 2},
        {"seat": 2, "left_end": 5, "right_end": 0, "line_length": 2},
    ]
    assert ENGINE.to_act(state) == [3]
    assert ENGINE.view(state, 1)["passes"] == [event.data for event in events[1:]]


def test_when_all_three_others_pass_the_player_plays_again() -> None:
    state, events = act(threes(), 0, play(1, 3, "RIGHT"))  # ends 3 and 3: only seat 0 holds 3s
    assert kinds(events) == ["played", "passed", "passed", "passed"]
    assert [event.data["seat"] for event in events[1:]] == [1, 2, 3]
    assert ENGINE.to_act(state) == [0]
    assert ENGINE.view(state, 0)["playable"]


def test_a_player_with_a_playable_tile_is_never_passed() -> None:
    state, events = act(threes(), 0, play(1, 3, "LEFT"))  # ends 1 and 1: seat 1 holds 0-1
    assert kinds(events) == ["played"]
    assert ENGINE.to_act(state) == [1]


# --- batida ----------------------------------------------------------------------------

# Seat 0 holds only 3-5 and the right end is 3. Seat 1 keeps 0-0 and 0-1 (1 pip),
# seat 3 keeps 0-2 and 1-4 (7 pips); seat 0's partner, seat 2, keeps 33 pips.
BATIDA_LINE: list[Tile] = [
    (2, 1), (1, 1), (1, 3), (3, 0), (0, 4), (4, 2), (2, 2), (2, 3), (3, 3), (3, 4),
    (4, 4), (4, 5), (5, 0), (0, 6), (6, 1), (1, 5), (5, 5), (5, 2), (2, 6), (6, 3),
]  # fmt: skip
BATIDA_HANDS: dict[int, Sequence[Tile]] = {0: [(3, 5)], 1: [(0, 0), (0, 1)], 2: [(4, 6), (5, 6), (6, 6)]}


def batida(scores: tuple[int, int] = (0, 0)) -> JSON:
    return position(BATIDA_LINE, BATIDA_HANDS, turn=0, scores=scores)


def test_batida_scores_the_two_opponents_hands_never_the_partners() -> None:
    state, events = act(batida(), 0, play(3, 5), Deals(IN_ORDER))
    assert kinds(events) == ["played", "round_ended", "round_started"] + ["dealt"] * 4
    ended = only(events, "round_ended")
    assert ended["kind"] == "BATIDA"
    assert ended["seat"] == 0
    assert ended["winning_team"] == 0
    assert ended["points"] == 1 + 7  # seats 1 and 3; seat 2's 33 pips do not count
    assert ended["team_pips"] == [33, 8]
    assert ended["scores"] == [8, 0]
    assert ENGINE.view(state, None)["scores"] == [8, 0]


def test_the_round_end_reveals_every_hand_to_everyone() -> None:
    _, events = act(batida(), 0, play(3, 5), Deals(IN_ORDER))
    [ended] = [event for event in events if event.kind == "round_ended"]
    assert ended.audience is None
    assert ended.data["hands"] == [
        {"seat": 0, "tiles": [], "pips": 0},
        {"seat": 1, "tiles": tiles_json([(0, 0), (0, 1)]), "pips": 1},
        {"seat": 2, "tiles": tiles_json([(4, 6), (5, 6), (6, 6)]), "pips": 33},
        {"seat": 3, "tiles": tiles_json([(0, 2), (1, 4)]), "pips": 7},
    ]


def test_the_seat_that_went_out_opens_the_next_round_with_any_tile() -> None:
    state, events = act(batida(), 0, play(3, 5), Deals(IN_ORDER))
    assert only(events, "round_ended")["next_opener"] == 0
    assert only(events, "round_started") == {"round": 3, "opener": 0, "scores": [8, 0]}
    assert ENGINE.to_act(state) == [0]
    view = ENGINE.view(state, 0)
    assert view["round"] == 3
    assert view["line"] == [] and view["passes"] == []
    assert "opening_tile" not in view
    assert [p["tile"] for p in view["playable"]] == tiles_json(IN_ORDER[0])
    assert view["last_round"] == only(events, "round_ended")
    state, events = act(state, 0, play(0, 3))  # not the 6-6, not a double
    assert ends(state) == (0, 3)


def test_going_out_on_a_blocking_tile_is_a_batida() -> None:
    # All the 0s but 0-6 lie on the line, ends 0 and 6: seat 0 lays its last
    # tile, 6-0, and closes the table at the same time.
    line = [(0, 1), (1, 2), (2, 0), (0, 0), (0, 3), (3, 4), (4, 0), (0, 5), (5, 6)]
    hands = {
        0: [(0, 6)],
        1: [(1, 1), (1, 3), (1, 4), (1, 5), (1, 6), (2, 2)],
        2: [(2, 3), (2, 4), (2, 5), (2, 6), (3, 3), (3, 5)],
    }
    state = position(line, hands, turn=0)  # seat 3: 3-6 4-4 4-5 4-6 5-5 6-6
    state, events = act(state, 0, play(6, 0, "RIGHT"))
    ended = only(events, "round_ended")
    assert ended["kind"] == "BATIDA"
    assert ended["points"] == (2 + 4 + 5 + 6 + 7 + 4) + (9 + 8 + 9 + 10 + 10 + 12)


def test_the_last_tile_can_be_the_double_blank_sent_as_an_empty_tile() -> None:
    # The proto's JSON form omits zero values: 0-0 arrives as {"tile": {}}.
    line = [(0, 1), *BATIDA_LINE[1:]]  # the same line with 0-1 for 2-1: the left end is 0
    state = position(line, {0: [(0, 0)], 1: [(1, 2), (3, 5)], 2: [(4, 6), (5, 6), (6, 6)]}, turn=0)
    wire = json_format.MessageToDict(
        assert_fits(domino_pb2.Action, play(0, 0)), preserving_proto_field_name=True
    )
    assert wire == {"play": {"tile": {}}}
    _, events = ENGINE.apply(state, 0, wire, ctx(Deals(IN_ORDER)))
    assert only(events, "played")["tile"] == {"a": 0, "b": 0}
    assert only(events, "round_ended")["kind"] == "BATIDA"


# Seat 0's last tile closes on both ends at once: 2-3 on ends 2 and 3 (lá-e-lô),
# or the carroça 3-3 on ends 3 and 3 (cruzada). Seat 1 keeps 1 pip, seat 3 keeps 10.
NO_BONUS_HANDS: dict[int, Sequence[Tile]] = {1: [(0, 0), (0, 1)], 2: [(4, 6), (5, 6), (6, 6)]}
LA_E_LO_LINE: list[Tile] = [
    (2, 0), (0, 3), (3, 1), (1, 1), (1, 2), (2, 2), (2, 4), (4, 1), (1, 6), (6, 0),
    (0, 5), (5, 2), (2, 6), (6, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 3),
]  # fmt: skip
CRUZADA_LINE: list[Tile] = [
    (3, 0), (0, 2), (2, 1), (1, 1), (1, 3), (3, 2), (2, 2), (2, 4), (4, 1), (1, 6),
    (6, 0), (0, 5), (5, 2), (2, 6), (6, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 3),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "last", "end"),
    [
        (LA_E_LO_LINE, (2, 3), "LEFT"),  # lá-e-lô
        (LA_E_LO_LINE, (2, 3), "RIGHT"),
        (CRUZADA_LINE, (3, 3), None),  # cruzada: a carroça on both ends
    ],
)
def test_going_out_on_both_ends_or_with_a_carroca_is_worth_no_more(
    line: list[Tile], last: Tile, end: str | None
) -> None:
    state = position(line, {0: [last], **NO_BONUS_HANDS}, turn=0)  # seat 3: 0-4 and 1-5
    assert ENGINE.view(state, 3)["hand"] == tiles_json([(0, 4), (1, 5)])
    _, events = act(state, 0, play(*last, end), Deals(IN_ORDER))
    ended = only(events, "round_ended")
    assert (ended["kind"], ended["points"], ended["scores"]) == ("BATIDA", 1 + 10, [11, 0])


# --- tranca --------------------------------------------------------------------------

# A first round closed on the 6s: all seven 6s on the line, both ends 6. Seat r
# is the opener plus r (clockwise); r1 makes the blocking play.
BLOCKING_PLAYS: list[tuple[int, Tile, str | None]] = [
    (0, (6, 6), None),
    (1, (6, 2), "RIGHT"),
    (2, (2, 3), "RIGHT"),
    (3, (3, 6), "RIGHT"),
    (0, (6, 1), "LEFT"),
    (1, (0, 1), "LEFT"),
    (2, (6, 0), "LEFT"),
    (3, (6, 4), "RIGHT"),
    (0, (4, 5), "RIGHT"),  # the opener's team's last play
    (1, (5, 6), "RIGHT"),  # closes the table: ends 6 and 6
]
LEFT_OVER = [tile for tile in full_set() if tile not in {key(t) for _, t, _ in BLOCKING_PLAYS}]


def blocked_round(opener: int, openers_team_keeps: Sequence[Tile]) -> tuple[JSON, list[Event]]:
    """Play the first round above to its tranca; the opener's team keeps the given 9 tiles."""
    others_keep = [tile for tile in LEFT_OVER if tile not in openers_team_keeps]
    keeps = [openers_team_keeps[:4], others_keep[:4], openers_team_keeps[4:], others_keep[4:]]
    relative = [[key(t) for r, t, _ in BLOCKING_PLAYS if r == rel] + list(keeps[rel]) for rel in range(4)]
    deal = [relative[(seat - opener) % 4] for seat in range(4)]
    state, _ = new_match(deal)
    rng = Deals(IN_ORDER)
    events: list[Event] = []
    for rel, (a, b), end in BLOCKING_PLAYS:
        assert ENGINE.to_act(state) == [(opener + rel) % 4]
        state, events = act(state, (opener + rel) % 4, play(a, b, end), rng)
    return state, events


# 9 of the 18 tiles left over, worth 45, 44 and 40 pips of the 90.
KEEP_45 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 4), (3, 5), (4, 4), (5, 5)]
KEEP_44 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 3), (3, 5), (4, 4), (5, 5)]
KEEP_40 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 1), (1, 5), (3, 5), (5, 5)]


def test_tranca_the_lower_team_wins_even_when_it_blocked() -> None:
    complement_of_44 = [tile for tile in LEFT_OVER if tile not in KEEP_44]
    _, events = blocked_round(0, complement_of_44)  # the blockers (team 1) keep 44
    assert kinds(events)[:3] == ["played", "round_ended", "round_started"]
    ended = only(events, "round_ended")
    assert ended["kind"] == "TRANCA"
    assert ended["seat"] == 1
    assert ended["team_pips"] == [46, 44]
    assert ended["winning_team"] == 1
    assert ended["points"] == 46
    assert ended["scores"] == [0, 46]
    assert ended["next_opener"] == 1  # its team's last play was the blocking one


@pytest.mark.parametrize("opener", [0, 3])
def test_tranca_on_equal_sums_the_blocking_team_loses(opener: int) -> None:
    state, events = blocked_round(opener, KEEP_45)
    ended = only(events, "round_ended")
    blocker = (opener + 1) % 4
    assert ended["kind"] == "TRANCA"
    assert ended["seat"] == blocker
    assert ended["team_pips"] == [45, 45]
    assert ended["winning_team"] == 1 - blocker % 2
    assert ended["points"] == 45
    # The winners' last play was the opener's 4-5, not its partner's 6-0.
    assert ended["next_opener"] == opener
    assert only(events, "round_started") == {"round": 2, "opener": opener, "scores": ended["scores"]}
    assert ENGINE.to_act(state) == [opener]
    assert len(ENGINE.view(state, opener)["playable"]) == 7


def test_tranca_reveals_every_hand_and_no_one_passes() -> None:
    _, events = blocked_round(0, KEEP_45)
    assert "passed" not in kinds(events)
    ended = only(events, "round_ended")
    assert [hand["pips"] for hand in ended["hands"]] == [
        sum(map(sum, KEEP_45[:4])),
        sum(map(sum, [t for t in LEFT_OVER if t not in KEEP_45][:4])),
        sum(map(sum, KEEP_45[4:])),
        sum(map(sum, [t for t in LEFT_OVER if t not in KEEP_45][4:])),
    ]
    assert sum(len(hand["tiles"]) for hand in ended["hands"]) == 18


# --- the end of the match ----------------------------------------------------------------


def test_reaching_exactly_50_wins_the_match() -> None:
    state, events = blocked_round(0, KEEP_40)  # team 0 keeps 40, team 1 keeps 50
    assert kinds(events) == ["played", "round_ended", "match_ended"]
    assert "next_opener" not in only(events, "round_ended")
    assert only(events, "match_ended") == {"winning_team": 0, "reason": "COMPLETED", "scores": [50, 0]}
    assert ENGINE.to_act(state) == []
    result = ENGINE.result(state)
    assert result is not None
    assert result.ranks == [1, 2, 1, 2]
    assert result.scores == [50, 0, 50, 0]
    assert result.reason == "completed"
    assert result.forfeited == []
    view = ENGINE.view(state, 2)
    assert "to_act" not in view and view["playable"] == []
    assert view["result"] == only(events, "match_ended")


def test_passing_50_wins_the_match_and_49_does_not() -> None:
    state, events = act(batida(scores=(45, 30)), 0, play(3, 5))
    assert only(events, "match_ended")["scores"] == [53, 30]
    assert ENGINE.result(state) is not None

    state, events = act(batida(scores=(41, 30)), 0, play(3, 5), Deals(IN_ORDER))
    assert only(events, "round_ended")["scores"] == [49, 30]
    assert "match_ended" not in kinds(events)
    assert ENGINE.result(state) is None


def test_nothing_is_played_after_the_match_is_over() -> None:
    state, _ = act(batida(scores=(45, 30)), 0, play(3, 5))
    refused(state, 1, play(0, 0), "game_over")
    refused(state, 1, {"claim_inactivity": {}}, "game_over", now=10_000.0, last_action_at=0.0)
    with pytest.raises(RulesError) as caught:
        ENGINE.leave(state, 1, ctx())
    assert caught.value.code == "game_over"


# --- leaving and inactivity --------------------------------------------------------------


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_leaving_concedes_the_match_to_the_opposing_team(seat: int) -> None:
    state = fives()
    before = copy.deepcopy(state)
    after, events = ENGINE.leave(state, seat, ctx())
    assert state == before
    winners = 1 - seat % 2
    assert only(events, "match_ended") == {
        "winning_team": winners,
        "reason": "FORFEIT",
        "scores": [0, 0],
        "forfeited_seat": seat,
    }
    result = ENGINE.result(after)
    assert result is not None
    assert result.reason == "forfeit"
    assert result.forfeited == [seat]
    assert [rank == 1 for rank in result.ranks] == [s % 2 == winners for s in range(4)]
    assert ENGINE.to_act(after) == []


def test_an_opponent_claims_the_match_after_120_seconds() -> None:
    state = fives()  # seat 0 to act
    refused(state, 1, {"claim_inactivity": {}}, "too_early", now=1119.9, last_action_at=1000.0)
    after, events = act(state, 3, {"claim_inactivity": {}}, now=1120.0, last_action_at=1000.0)
    assert only(events, "match_ended") == {
        "winning_team": 1,
        "reason": "INACTIVITY",
        "scores": [0, 0],
        "forfeited_seat": 0,
        "claimed_by": 3,
    }
    result = ENGINE.result(after)
    assert result is not None
    assert (result.reason, result.forfeited, result.ranks) == ("inactivity", [0], [2, 1, 2, 1])


def test_neither_the_idle_seat_nor_its_partner_may_claim() -> None:
    state = fives()
    refused(state, 2, {"claim_inactivity": {}}, "partner_cannot_claim", now=5000.0, last_action_at=0.0)
    refused(state, 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=5000.0, last_action_at=0.0)


# --- malformed and refused actions --------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({}, "malformed_action"),
        ({"play": {"tile": {"a": 0, "b": 5}}, "claim_inactivity": {}}, "malformed_action"),
        ({"pass": {}}, "unknown_action"),
        ({"play": [0, 5]}, "malformed_action"),
        ({"play": {"tile": {"a": 0, "b": 5}, "side": "LEFT"}}, "malformed_action"),
        ({"claim_inactivity": {"seat": 1}}, "malformed_action"),
        ({"play": {}}, "missing_tile"),
        ({"play": {"tile": [0, 5]}}, "invalid_tile"),
        ({"play": {"tile": {"a": 0, "b": 7}}}, "invalid_tile"),
        ({"play": {"tile": {"a": -1, "b": 5}}}, "invalid_tile"),
        ({"play": {"tile": {"a": "0", "b": 5}}}, "invalid_tile"),
        ({"play": {"tile": {"a": True, "b": 5}}}, "invalid_tile"),
        ({"play": {"tile": {"a": 0, "b": 5, "c": 1}}}, "invalid_tile"),
        ({"play": {"tile": {"a": 0, "b": 5}, "end": "MIDDLE"}}, "invalid_end"),
        ({"play": {"tile": {"a": 0, "b": 5}, "end": 1}}, "invalid_end"),
    ],
)
def test_malformed_actions_are_invalid(action: JSON, code: str) -> None:
    state = fives()
    before = copy.deepcopy(state)
    with pytest.raises(InvalidAction) as caught:
        ENGINE.apply(state, 0, action, ctx())
    assert caught.value.code == code
    assert state == before


def test_seats_outside_the_table_are_invalid() -> None:
    state = fives()
    for seat in (-1, 4):
        with pytest.raises(InvalidAction) as caught:
            ENGINE.apply(state, seat, play(0, 5), ctx())
        assert caught.value.code == "invalid_seat"
        with pytest.raises(InvalidAction):
            ENGINE.view(state, seat)
        with pytest.raises(InvalidAction):
            ENGINE.leave(state, seat, ctx())


def test_an_explicit_unspecified_end_means_no_end() -> None:
    _, events = act(fives(), 0, play(0, 5, "END_UNSPECIFIED"))
    assert only(events, "played")["end"] == "RIGHT"
    refused(threes(), 0, play(1, 3, "END_UNSPECIFIED"), "end_required")


def test_only_the_seat_to_act_may_play() -> None:
    state = fives()
    for seat in (1, 2, 3):
        refused(state, seat, play(1, 1), "not_your_turn")
        assert ENGINE.view(state, seat)["playable"] == []
        assert ENGINE.view(state, seat)["to_act"] == 0


def test_an_accepted_action_leaves_the_given_state_untouched() -> None:
    state = threes()
    before = copy.deepcopy(state)
    act(state, 0, play(1, 3, "RIGHT"))
    act(state, 0, play(1, 3, "LEFT"))
    assert state == before
    state = batida()
    before = copy.deepcopy(state)
    act(state, 0, play(3, 5), Deals(IN_ORDER))
    assert state == before


def test_every_event_of_these_scenes_fits_the_proto() -> None:
    scenes = [
        new_match(IN_ORDER)[1],
        act(fives(), 0, play(0, 5))[1],
        act(threes(), 0, play(1, 3, "RIGHT"))[1],
        act(batida(), 0, play(3, 5), Deals(IN_ORDER))[1],
        blocked_round(0, KEEP_40)[1],
        ENGINE.leave(fives(), 1, ctx())[1],
    ]
    for events in scenes:
        for event in events:
            assert_event_fits(domino_pb2.Event, event)
