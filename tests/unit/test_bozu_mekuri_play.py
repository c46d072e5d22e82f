"""Random play over many seeded matches: invariants, proto shapes, the hidden deck."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2 as pb

from services.bozu_mekuri.cards import CARDS, NUMBERS
from services.bozu_mekuri.engine import ENGINE
from services.kit.engine import Event, RulesError
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

JSON = dict[str, Any]

OPTION_CHOICES: dict[str, list[Any]] = {
    "semimaru": ["OUT_AT_ONCE", "SKIP_ONCE", "AS_MONK", "AS_NOBLE", "EVERYONE_TO_PILE",
                 "SEMIMARU_RULE_UNSPECIFIED"],
    "emperor": ["KEEP_AND_FLIP_AGAIN", "TAKE_EVERYONES_CARDS", "ORDINARY"],
    "lady": ["TAKE_PILE", "TAKE_PILE_AND_FLIP_AGAIN", "FLIP_AGAIN_IF_PILE_EMPTY"],
    "allow_stopping": [True, False],
    "turn_timer_seconds": [0, 30, 60],
}
ACTIONS: list[JSON] = [{"flip": {}}, {"stop": {}}, {"timeout": {}}, {"take_over": {}}]


@dataclass
class Match:
    """One random match, recorded step by step."""

    states: list[JSON] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    steps: list[tuple[JSON, list[Event]]] = field(default_factory=list)  # (state before, events of the step)
    actions: list[JSON] = field(default_factory=list)


def random_match(seed: int) -> Match:
    """Seats, CPU seats and options drawn from ``seed``; then random actions (legal
    or not) from random seats, random leaves and take-overs, timeouts with the
    clock run forward or not, until the end."""
    pick = random.Random(seed)
    seats = pick.randint(2, 6)
    options = {key: pick.choice(values) for key, values in OPTION_CHOICES.items() if pick.random() < 0.7}
    cpu_seats = sorted(pick.sample(range(seats), pick.randint(0, seats - 1)))
    state, events = ENGINE.new_match(seats, options, ctx(MatchRng(seed.to_bytes(32, "big"))), cpu_seats)
    match = Match(states=[state], events=list(events), steps=[({}, list(events))])
    for _ in range(2_000):
        if state["over"]:
            break
        seat = pick.randrange(seats)
        roll = pick.random()
        before = copy.deepcopy(state)
        try:
            if roll < 0.03:
                new, events = ENGINE.leave(state, seat, ctx())
            else:
                action = pick.choice(ACTIONS) if roll < 0.3 else {"flip": {}} if roll < 0.85 else {"stop": {}}
                if roll >= 0.3:
                    seat = ENGINE.to_act(state)[0]
                match.actions.append(action)
                late = pick.random() < 0.5
                new, events = ENGINE.apply(state, seat, action, ctx(now=1_100.0 if late else 1_000.0,
                                                                     last_action_at=1_000.0))
        except RulesError:
            assert state == before, "a refused action changed the state"
            continue
        assert state == before, "an accepted action changed its input state"
        match.steps.append((state, list(events)))
        state = new
        match.states.append(state)
        match.events.extend(events)
    assert state["over"], "the match did not end"
    return match


def matches(count: int, base: int = 0) -> Iterator[Match]:
    for seed in range(base, base + count):
        yield random_match(seed)


def cards_in(value: Any) -> set[int]:
    """Numbers of every Card message anywhere inside a view or an event."""
    found: set[int] = set()
    if isinstance(value, dict):
        if "name_ja" in value:
            found.add(value["number"])
        for inner in value.values():
            found |= cards_in(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= cards_in(inner)
    return found


# ---------------------------------------------------------------- invariants


def check_invariants(state: JSON) -> None:
    everything = [*state["deck"], *state["pile"], *(n for hand in state["hands"] for n in hand)]
    assert sorted(everything) == list(NUMBERS), "every card is in exactly one place"
    for seat in state["eliminated"]:
        assert state["hands"][seat] == [], "a knocked-out seat holds nothing"
    if state["over"]:
        assert ENGINE.to_act(state) == []
        standing = [s for s in range(state["seat_count"]) if s not in state["eliminated"]]
        assert not state["deck"] or len(standing) == 1
    else:
        (seat,) = ENGINE.to_act(state)
        assert seat not in state["cpu_seats"] and seat not in state["left"], "a CPU turn was left waiting"
        assert seat not in state["eliminated"]
        assert state["deck"], "the game goes on only while cards are left"
    if state["extra_flip"]:
        assert not state["over"]
    view = ENGINE.view(state, None)
    assert sum(s["card_count"] for s in view["seats"]) + view["pile_count"] + view["deck_count"] == 100
    assert view["semimaru_warning"] == (view["deck_count"] <= 15 and 10 not in cards_in(view))


@pytest.mark.parametrize("base", [0, 1_000])
def test_invariants_over_random_matches(base: int) -> None:
    ended = {"DECK_EXHAUSTED": 0, "LAST_ONE_STANDING": 0}
    for match in matches(40, base):
        for state in match.states:
            check_invariants(state)
        final = match.states[-1]
        over = [e for e in match.events if e.kind == "game_over"]
        assert len(over) == 1 and match.events[-1] is over[0]
        ended[over[0].data["reason"]] += 1
        result = ENGINE.result(final)
        assert result is not None
        assert result.scores == [len(hand) for hand in final["hands"]] == over[0].data["scores"]
        assert result.ranks == over[0].data["ranks"]
        standing = [s for s in range(final["seat_count"]) if s not in final["eliminated"]]
        for a in standing:
            assert result.ranks[a] <= len(standing)
            for b in standing:
                assert (result.ranks[a] < result.ranks[b]) == (result.scores[a] > result.scores[b])
        for seat in final["eliminated"]:
            assert result.ranks[seat] > len(standing)
    assert all(ended.values()), ended  # both endings were exercised


def test_events_agree_with_the_state() -> None:
    for match in matches(30, 2_000):
        for (before, events), after in zip(match.steps[1:], match.states[1:], strict=True):
            counts = [len(hand) for hand in before["hands"]]
            deck = len(before["deck"])
            for event in events:
                if event.kind == "card_flipped":
                    deck -= 1
                    counts = event.data["card_counts"]
                    assert event.data["deck_count"] == deck
            assert counts == [len(hand) for hand in after["hands"]]
            assert deck == len(after["deck"])


def test_the_same_seed_replays_the_same_match() -> None:
    first = random_match(77)
    again = random_match(77)
    assert first.states[-1] == again.states[-1]
    assert [(e.kind, e.data) for e in first.events] == [(e.kind, e.data) for e in again.events]
    assert random_match(78).states[0]["deck"] != first.states[0]["deck"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_property_every_match_conserves_the_deck_and_ends(seed: int) -> None:
    match = random_match(seed)
    for state in match.states:
        check_invariants(state)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    seats=st.integers(min_value=2, max_value=6),
    options=st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in OPTION_CHOICES.items()}),
)
def test_property_all_cpu_matches_finish_inside_new_match(seed: int, seats: int, options: JSON) -> None:
    state, events = ENGINE.new_match(seats, options, ctx(MatchRng(seed.to_bytes(32, "big"))), range(seats))
    assert state["over"] and events[-1].kind == "game_over"
    check_invariants(state)
    flips = [e for e in events if e.kind == "card_flipped"]
    assert all(e.data["by_cpu"] for e in flips)
    assert len(flips) == 100 - len(state["deck"])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    action=st.one_of(
        st.sampled_from(ACTIONS),
        st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.dictionaries(
            st.text(max_size=4), st.integers(), max_size=2)), max_size=3),
    ),
    seat=st.one_of(st.integers(min_value=-2, max_value=7), st.none(), st.text(max_size=2)),
)
def test_property_any_action_is_applied_or_refused_without_side_effects(
    seed: int, action: Any, seat: Any
) -> None:
    states = random_match(seed % 500).states
    state = states[len(states) // 2]
    before = copy.deepcopy(state)
    try:
        new, _ = ENGINE.apply(state, seat, action, ctx(now=1_100.0, last_action_at=1_000.0))
    except RulesError as error:
        assert error.code and error.code == error.code.lower()
    else:
        check_invariants(new)
    assert state == before


# ---------------------------------------------------------------- proto shapes


def test_every_view_event_and_action_fits_the_proto() -> None:
    seen_kinds: set[str] = set()
    for number, match in enumerate(matches(40, 3_000)):
        if number < 12:  # views are large: every seat's and the spectator's, in a dozen matches
            for state in match.states:
                for seat in [None, *range(state["seat_count"])]:
                    message = assert_fits(pb.View, ENGINE.view(state, seat))
                    assert isinstance(message, pb.View)
        for event in match.events:
            assert event.audience is None  # everything in Bozu Mekuri is public
            assert_event_fits(pb.Event, event)
            seen_kinds.add(event.kind)
        for action in match.actions:
            assert_fits(pb.Action, action)
    assert seen_kinds == {
        "match_started", "turn_started", "card_flipped", "stopped", "turn_skipped", "player_left",
        "seat_taken_over", "timeout_claimed", "semimaru_warning", "game_over",
    }


# ---------------------------------------------------------------- the hidden deck

QUOTED_NAMES = {number: json.dumps(card["name_ja"], ensure_ascii=False) for number, card in CARDS.items()}


def test_the_deck_order_never_appears_in_a_view_or_an_event() -> None:
    """No face-down card shows up anywhere before it is flipped: not as a Card, not
    by its poet's name, not as a run of numbers in deck order."""
    checked = 0
    for match in matches(20, 4_000):
        opening_events = [e.data for e in match.steps[0][1]]  # CPU openers may flip inside new_match
        assert not cards_in(opening_events) & set(match.states[0]["deck"])
        for (before, events), after in zip(match.steps[1:], match.states[1:], strict=True):
            face_down = set(after["deck"])
            # A step's events show only cards face up by its end, and announce exactly
            # the cards that left the top of the deck, in order.
            assert not cards_in([e.data for e in events]) & face_down
            flipped_now = [e.data["card"]["number"] for e in events if e.kind == "card_flipped"]
            assert flipped_now == before["deck"][: len(before["deck"]) - len(after["deck"])]
            view = ENGINE.view(after, None)
            # Every seat sees exactly what a spectator sees, so checking that view covers them all.
            assert all(ENGINE.view(after, seat) == view for seat in range(after["seat_count"]))
            text = json.dumps(view, ensure_ascii=False)
            assert not cards_in(view) & face_down
            assert not any(QUOTED_NAMES[number] in text for number in face_down)
            if len(after["deck"]) >= 2:
                assert json.dumps(after["deck"][:2])[1:-1] not in text
            if after["last_flipped"] is not None:
                # The same checks do find a face-up card, so they are not vacuous.
                assert after["last_flipped"] in cards_in(view)
                assert QUOTED_NAMES[after["last_flipped"]] in text
                checked += 1
    assert checked > 1_000
