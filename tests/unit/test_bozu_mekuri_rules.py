"""Bozu Mekuri rules, one by one (RULES.md "Bozu Mekuri", seed 002), played
through the kit: the cards, extra flips, Semimaru, the end and the placings, CPU
seats, leaving and taking over, the turn timer, refusals and the view.

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
from services.bozu_mekuri.engine import placings
from services.bozu_mekuri.game import GAME
from services.kit import play
from services.kit.engine import EndReason, Event, InvalidAction, Outcome, RulesError
from services.kit.game import CPU_PLAYS, CPU_TURN, NOBODY
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng
from tests import playing
from tests.playing import kinds, notices
from tests.rigged import RiggedRng, ctx

JSON = dict[str, Any]
NOW = playing.NOW


def table(
    seats: int = 3,
    top: Sequence[int] = (),
    hands: dict[int, list[int]] | None = None,
    pile: Sequence[int] = (),
    opener: int = 0,
    cpu_seats: Sequence[int] = (),
    **options: Any,
) -> Table:
    """A match whose deck starts with ``top`` (the other cards follow in number
    order), with the given hands and pile; every card is somewhere exactly once."""
    new, _ = playing.start(GAME, seats, options, cpu_seats=tuple(cpu_seats), rng=RiggedRng([opener]))
    hands = hands or {}
    used = [*top, *pile, *(n for hand in hands.values() for n in hand)]
    assert len(set(used)) == len(used)
    new.state["deck"] = [*top, *(n for n in NUMBERS if n not in used)]
    new.state["pile"] = list(pile)
    new.state["hands"] = [list(hands.get(seat, [])) for seat in range(seats)]
    return new


def act(t: Table, seat: int, kind: str, now: float = NOW) -> tuple[Table, list[Happening]]:
    return playing.act(GAME, t, seat, {kind: {}}, now=now)


def flip(t: Table, seat: int, now: float = NOW) -> tuple[Table, list[Happening]]:
    return act(t, seat, "flip", now)


def leave(t: Table, seat: int) -> tuple[Table, list[Happening]]:
    return playing.leave(GAME, t, seat)


def deadline(t: Table, now: float) -> tuple[str, Table, list[Happening]]:
    """The kit fires the table's deadline at ``now`` (on a copy)."""
    new = copy.deepcopy(t)
    outcome, happened = play.fire_deadline(GAME, new, ctx(RiggedRng(), now=now))
    return outcome, new, happened


def flipped(happened: Iterable[Happening]) -> list[JSON]:
    return [e.data for e in playing.events(list(happened)) if e.kind == "card_flipped"]


def refused(t: Table, seat: int, action: Any, code: str, *, invalid: bool = False) -> None:
    """The action is refused with ``code`` and the table is untouched."""
    playing.refused(GAME, t, seat, action, code, invalid=invalid)


def refused_leave(t: Table, seat: int, code: str) -> None:
    with pytest.raises(RulesError) as info:
        leave(t, seat)
    assert info.value.code == code


def view(t: Table, seat: int | None = 0) -> JSON:
    return GAME.view(t.state, seat)


def to_act(t: Table) -> list[int]:
    return GAME.to_act(t.state)


def result(t: Table) -> Outcome:
    outcome = play.outcome(GAME, t)
    assert outcome is not None
    return outcome


# ---------------------------------------------------------------- the declaration


def test_the_declaration() -> None:
    # RULES.md: 2–6 players; leaving: a CPU plays the seat and the player can
    # come back; the turn timer has the CPU play the turn; no inactivity claims.
    (mode,) = GAME.modes
    assert (mode.name, mode.seats, mode.deadline) == ("standard", (2, 3, 4, 5, 6), CPU_TURN)
    assert (GAME.leaving, GAME.claims, GAME.cpu_seats) == (CPU_PLAYS, NOBODY, True)
    assert GAME.ports == (50053, 9103)
    assert set(GAME.moves) == {"flip", "stop"}


# ---------------------------------------------------------------- setting up


def test_new_match_defaults() -> None:
    t, events = playing.start(GAME, 4, rng=RiggedRng([2]))
    assert t.mode == "standard"
    assert [(e.kind, e.data) for e in playing.events(events)] == [
        ("match_started", {
            "seat_count": 4,
            "options": {
                "semimaru": "OUT_AT_ONCE",
                "emperor": "KEEP_AND_FLIP_AGAIN",
                "lady": "TAKE_PILE",
                "allow_stopping": True,
                "turn_timer_seconds": 0,
            },
            "deck_count": 100,
        }),
        ("turn_started", {"seat": 2}),  # the opener is drawn
    ]  # fmt: skip
    v = view(t)
    assert v["deck_count"] == 100 and v["pile_count"] == 0 and to_act(t) == [2]
    assert [s["card_count"] for s in v["seats"]] == [0, 0, 0, 0]
    assert not v["extra_flip_offered"] and not v["can_stop"] and "last_flipped" not in v
    assert GAME.outcome(t.state) is None
    assert GAME.scores is not None and GAME.scores(t.state) == [0, 0, 0, 0]


def test_the_shuffle_and_the_opener_replay_from_the_seed() -> None:
    """A seed replays the same deck: the first flips of one fixed seed, computed
    with the engine before it moved to the kit (shuffle, then the opener)."""
    rng = MatchRng(bytes(range(32)))
    t, _ = playing.start(GAME, 3, rng=rng)
    assert to_act(t) == [0]
    assert t.state["deck"][:12] == [19, 34, 23, 100, 55, 35, 93, 81, 24, 7, 37, 52]
    assert rng.counter == 100  # 99 draws for the shuffle, one for the opener
    flips: list[tuple[int, int, str, bool]] = []
    for _ in range(10):
        t, happened = playing.act(GAME, t, to_act(t)[0], {"flip": {}}, rng=rng)
        flips += [
            (d["seat"], d["card"]["number"], d["effect"], d["extra_flip_offered"]) for d in flipped(happened)
        ]
    assert flips == [
        (0, 19, "TOOK_PILE", False), (1, 34, "KEPT", False), (2, 23, "KEPT", False),
        (0, 100, "KEPT", True), (0, 55, "KEPT", False), (1, 35, "KEPT", False), (2, 93, "KEPT", False),
        (0, 81, "KEPT", False), (1, 24, "KEPT", False), (2, 7, "KEPT", False),
    ]  # fmt: skip
    assert rng.counter == 100  # flips draw nothing


def test_unspecified_enum_names_and_unset_fields_mean_the_defaults() -> None:
    t, _ = playing.start(GAME, 2, {
        "semimaru": "SEMIMARU_RULE_UNSPECIFIED", "emperor": "EMPEROR_RULE_UNSPECIFIED",
        "lady": "LADY_RULE_UNSPECIFIED", "turn_timer_seconds": 0,
    }, rng=RiggedRng([0]))  # fmt: skip
    assert view(t)["options"] == {
        "semimaru": "OUT_AT_ONCE", "emperor": "KEEP_AND_FLIP_AGAIN", "lady": "TAKE_PILE",
        "allow_stopping": True, "turn_timer_seconds": 0,
    }  # fmt: skip


def test_options_are_proto3_json() -> None:
    # Enum numbers and quoted integers are proto3 JSON spellings of the same options.
    t, _ = playing.start(GAME, 2, {"lady": 2, "turn_timer_seconds": "30", "allow_stopping": False},
                         rng=RiggedRng([0]))  # fmt: skip
    assert view(t)["options"] == {
        "semimaru": "OUT_AT_ONCE", "emperor": "KEEP_AND_FLIP_AGAIN", "lady": "TAKE_PILE_AND_FLIP_AGAIN",
        "allow_stopping": False, "turn_timer_seconds": 30,
    }  # fmt: skip


@pytest.mark.parametrize("seats", [0, 1, 7, -1])
def test_seat_count_is_2_to_6(seats: int) -> None:
    with pytest.raises(InvalidAction) as info:
        playing.start(GAME, seats, rng=RiggedRng([0]))
    assert info.value.code == "invalid_seats"


@pytest.mark.parametrize("options", [
    {"semimaru": "AS_LADY"},
    {"emperor": "KEEP_AND_FLIP"},
    {"lady": 9},
    {"allow_stopping": "no"},
    {"turn_timer_seconds": 45},
    {"turn_timer_seconds": -30},
    {"turn_timer_seconds": True},
    {"turn_timer_seconds": 30.5},
    {"timer": 30},
    [],
])  # fmt: skip
def test_bad_options_are_refused(options: Any) -> None:
    with pytest.raises(InvalidAction) as info:
        play.start(GAME, 3, options, ctx(RiggedRng([0])))
    assert info.value.code == "invalid_options"


@pytest.mark.parametrize("cpu_seats", [[3], [-1], [1, 1]])
def test_bad_cpu_seats_are_refused(cpu_seats: list[int]) -> None:
    with pytest.raises(InvalidAction) as info:
        playing.start(GAME, 3, cpu_seats=tuple(cpu_seats), rng=RiggedRng([0]))
    assert info.value.code == "invalid_cpu_seats"


@pytest.mark.parametrize("timer", [0, 30, 60])
def test_turn_timer_choices(timer: int) -> None:
    t = table(turn_timer_seconds=timer)
    assert view(t)["turn_timer_seconds"] == timer
    assert GAME.deadline(t.state) == (timer or None)


# ---------------------------------------------------------------- the ordinary cards


def test_noble_is_kept_and_the_turn_passes() -> None:
    t, events = flip(table(top=[3]), 0)
    assert t.state["hands"][0] == [3]
    assert kinds(events) == ["card_flipped", "turn_started"]
    data = flipped(events)[0]
    assert data["card"]["number"] == 3 and data["card"]["name_romaji"] == "Kakinomoto no Hitomaro"
    assert data["effect"] == "KEPT" and not data["extra_flip_offered"] and not data["extra"]
    assert data["card_counts"] == [1, 0, 0] and data["deck_count"] == 99
    assert to_act(t) == [1]
    assert view(t)["last_flipped"]["name_ja"] == "柿本人麻呂"
    assert GAME.scores is not None and GAME.scores(t.state) == [1, 0, 0]


def test_monk_sends_your_cards_and_himself_to_the_pile() -> None:
    t, events = flip(table(top=[8], hands={0: [3, 4], 1: [5]}, pile=[6]), 0)
    assert t.state["hands"] == [[], [5], []]
    assert t.state["pile"] == [6, 3, 4, 8]
    assert flipped(events)[0]["effect"] == "LOST_TO_PILE"
    assert flipped(events)[0]["cards_to_pile"] == 3
    assert to_act(t) == [1]


def test_monk_on_an_empty_hand_sends_only_himself() -> None:
    t, events = flip(table(top=[8]), 0)
    assert t.state["pile"] == [8] and flipped(events)[0]["cards_to_pile"] == 1


@pytest.mark.parametrize("lady", ["TAKE_PILE", "TAKE_PILE_AND_FLIP_AGAIN", "FLIP_AGAIN_IF_PILE_EMPTY"])
def test_lady_takes_the_whole_pile(lady: str) -> None:
    t, events = flip(table(top=[9, 5], hands={0: [3]}, pile=[8, 4], lady=lady), 0)
    assert t.state["hands"][0] == [3, 9, 8, 4] and t.state["pile"] == []
    data = flipped(events)[0]
    assert data["effect"] == "TOOK_PILE" and data["cards_taken"] == 2
    # Only "take the pile and flip again" offers a flip after a non-empty pile.
    assert data["extra_flip_offered"] == (lady == "TAKE_PILE_AND_FLIP_AGAIN")
    assert (to_act(t) == [0]) == (lady == "TAKE_PILE_AND_FLIP_AGAIN")


@pytest.mark.parametrize(("lady", "again"), [
    ("TAKE_PILE", False), ("TAKE_PILE_AND_FLIP_AGAIN", True), ("FLIP_AGAIN_IF_PILE_EMPTY", True),
])  # fmt: skip
def test_lady_on_an_empty_pile(lady: str, again: bool) -> None:
    t, events = flip(table(top=[9, 5], lady=lady), 0)
    assert t.state["hands"][0] == [9]
    assert flipped(events)[0]["cards_taken"] == 0
    assert t.state["extra_flip"] is again
    assert to_act(t) == ([0] if again else [1])


# ---------------------------------------------------------------- emperors


def test_emperor_default_keeps_and_offers_one_more() -> None:
    t, events = flip(table(top=[13, 3], hands={0: [4]}, pile=[5]), 0)
    assert t.state["hands"][0] == [4, 13] and t.state["pile"] == [5]
    assert flipped(events)[0]["effect"] == "KEPT" and flipped(events)[0]["extra_flip_offered"]
    assert kinds(events) == ["card_flipped"]  # the turn goes on
    v = view(t, None)
    assert v["extra_flip_offered"] and v["can_stop"] and to_act(t) == [0]
    assert GAME.legal is not None and GAME.legal(t.state, 0) == [{"flip": {}}, {"stop": {}}]
    # Flip again ...
    after_flip, events = flip(t, 0)
    assert after_flip.state["hands"][0] == [4, 13, 3]
    assert flipped(events)[0]["extra"] and to_act(after_flip) == [1]
    # ... or stop.
    after_stop, events = act(t, 0, "stop")
    assert after_stop.state["hands"][0] == [4, 13] and after_stop.state["deck"][0] == 3
    assert [(e.kind, e.data) for e in playing.events(events)] == [
        ("stopped", {"seat": 0}),
        ("turn_started", {"seat": 1}),
    ]
    assert to_act(after_stop) == [1]


def test_emperor_then_monk_loses_everything() -> None:
    # Seed: "Se a próxima for um monge, todas as suas cartas vão ao monte."
    t, _ = flip(table(top=[15, 8], hands={0: [3, 4]}), 0)
    t, events = flip(t, 0)
    assert t.state["hands"][0] == [] and t.state["pile"] == [3, 4, 15, 8]
    assert flipped(events)[0]["extra"] and to_act(t) == [1]


def test_emperor_take_everyones_cards() -> None:
    t, events = flip(
        table(top=[68], hands={0: [3], 1: [4, 5], 2: [6]}, pile=[7], emperor="TAKE_EVERYONES_CARDS"), 0
    )
    assert t.state["hands"] == [[3, 68, 4, 5, 6], [], []]
    assert t.state["pile"] == [7]  # the pile is not "everyone's cards"
    data = flipped(events)[0]
    assert data["effect"] == "TOOK_EVERYONES_CARDS" and data["cards_taken"] == 3
    assert not data["extra_flip_offered"] and to_act(t) == [1]


def test_emperor_ordinary_is_a_noble() -> None:
    t, events = flip(table(top=[1], pile=[3], emperor="ORDINARY"), 0)
    assert t.state["hands"][0] == [1] and t.state["pile"] == [3]
    assert flipped(events)[0]["effect"] == "KEPT" and to_act(t) == [1]


def test_jito_keep_and_flip_again_replaces_the_lady() -> None:
    t, events = flip(table(top=[2], pile=[3, 4]), 0)
    assert t.state["hands"][0] == [2] and t.state["pile"] == [3, 4]  # she does not take the pile
    assert flipped(events)[0]["effect"] == "KEPT" and t.state["extra_flip"]


def test_jito_take_everyones_cards_replaces_the_lady() -> None:
    t, events = flip(table(top=[2], hands={1: [5]}, pile=[3, 4], emperor="TAKE_EVERYONES_CARDS"), 0)
    assert t.state["hands"][0] == [2, 5] and t.state["pile"] == [3, 4]
    assert flipped(events)[0]["effect"] == "TOOK_EVERYONES_CARDS" and not t.state["extra_flip"]


@pytest.mark.parametrize(("lady", "again"), [
    ("TAKE_PILE", False), ("TAKE_PILE_AND_FLIP_AGAIN", True), ("FLIP_AGAIN_IF_PILE_EMPTY", False),
])  # fmt: skip
def test_jito_ordinary_is_a_lady(lady: str, again: bool) -> None:
    t, events = flip(table(top=[2], hands={1: [5]}, pile=[3, 4], emperor="ORDINARY", lady=lady), 0)
    assert t.state["hands"][0] == [2, 3, 4] and t.state["hands"][1] == [5] and t.state["pile"] == []
    assert flipped(events)[0]["effect"] == "TOOK_PILE"
    assert t.state["extra_flip"] is again


def test_emperor_other_options_do_not_flip_again() -> None:
    for emperor in ("TAKE_EVERYONES_CARDS", "ORDINARY"):
        t, _ = flip(table(top=[99], emperor=emperor), 0)
        assert not t.state["extra_flip"] and to_act(t) == [1]


# ---------------------------------------------------------------- extra flips


def test_extra_flips_chain() -> None:
    t = table(top=[13, 15, 9, 3, 4], hands={0: [5]}, pile=[6, 7], lady="TAKE_PILE_AND_FLIP_AGAIN")
    t, e1 = flip(t, 0)  # emperor: one more
    t, e2 = flip(t, 0)  # emperor again: one more
    t, e3 = flip(t, 0)  # lady takes the pile and flips again
    assert to_act(t) == [0] and t.state["extra_flip"]
    t, e4 = flip(t, 0)  # a noble ends the chain
    assert [d["extra"] for d in flipped(e1 + e2 + e3 + e4)] == [False, True, True, True]
    assert [d["extra_flip_offered"] for d in flipped(e1 + e2 + e3 + e4)] == [True, True, True, False]
    assert t.state["hands"][0] == [5, 13, 15, 9, 6, 7, 3]
    assert to_act(t) == [1] and t.state["deck"][0] == 4


def test_mandatory_extra_flip_when_stopping_is_not_allowed() -> None:
    t, _ = flip(table(top=[13, 8], hands={0: [3]}, allow_stopping=False), 0)
    v = view(t)
    assert v["extra_flip_offered"] and not v["can_stop"] and to_act(t) == [0]
    assert GAME.legal is not None and GAME.legal(t.state, 0) == [{"flip": {}}]
    refused(t, 0, {"stop": {}}, "stopping_not_allowed")
    t, events = flip(t, 0)
    assert t.state["hands"][0] == [] and flipped(events)[0]["extra"]


def test_stop_needs_an_extra_flip_on_offer() -> None:
    refused(table(top=[3]), 0, {"stop": {}}, "no_extra_flip")


def test_last_card_offering_one_more_ends_the_game() -> None:
    t = table(top=[13])
    t.state["deck"] = [13]
    t.state["pile"] = [n for n in NUMBERS if n != 13]
    t, events = flip(t, 0)
    assert GAME.outcome(t.state) is not None and not view(t)["extra_flip_offered"]
    assert not flipped(events)[0]["extra_flip_offered"]
    assert kinds(events) == ["card_flipped"]  # the end is the kit's final event, with the result


# ---------------------------------------------------------------- Semimaru


def test_semimaru_out_at_once() -> None:
    t, events = flip(table(seats=3, top=[10, 3, 4], hands={0: [5], 1: [6]}), 0)
    assert t.state["hands"] == [[], [6], []] and t.state["pile"] == [5, 10]
    data = flipped(events)[0]
    assert data["effect"] == "KNOCKED_OUT" and data["cards_to_pile"] == 2
    assert view(t)["seats"][0]["eliminated"] and not GAME.in_play(t.state, 0)
    # Play goes on without seat 0.
    t, _ = flip(t, 1)
    t, events = flip(t, 2)
    assert to_act(t) == [1]
    # Changed with the kit: a knocked-out seat is refused with the kit's
    # not_in_game (was the game's own "eliminated").
    refused(t, 0, {"flip": {}}, "not_in_game")
    refused(t, 0, {"stop": {}}, "not_in_game")
    refused_leave(t, 0, "not_in_game")


def test_semimaru_out_at_once_leaves_one_player_who_wins_at_once() -> None:
    t, events = flip(table(seats=2, top=[10], hands={0: [3, 4, 5], 1: [6]}), 0)
    assert len(t.state["deck"]) == 95 and view(t)["deck_count"] == 95  # the deck was not exhausted
    assert kinds(events) == ["card_flipped"]
    assert result(t) == Outcome(ranks=[2, 1], scores=[0, 1], reason=EndReason.COMPLETED, forfeited=[])
    assert to_act(t) == []
    refused(t, 1, {"flip": {}}, "game_over")


def test_semimaru_skip_once() -> None:
    t, events = flip(table(seats=3, top=[10, 3, 4, 5, 6], hands={0: [7]}, semimaru="SKIP_ONCE"), 0)
    assert t.state["hands"][0] == [7, 10] and flipped(events)[0]["effect"] == "SKIPS_NEXT_TURN"
    assert view(t)["seats"][0]["skips_next_turn"]
    t, _ = flip(t, 1)
    t, events = flip(t, 2)
    assert kinds(events) == ["card_flipped", "turn_skipped", "turn_started"]
    assert playing.events(events)[1].data == {"seat": 0}
    assert to_act(t) == [1]
    assert not view(t)["seats"][0]["skips_next_turn"]
    t, _ = flip(t, 1)
    t, _ = flip(t, 2)
    assert to_act(t) == [0]  # skipped once only


def test_semimaru_skip_once_two_players() -> None:
    t, _ = flip(table(seats=2, top=[10, 3, 4, 5], semimaru="SKIP_ONCE"), 0)
    t, events = flip(t, 1)
    assert to_act(t) == [1]  # seat 0 skipped, so seat 1 again
    assert "turn_skipped" in kinds(events)
    t, _ = flip(t, 1)
    assert to_act(t) == [0]


def test_semimaru_as_monk() -> None:
    t, events = flip(table(top=[10], hands={0: [3], 1: [4]}, semimaru="AS_MONK"), 0)
    assert t.state["hands"] == [[], [4], []] and t.state["pile"] == [3, 10]
    assert flipped(events)[0]["effect"] == "LOST_TO_PILE" and not t.state["eliminated"]


def test_semimaru_as_noble() -> None:
    t, events = flip(table(top=[10], hands={0: [3]}, pile=[4], semimaru="AS_NOBLE"), 0)
    assert t.state["hands"][0] == [3, 10] and t.state["pile"] == [4]
    assert flipped(events)[0]["effect"] == "KEPT"


def test_semimaru_everyone_to_pile() -> None:
    t, events = flip(
        table(top=[10], hands={0: [3], 1: [4, 5], 2: [6]}, pile=[7], semimaru="EVERYONE_TO_PILE", opener=1), 1
    )
    assert t.state["hands"] == [[], [], []]
    assert sorted(t.state["pile"]) == [3, 4, 5, 6, 7, 10]
    data = flipped(events)[0]
    assert data["effect"] == "ALL_TO_PILE" and data["cards_to_pile"] == 5


def test_semimaru_on_an_extra_flip() -> None:
    t, _ = flip(table(seats=3, top=[13, 10, 3], hands={0: [4]}), 0)
    t, _ = flip(t, 0)
    assert t.state["eliminated"] == [0] and t.state["pile"] == [4, 13, 10]
    assert to_act(t) == [1] and not t.state["extra_flip"]


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
    t = table(seats=3, top=[3], hands={1: [4, 5]}, opener=2)
    rest = t.state["deck"][1:]
    t.state["deck"] = [3]
    t.state["hands"][0] = rest[:40]
    t.state["hands"][2] = rest[40:41]
    t.state["pile"] = rest[41:]
    t, events = flip(t, 2)
    assert kinds(events) == ["card_flipped"]
    assert result(t) == Outcome(ranks=[1, 2, 2], scores=[40, 2, 2], reason=EndReason.COMPLETED, forfeited=[])
    assert GAME.scores is not None and GAME.scores(t.state) == [40, 2, 2]
    v = view(t)
    assert to_act(t) == [] and v["deck_count"] == 0 and v["pile_count"] == len(rest) - 41
    assert "to_act" not in v and "game_over" not in v  # in the common Snapshot now
    assert GAME.legal is not None and GAME.legal(t.state, 2) == []


def test_a_shared_first_place_is_a_draw() -> None:
    t = table(seats=3, top=[3])
    deck = t.state["deck"]
    t.state["deck"] = [3]
    t.state["hands"] = [deck[1:11], deck[11:20], deck[20:30]]
    t.state["pile"] = deck[30:]
    t, _ = flip(t, 0)
    assert (result(t).scores, result(t).ranks) == ([11, 9, 10], [1, 3, 2])
    t2 = table(seats=3, top=[3])
    t2.state["deck"] = [3]
    t2.state["hands"] = [deck[1:10], deck[10:20], deck[20:30]]
    t2.state["pile"] = deck[30:]
    t2, _ = flip(t2, 0)
    assert (result(t2).scores, result(t2).ranks) == ([10, 10, 10], [1, 1, 1])


def test_knocked_out_seat_is_last_even_against_empty_hands() -> None:
    t, _ = flip(table(seats=3, top=[10], hands={0: [3, 4, 5]}), 0)
    rest = t.state["deck"]
    t.state["deck"] = rest[:1]
    t.state["pile"] += rest[1:]
    t, _ = flip(t, 1)
    assert (result(t).ranks, result(t).scores) == ([3, 1, 2], [0, 1, 0])


# ---------------------------------------------------------------- the warning


def test_semimaru_warning_at_15_cards() -> None:
    t = table(top=[3])
    others = [n for n in NUMBERS if n not in (3, 10)]
    t.state["deck"] = [3, *others[:14], 10]  # 16 cards, Semimaru last
    t.state["pile"] = others[14:]
    assert not view(t)["semimaru_warning"]
    t, events = flip(t, 0)
    assert view(t, None)["semimaru_warning"] and view(t, 1)["semimaru_warning"]
    assert [e.data for e in playing.events(events) if e.kind == "semimaru_warning"] == [{"deck_count": 15}]
    t, events = flip(t, 1)  # still shown, announced only once
    assert view(t)["semimaru_warning"] and "semimaru_warning" not in kinds(events)


def test_no_warning_once_semimaru_is_out() -> None:
    t = table(top=[3], semimaru="AS_NOBLE")
    others = [n for n in NUMBERS if n not in (3, 10)]
    t.state["deck"] = [10, *others[:15]]  # 16 cards, Semimaru on top
    t.state["pile"] = [3, *others[15:]]
    t, events = flip(t, 0)
    assert len(t.state["deck"]) == 15
    assert not view(t)["semimaru_warning"] and "semimaru_warning" not in kinds(events)


# ---------------------------------------------------------------- CPU seats, leaving, taking over


def test_cpu_seats_play_their_turns_at_once() -> None:
    t = table(seats=3, top=[3, 4, 5, 6], cpu_seats=[1, 2])
    assert to_act(t) == [0]
    t, events = flip(t, 0)
    assert [d["seat"] for d in flipped(events)] == [0, 1, 2]
    assert notices(events) == []  # a CPU seat's turn is no news
    assert t.state["hands"] == [[3], [4], [5]] and to_act(t) == [0]
    assert (t.cpu_seats, t.cpu) == ([1, 2], [1, 2])


def test_cpu_opener_plays_before_the_match_is_returned() -> None:
    t, events = playing.start(GAME, 2, cpu_seats=(1,), rng=RiggedRng([1]))
    assert flipped(events)[0]["seat"] == 1
    assert to_act(t) == [0]


def test_all_cpu_match_plays_to_the_end() -> None:
    t, events = playing.start(GAME, 4, cpu_seats=(0, 1, 2, 3), rng=RiggedRng([0]))
    assert GAME.outcome(t.state) is not None
    assert len(flipped(events)) == 100 - len(t.state["deck"])
    assert result(t).forfeited == []


def test_cpu_seat_cannot_be_acted_for() -> None:
    t = table(seats=2, cpu_seats=[1], opener=0)
    for kind in ("flip", "stop"):
        refused(t, 1, {kind: {}}, "cpu_seat")
    # Changed with the kit: take_over answers not_left for a seat nobody left
    # (was cpu_seat).
    refused(t, 1, {"take_over": {}}, "not_left")
    refused_leave(t, 1, "cpu_seat")


def test_cpu_takes_or_declines_the_extra_flip() -> None:
    # Seat 1 (CPU) flips an emperor holding nothing: flipping on is worth it.
    t = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1])
    t, events = flip(t, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13, 4]
    # Seat 1 holding 80 cards with monks still face down: it stops.
    t = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1])
    t.state["hands"][1] = [n for n in t.state["deck"] if n not in (3, 13, 4, 5, 8, 12, 21)][:80]
    t.state["deck"] = [n for n in t.state["deck"] if n not in t.state["hands"][1]]
    t, events = flip(t, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13]
    assert ("stopped", {"seat": 1}) in [(e.kind, e.data) for e in playing.events(events)]


def test_cpu_flips_when_the_extra_flip_is_mandatory() -> None:
    t = table(seats=2, top=[3, 13, 4, 5], cpu_seats=[1], allow_stopping=False)
    t.state["hands"][1] = [n for n in t.state["deck"] if n not in (3, 13, 4, 5)][:80]
    t.state["deck"] = [n for n in t.state["deck"] if n not in t.state["hands"][1]]
    t, events = flip(t, 0)
    assert [d["card"]["number"] for d in flipped(events)] == [3, 13, 4]
    assert "stopped" not in kinds(events)


def test_leaving_hands_the_seat_to_the_cpu_and_taking_it_back() -> None:
    t = table(seats=3, top=[3, 4, 5, 6, 7, 11, 14, 16])
    t, _ = flip(t, 0)
    t, events = leave(t, 1)  # seat 1 is to act: the CPU plays at once
    assert kinds(events)[:3] == ["notice:LEFT", "notice:CPU_TOOK_OVER", "card_flipped"]
    assert flipped(events)[0]["seat"] == 1
    assert to_act(t) == [2]
    assert t.left == [1] and 1 in t.cpu and t.cpu_seats == []
    # Changed with the kit: the codes are the kit's cpu_seat (were seat_left
    # for an action and already_left for a second leave).
    refused(t, 1, {"flip": {}}, "cpu_seat")
    refused_leave(t, 1, "cpu_seat")
    t, _ = flip(t, 2)
    t, events = flip(t, 0)  # seat 1's next turn is the CPU's again
    assert [d["seat"] for d in flipped(events)] == [0, 1]
    assert to_act(t) == [2]
    t, events = act(t, 1, "take_over")
    assert events == [Notice("SEAT_TAKEN_BACK", 1)]
    assert t.left == [] and 1 not in t.cpu
    t, _ = flip(t, 2)
    t, events = flip(t, 0)
    assert [d["seat"] for d in flipped(events)] == [0]
    assert to_act(t) == [1]  # seat 1 plays its own turn again
    refused(t, 1, {"take_over": {}}, "not_left")


def test_everyone_leaving_lets_the_cpus_finish() -> None:
    t = table(seats=2, top=[3])
    t, _ = leave(t, 1)
    assert GAME.outcome(t.state) is None
    t, _ = leave(t, 0)
    assert result(t).forfeited == [1, 0] and result(t).reason == EndReason.COMPLETED
    refused_leave(t, 0, "game_over")


def test_a_player_who_came_back_is_not_listed_as_forfeited() -> None:
    t = table(seats=2, top=[3], opener=0)
    t, _ = leave(t, 1)
    t, _ = act(t, 1, "take_over")
    t.state["deck"] = t.state["deck"][:1]
    t.state["pile"] = [
        n for n in NUMBERS
        if n not in t.state["deck"] and n not in t.state["hands"][0] and n not in t.state["hands"][1]
    ]  # fmt: skip
    t, _ = flip(t, 0)
    assert result(t).forfeited == []


# ---------------------------------------------------------------- the turn timer
# Changed with the kit: the `timeout` action is gone; the turn timer is the
# mode's deadline (CPU_TURN), counted from when the seat to act got the turn or
# last acted, and fired by the platform rather than claimed by a player.


def test_no_deadline_without_a_timer() -> None:
    t = table()
    assert play.deadline_at(GAME, t) is None
    fired, after, happened = deadline(t, NOW + 999)
    assert (fired, happened) == ("DEADLINE_OUTCOME_MOVED", [])
    assert after == t


def test_nothing_happens_before_the_timer_runs_out() -> None:
    t = table(turn_timer_seconds=30)
    assert play.deadline_at(GAME, t) == NOW + 30
    fired, after, happened = deadline(t, NOW + 29.9)
    assert (fired, happened) == ("DEADLINE_OUTCOME_MOVED", [])
    assert after == t


def test_the_timer_lets_the_cpu_play_that_turn() -> None:
    t = table(seats=3, top=[3, 4], turn_timer_seconds=30)
    fired, t, happened = deadline(t, NOW + 30)
    assert fired == "DEADLINE_OUTCOME_CPU_TURN"
    assert happened[0] == Notice("CPU_TOOK_OVER", 0)
    assert [d["seat"] for d in flipped(happened)] == [0]
    assert t.state["hands"][0] == [3]
    assert to_act(t) == [1]  # only that turn: seat 1 plays its own
    assert t.cpu == []  # the seat stays its player's
    assert play.deadline_at(GAME, t) == NOW + 60  # seat 1's clock starts now


def test_the_timer_during_an_extra_flip_plays_the_rest_of_the_turn() -> None:
    t = table(seats=2, top=[13, 15, 3, 4], turn_timer_seconds=60)
    t, _ = flip(t, 0, now=NOW + 10)
    assert play.deadline_at(GAME, t) == NOW + 70  # the flip restarted the seat's clock
    fired, t, happened = deadline(t, NOW + 70)
    assert fired == "DEADLINE_OUTCOME_CPU_TURN"
    assert [d["card"]["number"] for d in flipped(happened)] == [15, 3]
    assert to_act(t) == [1]


def test_the_timer_runs_for_each_seat_to_act_and_passes_knocked_out_seats_by() -> None:
    t = table(seats=3, top=[10, 3, 4, 5], turn_timer_seconds=30)
    t, _ = flip(t, 0)  # seat 0 is out
    fired, t, happened = deadline(t, NOW + 30)
    assert fired == "DEADLINE_OUTCOME_CPU_TURN" and happened[0] == Notice("CPU_TOOK_OVER", 1)
    assert [d["seat"] for d in flipped(happened)] == [1] and to_act(t) == [2]
    assert deadline(t, NOW + 59)[0] == "DEADLINE_OUTCOME_MOVED"
    fired, t, happened = deadline(t, NOW + 60)
    assert happened[0] == Notice("CPU_TOOK_OVER", 2) and to_act(t) == [1]


def test_the_timer_plays_one_turn_even_when_the_same_seat_plays_next() -> None:
    # Two seats, seat 1 owes a skipped turn (Semimaru SKIP_ONCE): after seat 0's
    # timed-out turn, seat 0 plays again, and that turn is the player's.
    t = table(seats=2, top=[3, 10, 4, 5, 6, 7], semimaru="SKIP_ONCE", turn_timer_seconds=30)
    t, _ = flip(t, 0)
    t, _ = flip(t, 1)
    assert to_act(t) == [0] and t.state["skip_next"] == [False, True]
    _, t, happened = deadline(t, NOW + 30)
    assert [d["card"]["number"] for d in flipped(happened)] == [4]
    assert to_act(t) == [0]


# ---------------------------------------------------------------- validation


def test_not_your_turn() -> None:
    refused(table(), 1, {"flip": {}}, "not_your_turn")
    refused(table(top=[13]), 1, {"stop": {}}, "not_your_turn")
    assert GAME.legal is not None and GAME.legal(table().state, 1) == []


@pytest.mark.parametrize("action", [
    {},
    {"flip": {}, "stop": {}},
    {"pass": {}},
    "flip",
    None,
    {"flip": {"card": 3}},
    {"flip": []},
    {"take_over": {"seat": 0}},
    {"timeout": {}},  # the action is gone: the timer is the kit's deadline
    {"flip": None},  # proto3 JSON null is "not set": no action at all
])  # fmt: skip
def test_malformed_actions(action: Any) -> None:
    # Changed with the kit: every malformed action is the kit's malformed_action
    # (no action kind was unknown_action, and {"flip": null} was a flip).
    refused(table(), 0, action, "malformed_action", invalid=True)


def test_error_messages_reveal_nothing() -> None:
    t = table(top=[10, 3])
    tries: list[tuple[int, JSON]] = [(1, {"flip": {}}), (0, {"stop": {}}), (1, {"take_over": {}})]
    for seat, action in tries:
        with pytest.raises(RulesError) as info:
            play.act(GAME, copy.deepcopy(t), seat, action, ctx(RiggedRng()))
        assert "Semimaru" not in info.value.message and "10" not in info.value.message


def test_every_event_is_public() -> None:
    t = table(seats=3, top=[13, 10, 3], cpu_seats=[2], semimaru="SKIP_ONCE")
    t, happened = flip(t, 0)
    t, more = flip(t, 0)
    assert all(isinstance(e, Event) and e.audience is None for e in playing.events(happened + more))
