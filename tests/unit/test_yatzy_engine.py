"""The Yatzy rules with exact dice, played through the kit: turns, throws,
scoring, the end, ties, leaving and inactivity claims, refusals and the view."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from services.kit.engine import EndReason, Event
from services.kit.play import Happening, Notice, Table
from services.yatzy import scoring
from services.yatzy.game import GAME
from tests import playing
from tests.playing import kinds, notices

CLASSIC_BOXES = scoring.boxes(scoring.CLASSIC)
JSON = dict[str, Any]


def start(seats: int = 2, card: str | None = None) -> Table:
    table, events = playing.start(GAME, seats, {} if card is None else {"card": card})
    assert [(e.kind, e.data) for e in events] == [("turn_started", {"seat": 0, "round": 1})]  # type: ignore[union-attr]
    return table


def act(
    table: Table, seat: int, action: JSON, *faces: int, now: float = 1_000.0
) -> tuple[Table, list[Happening]]:
    return playing.act(GAME, table, seat, action, *faces, now=now)


def roll(table: Table, seat: int, *faces: int, keep: Sequence[int] = ()) -> tuple[Table, list[Happening]]:
    action: JSON = {"roll": {"keep": list(keep)}} if keep else {"roll": {}}
    return act(table, seat, action, *faces)


def score(table: Table, seat: int, box: str) -> tuple[Table, list[Happening]]:
    return act(table, seat, {"score": {"box": box}})


def turn(table: Table, seat: int, dice: Sequence[int], box: str) -> tuple[Table, list[Happening]]:
    """One throw of ``dice``, then ``box``."""
    table, _ = roll(table, seat, *dice)
    return score(table, seat, box)


def leave(table: Table, seat: int) -> tuple[Table, list[Happening]]:
    return playing.leave(GAME, table, seat)


def claim(table: Table, seat: int, waited: float) -> tuple[Table, list[Happening]]:
    return playing.claim(GAME, table, seat, waited)


def refused(
    table: Table, seat: int, action: Any, code: str, *, now: float = 1_000.0, invalid: bool = False
) -> None:
    playing.refused(GAME, table, seat, action, code, now=now, invalid=invalid)


def view(table: Table, seat: int | None = None) -> JSON:
    return GAME.view(table.state, seat)


def data(happened: list[Happening], index: int) -> JSON:
    item = happened[index]
    assert isinstance(item, Event)
    return item.data


def result(table: Table) -> tuple[list[int], list[int], EndReason, list[int]]:
    outcome = GAME.outcome(table.state)
    assert outcome is not None
    return outcome.ranks, outcome.scores, outcome.reason, outcome.forfeited


def play_out(table: Table, dice_for: Callable[[int, int], Sequence[int]]) -> tuple[Table, list[Happening]]:
    """Play to the end: each turn one throw of ``dice_for(seat, round)``,
    scored in the first empty box of the card."""
    happened: list[Happening] = []
    while GAME.outcome(table.state) is None:
        (seat,) = GAME.to_act(table.state)
        card_view = view(table)["cards"][seat]
        box = next(b["box"] for b in card_view["boxes"] if not b["filled"])
        table, new = turn(table, seat, dice_for(seat, len(table.state["filled"][seat]) + 1), box)
        happened += new
    return table, happened


# --- Starting a match --------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "card"),
    [({}, "CLASSIC"), ({"card": "CARD_UNSPECIFIED"}, "CLASSIC"), ({"card": None}, "CLASSIC"),
     ({"card": "CLASSIC"}, "CLASSIC"), ({"card": "SCANDINAVIAN"}, "SCANDINAVIAN")],
)  # fmt: skip
def test_options_choose_the_card_classic_by_default(options: JSON, card: str) -> None:
    table, _ = playing.start(GAME, 3, options)
    seen = view(table)
    assert seen["card"] == card
    assert seen["rounds"] == {"CLASSIC": 13, "SCANDINAVIAN": 15}[card]
    assert [len(c["boxes"]) for c in seen["cards"]] == [seen["rounds"]] * 3


@pytest.mark.parametrize("options", [{"card": "YAHTZEE"}, {"card": 2.5}, {"cards": "CLASSIC"}, {"rounds": 5}])
def test_bad_options_are_refused(options: JSON) -> None:
    with pytest.raises(playing.InvalidAction) as raised:
        playing.start(GAME, 2, options)
    assert raised.value.code == "invalid_options"


@pytest.mark.parametrize("seats", [0, 9, -1])
def test_one_to_eight_seats(seats: int) -> None:
    with pytest.raises(playing.InvalidAction) as raised:
        playing.start(GAME, seats)
    assert raised.value.code == "invalid_seats"
    assert playing.start(GAME, 1)[0].state["current"] == 0
    assert len(playing.start(GAME, 8)[0].state["filled"]) == 8


def test_cpu_seats_are_seats_of_the_table() -> None:
    """Issue 17: any seat may be the computer's (tests/unit/test_dice_cpu.py
    plays them); the seats must exist."""
    table, _ = playing.start(GAME, 2, cpu_seats=(1,))
    assert table.cpu == [1] and GAME.to_act(table.state) == [0]
    with pytest.raises(playing.InvalidAction) as raised:
        playing.start(GAME, 2, cpu_seats=(1, 1))
    assert raised.value.code == "invalid_cpu_seats"


def test_seat_0_opens_with_no_dice_thrown() -> None:
    table = start(3)
    assert GAME.to_act(table.state) == [0]
    assert GAME.outcome(table.state) is None
    seen = view(table, 0)
    assert seen["round"] == 1
    assert seen["dice"] == []
    assert (seen["throws_used"], seen["throws_left"]) == (0, 3)
    assert seen["preview"] == []


# --- Throwing -----------------------------------------------------------------------


def test_first_throw_throws_all_five() -> None:
    table, events = roll(start(), 0, 6, 1, 3, 3, 2)
    assert [(e.kind, e.data, e.audience) for e in events] == [
        ("rolled", {"seat": 0, "dice": [6, 1, 3, 3, 2], "kept": [], "throw_number": 1}, None)
    ]
    assert view(table)["dice"] == [6, 1, 3, 3, 2]


def test_first_throw_cannot_keep() -> None:
    refused(start(), 0, {"roll": {"keep": [0]}}, "nothing_to_keep")


def test_rethrow_keeps_the_chosen_positions() -> None:
    table, _ = roll(start(), 0, 6, 1, 3, 3, 2)
    table, events = roll(table, 0, 5, 4, keep=[3, 0, 2])
    assert data(events, 0) == {"seat": 0, "dice": [6, 5, 3, 3, 4], "kept": [0, 2, 3], "throw_number": 2}
    seen = view(table)
    assert (seen["throws_used"], seen["throws_left"]) == (2, 1)


def test_at_most_three_throws() -> None:
    table, _ = roll(start(), 0, 1, 1, 1, 1, 1)
    table, _ = roll(table, 0, 2, 2, 2, 2, 2)
    table, events = roll(table, 0, 3, 3, 3, 3, 3)
    assert data(events, 0)["throw_number"] == 3
    assert view(table)["throws_left"] == 0
    refused(table, 0, {"roll": {}}, "no_throws_left")
    refused(table, 0, {"roll": {"keep": [0]}}, "no_throws_left")


def test_kept_dice_can_be_thrown_again_later() -> None:
    # Seed: "dados guardados depois da primeira jogada podem ser jogados de novo na terceira".
    table, _ = roll(start(), 0, 6, 6, 2, 3, 4)
    table, _ = roll(table, 0, 5, 5, 5, keep=[0, 1])
    table, events = roll(table, 0, 5, 5, keep=[2, 3, 4])
    assert data(events, 0) == {"seat": 0, "dice": [5, 5, 5, 5, 5], "kept": [2, 3, 4], "throw_number": 3}


def test_a_rethrow_must_throw_a_die() -> None:
    table, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(table, 0, {"roll": {"keep": [0, 1, 2, 3, 4]}}, "must_throw_a_die")


@pytest.mark.parametrize(
    ("keep", "code"),
    [([5], "invalid_die_index"), ([-1], "invalid_die_index"), ([1, 1], "duplicate_die_index"),
     (["x"], "malformed_action"), ([True], "malformed_action"), ([1.5], "malformed_action"),
     (3, "malformed_action"), ("0", "malformed_action")],
)  # fmt: skip
def test_malformed_keep(keep: Any, code: str) -> None:
    table, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(table, 0, {"roll": {"keep": keep}}, code, invalid=True)


# --- Scoring ------------------------------------------------------------------------


def test_score_fills_the_box_and_passes_the_turn() -> None:
    table, _ = roll(start(), 0, 3, 3, 3, 6, 6)
    table, events = score(table, 0, "FULL_HOUSE")
    assert [(e.kind, e.data) for e in playing.events(events)] == [
        ("scored", {"seat": 0, "box": "FULL_HOUSE", "points": 25, "total": 25}),
        ("turn_started", {"seat": 1, "round": 1}),
    ]
    assert all(e.audience is None for e in events)
    assert GAME.to_act(table.state) == [1]
    seen = view(table)
    assert seen["dice"] == []
    assert (seen["throws_used"], seen["throws_left"]) == (0, 3)
    entry = next(b for b in seen["cards"][0]["boxes"] if b["box"] == "FULL_HOUSE")
    assert entry == {"box": "FULL_HOUSE", "filled": True, "points": 25}
    assert sum(b["filled"] for c in seen["cards"] for b in c["boxes"]) == 1
    assert GAME.scores is not None and GAME.scores(table.state) == [25, 0]


def test_score_after_any_throw_and_a_zero_is_allowed() -> None:
    table, _ = roll(start(), 0, 2, 3, 4, 5, 6)
    table, events = score(table, 0, "ONES")
    assert data(events, 0) == {"seat": 0, "box": "ONES", "points": 0, "total": 0}
    assert table.state["filled"][0] == {"ONES": 0}


def test_score_needs_a_throw() -> None:
    refused(start(), 0, {"score": {"box": "CHANCE"}}, "roll_first")


def test_a_filled_box_cannot_be_filled_again_even_with_zero() -> None:
    table, _ = turn(start(1), 0, (2, 3, 4, 5, 6), "ONES")
    table, _ = roll(table, 0, 1, 1, 1, 1, 1)
    refused(table, 0, {"score": {"box": "ONES"}}, "box_taken")
    table, events = score(table, 0, "YATZY")
    assert data(events, 0)["points"] == 50


def test_a_box_of_the_other_card_is_invalid() -> None:
    table, _ = roll(start(), 0, 6, 6, 5, 5, 1)
    refused(table, 0, {"score": {"box": "ONE_PAIR"}}, "box_not_on_card", invalid=True)
    refused(table, 0, {"score": {"box": "TWO_PAIRS"}}, "box_not_on_card", invalid=True)
    scandinavian, _ = roll(start(card="SCANDINAVIAN"), 0, 6, 6, 5, 5, 1)
    assert data(score(scandinavian, 0, "TWO_PAIRS")[1], 0)["points"] == 22


@pytest.mark.parametrize(
    ("body", "code"),
    [({"box": "BOX_UNSPECIFIED"}, "unknown_box"), ({}, "unknown_box"), ({"box": None}, "unknown_box"),
     ({"box": "FOO"}, "malformed_action"), ({"box": 99}, "malformed_action")],
)  # fmt: skip
def test_unknown_box(body: JSON, code: str) -> None:
    table, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(table, 0, {"score": body}, code, invalid=True)


@pytest.mark.parametrize(
    "action",
    [{}, {"roll": {}, "score": {"box": "ONES"}}, [], {"bid": {}}, {"roll": []},
     {"roll": {"keep": [], "cup": True}}, {"score": {"box": "ONES", "seat": 1}},
     {"claim_inactivity": {"seat": 1}}],
)  # fmt: skip
def test_malformed_actions(action: Any) -> None:
    table, _ = roll(start(), 0, 1, 2, 3, 4, 5)
    refused(table, 0, action, "malformed_action", invalid=True)
    refused(table, 1, action, "malformed_action", invalid=True)


def test_an_empty_roll_is_an_object_and_null_sets_nothing() -> None:
    # proto3 JSON: {"roll": {}} is a Roll with no keep; null is "not set", so no action at all.
    _, events = act(start(), 0, {"roll": {}}, 1, 2, 3, 4, 5)
    assert data(events, 0)["kept"] == []
    refused(start(), 0, {"roll": None}, "malformed_action", invalid=True)


def test_only_the_seat_to_act_throws_and_scores() -> None:
    table = start(3)
    refused(table, 1, {"roll": {}}, "not_your_turn")
    table, _ = roll(table, 0, 1, 2, 3, 4, 5)
    refused(table, 2, {"roll": {"keep": [0]}}, "not_your_turn")
    refused(table, 1, {"score": {"box": "CHANCE"}}, "not_your_turn")


def test_preview_shows_every_empty_box_of_the_seat_to_act() -> None:
    table, _ = turn(start(), 0, (4, 4, 4, 4, 4), "YATZY")
    table, _ = turn(table, 1, (1, 1, 1, 1, 1), "ONES")
    table, _ = roll(table, 0, 3, 3, 3, 6, 6)
    views = [view(table, seat) for seat in (0, 1, None)]
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
    table = start(1)
    for number, (dice, box, points) in enumerate(CLASSIC_GAME, start=1):
        assert view(table)["round"] == number
        table, events = turn(table, 0, dice, box)
        assert data(events, 0)["points"] == points
        assert kinds(events) == (["scored"] if number == 13 else ["scored", "turn_started"])
    card = view(table)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (63, 35, 325)
    assert result(table) == ([1], [325], EndReason.COMPLETED, [])
    assert GAME.to_act(table.state) == []


def test_the_bonus_needs_63_not_62() -> None:
    table = start(1)
    at_62 = [((1, 1, 2, 3, 4), "ONES", 2), *CLASSIC_GAME[1:]]
    for dice, box, _ in at_62:
        table, _ = turn(table, 0, dice, box)
    card = view(table)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (62, 0, 325 - 1 - 35)


def test_a_scandinavian_game_lasts_15_rounds_with_bonus_50() -> None:
    table = start(2, "SCANDINAVIAN")
    table, events = play_out(table, lambda seat, rnd: (6, 6, 6, 5, 5) if seat == 0 else (1, 2, 3, 4, 6))
    assert sum(k == "scored" for k in kinds(events)) == 30
    turns = [e.data for e in playing.events(events) if e.kind == "turn_started"]
    assert turns[-1] == {"seat": 1, "round": 15}
    # 6-6-6-5-5 everywhere: Fives 10 and Sixes 18 (no bonus), one pair 12, two pairs 22,
    # three of a kind 18, full house 28, chance 28.
    # 1-2-3-4-6 everywhere: 1 + 2 + 3 + 4 + 6 up top and chance 16; not a small straight.
    cards = view(table)["cards"]
    assert [c["total"] for c in cards] == [136, 32]
    assert cards[0]["total"] == sum(b["points"] for b in cards[0]["boxes"])
    assert result(table) == ([1, 2], [136, 32], EndReason.COMPLETED, [])


def test_the_upper_bonus_is_50_on_the_scandinavian_card() -> None:
    table = start(1, "SCANDINAVIAN")
    for dice, box, _ in CLASSIC_GAME[:6]:
        table, _ = turn(table, 0, dice, box)
    card = view(table)["cards"][0]
    assert (card["upper_subtotal"], card["bonus"], card["total"]) == (63, 50, 113)


def test_equal_totals_share_the_rank() -> None:
    table, _ = play_out(start(2), lambda seat, rnd: (2, 2, 3, 3, 3))
    ranks, scores, _, _ = result(table)
    assert ranks == [1, 1]
    assert scores[0] == scores[1]


@pytest.mark.parametrize(
    ("chance", "ranks"),
    [((6, 6, 5), [1, 1, 3]), ((6, 5, 5), [1, 2, 2]), ((5, 5, 5), [1, 1, 1]), ((4, 5, 6), [3, 2, 1])],
)
def test_ties_skip_the_next_ranks(chance: tuple[int, ...], ranks: list[int]) -> None:
    # The same throw everywhere except the last box, Chance, whose first die differs.
    def dice_for(seat: int, rnd: int) -> tuple[int, ...]:
        return (1, 1, 1, 1, 1) if rnd < 13 else (chance[seat], 1, 1, 1, 1)

    table, _ = play_out(start(3), dice_for)
    assert result(table)[0] == ranks


def test_nothing_is_accepted_after_the_end() -> None:
    table, _ = play_out(start(2), lambda seat, rnd: (1, 2, 3, 4, 5))
    actions: list[JSON] = [{"roll": {}}, {"score": {"box": "CHANCE"}}, {"claim_inactivity": {}}]
    for action in actions:
        refused(table, 0, action, "game_over", now=5_000.0)
    with pytest.raises(playing.RulesError) as raised:
        leave(table, 1)
    assert raised.value.code == "game_over"
    seen = view(table)
    assert (seen["round"], seen["dice"], seen["preview"], seen["throws_left"]) == (13, [], [], 0)


# --- Leaving --------------------------------------------------------------------------


def test_the_seat_to_act_leaves_mid_turn_and_play_passes_on() -> None:
    table, _ = roll(start(3), 0, 6, 6, 6, 6, 6)
    table, events = leave(table, 0)
    assert events == [Notice("LEFT", 0), Event("turn_started", {"seat": 1, "round": 1})]
    seen = view(table)
    assert GAME.to_act(table.state) == [1]
    assert (seen["dice"], seen["throws_used"]) == ([], 0)
    assert seen["cards"][0]["forfeited"] is True
    assert seen["cards"][0]["removed_for_inactivity"] is False
    refused(table, 0, {"roll": {}}, "not_in_game")
    with pytest.raises(playing.RulesError) as raised:
        leave(table, 0)
    assert raised.value.code == "not_in_game"


def test_a_seat_leaving_out_of_turn_does_not_disturb_the_turn_and_is_skipped() -> None:
    table, _ = roll(start(3), 0, 1, 2, 3, 4, 5)
    table, events = leave(table, 1)
    assert kinds(events) == ["notice:LEFT"]
    assert view(table)["dice"] == [1, 2, 3, 4, 5]
    table, events = score(table, 0, "LARGE_STRAIGHT")
    assert data(events, 1) == {"seat": 2, "round": 1}
    table, events = turn(table, 2, (1, 1, 1, 1, 1), "YATZY")
    assert data(events, 1) == {"seat": 0, "round": 2}


def test_a_forfeit_ranks_last_whatever_its_score() -> None:
    table, _ = turn(start(3), 0, (6, 6, 6, 6, 6), "YATZY")
    table, _ = leave(table, 0)
    table, _ = play_out(table, lambda seat, rnd: (1, 2, 3, 4, 6) if seat == 1 else (1, 1, 1, 2, 2))
    # Seat 1: 1+2+3+4+6 up top, small straight 30, chance 16; seat 2: 3+4, three of a kind 7,
    # full house 25, chance 7.
    # Played to its end after the leave: COMPLETED (match.proto), the leaver forfeited.
    assert result(table) == ([3, 1, 2], [50, 62, 46], EndReason.COMPLETED, [0])
    assert len(table.state["filled"][0]) == 1
    assert all(len(table.state["filled"][seat]) == 13 for seat in (1, 2))


def test_the_last_seat_standing_wins_and_the_earlier_forfeit_ranks_lower() -> None:
    table, _ = turn(start(3), 0, (6, 6, 6, 6, 6), "YATZY")
    table, _ = leave(table, 2)
    table, events = leave(table, 1)
    assert events == [Notice("LEFT", 1)]
    assert result(table) == ([1, 2, 3], [50, 0, 0], EndReason.FORFEIT, [2, 1])
    assert GAME.to_act(table.state) == []


def test_a_higher_scoring_leaver_still_ranks_below_the_one_left() -> None:
    table, _ = turn(start(2), 0, (6, 6, 6, 6, 6), "YATZY")
    table, _ = leave(table, 0)
    assert result(table) == ([2, 1], [50, 0], EndReason.FORFEIT, [0])


def test_a_solo_player_leaving_ends_the_game() -> None:
    table, events = leave(start(1), 0)
    assert kinds(events) == ["notice:LEFT"]
    ranks, _, reason, forfeited = result(table)
    assert (ranks, reason, forfeited) == ([1], EndReason.FORFEIT, [0])


def test_leaving_in_the_last_round_ends_the_game_when_the_others_are_full() -> None:
    table = start(3)
    for _ in range(12):
        for seat in range(3):
            table, _ = turn(table, seat, (1, 2, 3, 4, 5), CLASSIC_BOXES[len(table.state["filled"][seat])])
    table, _ = turn(table, 0, (1, 2, 3, 4, 5), "CHANCE")
    table, _ = turn(table, 1, (1, 2, 3, 4, 5), "CHANCE")
    table, _ = leave(table, 2)
    assert result(table)[0] == [1, 1, 3]


def test_two_players_play_on_after_two_leave() -> None:
    table = start(4)
    table, _ = leave(table, 3)
    table, _ = leave(table, 1)
    table, events = play_out(table, lambda seat, rnd: (5, 5, 5, 5, 5) if seat == 2 else (1, 1, 1, 1, 1))
    assert {e.data["seat"] for e in playing.events(events) if e.kind == "scored"} == {0, 2}
    ranks, _, _, forfeited = result(table)
    assert ranks == [2, 3, 1, 4]  # seat 3 forfeited first, so it ranks lowest
    assert forfeited == [3, 1]


# --- Inactivity claims ------------------------------------------------------------------


def test_a_claim_before_120_s_is_too_early() -> None:
    table, _ = roll(start(3), 0, 1, 2, 3, 4, 5)
    refused(table, 1, {"claim_inactivity": {}}, "too_early", now=table.idle_since + 119.9)


def test_the_clock_counts_from_the_idle_seats_last_action() -> None:
    # RULES.md: "no action on your turn" -- a throw restarts the seat's clock.
    table = start(3)
    table, _ = act(table, 0, {"roll": {}}, 1, 2, 3, 4, 5, now=1_100.0)
    assert table.idle_since == 1_100.0
    refused(table, 1, {"claim_inactivity": {}}, "too_early", now=1_219.0)
    claim(table, 1, 120.0)


def test_the_seat_to_act_cannot_claim_against_itself() -> None:
    refused(start(3), 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=2_000.0)


def test_a_claim_at_120_s_removes_the_seat_to_act() -> None:
    table, _ = roll(start(3), 0, 6, 6, 6, 6, 6)
    table, events = claim(table, 2, 120.0)
    assert events == [Notice("CLAIMED", 0, by=2), Event("turn_started", {"seat": 1, "round": 1})]
    card = view(table)["cards"][0]
    assert (card["forfeited"], card["removed_for_inactivity"]) == (True, True)
    refused(table, 0, {"claim_inactivity": {}}, "not_in_game", now=5_000.0)


def test_a_claim_that_leaves_one_seat_ends_the_game_for_inactivity() -> None:
    table, events = claim(start(2), 1, 600.0)
    assert notices(events) == [Notice("CLAIMED", 0, by=1)]
    assert result(table) == ([2, 1], [0, 0], EndReason.INACTIVITY, [0])


def test_the_departure_that_ends_the_match_gives_the_reason() -> None:
    table, _ = claim(start(3), 1, 130.0)
    table, _ = leave(table, 2)
    ranks, _, reason, forfeited = result(table)
    assert (ranks, reason, forfeited) == ([3, 1, 2], EndReason.FORFEIT, [0, 2])
    table, _ = leave(start(3), 0)
    table, _ = claim(table, 2, 130.0)  # seat 1 removed: seat 2 alone, by inactivity
    ranks, _, reason, forfeited = result(table)
    assert (ranks, reason, forfeited) == ([3, 2, 1], EndReason.INACTIVITY, [0, 1])


def test_a_forfeited_seat_cannot_claim() -> None:
    table, _ = leave(start(3), 2)
    refused(table, 2, {"claim_inactivity": {}}, "not_in_game", now=5_000.0)


def test_legal_actions_through_a_turn() -> None:
    """Before the first throw only a throw; then every keep but all five dice
    (31 distinct index sets) and every open box; after the third throw only
    the open boxes; nothing for the seat not to act."""
    assert GAME.legal is not None
    table = start(seats=2)
    assert GAME.legal(table.state, 0) == [{"roll": {}}]
    assert GAME.legal(table.state, 1) == []
    table, _ = turn(table, 0, [1, 1, 1, 1, 1], "ONES")
    table, _ = turn(table, 1, [2, 2, 2, 2, 2], "TWOS")
    table, _ = roll(table, 0, 3, 4, 5, 6, 6)
    actions = GAME.legal(table.state, 0)
    keeps = [a["roll"]["keep"] for a in actions if "roll" in a]
    assert sorted(map(tuple, keeps)) == sorted(
        tuple(i for i in range(5) if mask >> i & 1) for mask in range(31)
    )
    open_boxes = [box for box in CLASSIC_BOXES if box != "ONES"]
    assert [a["score"]["box"] for a in actions if "score" in a] == open_boxes
    table, _ = roll(table, 0, 3, 4, 5, keep=[3, 4])
    table, _ = roll(table, 0, 3, 4, 5, keep=[3, 4])
    assert GAME.legal(table.state, 0) == [{"score": {"box": box}} for box in open_boxes]
