"""Bozó rules, one by one, on rigged dice: modes, a turn, boca, the cup, the end."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.bozo.v1 import bozo_pb2

from services.bozo.engine import ENGINE
from services.kit.engine import JSON, Event, InvalidAction, RulesError
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import RiggedRng, ctx

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
             "FULL": 20, "SEGUIDA": 30, "QUADRADA": 40, "GENERAL": 50}
SEED_BOCA = {"FULL": 25, "SEGUIDA": 35, "QUADRADA": 45, "GENERAL": 55}
NOTHING = (1, 2, 3, 4, 6)  # scores only in the number boxes
# Malformed input; every other refusal is a RulesError proper.
INVALID_CODES = {
    "malformed_action", "unknown_action", "invalid_die_index", "duplicate_die_index",
    "unknown_side", "unknown_box", "invalid_seat",
}


class Table:
    """One match on rigged dice. Every accepted action, view and event is checked
    against the proto; every refusal is checked to change nothing."""

    def __init__(self, seats: int = 2, options: JSON | None = None) -> None:
        self.rng = RiggedRng()
        self.now = 1_000.0
        self.last_action_at = self.now
        assert_fits(bozo_pb2.Options, options or {})
        self.state, self.events = ENGINE.new_match(seats, options or {}, self.ctx())
        self._check_events(self.events)

    def ctx(self) -> Any:
        return ctx(self.rng, now=self.now, last_action_at=self.last_action_at)

    def act(self, seat: int, action: JSON, *faces: int) -> list[Event]:
        assert_fits(bozo_pb2.Action, action)
        self.rng.push(*faces)
        before = copy.deepcopy(self.state)
        new, events = ENGINE.apply(self.state, seat, action, self.ctx())
        assert self.state == before, "apply mutated the state it was given"
        assert not self.rng.queue, "rigged dice left over"
        self.state = new
        self.last_action_at = self.now
        self._check_events(events)
        self.events += events
        return events

    def leave(self, seat: int) -> list[Event]:
        before = copy.deepcopy(self.state)
        new, events = ENGINE.leave(self.state, seat, self.ctx())
        assert self.state == before, "leave mutated the state it was given"
        self.state = new
        self._check_events(events)
        self.events += events
        return events

    def refuse(self, seat: int, action: Any, code: str, *, fits: bool = True) -> RulesError:
        """The action is refused with ``code`` and nothing changes (no die drawn:
        the rigged generator has nothing queued and would fail loudly)."""
        if fits:
            assert_fits(bozo_pb2.Action, action)
        before = copy.deepcopy(self.state)
        with pytest.raises(RulesError) as refused:
            ENGINE.apply(self.state, seat, action, self.ctx())
        assert refused.value.code == code, refused.value.message
        assert isinstance(refused.value, InvalidAction) == (code in INVALID_CODES)
        assert self.state == before
        return refused.value

    def throw(self, seat: int, *faces: int, keep: tuple[int, ...] = (), cup: bool = False) -> JSON:
        action: JSON = {"throw": {"keep": list(keep), "cup": cup}}
        (event,) = self.act(seat, action, *faces)
        assert event.kind == "thrown"
        return event.data

    def declare(self, seat: int, side: str) -> JSON:
        (event,) = self.act(seat, {"declare": {"side": side}})
        assert event.kind == "revealed"
        return event.data

    def score(self, seat: int, box: str) -> JSON:
        events = self.act(seat, {"score": {"box": box}})
        assert events[0].kind == "scored"
        return events[0].data

    def turn(self, seat: int, faces: tuple[int, ...], box: str) -> JSON:
        self.throw(seat, *faces)
        return self.score(seat, box)

    def view(self, seat: int | None = None) -> JSON:
        data = ENGINE.view(self.state, seat)
        assert_fits(bozo_pb2.View, data)
        return data

    def faces(self) -> list[int]:
        return [die["face"] for die in self.view()["dice"]]

    def preview(self) -> dict[str, tuple[int, bool]]:
        return {p["box"]: (p["points"], p["boca"]) for p in self.view()["preview"]}

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    @staticmethod
    def _check_events(events: list[Event]) -> None:
        for event in events:
            assert event.audience is None  # nothing in Bozó is private to a seat
            assert_event_fits(bozo_pb2.Event, event)


def play_out(table: Table, rows: dict[str, tuple[int, ...]] | None = None) -> None:
    """Play every remaining turn, each seat filling its card in card order."""
    rows = rows or SEED_ROWS
    while not table.state["over"]:
        seat = table.view()["to_act"]
        box = table.view()["open_boxes"][0]
        table.turn(seat, rows[box], box)


# --- Modes and options --------------------------------------------------------------


@pytest.mark.parametrize(("seats", "mode", "turns"), [(1, "SOLO", 10), (2, "DUEL", 20), (4, "DUPLAS", 20)])
def test_mode_follows_the_seat_count_by_default(seats: int, mode: str, turns: int) -> None:
    for options in ({}, {"mode": "MODE_UNSPECIFIED"}, {"mode": mode}):
        view = Table(seats, options).view(0)
        assert view["mode"] == mode
        assert view["turns_total"] == turns
        assert view["turns_left"] == turns
        assert view["to_act"] == 0
        assert len(view["cards"]) == (2 if seats == 4 else seats)


@pytest.mark.parametrize(
    ("seats", "options", "code"),
    [
        (2, {"mode": "SOLO"}, "invalid_options"),
        (1, {"mode": "DUEL"}, "invalid_options"),
        (2, {"mode": "DUPLAS"}, "invalid_options"),
        (4, {"mode": "DUEL"}, "invalid_options"),
        (3, {"mode": "DUPLAS"}, "invalid_options"),
        (2, {"mode": "TRIO"}, "invalid_options"),
        (2, {"mode": 2}, "invalid_options"),
        (2, {"variant": "x"}, "invalid_options"),
        (3, {}, "invalid_seats"),
        (5, {}, "invalid_seats"),
        (0, {}, "invalid_seats"),
    ],
)
def test_bad_options_or_seat_counts_are_refused(seats: int, options: JSON, code: str) -> None:
    with pytest.raises(InvalidAction) as refused:
        ENGINE.new_match(seats, options, ctx(RiggedRng()))
    assert refused.value.code == code


def test_bozo_has_no_cpu_seats() -> None:
    with pytest.raises(InvalidAction) as refused:
        ENGINE.new_match(2, {}, ctx(RiggedRng()), cpu_seats=[1])
    assert refused.value.code == "invalid_options"


def test_a_match_opens_with_seat_zero_and_no_dice() -> None:
    table = Table(2)
    assert [(e.kind, e.data) for e in table.events] == [("turn_started", {"seat": 0, "turn": 1})]
    view = table.view(1)
    assert view["dice"] == [] and view["throw_number"] == 0 and view["throws_left"] == 3
    assert view["preview"] == []
    assert ENGINE.to_act(table.state) == [0]
    assert ENGINE.result(table.state) is None


# --- A turn ------------------------------------------------------------------------------


def test_the_seeds_worked_turn() -> None:
    """6,6,3,2,1 → keep the sixes → 6,4,2 → keep three sixes → 6,5: 24 or 40."""
    table = Table(2)
    thrown = table.throw(0, 6, 6, 3, 2, 1)
    assert thrown == {"seat": 0, "throw_number": 1, "thrown": [0, 1, 2, 3, 4], "kept": [],
                      "cup": False, "faces": [6, 6, 3, 2, 1]}
    assert table.preview()["SENA"] == (12, False)

    thrown = table.throw(0, 6, 4, 2, keep=(0, 1))
    assert thrown["throw_number"] == 2  # the second throw, not the first of a new count
    assert thrown["faces"] == [6, 4, 2] and thrown["thrown"] == [2, 3, 4]
    assert table.faces() == [6, 6, 6, 4, 2]
    assert table.preview()["SENA"] == (18, False)

    table.throw(0, 6, 5, keep=(0, 1, 2))
    assert table.faces() == [6, 6, 6, 6, 5]
    view = table.view()
    assert view["throws_left"] == 0 and view["kept"] == [0, 1, 2] and view["just_thrown"] == [3, 4]
    assert table.preview()["SENA"] == (24, False)
    assert table.preview()["QUADRADA"] == (40, False)

    alternative = copy.deepcopy(table.state)
    scored = table.score(0, "QUADRADA")
    assert scored == {"seat": 0, "box": "QUADRADA", "points": 40, "boca": False, "total": 40}
    # The other box stays open for a later turn and got nothing now.
    assert [b["box"] for b in table.view()["cards"][0]["boxes"]] == ["QUADRADA"]

    table.state = alternative
    assert table.score(0, "SENA")["points"] == 24


def test_first_throw_throws_all_five_dice() -> None:
    table = Table(2)
    table.refuse(0, {"throw": {"keep": [0]}}, "nothing_to_keep")


def test_no_throw_after_the_third() -> None:
    table = Table(2)
    table.throw(0, 1, 2, 3, 4, 6)
    table.throw(0, 6, keep=(0, 1, 2, 3))
    table.throw(0, 6, keep=(0, 1, 2, 3))
    table.refuse(0, {"throw": {"keep": [0, 1, 2, 3]}}, "no_throws_left")
    table.refuse(0, {"throw": {"keep": [0], "cup": True}}, "no_throws_left")


def test_a_re_throw_throws_at_least_one_die() -> None:
    table = Table(2)
    table.throw(0, 1, 2, 3, 4, 6)
    table.refuse(0, {"throw": {"keep": [4, 3, 2, 1, 0]}}, "no_dice_to_throw")


def test_a_re_throw_may_throw_all_five_again() -> None:
    table = Table(2)
    table.throw(0, 1, 2, 3, 4, 6)
    assert table.throw(0, 5, 5, 5, 5, 5)["thrown"] == [0, 1, 2, 3, 4]
    assert table.faces() == [5, 5, 5, 5, 5]


def test_the_kept_choice_can_change_between_throws() -> None:
    table = Table(2)
    table.throw(0, 6, 6, 3, 2, 1)
    table.throw(0, 5, 5, 5, keep=(0, 1))
    assert table.faces() == [6, 6, 5, 5, 5]
    # The sixes were kept, now they are thrown again and the fives kept.
    thrown = table.throw(0, 5, 4, keep=(4, 2, 3))
    assert thrown["kept"] == [2, 3, 4] and thrown["thrown"] == [0, 1]
    assert table.faces() == [5, 4, 5, 5, 5]


def test_score_needs_a_throw_first() -> None:
    table = Table(2)
    table.refuse(0, {"score": {"box": "AS"}}, "must_throw_first")


def test_scoring_ends_the_turn_and_unused_throws_are_lost() -> None:
    table = Table(2)
    table.turn(0, (1, 1, 3, 4, 6), "AS")
    assert table.events[-1].kind == "turn_started"
    assert table.events[-1].data == {"seat": 1, "turn": 2}
    view = table.view()
    assert view["to_act"] == 1 and view["throw_number"] == 0 and view["throws_left"] == 3
    assert view["dice"] == [] and view["kept"] == [] and view["just_thrown"] == []
    assert view["turns_left"] == 19 and view["turn"] == 2
    table.refuse(0, {"throw": {}}, "not_your_turn")
    table.throw(1, 1, 2, 3, 4, 6)
    table.score(1, "AS")
    assert table.view()["to_act"] == 0 and table.view()["throws_left"] == 3


def test_a_zero_is_allowed_and_closes_the_box() -> None:
    table = Table(1)
    scored = table.turn(0, NOTHING, "GENERAL")
    assert (scored["points"], scored["boca"]) == (0, False)
    assert table.view()["cards"][0]["boxes"] == [{"box": "GENERAL", "points": 0, "boca": False, "seat": 0}]
    assert "GENERAL" not in table.view()["open_boxes"]
    # A General thrown later cannot go there again: it goes to another empty box.
    table.throw(0, 6, 6, 6, 6, 6)
    assert "GENERAL" not in table.preview()
    table.refuse(0, {"score": {"box": "GENERAL"}}, "box_taken")
    assert table.score(0, "QUADRADA")["points"] == 45


def test_a_box_is_filled_once_per_card_and_cards_are_separate_in_a_duel() -> None:
    table = Table(2)
    table.turn(0, (6, 6, 6, 2, 4), "SENA")
    table.turn(1, (6, 6, 6, 2, 4), "SENA")  # seat 1 has its own card
    table.throw(0, 6, 6, 6, 6, 6)
    table.refuse(0, {"score": {"box": "SENA"}}, "box_taken")
    cards = table.view()["cards"]
    assert [c["seats"] for c in cards] == [[0], [1]]
    assert [c["total"] for c in cards] == [18, 18]
    assert all("team" not in c for c in cards)


def test_it_is_nobody_elses_turn() -> None:
    table = Table(2)
    for action in ({"throw": {}}, {"score": {"box": "AS"}}, {"declare": {"side": "TOP"}}):
        table.refuse(1, action, "not_your_turn")


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({}, "malformed_action"),
        ([], "malformed_action"),
        ({"throw": {}, "score": {"box": "AS"}}, "malformed_action"),
        ({"roll": {}}, "unknown_action"),
        ({"throw": 5}, "malformed_action"),
        ({"throw": {"keep": [5]}}, "invalid_die_index"),
        ({"throw": {"keep": [-1]}}, "invalid_die_index"),
        ({"throw": {"keep": [1, 1]}}, "duplicate_die_index"),
        ({"throw": {"keep": "01"}}, "malformed_action"),
        ({"throw": {"keep": [True]}}, "malformed_action"),
        ({"throw": {"keep": [1.0]}}, "malformed_action"),
        ({"throw": {"cup": "yes"}}, "malformed_action"),
        ({"throw": {"cup": 1}}, "malformed_action"),
        ({"throw": {"dice": [1]}}, "malformed_action"),
        ({"declare": {}}, "unknown_side"),
        ({"declare": {"side": "SIDE_UNSPECIFIED"}}, "unknown_side"),
        ({"declare": {"side": "bottom"}}, "unknown_side"),
        ({"score": {}}, "unknown_box"),
        ({"score": {"box": "BOX_UNSPECIFIED"}}, "unknown_box"),
        ({"score": {"box": "CHANCE"}}, "unknown_box"),
        ({"score": {"box": 1}}, "unknown_box"),
        ({"claim_inactivity": {"seat": 1}}, "malformed_action"),
    ],
)
def test_malformed_actions_are_invalid(action: Any, code: str) -> None:
    table = Table(2)
    table.throw(0, 1, 2, 3, 4, 6)
    error = table.refuse(0, action, code, fits=False)
    assert isinstance(error, InvalidAction)


def test_the_proto_defaults_are_accepted() -> None:
    """The kit drops default values: an empty throw is a first throw without cup."""
    table = Table(2)
    table.act(0, {"throw": {}}, 1, 2, 3, 4, 6)
    table.act(0, {"throw": {"keep": [0, 1, 2, 3]}}, 5)
    assert table.faces() == [1, 2, 3, 4, 5]
    table.act(0, {"score": {"box": "SEGUIDA"}})
    table.act(1, {"throw": {"cup": True}}, 1, 1, 1, 1, 1)
    assert table.view()["cup_pending"]
    table.act(1, {"declare": {"side": "BOTTOM"}})
    assert table.faces() == [6, 6, 6, 6, 6]


@pytest.mark.parametrize("seat", [2, -1, True, "0"])
def test_unknown_seats_are_invalid(seat: Any) -> None:
    table = Table(2)
    with pytest.raises(InvalidAction) as refused:
        ENGINE.apply(table.state, seat, {"throw": {}}, table.ctx())
    assert refused.value.code == "invalid_seat"
    with pytest.raises(InvalidAction):
        ENGINE.leave(table.state, seat, table.ctx())


# --- De boca --------------------------------------------------------------------------------


@pytest.mark.parametrize("box", list(SEED_ROWS))
def test_seed_row_scored_on_the_first_throw(box: str) -> None:
    table = Table(1)
    table.throw(0, *SEED_ROWS[box])
    expected = SEED_BOCA.get(box, SEED_BASE[box])
    assert table.preview()[box] == (expected, box in SEED_BOCA)
    scored = table.score(0, box)
    assert (scored["points"], scored["boca"]) == (expected, box in SEED_BOCA)
    assert table.view()["cards"][0]["total"] == expected


@pytest.mark.parametrize("box", list(SEED_ROWS))
def test_seed_row_scored_after_a_re_throw_has_no_boca(box: str) -> None:
    table = Table(1)
    table.throw(0, *NOTHING)
    table.throw(0, *SEED_ROWS[box], keep=())
    scored = table.score(0, box)
    assert (scored["points"], scored["boca"]) == (SEED_BASE[box], False)


def test_number_boxes_are_never_de_boca() -> None:
    table = Table(1)
    table.throw(0, 6, 6, 6, 6, 5)
    assert table.score(0, "SENA") == {"seat": 0, "box": "SENA", "points": 24, "boca": False, "total": 24}


def test_a_zero_after_the_first_throw_gets_no_bonus() -> None:
    table = Table(1)
    table.throw(0, *NOTHING)
    for box in SEED_BOCA:
        assert table.preview()[box] == (0, False)
    scored = table.score(0, "FULL")
    assert (scored["points"], scored["boca"]) == (0, False)


@pytest.mark.parametrize("throws", [2, 3])
def test_returning_to_the_same_combination_gets_no_bonus(throws: int) -> None:
    table = Table(1)
    table.throw(0, 2, 2, 5, 5, 5)
    assert table.preview()["FULL"] == (25, True)
    for _ in range(throws - 1):
        table.throw(0, 5, keep=(0, 1, 2, 3))  # die 4 comes back a five
        assert table.faces() == [2, 2, 5, 5, 5]
        assert table.preview()["FULL"] == (20, False)
    scored = table.score(0, "FULL")
    assert (scored["points"], scored["boca"]) == (20, False)


def test_a_cup_first_throw_and_its_declaration_are_still_the_first_throw() -> None:
    table = Table(1)
    table.throw(0, 6, 5, 4, 3, 2, cup=True)
    table.declare(0, "TOP")
    assert table.view()["throw_number"] == 1
    assert table.score(0, "SEGUIDA")["points"] == 35
    table.throw(0, 1, 1, 1, 1, 1, cup=True)
    table.declare(0, "BOTTOM")
    assert table.faces() == [6, 6, 6, 6, 6]
    scored = table.score(0, "GENERAL")
    assert (scored["points"], scored["boca"]) == (55, True)


# --- The cup -----------------------------------------------------------------------------------


def test_the_seeds_cup_example() -> None:
    """Two sixes kept; 6, 5, 4 under the cup, sung under: 6, 6, 1, 2, 3."""
    table = Table(2)
    table.throw(0, 6, 6, 3, 2, 1)
    thrown = table.throw(0, 6, 5, 4, keep=(0, 1), cup=True)
    assert thrown == {"seat": 0, "throw_number": 2, "thrown": [2, 3, 4], "kept": [0, 1], "cup": True}
    view = table.view(0)
    assert view["cup_pending"] and view["just_thrown"] == [2, 3, 4] and view["kept"] == [0, 1]
    assert view["dice"][:2] == [{"face": 6, "hidden": False}] * 2
    assert view["dice"][2:] == [{"face": 0, "hidden": True}] * 3

    conversions = [
        {"die": 2, "from_face": 6, "to_face": 1},
        {"die": 3, "from_face": 5, "to_face": 2},
        {"die": 4, "from_face": 4, "to_face": 3},
    ]
    revealed = table.declare(0, "BOTTOM")
    assert revealed == {"seat": 0, "side": "BOTTOM", "dice": [2, 3, 4], "faces": [1, 2, 3],
                        "conversions": conversions}
    view = table.view(1)
    assert table.faces() == [6, 6, 1, 2, 3]
    assert not view["cup_pending"] and all(not die["hidden"] for die in view["dice"])
    assert view["last_reveal"] == {"side": "BOTTOM", "conversions": conversions}
    assert view["throw_number"] == 2 and view["throws_left"] == 1  # the reveal used no throw


def test_dice_kept_after_a_bottom_reveal_keep_their_converted_face() -> None:
    table = Table(2)
    table.throw(0, 6, 6, 3, 2, 1)
    table.throw(0, 6, 5, 4, keep=(0, 1), cup=True)
    table.declare(0, "BOTTOM")
    # Third throw, under the cup again: only die 4 is thrown and turned.
    table.throw(0, 6, keep=(0, 1, 2, 3), cup=True)
    revealed = table.declare(0, "BOTTOM")
    assert revealed["conversions"] == [{"die": 4, "from_face": 6, "to_face": 1}]
    assert table.faces() == [6, 6, 1, 2, 1]
    assert table.score(0, "AS")["points"] == 2


def test_top_keeps_the_faces() -> None:
    table = Table(2)
    table.throw(0, 6, 5, 4, 2, 2, cup=True)
    revealed = table.declare(0, "TOP")
    assert revealed == {"seat": 0, "side": "TOP", "dice": [0, 1, 2, 3, 4], "faces": [6, 5, 4, 2, 2],
                        "conversions": []}
    assert table.view()["last_reveal"] == {"side": "TOP", "conversions": []}
    assert table.faces() == [6, 5, 4, 2, 2]


def test_the_last_reveal_is_cleared_by_the_next_throw() -> None:
    table = Table(2)
    table.throw(0, 6, 5, 4, 2, 2, cup=True)
    table.declare(0, "BOTTOM")
    table.throw(0, 3, keep=(0, 1, 2, 3))
    assert "last_reveal" not in table.view()


def test_nothing_but_the_declaration_while_the_cup_is_pending() -> None:
    table = Table(2)
    table.throw(0, 6, 5, 4, 2, 2, cup=True)
    table.refuse(0, {"throw": {"keep": [0]}}, "cup_pending")
    table.refuse(0, {"throw": {"keep": [0], "cup": True}}, "cup_pending")
    for box in SEED_ROWS:
        table.refuse(0, {"score": {"box": box}}, "cup_pending")
    table.refuse(1, {"declare": {"side": "TOP"}}, "not_your_turn")
    table.declare(0, "TOP")
    table.refuse(0, {"declare": {"side": "BOTTOM"}}, "nothing_to_declare")  # final


def test_declaring_without_a_cup_throw_is_refused() -> None:
    table = Table(2)
    table.refuse(0, {"declare": {"side": "TOP"}}, "nothing_to_declare")
    table.throw(0, *NOTHING)
    table.refuse(0, {"declare": {"side": "BOTTOM"}}, "nothing_to_declare")


def test_the_cup_is_chosen_throw_by_throw() -> None:
    table = Table(2)
    table.throw(0, 1, 1, 1, 2, 2, cup=True)
    table.declare(0, "BOTTOM")
    assert table.faces() == [6, 6, 6, 5, 5]
    assert table.throw(0, 6, 6, keep=(0, 1, 2))["faces"] == [6, 6]
    assert table.faces() == [6, 6, 6, 6, 6]
    scored = table.score(0, "GENERAL")
    assert scored == {"seat": 0, "box": "GENERAL", "points": 50, "boca": False, "total": 50}


# --- The cup's secret --------------------------------------------------------------------------------
# The proof is by indistinguishability: two tables that differ only in the faces
# under the cup must give every seat, the spectator, every event and every error
# exactly the same bytes. The check is shown able to fail: the same comparison
# sees the difference as soon as the cup is lifted.


def _cup_position(seats: int, throw_number: int, hidden: tuple[int, ...]) -> Table:
    """A table where seat 0 has just thrown ``hidden`` under the cup."""
    table = Table(seats)
    keep = tuple(range(5 - len(hidden)))
    if throw_number == 1:
        assert not keep
    for _ in range(throw_number - 1):
        table.throw(0, 2, 3, 4, 5, 6)
    table.throw(0, *hidden, keep=keep, cup=True)
    return table


def _everything_public(table: Table) -> list[str]:
    """What can leave the engine now: every view, the last events, and every error
    and outcome of every action any seat might try (accepted ones on a copy)."""
    seats = table.state["seats"]
    out = [repr(sorted(ENGINE.view(table.state, seat).items())) for seat in [*range(seats), None]]
    out += [repr(event) for event in table.events]
    actions: list[Any] = [
        {"throw": {"keep": keep, "cup": cup}}
        for keep in ([], [0], [0, 1, 2, 3], [4])
        for cup in (False, True)
    ]
    actions += [{"score": {"box": box}} for box in SEED_ROWS]
    actions += [{"declare": {"side": "SIDE_UNSPECIFIED"}}, {"claim_inactivity": {}}, {"throw": {"keep": [9]}}]
    for action in actions:
        assert_fits(bozo_pb2.Action, action)
    for seat in range(seats):
        for now in (table.now, table.now + 119, table.now + 120):
            for action in actions:
                # Dice for an accepted throw (none is possible under the cup).
                context = ctx(RiggedRng([4] * 5), now=now, last_action_at=table.now)
                try:
                    state, events = ENGINE.apply(table.state, seat, action, context)
                except RulesError as error:
                    out.append(f"{seat} {action} refused {error.code} {error.message} {error.args}")
                else:
                    out.append(f"{seat} {action} accepted {events}")
                    out += [repr(ENGINE.view(state, s)) for s in [*range(seats), None]]
        state, events = ENGINE.leave(table.state, seat, ctx(RiggedRng()))
        out.append(f"{seat} left {events}")
        out += [repr(ENGINE.view(state, s)) for s in [*range(seats), None]]
    return out


@pytest.mark.parametrize("seats", [1, 2, 4])
@pytest.mark.parametrize(("throw_number", "hidden_a", "hidden_b"), [
    (1, (6, 6, 6, 6, 6), (1, 1, 1, 1, 1)),
    (2, (6, 5, 4), (1, 2, 3)),
    (3, (6,), (1,)),
])
def test_nothing_tells_the_faces_under_the_cup(
    seats: int, throw_number: int, hidden_a: tuple[int, ...], hidden_b: tuple[int, ...]
) -> None:
    table_a = _cup_position(seats, throw_number, hidden_a)
    table_b = _cup_position(seats, throw_number, hidden_b)
    # The state does hold the two different secrets…
    assert table_a.state["dice"] != table_b.state["dice"]
    # …and nothing that leaves the engine differs, for any seat, partner included.
    assert _everything_public(table_a) == _everything_public(table_b)
    # The comparison is not blind: once the cup is lifted the tables differ.
    table_a.declare(0, "TOP")
    table_b.declare(0, "TOP")
    assert _everything_public(table_a) != _everything_public(table_b)


@settings(max_examples=25, deadline=None)
@given(seats=st.sampled_from([1, 2, 4]), throw_number=st.integers(1, 3), data=st.data())
def test_any_two_outcomes_under_the_cup_look_the_same(
    seats: int, throw_number: int, data: st.DataObject
) -> None:
    count = 5 if throw_number == 1 else data.draw(st.integers(1, 5), label="dice under the cup")
    outcome = st.lists(st.integers(1, 6), min_size=count, max_size=count).map(tuple)
    hidden_a, hidden_b = data.draw(outcome, label="a"), data.draw(outcome, label="b")
    table_a = _cup_position(seats, throw_number, hidden_a)
    table_b = _cup_position(seats, throw_number, hidden_b)
    assert _everything_public(table_a) == _everything_public(table_b)


def test_hidden_dice_have_no_face_and_no_preview_for_anyone() -> None:
    table = _cup_position(4, 2, (5, 5, 5))
    cup_event = table.events[-1]
    assert cup_event.kind == "thrown" and "faces" not in cup_event.data
    for seat in (0, 1, 2, 3, None):
        view = table.view(seat)
        assert view["cup_pending"] and view["preview"] == []
        assert [die for die in view["dice"] if die["hidden"]] == [{"face": 0, "hidden": True}] * 3
        assert [die["face"] for die in view["dice"] if not die["hidden"]] == [2, 3]
    table.declare(0, "BOTTOM")
    assert table.faces() == [2, 3, 2, 2, 2]


def test_a_match_ended_under_the_cup_never_reveals_it() -> None:
    table = _cup_position(2, 1, (6, 6, 6, 6, 6))
    table.leave(0)
    for seat in (0, 1, None):
        view = table.view(seat)
        assert view["game_over"] and all(die == {"face": 0, "hidden": True} for die in view["dice"])
    assert all("faces" not in event.data for event in table.events)


# --- Duplas -----------------------------------------------------------------------------------------


def test_duplas_order_over_twenty_turns_and_the_shared_cards() -> None:
    table = Table(4)
    assert table.view()["to_act_team"] == "JADE"
    play_out(table)
    starts = [e.data for e in table.events if e.kind == "turn_started"]
    assert [s["seat"] for s in starts] == [0, 1, 2, 3] * 5
    assert [s["team"] for s in starts] == ["JADE", "AMBAR"] * 10
    assert [s["turn"] for s in starts] == list(range(1, 21))
    scored = [e.data for e in table.events if e.kind == "scored"]
    assert len(scored) == 20
    jade, ambar = table.view()["cards"]
    assert (jade["team"], jade["seats"], ambar["team"], ambar["seats"]) == ("JADE", [0, 2], "AMBAR", [1, 3])
    # Ten boxes a team, five a person, partners alternating on the same card.
    assert [b["seat"] for b in jade["boxes"]] == [0, 2] * 5
    assert [b["seat"] for b in ambar["boxes"]] == [1, 3] * 5
    assert jade["total"] == ambar["total"] == 221
    assert scored[-1] == {
        "seat": 3, "box": "GENERAL", "points": 55, "boca": True, "team": "AMBAR", "total": 221
    }


def test_a_box_filled_by_a_partner_is_closed() -> None:
    table = Table(4)
    table.turn(0, (6, 6, 6, 2, 4), "SENA")
    table.turn(1, NOTHING, "AS")
    assert "SENA" not in table.view(2)["open_boxes"]
    table.throw(2, 6, 6, 6, 6, 1)
    assert "SENA" not in table.preview()
    table.refuse(2, {"score": {"box": "SENA"}}, "box_taken")
    # The opposing team's card is its own: Âmbar can still fill Sena.
    table.score(2, "QUADRADA")
    table.throw(3, 6, 6, 6, 6, 1)
    assert table.score(3, "SENA") == {"seat": 3, "box": "SENA", "points": 24, "boca": False,
                                      "team": "AMBAR", "total": 25}


def test_a_partner_never_throws_for_the_other() -> None:
    table = Table(4)
    table.refuse(2, {"throw": {}}, "not_your_turn")
    table.throw(0, *NOTHING)
    table.refuse(2, {"score": {"box": "AS"}}, "not_your_turn")


# --- The end -------------------------------------------------------------------------------------------


def test_solo_ends_after_ten_turns() -> None:
    table = Table(1)
    play_out(table)
    assert table.kinds().count("scored") == 10 and table.kinds()[-1] == "game_over"
    assert table.events[-1].data == {"reason": "COMPLETED", "winners": [0], "ranks": [1], "scores": [221],
                                     "forfeited": []}
    result = ENGINE.result(table.state)
    assert result is not None
    assert (result.ranks, result.scores, result.reason, result.forfeited) == ([1], [221], "completed", [])
    view = table.view(0)
    assert view["game_over"] and view["end_reason"] == "COMPLETED" and "to_act" not in view
    assert view["turns_left"] == 0 and view["open_boxes"] == [] and view["preview"] == []
    assert ENGINE.to_act(table.state) == []
    table.refuse(0, {"throw": {}}, "game_over")
    with pytest.raises(RulesError) as refused:
        ENGINE.leave(table.state, 0, table.ctx())
    assert refused.value.code == "game_over"


def test_a_duel_is_twenty_alternating_turns_and_the_highest_total_wins() -> None:
    table = Table(2)
    while table.view()["turns_left"] > 1:
        seat = table.view()["to_act"]
        box = table.view()["open_boxes"][0]
        table.turn(seat, SEED_ROWS[box], box)
    assert table.view()["to_act"] == 1
    table.turn(1, NOTHING, "GENERAL")  # seat 1 misses its last General
    starts = [e.data["seat"] for e in table.events if e.kind == "turn_started"]
    assert starts == [0, 1] * 10
    result = ENGINE.result(table.state)
    assert result is not None
    assert (result.ranks, result.scores, result.reason) == ([1, 2], [221, 166], "completed")
    assert table.view()["winners"] == [0]


@pytest.mark.parametrize("seats", [2, 4])
def test_equal_totals_share_the_win(seats: int) -> None:
    table = Table(seats)
    play_out(table)
    result = ENGINE.result(table.state)
    assert result is not None
    assert result.ranks == [1] * seats and result.scores == [221] * seats
    assert table.events[-1].data["winners"] == list(range(seats))


@pytest.mark.parametrize(("seats", "leaver", "ranks", "winners"), [
    (2, 0, [2, 1], [1]),
    (2, 1, [1, 2], [0]),
    (4, 2, [2, 1, 2, 1], [1, 3]),
    (4, 3, [1, 2, 1, 2], [0, 2]),
])
def test_leaving_concedes_to_the_opposing_side(
    seats: int, leaver: int, ranks: list[int], winners: list[int]
) -> None:
    table = Table(seats)
    # Seat 0's side is ahead on points: leaving loses whatever the totals.
    table.turn(0, SEED_ROWS["GENERAL"], "GENERAL")
    table.turn(1, NOTHING, "GENERAL")
    table.throw(table.view()["to_act"], *NOTHING)
    events = table.leave(leaver)
    assert [e.kind for e in events] == ["conceded", "game_over"]
    assert events[0].data == {"seat": leaver}
    assert events[1].data["reason"] == "FORFEIT" and events[1].data["winners"] == winners
    result = ENGINE.result(table.state)
    assert result is not None
    assert (result.ranks, result.reason, result.forfeited) == (ranks, "forfeit", [leaver])
    view = table.view(None)
    assert view["end_reason"] == "FORFEIT" and view["forfeited"] == [leaver] and view["winners"] == winners


def test_leaving_solo_ends_the_training() -> None:
    table = Table(1)
    table.turn(0, SEED_ROWS["AS"], "AS")
    events = table.leave(0)
    assert events[1].data == {
        "reason": "FORFEIT", "winners": [], "ranks": [1], "scores": [2], "forfeited": [0]
    }
    result = ENGINE.result(table.state)
    assert result is not None and (result.reason, result.forfeited) == ("forfeit", [0])


def test_no_claim_in_solo() -> None:
    table = Table(1)
    table.now += 600
    table.refuse(0, {"claim_inactivity": {}}, "no_claim_in_solo")


def test_claim_in_a_duel_is_refused_early_and_accepted_after_120_s() -> None:
    table = Table(2)
    table.throw(0, *NOTHING)
    table.now = table.last_action_at + 119.9
    error = table.refuse(1, {"claim_inactivity": {}}, "too_early")
    assert "120" in error.message
    table.refuse(0, {"claim_inactivity": {}}, "cannot_claim_yourself")
    table.now = table.last_action_at + 120
    table.refuse(0, {"claim_inactivity": {}}, "cannot_claim_yourself")
    events = table.act(1, {"claim_inactivity": {}})
    assert [e.kind for e in events] == ["claimed", "game_over"]
    assert events[0].data == {"seat": 1, "idle_seat": 0}
    assert events[1].data == {"reason": "INACTIVITY", "winners": [1], "ranks": [2, 1], "scores": [0, 0],
                              "forfeited": [0]}
    result = ENGINE.result(table.state)
    assert result is not None and (result.reason, result.forfeited) == ("inactivity", [0])
    table.refuse(1, {"claim_inactivity": {}}, "game_over")


@pytest.mark.parametrize("claimer", [1, 3])
def test_claim_in_duplas_belongs_to_the_opposing_team(claimer: int) -> None:
    table = Table(4)
    table.turn(0, NOTHING, "AS")
    table.turn(1, NOTHING, "AS")
    # Seat 2 (Jade 2) is to act and idles.
    table.now = table.last_action_at + 300
    table.refuse(0, {"claim_inactivity": {}}, "partner_cannot_claim")
    table.refuse(2, {"claim_inactivity": {}}, "cannot_claim_yourself")
    table.now = table.last_action_at + 100
    table.refuse(claimer, {"claim_inactivity": {}}, "too_early")
    table.now = table.last_action_at + 120
    events = table.act(claimer, {"claim_inactivity": {}})
    assert events[0].data == {"seat": claimer, "idle_seat": 2}
    result = ENGINE.result(table.state)
    assert result is not None
    assert (result.ranks, result.reason, result.forfeited) == ([2, 1, 2, 1], "inactivity", [2])


def test_a_claim_is_possible_while_the_cup_is_pending() -> None:
    table = Table(2)
    table.throw(0, 6, 6, 6, 6, 6, cup=True)
    table.now += 120
    assert table.act(1, {"claim_inactivity": {}})[-1].kind == "game_over"
