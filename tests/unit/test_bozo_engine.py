"""Bozó rules, one by one, on rigged dice, played through the kit: modes, a
turn, boca, the cup and its secret, duplas, the end, leaving and claims."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.bozo.v1 import bozo_pb2

from services.bozo.game import GAME
from services.kit import play
from services.kit.engine import EndReason, Event, InvalidAction, RulesError
from services.kit.game import CLAIMABLE, CONCEDE, EXPIRE, OPPONENTS, Team
from services.kit.play import Happening, Notice, Table
from tests import playing
from tests.playing import kinds, notices
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import RiggedRng, ctx

JSON = dict[str, Any]

# The seed's table rows: dice that score something in each box.
SEED_ROWS: dict[str, tuple[int, ...]] = {
    "AS": (1, 1, 3, 4, 6),
    "DUQUE": (2, 2, 2, 4, 6),
    "TERNO": (3, 3, 3, 3, 1),
    "QUADRA": (4, 4, 2, 3, 6),
    "QUINA": (5, 5, 5, 1, 2),
    "SENA": (6, 6, 6, 2, 4),
    "FULL": (2, 2, 5, 5, 5),
    "SEGUIDA": (5, 3, 1, 4, 2),
    "QUADRADA": (4, 4, 4, 4, 2),
    "GENERAL": (3, 3, 3, 3, 3),
}
SEED_BASE = {"AS": 2, "DUQUE": 6, "TERNO": 12, "QUADRA": 8, "QUINA": 15, "SENA": 18,
             "FULL": 20, "SEGUIDA": 30, "QUADRADA": 40, "GENERAL": 50}  # fmt: skip
SEED_BOCA = {"FULL": 25, "SEGUIDA": 35, "QUADRADA": 45, "GENERAL": 55}
NOTHING = (1, 2, 3, 4, 6)  # scores only in the number boxes
SEATS_OF_MODE = {"solo": 1, "duel": 2, "duplas": 4}


# --- Helpers: every call goes through the kit on a copy (tests/playing.py) and
# checks every event and every view against the proto.


def start(seats: int = 2, options: JSON | None = None) -> Table:
    table, happened = playing.start(GAME, seats, options)
    _check(table, happened)
    return table


def act(
    table: Table, seat: int, action: JSON, *faces: int, now: float = playing.NOW
) -> tuple[Table, list[Happening]]:
    table, happened = playing.act(GAME, table, seat, action, *faces, now=now)
    _check(table, happened)
    return table, happened


def throw(
    table: Table, seat: int, *faces: int, keep: Sequence[int] = (), cup: bool = False
) -> tuple[Table, JSON]:
    """A throw; returns the new table and the ``thrown`` event's data."""
    table, happened = act(table, seat, {"throw": {"keep": list(keep), "cup": cup}}, *faces)
    (event,) = happened
    assert isinstance(event, Event) and event.kind == "thrown"
    return table, event.data


def declare(table: Table, seat: int, side: str) -> tuple[Table, JSON]:
    table, happened = act(table, seat, {"declare": {"side": side}})
    (event,) = happened
    assert isinstance(event, Event) and event.kind == "revealed"
    return table, event.data


def score(table: Table, seat: int, box: str) -> tuple[Table, JSON]:
    table, happened = act(table, seat, {"score": {"box": box}})
    assert happened[0].kind == "scored"
    return table, data(happened, 0)


def turn(table: Table, seat: int, faces: Sequence[int], box: str) -> tuple[Table, JSON]:
    table, _ = throw(table, seat, *faces)
    return score(table, seat, box)


def leave(table: Table, seat: int) -> tuple[Table, list[Happening]]:
    table, happened = playing.leave(GAME, table, seat)
    _check(table, happened)
    return table, happened


def claim(table: Table, seat: int, waited: float) -> tuple[Table, list[Happening]]:
    table, happened = playing.claim(GAME, table, seat, waited)
    _check(table, happened)
    return table, happened


def refused(
    table: Table, seat: int, action: Any, code: str, *, invalid: bool = False, now: float = playing.NOW
) -> None:
    playing.refused(GAME, table, seat, action, code, invalid=invalid, now=now)


def view(table: Table, seat: int | None = None) -> JSON:
    return GAME.view(table.state, seat)


def faces(table: Table) -> list[int]:
    return [die["face"] for die in view(table)["dice"]]


def preview(table: Table) -> dict[str, tuple[int, bool]]:
    return {p["box"]: (p["points"], p["boca"]) for p in view(table)["preview"]}


def to_act(table: Table) -> int:
    (seat,) = GAME.to_act(table.state)
    return seat


def data(happened: list[Happening], index: int) -> JSON:
    item = happened[index]
    assert isinstance(item, Event)
    return item.data


def result(table: Table) -> tuple[list[int], list[int], EndReason, list[int]]:
    outcome = GAME.outcome(table.state)
    assert outcome is not None
    return outcome.ranks, outcome.scores, outcome.reason, outcome.forfeited


def _check(table: Table, happened: list[Happening]) -> None:
    for item in happened:
        assert item.audience is None  # nothing in Bozó is private to a seat
        if isinstance(item, Event):
            assert_event_fits(bozo_pb2.Event, item)
    views = [view(table, seat) for seat in [*range(table.seats), None]]
    for seen in views:
        assert_fits(bozo_pb2.View, seen)
        assert seen == views[-1]  # every seat and the spectator see the same table


def play_out(table: Table, rows: dict[str, tuple[int, ...]] | None = None) -> tuple[Table, list[Happening]]:
    """Play every remaining turn, each seat filling its card in card order."""
    rows = rows or SEED_ROWS
    happened: list[Happening] = []
    while GAME.outcome(table.state) is None:
        seat = to_act(table)
        box = view(table)["open_boxes"][0]
        table, _ = throw(table, seat, *rows[box])
        table, new = act(table, seat, {"score": {"box": box}})
        happened += new
    return table, happened


# --- Modes and options --------------------------------------------------------------


def test_the_declaration() -> None:
    assert (GAME.name, GAME.ports, GAME.leaving, GAME.claims) == ("bozo", (50051, 9101), CONCEDE, OPPONENTS)
    solo, duel, duplas = GAME.modes
    assert (solo.name, solo.seats, solo.rated, solo.queued, solo.deadline) == (
        "solo",
        (1,),
        False,
        False,
        EXPIRE,
    )
    assert (duel.name, duel.seats, duel.rated, duel.queued, duel.deadline) == (
        "duel",
        (2,),
        True,
        True,
        CLAIMABLE,
    )
    assert (duplas.name, duplas.seats, duplas.deadline) == ("duplas", (4,), CLAIMABLE)
    assert duplas.teams == (Team("JADE", (0, 2)), Team("AMBAR", (1, 3)))
    assert (solo.teams, duel.teams) == ((), ())
    assert [m.options for m in GAME.modes] == [{"mode": "SOLO"}, {"mode": "DUEL"}, {"mode": "DUPLAS"}]
    assert GAME.cpu_seats and not GAME.open_tables  # issue 17: CPU seats play the advisor


@pytest.mark.parametrize(("seats", "mode", "turns"), [(1, "SOLO", 10), (2, "DUEL", 20), (4, "DUPLAS", 20)])
def test_mode_follows_the_seat_count_by_default(seats: int, mode: str, turns: int) -> None:
    for options in ({}, {"mode": "MODE_UNSPECIFIED"}, {"mode": mode}):
        table = start(seats, options)
        seen = view(table, 0)
        assert table.mode == mode.lower()
        assert seen["mode"] == mode
        assert seen["turns_total"] == turns
        assert seen["turns_left"] == turns
        assert GAME.to_act(table.state) == [0]
        assert len(seen["cards"]) == (2 if seats == 4 else seats)


@pytest.mark.parametrize(
    ("seats", "options", "code"),
    [
        # A mode that does not fit the seat count: the kit finds no mode (was invalid_options).
        (2, {"mode": "SOLO"}, "invalid_seats"),
        (1, {"mode": "DUEL"}, "invalid_seats"),
        (2, {"mode": "DUPLAS"}, "invalid_seats"),
        (4, {"mode": "DUEL"}, "invalid_seats"),
        (3, {"mode": "DUPLAS"}, "invalid_seats"),
        (2, {"mode": "TRIO"}, "invalid_options"),
        (2, {"mode": 2.5}, "invalid_options"),
        (2, {"mode": 7}, "invalid_options"),
        (2, {"variant": "x"}, "invalid_options"),
        (3, {}, "invalid_seats"),
        (5, {}, "invalid_seats"),
        (0, {}, "invalid_seats"),
    ],
)
def test_bad_options_or_seat_counts_are_refused(seats: int, options: JSON, code: str) -> None:
    with pytest.raises(InvalidAction) as refusal:
        playing.start(GAME, seats, options)
    assert refusal.value.code == code


def test_a_mode_may_be_given_by_its_enum_number() -> None:
    # proto3 JSON: an enum is its name or its number (was invalid_options).
    assert start(2, {"mode": 2}).mode == "duel"


def test_bozo_cpu_seats_are_seats_of_the_table() -> None:
    """Issue 17: a duel's second seat may be the computer's (its turns are
    played at once, tests/unit/test_dice_cpu.py); seats must exist."""
    table, _ = playing.start(GAME, 2, cpu_seats=(1,))
    assert table.cpu == [1] and GAME.to_act(table.state) == [0]
    with pytest.raises(InvalidAction) as refusal:
        playing.start(GAME, 2, cpu_seats=(2,))
    assert refusal.value.code == "invalid_cpu_seats"


def test_a_match_opens_with_seat_zero_and_no_dice() -> None:
    table, happened = playing.start(GAME, 2)
    assert [(e.kind, data(happened, i)) for i, e in enumerate(happened)] == [
        ("turn_started", {"seat": 0, "turn": 1})
    ]
    seen = view(table, 1)
    assert seen["dice"] == [] and seen["throw_number"] == 0 and seen["throws_left"] == 3
    assert seen["preview"] == []
    assert GAME.to_act(table.state) == [0]
    assert GAME.outcome(table.state) is None
    assert GAME.scores is not None and GAME.scores(table.state) == [0, 0]


# --- A turn ------------------------------------------------------------------------------


def test_the_seeds_worked_turn() -> None:
    """6,6,3,2,1 → keep the sixes → 6,4,2 → keep three sixes → 6,5: 24 or 40."""
    table, thrown = throw(start(2), 0, 6, 6, 3, 2, 1)
    assert thrown == {"seat": 0, "throw_number": 1, "thrown": [0, 1, 2, 3, 4], "kept": [],
                      "cup": False, "faces": [6, 6, 3, 2, 1]}  # fmt: skip
    assert preview(table)["SENA"] == (12, False)

    table, thrown = throw(table, 0, 6, 4, 2, keep=(0, 1))
    assert thrown["throw_number"] == 2  # the second throw, not the first of a new count
    assert thrown["faces"] == [6, 4, 2] and thrown["thrown"] == [2, 3, 4]
    assert faces(table) == [6, 6, 6, 4, 2]
    assert preview(table)["SENA"] == (18, False)

    table, _ = throw(table, 0, 6, 5, keep=(0, 1, 2))
    assert faces(table) == [6, 6, 6, 6, 5]
    seen = view(table)
    assert seen["throws_left"] == 0 and seen["kept"] == [0, 1, 2] and seen["just_thrown"] == [3, 4]
    assert preview(table)["SENA"] == (24, False)
    assert preview(table)["QUADRADA"] == (40, False)

    quadrada, scored = score(table, 0, "QUADRADA")
    assert scored == {"seat": 0, "box": "QUADRADA", "points": 40, "boca": False, "total": 40}
    # The other box stays open for a later turn and got nothing now.
    assert [b["box"] for b in view(quadrada)["cards"][0]["boxes"]] == ["QUADRADA"]

    _, scored = score(table, 0, "SENA")  # the same dice, the other choice
    assert scored["points"] == 24


def test_first_throw_throws_all_five_dice() -> None:
    refused(start(2), 0, {"throw": {"keep": [0]}}, "nothing_to_keep")


def test_no_throw_after_the_third() -> None:
    table, _ = throw(start(2), 0, 1, 2, 3, 4, 6)
    table, _ = throw(table, 0, 6, keep=(0, 1, 2, 3))
    table, _ = throw(table, 0, 6, keep=(0, 1, 2, 3))
    refused(table, 0, {"throw": {"keep": [0, 1, 2, 3]}}, "no_throws_left")
    refused(table, 0, {"throw": {"keep": [0], "cup": True}}, "no_throws_left")


def test_a_re_throw_throws_at_least_one_die() -> None:
    table, _ = throw(start(2), 0, 1, 2, 3, 4, 6)
    refused(table, 0, {"throw": {"keep": [4, 3, 2, 1, 0]}}, "no_dice_to_throw")


def test_a_re_throw_may_throw_all_five_again() -> None:
    table, _ = throw(start(2), 0, 1, 2, 3, 4, 6)
    table, thrown = throw(table, 0, 5, 5, 5, 5, 5)
    assert thrown["thrown"] == [0, 1, 2, 3, 4]
    assert faces(table) == [5, 5, 5, 5, 5]


def test_the_kept_choice_can_change_between_throws() -> None:
    table, _ = throw(start(2), 0, 6, 6, 3, 2, 1)
    table, _ = throw(table, 0, 5, 5, 5, keep=(0, 1))
    assert faces(table) == [6, 6, 5, 5, 5]
    # The sixes were kept, now they are thrown again and the fives kept.
    table, thrown = throw(table, 0, 5, 4, keep=(4, 2, 3))
    assert thrown["kept"] == [2, 3, 4] and thrown["thrown"] == [0, 1]
    assert faces(table) == [5, 4, 5, 5, 5]


def test_score_needs_a_throw_first() -> None:
    refused(start(2), 0, {"score": {"box": "AS"}}, "must_throw_first")


def test_scoring_ends_the_turn_and_unused_throws_are_lost() -> None:
    table, _ = throw(start(2), 0, 1, 1, 3, 4, 6)
    table, happened = act(table, 0, {"score": {"box": "AS"}})
    assert kinds(happened) == ["scored", "turn_started"]
    assert data(happened, 1) == {"seat": 1, "turn": 2}
    seen = view(table)
    assert GAME.to_act(table.state) == [1] and seen["throw_number"] == 0 and seen["throws_left"] == 3
    assert seen["dice"] == [] and seen["kept"] == [] and seen["just_thrown"] == []
    assert seen["turns_left"] == 19 and seen["turn"] == 2
    refused(table, 0, {"throw": {}}, "not_your_turn")
    table, _ = turn(table, 1, (1, 2, 3, 4, 6), "AS")
    assert GAME.to_act(table.state) == [0] and view(table)["throws_left"] == 3
    assert GAME.scores is not None and GAME.scores(table.state) == [2, 1]


def test_a_zero_is_allowed_and_closes_the_box() -> None:
    table, scored = turn(start(1), 0, NOTHING, "GENERAL")
    assert (scored["points"], scored["boca"]) == (0, False)
    assert view(table)["cards"][0]["boxes"] == [{"box": "GENERAL", "points": 0, "boca": False, "seat": 0}]
    assert "GENERAL" not in view(table)["open_boxes"]
    # A General thrown later cannot go there again: it goes to another empty box.
    table, _ = throw(table, 0, 6, 6, 6, 6, 6)
    assert "GENERAL" not in preview(table)
    refused(table, 0, {"score": {"box": "GENERAL"}}, "box_taken")
    assert score(table, 0, "QUADRADA")[1]["points"] == 45


def test_a_box_is_filled_once_per_card_and_cards_are_separate_in_a_duel() -> None:
    table, _ = turn(start(2), 0, (6, 6, 6, 2, 4), "SENA")
    table, _ = turn(table, 1, (6, 6, 6, 2, 4), "SENA")  # seat 1 has its own card
    table, _ = throw(table, 0, 6, 6, 6, 6, 6)
    refused(table, 0, {"score": {"box": "SENA"}}, "box_taken")
    cards = view(table)["cards"]
    assert [c["seats"] for c in cards] == [[0], [1]]
    assert [c["total"] for c in cards] == [18, 18]
    assert all("team" not in c for c in cards)


def test_it_is_nobody_elses_turn() -> None:
    table = start(2)
    actions: list[JSON] = [{"throw": {}}, {"score": {"box": "AS"}}, {"declare": {"side": "TOP"}}]
    for action in actions:
        refused(table, 1, action, "not_your_turn")


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({}, "malformed_action"),
        ([], "malformed_action"),
        ({"throw": {}, "score": {"box": "AS"}}, "malformed_action"),
        ({"roll": {}}, "malformed_action"),  # was unknown_action: the kit parses the Action strictly
        ({"throw": 5}, "malformed_action"),
        ({"throw": None}, "malformed_action"),  # null is "not set": no action at all
        ({"throw": {"keep": [5]}}, "invalid_die_index"),
        ({"throw": {"keep": [-1]}}, "invalid_die_index"),
        ({"throw": {"keep": [1, 1]}}, "duplicate_die_index"),
        ({"throw": {"keep": "01"}}, "malformed_action"),
        ({"throw": {"keep": [True]}}, "malformed_action"),
        ({"throw": {"keep": [1.5]}}, "malformed_action"),
        ({"throw": {"cup": "yes"}}, "malformed_action"),
        ({"throw": {"cup": 1}}, "malformed_action"),
        ({"throw": {"dice": [1]}}, "malformed_action"),
        ({"declare": {}}, "unknown_side"),
        ({"declare": {"side": "SIDE_UNSPECIFIED"}}, "unknown_side"),
        ({"declare": {"side": "bottom"}}, "malformed_action"),  # was unknown_side: not a Side value
        ({"declare": {"side": 3}}, "malformed_action"),
        ({"score": {}}, "unknown_box"),
        ({"score": {"box": "BOX_UNSPECIFIED"}}, "unknown_box"),
        ({"score": {"box": "CHANCE"}}, "malformed_action"),  # was unknown_box: not a Box value
        ({"score": {"box": 11}}, "malformed_action"),
        ({"claim_inactivity": {"seat": 1}}, "malformed_action"),
    ],
)
def test_malformed_actions_are_invalid(action: Any, code: str) -> None:
    table, _ = throw(start(2), 0, 1, 2, 3, 4, 6)
    refused(table, 0, action, code, invalid=True)
    # The kit parses before anything else, then checks the turn, then the move
    # checks what protobuf cannot (was: every malformed code before the turn).
    if code == "malformed_action":
        refused(table, 1, action, code, invalid=True)
    else:
        refused(table, 1, action, "not_your_turn")


def test_proto3_json_numbers_are_accepted() -> None:
    # An enum may be given by its number and an integer as 1.0 (protobuf's JSON
    # parser; before the kit both were refused).
    table, _ = throw(start(2), 0, 1, 2, 3, 4, 6)
    _, scored = score(table, 0, 1)  # type: ignore[arg-type]
    assert scored["box"] == "AS" and scored["points"] == 1
    table, happened = act(table, 0, {"throw": {"keep": [1.0, 2, 3, 4]}}, 5)
    assert data(happened, 0)["kept"] == [1, 2, 3, 4]


def test_the_proto_defaults_are_accepted() -> None:
    """The kit drops default values: an empty throw is a first throw without cup."""
    table, _ = act(start(2), 0, {"throw": {}}, 1, 2, 3, 4, 6)
    table, _ = act(table, 0, {"throw": {"keep": [0, 1, 2, 3]}}, 5)
    assert faces(table) == [1, 2, 3, 4, 5]
    table, _ = act(table, 0, {"score": {"box": "SEGUIDA"}})
    table, _ = act(table, 1, {"throw": {"cup": True}}, 1, 1, 1, 1, 1)
    assert view(table)["cup_pending"]
    table, _ = act(table, 1, {"declare": {"side": "BOTTOM"}})
    assert faces(table) == [6, 6, 6, 6, 6]


def test_legal_lists_every_action_of_the_seat_to_act() -> None:
    table = start(2)
    assert GAME.legal is not None
    assert GAME.legal(table.state, 0) == [{"throw": {}}, {"throw": {"cup": True}}]
    assert GAME.legal(table.state, 1) == []
    table, _ = throw(table, 0, 1, 2, 3, 4, 6, cup=True)
    assert GAME.legal(table.state, 0) == [{"declare": {"side": "TOP"}}, {"declare": {"side": "BOTTOM"}}]
    table, _ = declare(table, 0, "TOP")
    actions = GAME.legal(table.state, 0)
    throws = [a["throw"] for a in actions if "throw" in a]
    assert len(throws) == 2 * 31  # every keep but all five, with and without the cup
    assert {"keep": [0, 1, 2, 3]} in throws and {"keep": [0, 1, 2, 3, 4]} not in throws
    assert [a["score"]["box"] for a in actions if "score" in a] == list(SEED_ROWS)
    table, _ = throw(table, 0, 6, keep=(0, 1, 2, 3))
    table, _ = throw(table, 0, 6, keep=(0, 1, 2, 3))
    assert GAME.legal(table.state, 0) == [{"score": {"box": box}} for box in SEED_ROWS]


# --- De boca --------------------------------------------------------------------------------


@pytest.mark.parametrize("box", list(SEED_ROWS))
def test_seed_row_scored_on_the_first_throw(box: str) -> None:
    table, _ = throw(start(1), 0, *SEED_ROWS[box])
    expected = SEED_BOCA.get(box, SEED_BASE[box])
    assert preview(table)[box] == (expected, box in SEED_BOCA)
    table, scored = score(table, 0, box)
    assert (scored["points"], scored["boca"]) == (expected, box in SEED_BOCA)
    assert view(table)["cards"][0]["total"] == expected


@pytest.mark.parametrize("box", list(SEED_ROWS))
def test_seed_row_scored_after_a_re_throw_has_no_boca(box: str) -> None:
    table, _ = throw(start(1), 0, *NOTHING)
    table, _ = throw(table, 0, *SEED_ROWS[box], keep=())
    _, scored = score(table, 0, box)
    assert (scored["points"], scored["boca"]) == (SEED_BASE[box], False)


def test_number_boxes_are_never_de_boca() -> None:
    table, _ = throw(start(1), 0, 6, 6, 6, 6, 5)
    assert score(table, 0, "SENA")[1] == {"seat": 0, "box": "SENA", "points": 24, "boca": False, "total": 24}


def test_a_zero_after_the_first_throw_gets_no_bonus() -> None:
    table, _ = throw(start(1), 0, *NOTHING)
    for box in SEED_BOCA:
        assert preview(table)[box] == (0, False)
    _, scored = score(table, 0, "FULL")
    assert (scored["points"], scored["boca"]) == (0, False)


@pytest.mark.parametrize("throws", [2, 3])
def test_returning_to_the_same_combination_gets_no_bonus(throws: int) -> None:
    table, _ = throw(start(1), 0, 2, 2, 5, 5, 5)
    assert preview(table)["FULL"] == (25, True)
    for _ in range(throws - 1):
        table, _ = throw(table, 0, 5, keep=(0, 1, 2, 3))  # die 4 comes back a five
        assert faces(table) == [2, 2, 5, 5, 5]
        assert preview(table)["FULL"] == (20, False)
    _, scored = score(table, 0, "FULL")
    assert (scored["points"], scored["boca"]) == (20, False)


def test_a_cup_first_throw_and_its_declaration_are_still_the_first_throw() -> None:
    table, _ = throw(start(1), 0, 6, 5, 4, 3, 2, cup=True)
    table, _ = declare(table, 0, "TOP")
    assert view(table)["throw_number"] == 1
    table, scored = score(table, 0, "SEGUIDA")
    assert scored["points"] == 35
    table, _ = throw(table, 0, 1, 1, 1, 1, 1, cup=True)
    table, _ = declare(table, 0, "BOTTOM")
    assert faces(table) == [6, 6, 6, 6, 6]
    _, scored = score(table, 0, "GENERAL")
    assert (scored["points"], scored["boca"]) == (55, True)


# --- The cup -----------------------------------------------------------------------------------


def test_the_seeds_cup_example() -> None:
    """Two sixes kept; 6, 5, 4 under the cup, sung under: 6, 6, 1, 2, 3."""
    table, _ = throw(start(2), 0, 6, 6, 3, 2, 1)
    table, thrown = throw(table, 0, 6, 5, 4, keep=(0, 1), cup=True)
    assert thrown == {"seat": 0, "throw_number": 2, "thrown": [2, 3, 4], "kept": [0, 1], "cup": True}
    seen = view(table, 0)
    assert seen["cup_pending"] and seen["just_thrown"] == [2, 3, 4] and seen["kept"] == [0, 1]
    assert seen["dice"][:2] == [{"face": 6, "hidden": False}] * 2
    assert seen["dice"][2:] == [{"face": 0, "hidden": True}] * 3

    conversions = [
        {"die": 2, "from_face": 6, "to_face": 1},
        {"die": 3, "from_face": 5, "to_face": 2},
        {"die": 4, "from_face": 4, "to_face": 3},
    ]
    table, revealed = declare(table, 0, "BOTTOM")
    assert revealed == {"seat": 0, "side": "BOTTOM", "dice": [2, 3, 4], "faces": [1, 2, 3],
                        "conversions": conversions}  # fmt: skip
    seen = view(table, 1)
    assert faces(table) == [6, 6, 1, 2, 3]
    assert not seen["cup_pending"] and all(not die["hidden"] for die in seen["dice"])
    assert seen["last_reveal"] == {"side": "BOTTOM", "conversions": conversions}
    assert seen["throw_number"] == 2 and seen["throws_left"] == 1  # the reveal used no throw


def test_dice_kept_after_a_bottom_reveal_keep_their_converted_face() -> None:
    table, _ = throw(start(2), 0, 6, 6, 3, 2, 1)
    table, _ = throw(table, 0, 6, 5, 4, keep=(0, 1), cup=True)
    table, _ = declare(table, 0, "BOTTOM")
    # Third throw, under the cup again: only die 4 is thrown and turned.
    table, _ = throw(table, 0, 6, keep=(0, 1, 2, 3), cup=True)
    table, revealed = declare(table, 0, "BOTTOM")
    assert revealed["conversions"] == [{"die": 4, "from_face": 6, "to_face": 1}]
    assert faces(table) == [6, 6, 1, 2, 1]
    assert score(table, 0, "AS")[1]["points"] == 2


def test_top_keeps_the_faces() -> None:
    table, _ = throw(start(2), 0, 6, 5, 4, 2, 2, cup=True)
    table, revealed = declare(table, 0, "TOP")
    assert revealed == {"seat": 0, "side": "TOP", "dice": [0, 1, 2, 3, 4], "faces": [6, 5, 4, 2, 2],
                        "conversions": []}  # fmt: skip
    assert view(table)["last_reveal"] == {"side": "TOP", "conversions": []}
    assert faces(table) == [6, 5, 4, 2, 2]


def test_the_last_reveal_is_cleared_by_the_next_throw() -> None:
    table, _ = throw(start(2), 0, 6, 5, 4, 2, 2, cup=True)
    table, _ = declare(table, 0, "BOTTOM")
    table, _ = throw(table, 0, 3, keep=(0, 1, 2, 3))
    assert "last_reveal" not in view(table)


def test_nothing_but_the_declaration_while_the_cup_is_pending() -> None:
    table, _ = throw(start(2), 0, 6, 5, 4, 2, 2, cup=True)
    refused(table, 0, {"throw": {"keep": [0]}}, "cup_pending")
    refused(table, 0, {"throw": {"keep": [0], "cup": True}}, "cup_pending")
    for box in SEED_ROWS:
        refused(table, 0, {"score": {"box": box}}, "cup_pending")
    refused(table, 1, {"declare": {"side": "TOP"}}, "not_your_turn")
    table, _ = declare(table, 0, "TOP")
    refused(table, 0, {"declare": {"side": "BOTTOM"}}, "nothing_to_declare")  # final


def test_declaring_without_a_cup_throw_is_refused() -> None:
    table = start(2)
    refused(table, 0, {"declare": {"side": "TOP"}}, "nothing_to_declare")
    table, _ = throw(table, 0, *NOTHING)
    refused(table, 0, {"declare": {"side": "BOTTOM"}}, "nothing_to_declare")


def test_the_cup_is_chosen_throw_by_throw() -> None:
    table, _ = throw(start(2), 0, 1, 1, 1, 2, 2, cup=True)
    table, _ = declare(table, 0, "BOTTOM")
    assert faces(table) == [6, 6, 6, 5, 5]
    table, thrown = throw(table, 0, 6, 6, keep=(0, 1, 2))
    assert thrown["faces"] == [6, 6]
    assert faces(table) == [6, 6, 6, 6, 6]
    _, scored = score(table, 0, "GENERAL")
    assert scored == {"seat": 0, "box": "GENERAL", "points": 50, "boca": False, "total": 50}


# --- The cup's secret --------------------------------------------------------------------------------
# The proof is by indistinguishability: two tables that differ only in the faces
# under the cup must give every seat, the spectator, every event and every error
# exactly the same bytes, through the kit: its views, its Snapshot facts (seats
# to act, scores, result, deadline), leaving, claims and deadlines. The check is
# shown able to fail: the same comparison sees the difference once the cup is lifted.


def _cup_position(seats: int, throw_number: int, hidden: tuple[int, ...]) -> tuple[Table, list[Happening]]:
    """A table where seat 0 has just thrown ``hidden`` under the cup, and
    everything that happened so far."""
    table, history = playing.start(GAME, seats)
    keep = tuple(range(5 - len(hidden)))
    if throw_number == 1:
        assert not keep
    for _ in range(throw_number - 1):
        table, happened = act(table, 0, {"throw": {}}, 2, 3, 4, 5, 6)
        history += happened
    action: JSON = {"throw": {"keep": list(keep), "cup": True}}
    table, happened = act(table, 0, action, *hidden)
    return table, history + happened


def _public(table: Table) -> list[str]:
    """What the kit can tell about a table: every view and the Snapshot's facts."""
    out = [repr(sorted(GAME.view(table.state, seat).items())) for seat in [*range(table.seats), None]]
    assert GAME.scores is not None and GAME.legal is not None
    out += [
        repr(GAME.to_act(table.state)),
        repr(GAME.scores(table.state)),
        repr(play.outcome(GAME, table)),
        repr(play.deadline_at(GAME, table)),
        repr([GAME.legal(table.state, seat) for seat in range(table.seats)]),
    ]
    return out


def _everything_public(table: Table, history: list[Happening]) -> list[str]:
    """What can leave the kit now: the public table, the history, and every
    error and consequence of every action any seat might try (accepted ones on
    a copy), of leaving and of the deadline."""
    out = _public(table) + [repr(item) for item in history]
    actions: list[Any] = [
        {"throw": {"keep": keep, "cup": cup}}
        for keep in ([], [0], [0, 1, 2, 3], [4])
        for cup in (False, True)
    ]
    actions += [{"score": {"box": box}} for box in SEED_ROWS]
    actions += [{"declare": {"side": "SIDE_UNSPECIFIED"}}, {"claim_inactivity": {}}, {"throw": {"keep": [9]}}]
    for action in actions:
        assert_fits(bozo_pb2.Action, action)
    for seat in range(table.seats):
        for waited in (0.0, 119.0, 120.0):
            now = table.idle_since + waited
            for action in actions:
                trial = copy.deepcopy(table)
                # Dice for an accepted throw (none is possible under the cup).
                try:
                    happened = play.act(GAME, trial, seat, action, ctx(RiggedRng([4] * 5), now=now))
                except RulesError as error:
                    out.append(f"{seat} {action} refused {error.code} {error.message} {error.args}")
                else:
                    out.append(f"{seat} {action} accepted {happened}")
                    out += _public(trial)
        trial = copy.deepcopy(table)
        happened = play.leave(GAME, trial, seat, ctx(RiggedRng()))
        out.append(f"{seat} left {happened}")
        out += _public(trial)
    for waited in (119.0, 120.0):
        trial = copy.deepcopy(table)
        fired = play.fire_deadline(GAME, trial, ctx(RiggedRng(), now=table.idle_since + waited))
        out.append(f"deadline {fired}")
        out += _public(trial)
    return out


@pytest.mark.parametrize("seats", [1, 2, 4])
@pytest.mark.parametrize(("throw_number", "hidden_a", "hidden_b"), [
    (1, (6, 6, 6, 6, 6), (1, 1, 1, 1, 1)),
    (2, (6, 5, 4), (1, 2, 3)),
    (3, (6,), (1,)),
])  # fmt: skip
def test_nothing_tells_the_faces_under_the_cup(
    seats: int, throw_number: int, hidden_a: tuple[int, ...], hidden_b: tuple[int, ...]
) -> None:
    table_a, history_a = _cup_position(seats, throw_number, hidden_a)
    table_b, history_b = _cup_position(seats, throw_number, hidden_b)
    # The state does hold the two different secrets…
    assert table_a.state["dice"] != table_b.state["dice"]
    # …and nothing that leaves the kit differs, for any seat, partner included.
    assert _everything_public(table_a, history_a) == _everything_public(table_b, history_b)
    # The comparison is not blind: once the cup is lifted the tables differ.
    table_a, lifted_a = act(table_a, 0, {"declare": {"side": "TOP"}})
    table_b, lifted_b = act(table_b, 0, {"declare": {"side": "TOP"}})
    assert _everything_public(table_a, history_a + lifted_a) != _everything_public(
        table_b, history_b + lifted_b
    )


@settings(max_examples=25, deadline=None)
@given(seats=st.sampled_from([1, 2, 4]), throw_number=st.integers(1, 3), data=st.data())
def test_any_two_outcomes_under_the_cup_look_the_same(
    seats: int, throw_number: int, data: st.DataObject
) -> None:
    count = 5 if throw_number == 1 else data.draw(st.integers(1, 5), label="dice under the cup")
    outcome = st.lists(st.integers(1, 6), min_size=count, max_size=count).map(tuple)
    hidden_a, hidden_b = data.draw(outcome, label="a"), data.draw(outcome, label="b")
    table_a, history_a = _cup_position(seats, throw_number, hidden_a)
    table_b, history_b = _cup_position(seats, throw_number, hidden_b)
    assert _everything_public(table_a, history_a) == _everything_public(table_b, history_b)


def test_hidden_dice_have_no_face_and_no_preview_for_anyone() -> None:
    table, history = _cup_position(4, 2, (5, 5, 5))
    cup_event = history[-1]
    assert isinstance(cup_event, Event) and cup_event.kind == "thrown" and "faces" not in cup_event.data
    for seat in (0, 1, 2, 3, None):
        seen = view(table, seat)
        assert seen["cup_pending"] and seen["preview"] == []
        assert [die for die in seen["dice"] if die["hidden"]] == [{"face": 0, "hidden": True}] * 3
        assert [die["face"] for die in seen["dice"] if not die["hidden"]] == [2, 3]
    table, _ = declare(table, 0, "BOTTOM")
    assert faces(table) == [2, 3, 2, 2, 2]


def test_a_match_ended_under_the_cup_never_reveals_it() -> None:
    table, history = _cup_position(2, 1, (6, 6, 6, 6, 6))
    table, happened = leave(table, 0)
    assert happened == [Notice("LEFT", 0)]
    assert GAME.outcome(table.state) is not None
    for seat in (0, 1, None):
        seen = view(table, seat)
        assert seen["cup_pending"] and all(die == {"face": 0, "hidden": True} for die in seen["dice"])
        assert seen["preview"] == [] and seen["open_boxes"] == []
    assert all("faces" not in item.data for item in history if isinstance(item, Event))


# --- Duplas -----------------------------------------------------------------------------------------


def test_duplas_order_over_twenty_turns_and_the_shared_cards() -> None:
    table, opening = playing.start(GAME, 4)
    assert data(opening, 0) == {"seat": 0, "turn": 1, "team": "JADE"}
    assert GAME.side("duplas", to_act(table)) == 0  # Jade, GameInfo's first team
    table, happened = play_out(table)
    events = [e for e in opening + happened if isinstance(e, Event)]
    starts = [e.data for e in events if e.kind == "turn_started"]
    assert [s["seat"] for s in starts] == [0, 1, 2, 3] * 5
    assert [s["team"] for s in starts] == ["JADE", "AMBAR"] * 10
    assert [s["turn"] for s in starts] == list(range(1, 21))
    scored = [e.data for e in events if e.kind == "scored"]
    assert len(scored) == 20
    jade, ambar = view(table)["cards"]
    assert (jade["team"], jade["seats"], ambar["team"], ambar["seats"]) == ("JADE", [0, 2], "AMBAR", [1, 3])
    # Ten boxes a team, five a person, partners alternating on the same card.
    assert [b["seat"] for b in jade["boxes"]] == [0, 2] * 5
    assert [b["seat"] for b in ambar["boxes"]] == [1, 3] * 5
    assert jade["total"] == ambar["total"] == 221
    assert scored[-1] == {
        "seat": 3,
        "box": "GENERAL",
        "points": 55,
        "boca": True,
        "team": "AMBAR",
        "total": 221,
    }


def test_a_box_filled_by_a_partner_is_closed() -> None:
    table, _ = turn(start(4), 0, (6, 6, 6, 2, 4), "SENA")
    table, _ = turn(table, 1, NOTHING, "AS")
    assert "SENA" not in view(table, 2)["open_boxes"]
    table, _ = throw(table, 2, 6, 6, 6, 6, 1)
    assert "SENA" not in preview(table)
    refused(table, 2, {"score": {"box": "SENA"}}, "box_taken")
    # The opposing team's card is its own: Âmbar can still fill Sena.
    table, _ = score(table, 2, "QUADRADA")
    table, _ = throw(table, 3, 6, 6, 6, 6, 1)
    table, scored = score(table, 3, "SENA")
    assert scored == {"seat": 3, "box": "SENA", "points": 24, "boca": False, "team": "AMBAR", "total": 25}
    # Snapshot.scores: each seat's card total, partners repeating their team's.
    assert GAME.scores is not None and GAME.scores(table.state) == [
        63,
        25,
        63,
        25,
    ]  # Sena 18 + Quadrada de boca 45


def test_a_partner_never_throws_for_the_other() -> None:
    table = start(4)
    refused(table, 2, {"throw": {}}, "not_your_turn")
    table, _ = throw(table, 0, *NOTHING)
    refused(table, 2, {"score": {"box": "AS"}}, "not_your_turn")


# --- The end -------------------------------------------------------------------------------------------


def test_solo_ends_after_ten_turns() -> None:
    table, happened = play_out(start(1))
    # The end is the kit's final event with the result: no game event for it.
    assert kinds(happened).count("scored") == 10 and kinds(happened)[-1] == "scored"
    assert result(table) == ([1], [221], EndReason.COMPLETED, [])
    seen = view(table, 0)
    assert seen["turns_left"] == 0 and seen["open_boxes"] == [] and seen["preview"] == []
    assert GAME.to_act(table.state) == []
    refused(table, 0, {"throw": {}}, "game_over")
    with pytest.raises(RulesError) as refusal:
        leave(table, 0)
    assert refusal.value.code == "game_over"


def test_a_duel_is_twenty_alternating_turns_and_the_highest_total_wins() -> None:
    table, opening = playing.start(GAME, 2)
    happened: list[Happening] = list(opening)
    while view(table)["turns_left"] > 1:
        seat = to_act(table)
        box = view(table)["open_boxes"][0]
        table, _ = throw(table, seat, *SEED_ROWS[box])
        table, new = act(table, seat, {"score": {"box": box}})
        happened += new
    assert to_act(table) == 1
    table, _ = turn(table, 1, NOTHING, "GENERAL")  # seat 1 misses its last General
    starts = [data(happened, i)["seat"] for i, e in enumerate(happened) if e.kind == "turn_started"]
    assert starts == [0, 1] * 10
    assert result(table)[:3] == ([1, 2], [221, 166], EndReason.COMPLETED)
    assert GAME.scores is not None and GAME.scores(table.state) == [221, 166]


@pytest.mark.parametrize("seats", [2, 4])
def test_equal_totals_share_the_win(seats: int) -> None:
    table, _ = play_out(start(seats))
    ranks, scores, _, _ = result(table)
    assert ranks == [1] * seats and scores == [221] * seats


@pytest.mark.parametrize(("seats", "leaver", "ranks"), [
    (2, 0, [2, 1]),
    (2, 1, [1, 2]),
    (4, 2, [2, 1, 2, 1]),
    (4, 3, [1, 2, 1, 2]),
])  # fmt: skip
def test_leaving_concedes_to_the_opposing_side(seats: int, leaver: int, ranks: list[int]) -> None:
    # Seat 0's side is ahead on points: leaving loses whatever the totals.
    table, _ = turn(start(seats), 0, SEED_ROWS["GENERAL"], "GENERAL")
    table, _ = turn(table, 1, NOTHING, "GENERAL")
    table, _ = throw(table, to_act(table), *NOTHING)
    table, happened = leave(table, leaver)
    # The kit tells the leave (was: game events conceded and game_over).
    assert happened == [Notice("LEFT", leaver)]
    scores = [55, 0] if seats == 2 else [55, 0, 55, 0]
    assert result(table) == (ranks, scores, EndReason.FORFEIT, [leaver])
    assert GAME.to_act(table.state) == []


def test_leaving_solo_ends_the_training() -> None:
    table, _ = turn(start(1), 0, SEED_ROWS["AS"], "AS")
    table, happened = leave(table, 0)
    assert happened == [Notice("LEFT", 0)]
    assert result(table) == ([1], [2], EndReason.FORFEIT, [0])


def test_no_claim_in_solo() -> None:
    # The only seat is the one to act: the kit's cannot_claim_yourself (was no_claim_in_solo).
    refused(start(1), 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=playing.NOW + 600)


def test_an_idle_solo_match_expires() -> None:
    table, _ = throw(start(1), 0, 6, 6, 6, 6, 6, cup=True)
    assert play.deadline_at(GAME, table) == table.idle_since + 120
    early = copy.deepcopy(table)
    assert play.fire_deadline(GAME, early, ctx(RiggedRng(), now=table.idle_since + 119.9)) == (
        "DEADLINE_OUTCOME_MOVED",
        [],
    )
    assert early == table
    idle_since = table.idle_since
    fired, happened = play.fire_deadline(GAME, table, ctx(RiggedRng(), now=idle_since + 120))
    # The kit tells the table why it ended: that notice is the match's final event.
    assert (fired, happened) == ("DEADLINE_OUTCOME_EXPIRED", [Notice("EXPIRED", 0, since=idle_since)])
    # The kit's removal for inactivity: END_REASON_INACTIVITY (an idle solo match expired).
    assert result(table) == ([1], [0], EndReason.INACTIVITY, [0])
    assert all(die["hidden"] for die in view(table)["dice"])


@pytest.mark.parametrize("seats", [2, 4])
def test_an_idle_seat_in_a_duel_or_duplas_is_only_announced(seats: int) -> None:
    table = start(seats)
    fired, happened = play.fire_deadline(GAME, table, ctx(RiggedRng(), now=table.idle_since + 120))
    assert (fired, happened) == ("DEADLINE_OUTCOME_NOTIFIED", [Notice("INACTIVE", 0, since=table.idle_since)])
    assert GAME.outcome(table.state) is None


def test_claim_in_a_duel_is_refused_early_and_accepted_after_120_s() -> None:
    table, _ = throw(start(2), 0, *NOTHING)
    idle_since = table.idle_since
    with pytest.raises(RulesError) as refusal:
        claim(table, 1, 119.9)
    assert refusal.value.code == "too_early" and "120" in refusal.value.message
    refused(table, 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=idle_since + 119.9)
    refused(table, 0, {"claim_inactivity": {}}, "cannot_claim_yourself", now=idle_since + 120)
    table, happened = claim(table, 1, 120)
    # The kit tells the claim (was: game events claimed and game_over).
    assert happened == [Notice("CLAIMED", 0, by=1)]
    assert result(table) == ([2, 1], [0, 0], EndReason.INACTIVITY, [0])
    refused(table, 1, {"claim_inactivity": {}}, "game_over", now=idle_since + 600)


def test_the_claim_clock_counts_from_the_idle_seats_turn_or_last_action() -> None:
    # Claims count from Snapshot.idle_since: when the seat to act got the turn
    # or last acted (was: the match's last accepted action, the same here).
    table, _ = act(start(2), 0, {"throw": {}}, 1, 2, 3, 4, 6, now=1_100.0)
    assert table.idle_since == 1_100.0
    refused(table, 1, {"claim_inactivity": {}}, "too_early", now=1_219.0)
    table, _ = act(table, 0, {"score": {"box": "AS"}}, now=1_150.0)
    assert table.idle_since == 1_150.0  # seat 1 got the turn
    refused(table, 0, {"claim_inactivity": {}}, "too_early", now=1_269.0)
    claim(table, 0, 120)


@pytest.mark.parametrize("claimer", [1, 3])
def test_claim_in_duplas_belongs_to_the_opposing_team(claimer: int) -> None:
    table, _ = turn(start(4), 0, NOTHING, "AS")
    table, _ = turn(table, 1, NOTHING, "AS")
    # Seat 2 (Jade 2) is to act and idles.
    refused(table, 0, {"claim_inactivity": {}}, "partner_cannot_claim", now=table.idle_since + 300)
    refused(table, 2, {"claim_inactivity": {}}, "cannot_claim_yourself", now=table.idle_since + 300)
    refused(table, claimer, {"claim_inactivity": {}}, "too_early", now=table.idle_since + 100)
    table, happened = claim(table, claimer, 120)
    assert notices(happened) == [Notice("CLAIMED", 2, by=claimer)]
    assert result(table) == ([2, 1, 2, 1], [1, 1, 1, 1], EndReason.INACTIVITY, [2])


def test_a_claim_is_possible_while_the_cup_is_pending() -> None:
    table, _ = throw(start(2), 0, 6, 6, 6, 6, 6, cup=True)
    table, happened = claim(table, 1, 120)
    assert happened == [Notice("CLAIMED", 0, by=1)]
    assert GAME.outcome(table.state) is not None
    assert all(die == {"face": 0, "hidden": True} for die in view(table)["dice"])
