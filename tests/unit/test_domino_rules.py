"""Dominó rules, one by one (RULES.md "Dominó", seed 003), played through the kit.

Deals are laid out exactly with ``Deals`` (each shuffle of the match lays out
the next given deal); positions in the middle of a round are built with
``position`` from a line of play and the hands, every one of the 28 tiles
accounted for.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from google.protobuf import json_format
from rodada.domino.v1 import domino_pb2

from services.domino import cpu
from services.domino.game import GAME
from services.domino.tiles import full_set, pips
from services.kit import play as kit_play
from services.kit.engine import JSON, EndReason, Event, Outcome
from services.kit.game import CLAIMABLE, CONCEDE, OPPONENTS
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng
from tests import playing
from tests.playing import events, kinds
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


def act(
    table: Table, seat: int, action: JSON, *deals: Sequence[Sequence[Tile]], now: float = playing.NOW
) -> tuple[Table, list[Happening]]:
    """A well-formed action (it fits the proto); ``deals`` are the deals its
    shuffles lay out, every one of them used."""
    rng = Deals(*deals)
    table, happened = playing.act(GAME, table, seat, action, rng=rng, now=now)
    assert not rng.deals, "not every deal was dealt"
    return table, happened


def play(a: int, b: int, end: str | None = None) -> JSON:
    body: JSON = {"tile": {"a": a, "b": b}}
    if end is not None:
        body["end"] = end
    return {"play": body}


def refused(
    table: Table, seat: int, action: Any, code: str, *, invalid: bool = False, now: float = 1_000.0
) -> None:
    """The action is refused with ``code`` and the table is left as it was."""
    playing.refused(GAME, table, seat, action, code, invalid=invalid, now=now)


def only(happened: list[Happening], kind: str) -> JSON:
    [found] = [event.data for event in events(happened) if event.kind == kind]
    return found


def key(tile: Tile) -> Tile:
    """The tile as a hand holds it, low half first."""
    return (min(tile), max(tile))


def tiles_json(tiles: Sequence[Tile]) -> list[JSON]:
    return [{"a": a, "b": b} for a, b in tiles]


def view(table: Table, seat: int | None = None) -> JSON:
    return GAME.view(table.state, seat)


def ends(table: Table) -> tuple[int, int]:
    seen = view(table)
    return seen["left_end"], seen["right_end"]


def result(table: Table) -> Outcome:
    outcome = GAME.outcome(table.state)
    assert outcome is not None
    return outcome


def new_match(*deals: Sequence[Sequence[Tile]]) -> tuple[Table, list[Happening]]:
    rng = Deals(*deals)
    table, happened = playing.start(GAME, 4, rng=rng)
    assert not rng.deals
    return table, happened


def position(
    line: Sequence[Tile],
    hands: Mapping[int, Sequence[Tile]],
    *,
    turn: int,
    round_no: int = 2,
    scores: tuple[int, int] = (0, 0),
) -> Table:
    """A table in the middle of a round.

    ``line`` is left to right, each tile oriented as it lies; the one seat
    missing from ``hands`` holds the tiles left over.
    """
    table, _ = new_match(IN_ORDER)
    used = [key(t) for t in line] + [key(t) for hand in hands.values() for t in hand]
    [rest_seat] = [seat for seat in range(4) if seat not in hands]
    rest = [tile for tile in full_set() if tile not in used]
    every = {**hands, rest_seat: rest}
    assert sorted(used + rest) == full_set(), "each of the 28 tiles exactly once"
    for left, right in itertools.pairwise(line):
        assert left[1] == right[0], "neighbouring halves match"
    table.state.update(
        round=round_no,
        hands=[sorted([min(t), max(t)] for t in every[seat]) for seat in range(4)],
        line=[{"tile": list(tile), "seat": i % 4, "order": i} for i, tile in enumerate(line)],
        passes=[],
        turn=turn,
        scores=list(scores),
        last_play=[None, None],
    )
    return table


# --- the declaration --------------------------------------------------------------------


def test_the_table_four_seats_two_teams_open_concede_opponents_claim() -> None:
    [mode] = GAME.modes
    assert (mode.name, mode.seats, mode.deadline) == ("standard", (4,), CLAIMABLE)
    assert [(team.name, team.seats) for team in mode.teams] == [("TEAM_0", (0, 2)), ("TEAM_1", (1, 3))]
    assert (GAME.leaving, GAME.claims, GAME.open_tables) == (CONCEDE, OPPONENTS, True)
    assert GAME.ports == (50054, 9104)
    assert GAME.cpu_seats and GAME.cpu is cpu.choose  # issue 17; its tests: test_domino_cpu.py


def test_cpu_seats_are_distinct_seats_of_the_table() -> None:
    for seats in ((4,), (1, 1), (-1,)):
        with pytest.raises(playing.InvalidAction) as caught:
            playing.start(GAME, 4, cpu_seats=seats)
        assert caught.value.code == "invalid_cpu_seats"


# --- the match and the first round ------------------------------------------------------


def test_four_seats_in_two_teams_only() -> None:
    for seats in (2, 3, 5):
        with pytest.raises(playing.InvalidAction) as caught:
            playing.start(GAME, seats)
        assert caught.value.code == "invalid_seats"


def test_options_are_empty_the_target_is_fixed() -> None:
    assert_fits(domino_pb2.Options, {})
    with pytest.raises(playing.InvalidAction) as caught:
        playing.start(GAME, 4, {"target": 100})
    assert caught.value.code == "invalid_options"
    table, _ = playing.start(GAME, 4)
    assert view(table)["target"] == 50


# The first deal of the match seeded with bytes 0..31, pinned: the deal and the
# opener draw exactly as before the engine became moves, so a seed replays the
# same hands (values computed with the engine of commit 9e86c98).
PINNED_SEED = bytes(range(32))
PINNED_HANDS = [
    [(0, 0), (0, 4), (0, 6), (1, 2), (2, 3), (2, 6), (3, 3)],
    [(0, 2), (0, 5), (1, 5), (1, 6), (3, 6), (4, 4), (4, 5)],
    [(1, 4), (2, 2), (2, 4), (2, 5), (4, 6), (5, 5), (5, 6)],
    [(0, 1), (0, 3), (1, 1), (1, 3), (3, 4), (3, 5), (6, 6)],
]


def test_a_seed_replays_the_same_first_deal_and_opener() -> None:
    rng = MatchRng(PINNED_SEED)
    table, happened = playing.start(GAME, 4, rng=rng)
    assert rng.counter == 27  # one Fisher–Yates shuffle of the 28 tiles
    assert only(happened, "round_started") == {
        "round": 1,
        "opener": 3,
        "opening_tile": {"a": 6, "b": 6},
        "scores": [0, 0],
    }
    dealt = [e for e in events(happened) if e.kind == "dealt"]
    assert [(e.data, e.audience) for e in dealt] == [
        ({"seat": seat, "tiles": tiles_json(PINNED_HANDS[seat])}, (seat,)) for seat in range(4)
    ]
    assert GAME.to_act(table.state) == [3]


def test_a_seed_replays_the_same_match() -> None:
    """Always the first playable tile (on its first end): the whole match, its
    second deal included, as before the conversion."""
    rng = MatchRng(PINNED_SEED)
    table, _ = playing.start(GAME, 4, rng=rng)
    rounds = []
    while GAME.outcome(table.state) is None:
        [seat] = GAME.to_act(table.state)
        option = view(table, seat)["playable"][0]
        action: JSON = {"play": {"tile": option["tile"]}}
        if option["end_required"]:
            action["play"]["end"] = option["ends"][0]
        table, happened = playing.act(GAME, table, seat, action, rng=rng)
        for event in events(happened):
            if event.kind == "round_ended":
                data = event.data
                rounds.append((data["round"], data["kind"], data["seat"], data["points"], data["scores"]))
    assert rounds == [(1, "BATIDA", 0, 26, [26, 0]), (2, "TRANCA", 1, 30, [56, 0])]
    assert rng.counter == 54
    assert result(table) == Outcome([1, 2, 1, 2], [56, 0, 56, 0], EndReason.COMPLETED, [])


def test_all_28_tiles_are_dealt_seven_each_privately() -> None:
    table, happened = new_match(IN_ORDER)
    assert kinds(happened) == ["round_started"] + ["dealt"] * 4
    for seat in range(4):
        dealt = events(happened)[1 + seat]
        assert dealt.audience == (seat,)
        assert dealt.data == {"seat": seat, "tiles": tiles_json(IN_ORDER[seat])}
        assert view(table, seat)["hand"] == tiles_json(IN_ORDER[seat])
    assert view(table)["hand_counts"] == [7, 7, 7, 7]
    assert view(table)["hand"] == []
    assert GAME.scores is not None and GAME.scores(table.state) == [0, 0, 0, 0]


@pytest.mark.parametrize("holder", [0, 1, 2, 3])
def test_first_round_the_holder_of_double_six_opens_with_it(holder: int) -> None:
    deal = IN_ORDER[3 - holder :] + IN_ORDER[: 3 - holder]  # 6-6 is in IN_ORDER[3]
    table, happened = new_match(deal)
    assert only(happened, "round_started") == {
        "round": 1,
        "opener": holder,
        "opening_tile": {"a": 6, "b": 6},
        "scores": [0, 0],
    }
    assert GAME.to_act(table.state) == [holder]
    seen = view(table, holder)
    assert seen["opening_tile"] == {"a": 6, "b": 6}
    assert seen["playable"] == [{"tile": {"a": 6, "b": 6}, "ends": [], "end_required": False}]
    refused(table, holder, play(5, 5), "must_open_with_double_six")
    refused(table, (holder + 1) % 4, play(6, 6), "not_your_turn")

    table, happened = act(table, holder, play(6, 6))
    assert only(happened, "played") == {
        "seat": holder,
        "tile": {"a": 6, "b": 6},
        "order": 0,
        "left_end": 6,
        "right_end": 6,
        "tiles_left": 6,
    }
    assert view(table)["line"] == [{"tile": {"a": 6, "b": 6}, "seat": holder, "order": 0}]
    assert "opening_tile" not in view(table)


def test_an_end_sent_with_the_opening_play_is_ignored() -> None:
    table, _ = new_match(IN_ORDER)
    table, happened = act(table, 3, play(6, 6, "LEFT"))
    assert "end" not in only(happened, "played")
    assert ends(table) == (6, 6)


def test_play_goes_clockwise_to_the_next_seat() -> None:
    table, _ = new_match(IN_ORDER)  # seat 0 holds 0-6, seat 1 holds 1-6
    table, _ = act(table, 3, play(6, 6))
    assert GAME.to_act(table.state) == [0]
    table, _ = act(table, 0, play(0, 6))
    assert GAME.to_act(table.state) == [1]
    table, happened = act(table, 1, play(1, 6))
    assert ends(table) == (1, 0)  # seats 2 and 3 hold neither a 1 nor a 0
    assert [(e.kind, e.data["seat"]) for e in events(happened)] == [
        ("played", 1),
        ("passed", 2),
        ("passed", 3),
    ]
    assert GAME.to_act(table.state) == [0]


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


def fives() -> Table:
    return position([(5, 5)], FIVES_HANDS, turn=0)


def test_a_tile_must_match_an_open_end() -> None:
    table = fives()
    refused(table, 0, play(0, 0), "tile_does_not_match")
    refused(table, 0, play(6, 6), "tile_does_not_match")
    refused(table, 0, play(5, 6), "tile_not_in_hand")  # seat 3 holds it
    seen = view(table, 0)
    assert seen["playable"] == [{"tile": {"a": 0, "b": 5}, "ends": ["LEFT", "RIGHT"], "end_required": False}]


def test_legal_lists_each_playable_tile_on_each_end_it_fits() -> None:
    assert GAME.legal is not None
    table = fives()
    assert GAME.legal(table.state, 0) == [play(0, 5, "LEFT"), play(0, 5, "RIGHT")]
    assert GAME.legal(table.state, 1) == []
    opening, _ = new_match(IN_ORDER)
    assert GAME.legal(opening.state, 3) == [play(6, 6)]


def test_seed_example_any_tile_with_a_5_joins_an_open_5() -> None:
    table, _ = act(fives(), 0, play(0, 5))  # ends 5 and 0; seats 1 and 2 pass
    playable = {(p["tile"]["a"], p["tile"]["b"]): p["ends"] for p in view(table, 3)["playable"]}
    assert playable[(2, 5)] == ["LEFT"] and playable[(5, 6)] == ["LEFT"]
    assert playable[(0, 6)] == ["RIGHT"]
    after, _ = act(table, 3, play(5, 2))
    assert ends(after) == (2, 0)


def test_halves_may_be_sent_in_either_order() -> None:
    table, happened = act(fives(), 0, play(5, 0))
    assert only(happened, "played")["tile"] == {"a": 5, "b": 0}
    assert ends(table) == (5, 0)


def test_end_is_optional_when_both_ends_give_the_same_result() -> None:
    table, happened = act(fives(), 0, play(0, 5))  # ends 5 and 5: either way 5 and 0 stay open
    assert only(happened, "played")["end"] == "RIGHT"
    assert ends(table) == (5, 0)
    table, happened = act(fives(), 0, play(0, 5, "LEFT"))
    assert only(happened, "played")["end"] == "LEFT"
    assert view(table)["line"][0] == {"tile": {"a": 0, "b": 5}, "seat": 0, "order": 1}
    assert ends(table) == (0, 5)


# Seat 0 opened 3-2, seat 3 laid 2-1: the ends are 3 and 1. Seat 0 holds every
# other 3; nobody else holds a 3.
THREES_HANDS: dict[int, Sequence[Tile]] = {
    0: [(1, 3), (0, 3), (3, 3), (3, 4), (3, 5), (3, 6)],
    1: [(0, 0), (0, 1), (0, 2), (0, 4), (0, 5), (0, 6), (1, 1)],
    2: [(1, 4), (1, 5), (1, 6), (2, 2), (2, 4), (2, 5), (2, 6)],
}


def threes() -> Table:
    return position([(3, 2), (2, 1)], THREES_HANDS, turn=0)


def test_a_tile_fitting_both_ends_differently_needs_the_end() -> None:
    table = threes()
    refused(table, 0, play(1, 3), "end_required")
    playable = {(p["tile"]["a"], p["tile"]["b"]): p for p in view(table, 0)["playable"]}
    assert playable[(1, 3)] == {"tile": {"a": 1, "b": 3}, "ends": ["LEFT", "RIGHT"], "end_required": True}
    assert playable[(0, 3)] == {"tile": {"a": 0, "b": 3}, "ends": ["LEFT"], "end_required": False}

    left, happened = act(table, 0, play(1, 3, "LEFT"))
    assert ends(left) == (1, 1)
    assert view(left)["line"][0]["tile"] == {"a": 1, "b": 3}
    assert only(happened, "played")["end"] == "LEFT"

    right, happened = act(table, 0, play(3, 1, "RIGHT"))
    assert ends(right) == (3, 3)
    assert view(right)["line"][-1]["tile"] == {"a": 1, "b": 3}


def test_a_tile_fitting_one_end_goes_there_and_only_there() -> None:
    table = threes()
    refused(table, 0, play(0, 3, "RIGHT"), "end_does_not_match")
    after, happened = act(table, 0, play(0, 3))
    assert only(happened, "played")["end"] == "LEFT"
    assert view(after)["line"][0]["tile"] == {"a": 0, "b": 3}
    assert ends(after) == (0, 1)


# --- automatic passes --------------------------------------------------------------


def test_seats_that_cannot_play_pass_automatically_and_publicly() -> None:
    table, happened = act(fives(), 0, play(0, 5))  # ends 5 and 0: seats 1 and 2 hold neither
    assert kinds(happened) == ["played", "passed", "passed"]
    assert [event.audience for event in events(happened)] == [None, None, None]
    assert [event.data for event in events(happened)[1:]] == [
        {"seat": 1, "left_end": 5, "right_end": 0, "line_length": 2},
        {"seat": 2, "left_end": 5, "right_end": 0, "line_length": 2},
    ]
    assert GAME.to_act(table.state) == [3]
    assert view(table, 1)["passes"] == [event.data for event in events(happened)[1:]]


def test_when_all_three_others_pass_the_player_plays_again() -> None:
    table, happened = act(threes(), 0, play(1, 3, "RIGHT"))  # ends 3 and 3: only seat 0 holds 3s
    assert kinds(happened) == ["played", "passed", "passed", "passed"]
    assert [event.data["seat"] for event in events(happened)[1:]] == [1, 2, 3]
    assert GAME.to_act(table.state) == [0]
    assert view(table, 0)["playable"]


def test_a_player_with_a_playable_tile_is_never_passed() -> None:
    table, happened = act(threes(), 0, play(1, 3, "LEFT"))  # ends 1 and 1: seat 1 holds 0-1
    assert kinds(happened) == ["played"]
    assert GAME.to_act(table.state) == [1]


# --- batida ----------------------------------------------------------------------------

# Seat 0 holds only 3-5 and the right end is 3. Seat 1 keeps 0-0 and 0-1 (1 pip),
# seat 3 keeps 0-2 and 1-4 (7 pips); seat 0's partner, seat 2, keeps 33 pips.
BATIDA_LINE: list[Tile] = [
    (2, 1), (1, 1), (1, 3), (3, 0), (0, 4), (4, 2), (2, 2), (2, 3), (3, 3), (3, 4),
    (4, 4), (4, 5), (5, 0), (0, 6), (6, 1), (1, 5), (5, 5), (5, 2), (2, 6), (6, 3),
]  # fmt: skip
BATIDA_HANDS: dict[int, Sequence[Tile]] = {0: [(3, 5)], 1: [(0, 0), (0, 1)], 2: [(4, 6), (5, 6), (6, 6)]}


def batida(scores: tuple[int, int] = (0, 0)) -> Table:
    return position(BATIDA_LINE, BATIDA_HANDS, turn=0, scores=scores)


def test_batida_scores_the_two_opponents_hands_never_the_partners() -> None:
    table, happened = act(batida(), 0, play(3, 5), IN_ORDER)
    assert kinds(happened) == ["played", "round_ended", "round_started"] + ["dealt"] * 4
    ended = only(happened, "round_ended")
    assert ended["kind"] == "BATIDA"
    assert ended["seat"] == 0
    assert ended["winning_team"] == 0
    assert ended["points"] == 1 + 7  # seats 1 and 3; seat 2's 33 pips do not count
    assert ended["team_pips"] == [33, 8]
    assert ended["scores"] == [8, 0]
    assert GAME.scores is not None and GAME.scores(table.state) == [8, 0, 8, 0]


def test_the_round_end_reveals_every_hand_to_everyone() -> None:
    _, happened = act(batida(), 0, play(3, 5), IN_ORDER)
    [ended] = [event for event in events(happened) if event.kind == "round_ended"]
    assert ended.audience is None
    assert ended.data["hands"] == [
        {"seat": 0, "tiles": [], "pips": 0},
        {"seat": 1, "tiles": tiles_json([(0, 0), (0, 1)]), "pips": 1},
        {"seat": 2, "tiles": tiles_json([(4, 6), (5, 6), (6, 6)]), "pips": 33},
        {"seat": 3, "tiles": tiles_json([(0, 2), (1, 4)]), "pips": 7},
    ]


def test_the_seat_that_went_out_opens_the_next_round_with_any_tile() -> None:
    table, happened = act(batida(), 0, play(3, 5), IN_ORDER)
    assert only(happened, "round_ended")["next_opener"] == 0
    assert only(happened, "round_started") == {"round": 3, "opener": 0, "scores": [8, 0]}
    assert GAME.to_act(table.state) == [0]
    seen = view(table, 0)
    assert seen["round"] == 3
    assert seen["line"] == [] and seen["passes"] == []
    assert "opening_tile" not in seen
    assert [p["tile"] for p in seen["playable"]] == tiles_json(IN_ORDER[0])
    assert seen["last_round"] == only(happened, "round_ended")
    table, happened = act(table, 0, play(0, 3))  # not the 6-6, not a double
    assert ends(table) == (0, 3)


def test_going_out_on_a_blocking_tile_is_a_batida() -> None:
    # All the 0s but 0-6 lie on the line, ends 0 and 6: seat 0 lays its last
    # tile, 6-0, and closes the table at the same time.
    line = [(0, 1), (1, 2), (2, 0), (0, 0), (0, 3), (3, 4), (4, 0), (0, 5), (5, 6)]
    hands = {
        0: [(0, 6)],
        1: [(1, 1), (1, 3), (1, 4), (1, 5), (1, 6), (2, 2)],
        2: [(2, 3), (2, 4), (2, 5), (2, 6), (3, 3), (3, 5)],
    }
    table = position(line, hands, turn=0)  # seat 3: 3-6 4-4 4-5 4-6 5-5 6-6
    table, happened = act(table, 0, play(6, 0, "RIGHT"))  # 86 points: the match ends too
    ended = only(happened, "round_ended")
    assert ended["kind"] == "BATIDA"
    assert ended["points"] == (2 + 4 + 5 + 6 + 7 + 4) + (9 + 8 + 9 + 10 + 10 + 12)


def test_the_last_tile_can_be_the_double_blank_sent_as_an_empty_tile() -> None:
    # The proto's JSON form omits zero values: 0-0 arrives as {"tile": {}}.
    line = [(0, 1), *BATIDA_LINE[1:]]  # the same line with 0-1 for 2-1: the left end is 0
    table = position(line, {0: [(0, 0)], 1: [(1, 2), (3, 5)], 2: [(4, 6), (5, 6), (6, 6)]}, turn=0)
    wire = json_format.MessageToDict(
        assert_fits(domino_pb2.Action, play(0, 0)), preserving_proto_field_name=True
    )
    assert wire == {"play": {"tile": {}}}
    _, happened = act(table, 0, wire, IN_ORDER)
    assert only(happened, "played")["tile"] == {"a": 0, "b": 0}
    assert only(happened, "round_ended")["kind"] == "BATIDA"


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
    table = position(line, {0: [last], **NO_BONUS_HANDS}, turn=0)  # seat 3: 0-4 and 1-5
    assert view(table, 3)["hand"] == tiles_json([(0, 4), (1, 5)])
    _, happened = act(table, 0, play(*last, end), IN_ORDER)
    ended = only(happened, "round_ended")
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


def blocked_round(
    opener: int, openers_team_keeps: Sequence[Tile], next_deal: bool = True
) -> tuple[Table, list[Happening]]:
    """Play the first round above to its tranca; the opener's team keeps the
    given 9 tiles. ``next_deal``: the tranca does not end the match, and the
    next round is dealt in order."""
    others_keep = [tile for tile in LEFT_OVER if tile not in openers_team_keeps]
    keeps = [openers_team_keeps[:4], others_keep[:4], openers_team_keeps[4:], others_keep[4:]]
    relative = [[key(t) for r, t, _ in BLOCKING_PLAYS if r == rel] + list(keeps[rel]) for rel in range(4)]
    deal = [relative[(seat - opener) % 4] for seat in range(4)]
    table, _ = new_match(deal)
    happened: list[Happening] = []
    for index, (rel, (a, b), end) in enumerate(BLOCKING_PLAYS):
        assert GAME.to_act(table.state) == [(opener + rel) % 4]
        deals = [IN_ORDER] if next_deal and index == len(BLOCKING_PLAYS) - 1 else []
        table, happened = act(table, (opener + rel) % 4, play(a, b, end), *deals)
    return table, happened


# 9 of the 18 tiles left over, worth 45, 44 and 40 pips of the 90.
KEEP_45 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 4), (3, 5), (4, 4), (5, 5)]
KEEP_44 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 3), (3, 5), (4, 4), (5, 5)]
KEEP_40 = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 5), (1, 1), (1, 5), (3, 5), (5, 5)]


def test_tranca_the_lower_team_wins_even_when_it_blocked() -> None:
    complement_of_44 = [tile for tile in LEFT_OVER if tile not in KEEP_44]
    _, happened = blocked_round(0, complement_of_44)  # the blockers (team 1) keep 44
    assert kinds(happened)[:3] == ["played", "round_ended", "round_started"]
    ended = only(happened, "round_ended")
    assert ended["kind"] == "TRANCA"
    assert ended["seat"] == 1
    assert ended["team_pips"] == [46, 44]
    assert ended["winning_team"] == 1
    assert ended["points"] == 46
    assert ended["scores"] == [0, 46]
    assert ended["next_opener"] == 1  # its team's last play was the blocking one


@pytest.mark.parametrize("opener", [0, 3])
def test_tranca_on_equal_sums_the_blocking_team_loses(opener: int) -> None:
    table, happened = blocked_round(opener, KEEP_45)
    ended = only(happened, "round_ended")
    blocker = (opener + 1) % 4
    assert ended["kind"] == "TRANCA"
    assert ended["seat"] == blocker
    assert ended["team_pips"] == [45, 45]
    assert ended["winning_team"] == 1 - blocker % 2
    assert ended["points"] == 45
    # The winners' last play was the opener's 4-5, not its partner's 6-0.
    assert ended["next_opener"] == opener
    assert only(happened, "round_started") == {"round": 2, "opener": opener, "scores": ended["scores"]}
    assert GAME.to_act(table.state) == [opener]
    assert len(view(table, opener)["playable"]) == 7


def test_tranca_reveals_every_hand_and_no_one_passes() -> None:
    _, happened = blocked_round(0, KEEP_45)
    assert "passed" not in kinds(happened)
    ended = only(happened, "round_ended")
    assert [hand["pips"] for hand in ended["hands"]] == [
        sum(map(sum, KEEP_45[:4])),
        sum(map(sum, [t for t in LEFT_OVER if t not in KEEP_45][:4])),
        sum(map(sum, KEEP_45[4:])),
        sum(map(sum, [t for t in LEFT_OVER if t not in KEEP_45][4:])),
    ]
    assert sum(len(hand["tiles"]) for hand in ended["hands"]) == 18


# --- the end of the match ----------------------------------------------------------------


def test_reaching_exactly_50_wins_the_match() -> None:
    # Team 0 keeps 40, team 1 keeps 50. The end is the kit's final event and
    # Result now, not a game event (no `match_ended`).
    table, happened = blocked_round(0, KEEP_40, next_deal=False)
    assert kinds(happened) == ["played", "round_ended"]
    assert "next_opener" not in only(happened, "round_ended")
    assert GAME.to_act(table.state) == []
    assert result(table) == Outcome([1, 2, 1, 2], [50, 0, 50, 0], EndReason.COMPLETED, [])
    seen = view(table, 2)
    assert seen["playable"] == [] and "opening_tile" not in seen
    assert seen["last_round"] == only(happened, "round_ended")


def test_passing_50_wins_the_match_and_49_does_not() -> None:
    table, happened = act(batida(scores=(45, 30)), 0, play(3, 5))
    assert only(happened, "round_ended")["scores"] == [53, 30]
    assert result(table).scores == [53, 30, 53, 30]

    table, happened = act(batida(scores=(41, 30)), 0, play(3, 5), IN_ORDER)
    assert only(happened, "round_ended")["scores"] == [49, 30]
    assert GAME.outcome(table.state) is None


def test_nothing_is_played_after_the_match_is_over() -> None:
    table, _ = act(batida(scores=(45, 30)), 0, play(3, 5))
    refused(table, 1, play(0, 0), "game_over")
    refused(table, 1, {"claim_inactivity": {}}, "game_over", now=10_000.0)
    with pytest.raises(playing.RulesError) as caught:
        playing.leave(GAME, table, 1)
    assert caught.value.code == "game_over"


# --- leaving and inactivity --------------------------------------------------------------


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_leaving_concedes_the_match_to_the_opposing_team(seat: int) -> None:
    # The kit tells the table (a LEFT notice, then the final Result); the
    # game adds no event of its own.
    after, happened = playing.leave(GAME, fives(), seat)
    assert happened == [Notice("LEFT", seat)]
    winners = 1 - seat % 2
    outcome = result(after)
    assert outcome.reason == EndReason.FORFEIT
    assert outcome.forfeited == [seat]
    assert outcome.scores == [0, 0, 0, 0]
    assert [rank == 1 for rank in outcome.ranks] == [s % 2 == winners for s in range(4)]
    assert outcome.ranks == [1 if s % 2 == winners else 2 for s in range(4)]
    assert GAME.to_act(after.state) == []


def test_leaving_keeps_the_scores_so_far() -> None:
    after, _ = playing.leave(GAME, batida(scores=(30, 45)), 3)
    assert result(after) == Outcome([1, 2, 1, 2], [30, 45, 30, 45], EndReason.FORFEIT, [3])


def test_an_opponent_claims_the_match_after_120_seconds() -> None:
    table = fives()  # seat 0 to act since the table's idle_since
    refused(table, 1, {"claim_inactivity": {}}, "too_early", now=table.idle_since + 119.9)
    after, happened = playing.claim(GAME, table, 3, 120.0)
    assert happened == [Notice("CLAIMED", 0, by=3)]
    assert result(after) == Outcome([2, 1, 2, 1], [0, 0, 0, 0], EndReason.INACTIVITY, [0])


def test_the_claim_clock_restarts_when_the_turn_passes() -> None:
    table, _ = act(fives(), 0, play(0, 5), now=playing.NOW + 100.0)  # seats 1, 2 pass: seat 3
    assert GAME.to_act(table.state) == [3] and table.idle_since == playing.NOW + 100.0
    refused(table, 0, {"claim_inactivity": {}}, "too_early", now=playing.NOW + 200.0)
    after, happened = playing.claim(GAME, table, 0, 120.0)
    assert happened == [Notice("CLAIMED", 3, by=0)]
    assert result(after).ranks == [1, 2, 1, 2]


def test_neither_the_idle_seat_nor_its_partner_may_claim() -> None:
    table = fives()
    refused(table, 2, {"claim_inactivity": {}}, "partner_cannot_claim", now=5000.0)
    refused(table, 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=5000.0)


# --- malformed and refused actions --------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({}, "malformed_action"),
        ({"play": None}, "malformed_action"),
        ({"play": {"tile": {"a": 0, "b": 5}}, "claim_inactivity": {}}, "malformed_action"),
        ({"pass": {}}, "malformed_action"),  # was unknown_action: the kit parses the proto strictly
        ({"play": [0, 5]}, "malformed_action"),
        ({"play": {"tile": {"a": 0, "b": 5}, "side": "LEFT"}}, "malformed_action"),
        ({"claim_inactivity": {"seat": 1}}, "malformed_action"),
        ({"play": {}}, "missing_tile"),
        ({"play": {"tile": None}}, "missing_tile"),
        ({"play": {"tile": [0, 5]}}, "malformed_action"),  # was invalid_tile
        ({"play": {"tile": {"a": 0, "b": 7}}}, "invalid_tile"),
        ({"play": {"tile": {"a": -1, "b": 5}}}, "invalid_tile"),
        ({"play": {"tile": {"a": 1.5, "b": 5}}}, "malformed_action"),
        ({"play": {"tile": {"a": True, "b": 5}}}, "malformed_action"),  # was invalid_tile
        ({"play": {"tile": {"a": 0, "b": 5, "c": 1}}}, "malformed_action"),  # was invalid_tile
        ({"play": {"tile": {"a": 0, "b": 5}, "end": "MIDDLE"}}, "malformed_action"),  # was invalid_end
        ({"play": {"tile": {"a": 0, "b": 5}, "end": 7}}, "malformed_action"),  # was invalid_end
    ],
)
def test_malformed_actions_are_invalid(action: JSON, code: str) -> None:
    refused(fives(), 0, action, code, invalid=True)


def test_an_end_number_the_enum_lacks_is_invalid_in_a_binary_action() -> None:
    """The JSON path refuses it (above); a binary Action, which the service
    passes on as the message, is checked by the kit the same way (proto3
    keeps any enum number it is sent)."""
    message = domino_pb2.Action()
    message.play.tile.b = 5
    message.play.end = 7  # type: ignore[assignment]
    refused(fives(), 0, message, "malformed_action", invalid=True)


def test_the_proto_json_forms_of_numbers_are_accepted() -> None:
    """The kit parses the proto's JSON: an End by its number and an int32 as a
    string are the proto's own JSON forms (formerly `invalid_end` and
    `invalid_tile`)."""
    _, happened = act(fives(), 0, {"play": {"tile": {"a": "0", "b": 5}, "end": 1}})
    assert only(happened, "played")["end"] == "LEFT"
    assert only(happened, "played")["tile"] == {"a": 0, "b": 5}


def test_an_explicit_unspecified_end_means_no_end() -> None:
    _, happened = act(fives(), 0, play(0, 5, "END_UNSPECIFIED"))
    assert only(happened, "played")["end"] == "RIGHT"
    refused(threes(), 0, play(1, 3, "END_UNSPECIFIED"), "end_required")


def test_only_the_seat_to_act_may_play() -> None:
    table = fives()
    for seat in (1, 2, 3):
        refused(table, seat, play(1, 1), "not_your_turn")
        # The turn is checked first now: out of turn, even a malformed tile is not_your_turn.
        refused(table, seat, {"play": {"tile": {"a": 9, "b": 9}}}, "not_your_turn")
        assert view(table, seat)["playable"] == []
    assert GAME.to_act(table.state) == [0]


def test_every_event_of_these_scenes_fits_the_proto() -> None:
    scenes = [
        new_match(IN_ORDER)[1],
        act(fives(), 0, play(0, 5))[1],
        act(threes(), 0, play(1, 3, "RIGHT"))[1],
        act(batida(), 0, play(3, 5), IN_ORDER)[1],
        blocked_round(0, KEEP_40, next_deal=False)[1],
        playing.leave(GAME, fives(), 1)[1],
    ]
    for happened in scenes:
        for event in events(happened):
            assert_event_fits(domino_pb2.Event, event)
            assert isinstance(event, Event)


def test_the_kit_plays_the_moves_on_the_state_it_is_given() -> None:
    """Moves change the state in place (the kit throws it away on a refusal)."""
    table = fives()
    happened = kit_play.act(GAME, table, 0, play(0, 5), ctx())
    assert kinds(happened) == ["played", "passed", "passed"]
    assert table.state["turn"] == 3 and len(table.state["line"]) == 2
