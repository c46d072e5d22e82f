"""Bozu Mekuri rules, one by one (RULES.md "Bozu Mekuri", seed 002).

Decks are laid out by hand: RiggedRng's shuffle keeps the deck in number order
and its first value picks the opener; ``table`` then puts the chosen cards on top.
Card numbers used: nobles 3 4 5 6 7 11 14; emperors 1 (Tenchi) 2 (Jitō) 13 15;
monks 8 12 21; ladies 9 19 38; Semimaru 10.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from services.bozu_mekuri.cards import NUMBERS
from services.bozu_mekuri.engine import ENGINE, placings
from services.kit.engine import Event, InvalidAction, RulesError
from tests.rigged import RiggedRng, ctx

JSON = dict[str, Any]
NOW = 1_000.0


def table(
    seats: int = 3,
    top: Sequence[int] = (),
    hands: dict[int, list[int]] | None = None,
    pile: Sequence[int] = (),
    opener: int = 0,
    cpu_seats: Sequence[int] = (),
    **options: Any,
) -> JSON:
    """A match whose deck starts with ``top`` (the other cards follow in number
    order), with the given hands and pile; every card is somewhere exactly once."""
    state, _ = ENGINE.new_match(seats, options, ctx(RiggedRng([opener])), cpu_seats)
    hands = hands or {}
    used = [*top, *pile, *(n for hand in hands.values() for n in hand)]
    assert len(set(used)) == len(used)
    state["deck"] = [*top, *(n for n in NUMBERS if n not in used)]
    state["pile"] = list(pile)
    state["hands"] = [list(hands.get(seat, [])) for seat in range(seats)]
    return state


def act(state: JSON, seat: int, kind: str, now: float = NOW, last: float = NOW) -> tuple[JSON, list[Event]]:
    return ENGINE.apply(state, seat, {kind: {}}, ctx(now=now, last_action_at=last))


def flip(state: JSON, seat: int) -> tuple[JSON, list[Event]]:
    return act(state, seat, "flip")


def flipped(events: Iterable[Event]) -> list[JSON]:
    return [e.data for e in events if e.kind == "card_flipped"]


def refused(state: JSON, seat: int, action: JSON, code: str, now: float = NOW, last: float = NOW) -> None:
    """The action is refused with ``code`` and the state is untouched."""
    before = copy.deepcopy(state)
    with pytest.raises(RulesError) as info:
        ENGINE.apply(state, seat, action, ctx(now=now, last_action_at=last))
    assert info.value.code == code
    assert state == before


def view(state: JSON, seat: int | None = 0) -> JSON:
    return ENGINE.view(state, seat)


# ---------------------------------------------------------------- setting up


def test_new_match_defaults() -> None:
    state, events = ENGINE.new_match(4, {}, ctx(RiggedRng([2])))
    assert [e.kind for e in events] == ["match_started", "turn_started"]
    assert events[0].data == {
        "seat_count": 4,
        "cpu_seats": [],
        "options": {
            "semimaru": "OUT_AT_ONCE",
            "emperor": "KEEP_AND_FLIP_AGAIN",
            "lady": "TAKE_PILE",
            "allow_stopping": True,
            "turn_timer_seconds": 0,
        },
        "deck_count": 100,
    }
    assert events[1].data == {"seat": 2, "cpu_controlled": False}  # the opener is drawn
    v = view(state)
    assert v["deck_count"] == 100 and v["pile_count"] == 0 and v["to_act"] == 2
    assert [s["card_count"] for s in v["seats"]] == [0, 0, 0, 0]
    assert not v["extra_flip_offered"] and not v["can_stop"] and "last_flipped" not in v
    assert ENGINE.to_act(state) == [2] and ENGINE.result(state) is None


def test_unspecified_enum_names_and_unset_fields_mean_the_defaults() -> None:
    state, _ = ENGINE.new_match(2, {
        "semimaru": "SEMIMARU_RULE_UNSPECIFIED", "emperor": "EMPEROR_RULE_UNSPECIFIED",
        "lady": "LADY_RULE_UNSPECIFIED", "turn_timer_seconds": 0,
    }, ctx(RiggedRng([0])))
    assert view(state)["options"] == {
        "semimaru": "OUT_AT_ONCE", "emperor": "KEEP_AND_FLIP_AGAIN", "lady": "TAKE_PILE",
        "allow_stopping": True, "turn_timer_seconds": 0,
    }


@pytest.mark.parametrize("seats", [0, 1, 7, True, "3"])
def test_seat_count_is_2_to_6(seats: Any) -> None:
    with pytest.raises(InvalidAction) as info:
        ENGINE.new_match(seats, {}, ctx(RiggedRng([0])))
    assert info.value.code == "invalid_seat_count"


@pytest.mark.parametrize("options", [
    {"semimaru": "AS_LADY"},
    {"emperor": "KEEP_AND_FLIP"},
    {"lady": 1},
    {"allow_stopping": "no"},
    {"turn_timer_seconds": 45},
    {"turn_timer_seconds": True},
    {"turn_timer_seconds": "30"},
    {"timer": 30},
    [],
])
def test_bad_options_are_refused(options: Any) -> None:
    with pytest.raises(InvalidAction) as info:
        ENGINE.new_match(3, options, ctx(RiggedRng([0])))
    assert info.value.code == "invalid_options"


@pytest.mark.parametrize("cpu_seats", [[3], [-1], [1, 1], [True]])
def test_bad_cpu_seats_are_refused(cpu_seats: list[Any]) -> None:
    with pytest.raises(InvalidAction) as info:
        ENGINE.new_match(3, {}, ctx(RiggedRng([0])), cpu_seats)
    assert info.value.code == "invalid_cpu_seats"


@pytest.mark.parametrize("timer", [0, 30, 60])
def test_turn_timer_choices(timer: int) -> None:
    assert view(table(turn_timer_seconds=timer))["turn_timer_seconds"] == timer


# ---------------------------------------------------------------- the ordinary cards


def test_noble_is_kept_and_the_turn_passes() -> None:
    state, events = flip(table(top=[3]), 0)
    assert state["hands"][0] == [3]
    assert [e.kind for e in events] == ["card_flipped", "turn_started"]
    data = events[0].data
    assert data["card"]["number"] == 3 and data["card"]["name_romaji"] == "Kakinomoto no Hitomaro"
    assert data["effect"] == "KEPT" and not data["extra_flip_offered"] and not data["extra"]
    assert data["card_counts"] == [1, 0, 0] and data["deck_count"] == 99
    assert ENGINE.to_act(state) == [1]
    assert view(state)["last_flipped"]["name_ja"] == "柿本人麻呂"


def test_monk_sends_your_cards_and_himself_to_the_pile() -> None:
    state, events = flip(table(top=[8], hands={0: [3, 4], 1: [5]}, pile=[6]), 0)
    assert state["hands"] == [[], [5], []]
    assert state["pile"] == [6, 3, 4, 8]
    assert flipped(events)[0]["effect"] == "LOST_TO_PILE"
    assert flipped(events)[0]["cards_to_pile"] == 3
    assert ENGINE.to_act(state) == [1]


def test_monk_on_an_empty_hand_sends_only_himself() -> None:
    state, events = flip(table(top=[8]), 0)
    assert state["pile"] == [8] and flipped(events)[0]["cards_to_pile"] == 1


@pytest.mark.parametrize("lady", ["TAKE_PILE", "TAKE_PILE_AND_FLIP_AGAIN", "FLIP_AGAIN_IF_PILE_EMPTY"])
def test_lady_takes_the_whole_pile(lady: str) -> None:
    state, events = flip(table(top=[9, 5], hands={0: [3]}, pile=[8, 4], lady=lady), 0)
    assert state["hands"][0] == [3, 9, 8, 4] and state["pile"] == []
    data = flipped(events)[0]
    assert data["effect"] == "TOOK_PILE" and data["cards_taken"] == 2
    # Only "take the pile and flip again" offers a flip after a non-empty pile.
    assert data["extra_flip_offered"] == (lady == "TAKE_PILE_AND_FLIP_AGAIN")
    assert (ENGINE.to_act(state) == [0]) == (lady == "TAKE_PILE_AND_FLIP_AGAIN")


@pytest.mark.parametrize(("lady", "again"), [
    ("TAKE_PILE", False), ("TAKE_PILE_AND_FLIP_AGAIN", True), ("FLIP_AGAIN_IF_PILE_EMPTY", True),
])
def test_lady_on_an_empty_pile(lady: str, again: bool) -> None:
    state, events = flip(table(top=[9, 5], lady=lady), 0)
    assert state["hands"][0] == [9]
    assert flipped(events)[0]["cards_taken"] == 0
    assert state["extra_flip"] is again
    assert ENGINE.to_act(state) == ([0] if again else [1])


# ---------------------------------------------------------------- emperors


def test_emperor_default_keeps_and_offers_one_more() -> None:
    state, events = flip(table(top=[13, 3], hands={0: [4]}, pile=[5]), 0)
    assert state["hands"][0] == [4, 13] and state["pile"] == [5]
    assert flipped(events)[0]["effect"] == "KEPT" and flipped(events)[0]["extra_flip_offered"]
    assert [e.kind for e in events] == ["card_flipped"]  # the turn goes on
    v = view(state, None)
    assert v["extra_flip_offered"] and v["can_stop"] and v["to_act"] == 0
    # Flip again ...
    after_flip, events = flip(state, 0)
    assert after_flip["hands"][0] == [4, 13, 3]
    assert flipped(events)[0]["extra"] and ENGINE.to_act(after_flip) == [1]
    # ... or stop.
    after_stop, events = act(state, 0, "stop")
    assert after_stop["hands"][0] == [4, 13] and after_stop["deck"][0] == 3
    assert [e.kind for e in events] == ["stopped", "turn_started"]
    assert events[0].data == {"seat": 0, "by_cpu": False}
    assert ENGINE.to_act(after_stop) == [1]


def test_emperor_then_monk_loses_everything() -> None:
    # Seed: "Se a próxima for um monge, todas as suas cartas vão ao monte."
    state, _ = flip(table(top=[15, 8], hands={0: [3, 4]}), 0)
    state, events = flip(state, 0)
    assert state["hands"][0] == [] and state["pile"] == [3, 4, 15, 8]
    assert flipped(events)[0]["extra"] and ENGINE.to_act(state) == [1]


def test_emperor_take_everyones_cards() -> None:
    state, events = flip(table(
        top=[68], hands={0: [3], 1: [4, 5], 2: [6]}, pile=[7], emperor="TAKE_EVERYONES_CARDS"), 0)
    assert state["hands"] == [[3, 68, 4, 5, 6], [], []]
    assert state["pile"] == [7]  # the pile is not "everyone's cards"
    data = flipped(events)[0]
    assert data["effect"] == "TOOK_EVERYONES_CARDS" and data["cards_taken"] == 3
    assert not data["extra_flip_offered"] and ENGINE.to_act(state) == [1]


def test_emperor_ordinary_is_a_noble() -> None:
    state, events = flip(table(top=[1], pile=[3], emperor="ORDINARY"), 0)
    assert state["hands"][0] == [1] and state["pile"] == [3]
    assert flipped(events)[0]["effect"] == "KEPT" and ENGINE.to_act(state) == [1]


def test_jito_keep_and_flip_again_replaces_the_lady() -> None:
    state, events = flip(table(top=[2], pile=[3, 4]), 0)
    assert state["hands"][0] == [2] and state["pile"] == [3, 4]  # she does not take the pile
    assert flipped(events)[0]["effect"] == "KEPT" and state["extra_flip"]


def test_jito_take_everyones_cards_replaces_the_lady() -> None:
    state, events = flip(table(
        top=[2], hands={1: [5]}, pile=[3, 4], emperor="TAKE_EVERYONES_CARDS"), 0)
    assert state["hands"][0] == [2, 5] and state["pile"] == [3, 4]
    assert flipped(events)[0]["effect"] == "TOOK_EVERYONES_CARDS" and not state["extra_flip"]


@pytest.mark.parametrize(("lady", "again"), [
    ("TAKE_PILE", False), ("TAKE_PILE_AND_FLIP_AGAIN", True), ("FLIP_AGAIN_IF_PILE_EMPTY", False),
])
def test_jito_ordinary_is_a_lady(lady: str, again: bool) -> None:
    state, events = flip(table(top=[2], hands={1: [5]}, pile=[3, 4], emperor="ORDINARY", lady=lady), 0)
    assert state["hands"][0] == [2, 3, 4] and state["hands"][1] == [5] and state["pile"] == []
    assert flipped(events)[0]["effect"] == "TOOK_PILE"
    assert state["extra_flip"] is again


def test_emperor_other_options_do_not_flip_again() -> None:
    for emperor in ("TAKE_EVERYONES_CARDS", "ORDINARY"):
        state, _ = flip(table(top=[99], emperor=emperor), 0)
        assert not state["extra_flip"] and ENGINE.to_act(state) == [1]


# ---------------------------------------------------------------- extra flips


def test_extra_flips_chain() -> None:
    state = table(top=[13, 15, 9, 3, 4], hands={0: [5]}, pile=[6, 7], lady="TAKE_PILE_AND_FLIP_AGAIN")
    state, e1 = flip(state, 0)  # emperor: one more
    state, e2 = flip(state, 0)  # emperor again: one more
    state, e3 = flip(state, 0)  # lady takes the pile and flips again
    assert ENGINE.to_act(state) == [0] and state["extra_flip"]
    state, e4 = flip(state, 0)  # a noble ends the chain
    assert [d["extra"] for d in flipped(e1 + e2 + e3 + e4)] == [False, True, True, True]
    assert [d["extra_flip_offered"] for d in flipped(e1 + e2 + e3 + e4)] == [True, True, True, False]
    assert state["hands"][0] == [5, 13, 15, 9, 6, 7, 3]
    assert ENGINE.to_act(state) == [1] and state["deck"][0] == 4


def test_mandatory_extra_flip_when_stopping_is_not_allowed() -> None:
    state, _ = flip(table(top=[13, 8], hands={0: [3]}, allow_stopping=False), 0)
    v = view(state)
    assert v["extra_flip_offered"] and not v["can_stop"] and v["to_act"] == 0
    refused(state, 0, {"stop": {}}, "stopping_not_allowed")
    state, events = flip(state, 0)
    assert state["hands"][0] == [] and flipped(events)[0]["extra"]


def test_stop_needs_an_extra_flip_on_offer() -> None:
    refused(table(top=[3]), 0, {"stop": {}}, "no_extra_flip")


def test_last_card_offering_one_more_ends_the_game() -> None:
    state = table(top=[13])
    state["deck"] = [13]
    state["pile"] = [n for n in NUMBERS if n != 13]
    state, events = flip(state, 0)
    assert state["over"] and not view(state)["extra_flip_offered"]
    assert not flipped(events)[0]["extra_flip_offered"]
    assert events[-1].kind == "game_over"


# ---------------------------------------------------------------- Semimaru


def test_semimaru_out_at_once() -> None:
    state, events = flip(table(seats=3, top=[10, 3, 4], hands={0: [5], 1: [6]}), 0)
    assert state["hands"] == [[], [6], []] and state["pile"] == [5, 10]
    data = flipped(events)[0]
    assert data["effect"] == "KNOCKED_OUT" and data["cards_to_pile"] == 2
    assert view(state)["seats"][0]["eliminated"]
    # Play goes on without seat 0.
    state, _ = flip(state, 1)
    state, events = flip(state, 2)
    assert ENGINE.to_act(state) == [1]
    refused(state, 0, {"flip": {}}, "eliminated")
    refused(state, 0, {"stop": {}}, "eliminated")


def test_semimaru_out_at_once_leaves_one_player_who_wins_at_once() -> None:
    state, events = flip(table(seats=2, top=[10], hands={0: [3, 4, 5], 1: [6]}), 0)
    assert state["over"] and len(state["deck"]) == 95  # the deck was not exhausted
    assert events[-1].kind == "game_over"
    assert events[-1].data == {"ranks": [2, 1], "scores": [0, 1], "reason": "LAST_ONE_STANDING"}
    result = ENGINE.result(state)
    assert result is not None and result.ranks == [2, 1] and result.scores == [0, 1]
    assert ENGINE.to_act(state) == []
    refused(state, 1, {"flip": {}}, "game_over")


def test_semimaru_skip_once() -> None:
    state, events = flip(table(seats=3, top=[10, 3, 4, 5, 6], hands={0: [7]}, semimaru="SKIP_ONCE"), 0)
    assert state["hands"][0] == [7, 10] and flipped(events)[0]["effect"] == "SKIPS_NEXT_TURN"
    assert view(state)["seats"][0]["skips_next_turn"]
    state, _ = flip(state, 1)
    state, events = flip(state, 2)
    assert [e.kind for e in events] == ["card_flipped", "turn_skipped", "turn_started"]
    assert events[1].data == {"seat": 0}
    assert ENGINE.to_act(state) == [1]
    assert not view(state)["seats"][0]["skips_next_turn"]
    state, _ = flip(state, 1)
    state, _ = flip(state, 2)
    assert ENGINE.to_act(state) == [0]  # skipped once only


def test_semimaru_skip_once_two_players() -> None:
    state, _ = flip(table(seats=2, top=[10, 3, 4, 5], semimaru="SKIP_ONCE"), 0)
    state, events = flip(state, 1)
    assert ENGINE.to_act(state) == [1]  # seat 0 skipped, so seat 1 again
    assert "turn_skipped" in [e.kind for e in events]
    state, _ = flip(state, 1)
    assert ENGINE.to_act(state) == [0]


def test_semimaru_as_monk() -> None:
    state, events = flip(table(top=[10], hands={0: [3], 1: [4]}, semimaru="AS_MONK"), 0)
    assert state["hands"] == [[], [4], []] and state["pile"] == [3, 10]
    assert flipped(events)[0]["effect"] == "LOST_TO_PILE" and not state["eliminated"]


def test_semimaru_as_noble() -> None:
    state, events = flip(table(top=[10], hands={0: [3]}, pile=[4], semimaru="AS_NOBLE"), 0)
    assert state["hands"][0] == [3, 10] and state["pile"] == [4]
    assert flipped(events)[0]["effect"] == "KEPT"


def test_semimaru_everyone_to_pile() -> None:
    state, events = flip(table(
        top=[10], hands={0: [3], 1: [4, 5], 2: [6]}, pile=[7], semimaru="EVERYONE_TO_PILE", opener=1), 1)
    assert state["hands"] == [[], [], []]
    assert sorted(state["pile"]) == [3, 4, 5, 6, 7, 10]
    data = flipped(events)[0]
    assert data["effect"] == "ALL_TO_PILE" and data["cards_to_pile"] == 5


def test_semimaru_on_an_extra_flip() -> None:
    state, _ = flip(table(seats=3, top=[13, 10, 3], hands={0: [4]}), 0)
    state, _ = flip(state, 0)
    assert state["eliminated"] == [0] and state["pile"] == [4, 13, 10]
    assert ENGINE.to_act(state) == [1] and not state["extra_flip"]


# ---------------------------------------------------------------- the end and the placings


def test_placings_share_equal_counts() -> None:
    assert placings([5, 5, 3], []) == [1, 1, 3]
    assert placings([2, 7, 7, 7], []) == [4, 1, 1, 1]
    assert placings([0, 0], []) == [1, 1]


def test_placings_put_the_knocked_out_last_earliest_lowest() -> None:
    assert placings([4, 0, 9], [1]) == [2, 3, 1]
    assert placings([0, 3, 0, 0], [2, 0]) == [3, 1, 4, 2]  # 2 went out first: lowest
    assert placings([0, 6], [0]) == [2, 1]


def test_game_ends_when_the_deck_runs_out_and_the_pile_is_nobodys() -> None:
    state = table(seats=3, top=[3], hands={1: [4, 5]}, opener=2)
    rest = state["deck"][1:]
    state["deck"] = [3]
    state["hands"][0] = rest[:40]
    state["hands"][2] = rest[40:41]
    state["pile"] = rest[41:]
    state, events = flip(state, 2)
    assert state["over"] and events[-1].kind == "game_over"
    assert events[-1].data == {"ranks": [1, 2, 2], "scores": [40, 2, 2], "reason": "DECK_EXHAUSTED"}
    result = ENGINE.result(state)
    assert result is not None
    assert result.scores == [40, 2, 2] and result.ranks == [1, 2, 2]
    assert result.reason == "completed" and result.forfeited == []
    v = view(state)
    assert v["game_over"] and "to_act" not in v and v["pile_count"] == len(rest) - 41


def test_a_shared_first_place_is_a_draw() -> None:
    state = table(seats=3, top=[3])
    deck = state["deck"]
    state["deck"] = [3]
    state["hands"] = [deck[1:11], deck[11:20], deck[20:30]]
    state["pile"] = deck[30:]
    state, _ = flip(state, 0)
    result = ENGINE.result(state)
    assert result is not None and result.scores == [11, 9, 10] and result.ranks == [1, 3, 2]
    state2 = table(seats=3, top=[3])
    state2["deck"] = [3]
    state2["hands"] = [deck[1:10], deck[10:20], deck[20:30]]
    state2["pile"] = deck[30:]
    state2, _ = flip(state2, 0)
    result = ENGINE.result(state2)
    assert result is not None and result.scores == [10, 10, 10] and result.ranks == [1, 1, 1]


def test_knocked_out_seat_is_last_even_against_empty_hands() -> None:
    state, _ = flip(table(seats=3, top=[10], hands={0: [3, 4, 5]}), 0)
    rest = state["deck"]
    state["deck"] = rest[:1]
    state["pile"] += rest[1:]
    state, events = flip(state, 1)
    assert events[-1].data["ranks"] == [3, 1, 2] and events[-1].data["scores"] == [0, 1, 0]


# ---------------------------------------------------------------- the warning


def test_semimaru_warning_at_15_cards() -> None:
    state = table(top=[3])
    others = [n for n in NUMBERS if n not in (3, 10)]
    state["deck"] = [3, *others[:14], 10]  # 16 cards, Semimaru last
    state["pile"] = others[14:]
    assert not view(state)["semimaru_warning"]
    state, events = flip(state, 0)
    assert view(state, None)["semimaru_warning"] and view(state, 1)["semimaru_warning"]
    assert [e.data for e in events if e.kind == "semimaru_warning"] == [{"deck_count": 15}]
    state, events = flip(state, 1)  # still shown, announced only once
    assert view(state)["semimaru_warning"] and "semimaru_warning" not in [e.kind for e in events]


def test_no_warning_once_semimaru_is_out() -> None:
    state = table(top=[3], semimaru="AS_NOBLE")
    others = [n for n in NUMBERS if n not in (3, 10)]
    state["deck"] = [10, *others[:15]]  # 16 cards, Semimaru on top
    state["pile"] = [3, *others[15:]]
    state, events = flip(state, 0)
    assert len(state["deck"]) == 15
    assert not view(state)["semimaru_warning"] and "semimaru_warning" not in [e.kind for e in events]


# ---------------------------------------------------------------- CPU seats, leaving, taking over


def test_cpu_seats_play_their_turns_at_once() -> None:
    state = table(seats=3, top=[3, 4, 5, 6], cpu_seats=[1, 2])
    assert ENGINE.to_act(state) == [0]
    state, events = flip(state, 0)
    assert [d["seat"] for d in flipped(events)] == [0, 1, 2]
    assert [d["by_cpu"] for d in flipped(events)] == [False, True, True]
    assert state["hands"] == [[3], [4], [5]] and ENGINE.to_act(state) == [0]
    v = view(state)
    assert [s["cpu_controlled"] for s in v["seats"]] == [False, True, True]
    assert [s["cpu_seat"] for s in v["seats"]] == [False, True, True]


def test_cpu_opener_plays_before_new_match_returns() -> None:
    state, events = ENGINE.new_match(2, {}, ctx(RiggedRng([1])), cpu_seats=[1])
    assert flipped(events)[0]["seat"] == 1 and flipped(events)[0]["by_cpu"]
    assert ENGINE.to_act(state) == [0]


def test_all_cpu_match_plays_to_the_end() -> None:
    state, events = ENGINE.new_match(4, {}, ctx(RiggedRng([0])), cpu_seats=[0, 1, 2, 3])
    assert state["over"] and events[-1].kind == "game_over"
    assert ENGINE.result(state) is not None


def test_cpu_seat_cannot_be_acted_for() -> None:
    state = table(seats=2, cpu_seats=[1], opener=0)
    for kind in ("flip", "stop", "timeout", "take_over"):
        refused(state, 1, {kind: {}}, "cpu_seat")
    with pytest.raises(RulesError) as info:
        ENGINE.leave(state, 1, ctx())
    assert info.value.code == "cpu_seat"


def test_cpu_takes_or_declines_the_extra_flip() -> None:
    # Seat 1 (CPU) flips an emperor holding nothing: flipping on is worth it.
    state = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1])
    state, events = flip(state, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13, 4]
    # Seat 1 holding 80 cards with monks still face down: it stops.
    state = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1])
    state["hands"][1] = [n for n in state["deck"] if n not in (3, 13, 4, 5, 8, 12, 21)][:80]
    state["deck"] = [n for n in state["deck"] if n not in state["hands"][1]]
    state, events = flip(state, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13]
    assert {"kind": "stopped", "data": {"seat": 1, "by_cpu": True}} in [
        {"kind": e.kind, "data": e.data} for e in events]


def test_cpu_flips_when_the_extra_flip_is_mandatory() -> None:
    state = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1], allow_stopping=False)
    state["hands"][1] = [n for n in state["deck"] if n not in (3, 13, 4, 5)][:80]
    state["deck"] = [n for n in state["deck"] if n not in state["hands"][1]]
    state, events = flip(state, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13, 4]
    assert "stopped" not in [e.kind for e in events]


def test_leaving_hands_the_seat_to_the_cpu_and_taking_it_back() -> None:
    state = table(seats=3, top=[3, 4, 5, 6, 7, 11, 14, 16])
    state, _ = flip(state, 0)
    state, events = ENGINE.leave(state, 1, ctx())  # seat 1 is to act: the CPU plays at once
    assert [e.kind for e in events[:2]] == ["player_left", "card_flipped"]
    assert flipped(events)[0]["seat"] == 1 and flipped(events)[0]["by_cpu"]
    assert ENGINE.to_act(state) == [2]
    v = view(state)
    assert v["seats"][1]["left"] and v["seats"][1]["cpu_controlled"] and not v["seats"][1]["cpu_seat"]
    refused(state, 1, {"flip": {}}, "seat_left")
    refused(state, 1, {"timeout": {}}, "seat_left")
    with pytest.raises(RulesError) as info:
        ENGINE.leave(state, 1, ctx())
    assert info.value.code == "already_left"
    state, _ = flip(state, 2)
    state, events = flip(state, 0)  # seat 1's next turn is the CPU's again
    assert [(d["seat"], d["by_cpu"]) for d in flipped(events)] == [(0, False), (1, True)]
    assert ENGINE.to_act(state) == [2]
    state, events = act(state, 1, "take_over")
    assert [(e.kind, e.data) for e in events] == [("seat_taken_over", {"seat": 1})]
    assert not view(state)["seats"][1]["cpu_controlled"] and not view(state)["seats"][1]["left"]
    state, _ = flip(state, 2)
    state, events = flip(state, 0)
    assert [d["seat"] for d in flipped(events)] == [0]
    assert ENGINE.to_act(state) == [1]  # seat 1 plays its own turn again
    refused(state, 1, {"take_over": {}}, "not_left")


def test_everyone_leaving_lets_the_cpus_finish() -> None:
    state = table(seats=2, top=[3])
    state, _ = ENGINE.leave(state, 1, ctx())
    assert not state["over"]
    state, events = ENGINE.leave(state, 0, ctx())
    assert state["over"] and events[-1].kind == "game_over"
    result = ENGINE.result(state)
    assert result is not None and result.forfeited == [1, 0] and result.reason == "completed"
    with pytest.raises(RulesError) as info:
        ENGINE.leave(state, 0, ctx())
    assert info.value.code == "game_over"


def test_a_player_who_came_back_is_not_listed_as_forfeited() -> None:
    state = table(seats=2, top=[3], opener=0)
    state, _ = ENGINE.leave(state, 1, ctx())
    state, _ = act(state, 1, "take_over")
    state["deck"] = state["deck"][:1]
    state["pile"] = [n for n in NUMBERS if n not in state["deck"] and n not in state["hands"][0]
                     and n not in state["hands"][1]]
    state, _ = flip(state, 0)
    result = ENGINE.result(state)
    assert result is not None and result.forfeited == []


# ---------------------------------------------------------------- the turn timer


def test_timeout_needs_a_timer() -> None:
    refused(table(), 1, {"timeout": {}}, "no_timer", now=NOW + 999, last=NOW)


def test_timeout_before_the_timer_runs_out() -> None:
    refused(table(turn_timer_seconds=30), 1, {"timeout": {}}, "too_early", now=NOW + 29.9, last=NOW)


def test_timeout_lets_the_cpu_play_that_turn() -> None:
    state = table(seats=3, top=[3, 4], turn_timer_seconds=30)
    state, events = act(state, 2, "timeout", now=NOW + 30, last=NOW)
    assert events[0].kind == "timeout_claimed" and events[0].data == {"by_seat": 2, "seat": 0}
    assert flipped(events)[0]["seat"] == 0 and flipped(events)[0]["by_cpu"]
    assert state["hands"][0] == [3]
    assert ENGINE.to_act(state) == [1]  # only that turn: seat 1 plays its own
    assert not view(state)["seats"][0]["cpu_controlled"]


def test_timeout_during_an_extra_flip_plays_the_rest_of_the_turn() -> None:
    state = table(seats=2, top=[13, 15, 3, 4], turn_timer_seconds=60)
    state, _ = flip(state, 0)
    state, events = act(state, 1, "timeout", now=NOW + 61, last=NOW)
    assert [d["card"]["number"] for d in flipped(events)] == [15, 3]
    assert ENGINE.to_act(state) == [1]


def test_the_player_to_act_and_a_knocked_out_player_may_claim_the_timeout() -> None:
    state = table(seats=3, top=[10, 3, 4, 5], turn_timer_seconds=30)
    state, _ = flip(state, 0)  # seat 0 is out
    state, events = act(state, 0, "timeout", now=NOW + 30, last=NOW)
    assert events[0].data == {"by_seat": 0, "seat": 1}
    state, events = act(state, 2, "timeout", now=NOW + 30, last=NOW)
    assert events[0].data == {"by_seat": 2, "seat": 2}


# ---------------------------------------------------------------- validation


def test_not_your_turn() -> None:
    refused(table(), 1, {"flip": {}}, "not_your_turn")


@pytest.mark.parametrize(("action", "code"), [
    ({}, "unknown_action"),
    ({"flip": {}, "stop": {}}, "unknown_action"),
    ({"pass": {}}, "unknown_action"),
    ("flip", "unknown_action"),
    (None, "unknown_action"),
    ({"flip": {"card": 3}}, "malformed_action"),
    ({"flip": []}, "malformed_action"),
    ({"take_over": {"seat": 0}}, "malformed_action"),
])
def test_malformed_actions(action: Any, code: str) -> None:
    state = table()
    before = copy.deepcopy(state)
    with pytest.raises(InvalidAction) as info:
        ENGINE.apply(state, 0, action, ctx())
    assert info.value.code == code
    assert state == before


@pytest.mark.parametrize("seat", [-1, 3, True, "0", None])
def test_unknown_seats(seat: Any) -> None:
    state = table()
    with pytest.raises(InvalidAction) as info:
        ENGINE.apply(state, seat, {"flip": {}}, ctx())
    assert info.value.code == "invalid_seat"
    with pytest.raises(InvalidAction) as info:
        ENGINE.leave(state, seat, ctx())
    assert info.value.code == "invalid_seat"


def test_an_action_with_a_null_body_is_accepted() -> None:
    # json_format may render an empty message as {}; a missing body (None) is the same action.
    state, _ = ENGINE.apply(table(top=[3]), 0, {"flip": None}, ctx())
    assert state["hands"][0] == [3]


def test_error_messages_reveal_nothing() -> None:
    state = table(top=[10, 3])
    for seat, action in ((1, {"flip": {}}), (0, {"stop": {}}), (0, {"timeout": {}})):
        with pytest.raises(RulesError) as info:
            ENGINE.apply(state, seat, action, ctx())
        assert "Semimaru" not in info.value.message and "10" not in info.value.message
