"""Random play through the kit over many seeded matches: invariants, proto
shapes, the hidden deck."""

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
from services.bozu_mekuri.game import GAME
from services.kit import play
from services.kit.engine import Context, Event, RulesError
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits

JSON = dict[str, Any]

OPTION_CHOICES: dict[str, list[Any]] = {
    "semimaru": ["OUT_AT_ONCE", "SKIP_ONCE", "AS_MONK", "AS_NOBLE", "EVERYONE_TO_PILE",
                 "SEMIMARU_RULE_UNSPECIFIED"],
    "emperor": ["KEEP_AND_FLIP_AGAIN", "TAKE_EVERYONES_CARDS", "ORDINARY"],
    "lady": ["TAKE_PILE", "TAKE_PILE_AND_FLIP_AGAIN", "FLIP_AGAIN_IF_PILE_EMPTY"],
    "allow_stopping": [True, False],
    "turn_timer_seconds": [0, 30, 60],
}  # fmt: skip
ACTIONS: list[JSON] = [{"flip": {}}, {"stop": {}}, {"take_over": {}}]


@dataclass
class Match:
    """One random match, recorded step by step."""

    tables: list[Table] = field(default_factory=list)  # after the start and each accepted step
    happened: list[Happening] = field(default_factory=list)
    steps: list[tuple[JSON, list[Happening]]] = field(default_factory=list)  # (state before, what happened)
    actions: list[JSON] = field(default_factory=list)


def random_match(seed: int) -> Match:
    """Seats, CPU seats and options drawn from ``seed``; then random actions (legal
    or not) from random seats, random leaves and take-overs, and the clock run
    forward past the turn timer now and then, until the end."""
    pick = random.Random(seed)
    seats = pick.randint(2, 6)
    options = {key: pick.choice(values) for key, values in OPTION_CHOICES.items() if pick.random() < 0.7}
    cpu_seats = sorted(pick.sample(range(seats), pick.randint(0, seats - 1)))
    rng = MatchRng(seed.to_bytes(32, "big"))
    now = 1_000.0
    table, happened = play.start(GAME, seats, options, Context(rng, now, now), cpu_seats)
    match = Match(tables=[table], happened=list(happened), steps=[({}, list(happened))])
    for _ in range(2_000):
        if GAME.outcome(table.state) is not None:
            break
        seat = pick.randrange(seats)
        roll = pick.random()
        now += pick.choice([1.0, 1.0, 45.0, 61.0])
        ctx = Context(rng, now, table.idle_since)
        new = copy.deepcopy(table)  # the kit changes the table in place and drops it on a refusal
        try:
            if roll < 0.03:
                happened = play.leave(GAME, new, seat, ctx)
            elif roll < 0.1:
                happened = play.fire_deadline(GAME, new, ctx)[1]
                if not happened:
                    continue
            else:
                action = pick.choice(ACTIONS) if roll < 0.3 else {"flip": {}} if roll < 0.85 else {"stop": {}}
                if roll >= 0.3:
                    seat = GAME.to_act(table.state)[0]
                match.actions.append(action)
                happened = play.act(GAME, new, seat, action, ctx)
        except RulesError:
            continue
        match.steps.append((table.state, list(happened)))
        table = new
        match.tables.append(table)
        match.happened.extend(happened)
    assert GAME.outcome(table.state) is not None, "the match did not end"
    return match


def matches(count: int, base: int = 0) -> Iterator[Match]:
    for seed in range(base, base + count):
        yield random_match(seed)


def events(happened: list[Happening]) -> list[Event]:
    return [h for h in happened if isinstance(h, Event)]


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


def check_invariants(table: Table) -> None:
    state = table.state
    everything = [*state["deck"], *state["pile"], *(n for hand in state["hands"] for n in hand)]
    assert sorted(everything) == list(NUMBERS), "every card is in exactly one place"
    for seat in state["eliminated"]:
        assert state["hands"][seat] == [], "a knocked-out seat holds nothing"
        assert not GAME.in_play(state, seat)
    if GAME.outcome(state) is not None:
        assert GAME.to_act(state) == []
        standing = [s for s in range(table.seats) if s not in state["eliminated"]]
        assert not state["deck"] or len(standing) == 1
    else:
        (seat,) = GAME.to_act(state)
        assert seat not in table.cpu, "a CPU turn was left waiting"
        assert seat not in state["eliminated"]
        assert state["deck"], "the game goes on only while cards are left"
    view = GAME.view(state, None)
    assert sum(s["card_count"] for s in view["seats"]) + view["pile_count"] + view["deck_count"] == 100
    assert view["semimaru_warning"] == (view["deck_count"] <= 15 and 10 not in cards_in(view))
    assert view["extra_flip_offered"] == (state["extra_flip"] and GAME.outcome(state) is None)
    assert GAME.scores is not None and GAME.scores(state) == [s["card_count"] for s in view["seats"]]


@pytest.mark.parametrize("base", [0, 1_000])
def test_invariants_over_random_matches(base: int) -> None:
    ended = {"deck exhausted": 0, "last one standing": 0}
    for match in matches(40, base):
        for table in match.tables:
            check_invariants(table)
        assert all(GAME.outcome(t.state) is None for t in match.tables[:-1]), "play went on after the end"
        final = match.tables[-1]
        ended["last one standing" if final.state["deck"] else "deck exhausted"] += 1
        result = play.outcome(GAME, final)
        assert result is not None
        assert result.scores == [len(hand) for hand in final.state["hands"]]
        assert result.reason == "END_REASON_COMPLETED"
        assert result.forfeited == final.left  # the players who left and did not come back
        standing = [s for s in range(final.seats) if s not in final.state["eliminated"]]
        for a in standing:
            assert result.ranks[a] <= len(standing)
            for b in standing:
                assert (result.ranks[a] < result.ranks[b]) == (result.scores[a] > result.scores[b])
        for seat in final.state["eliminated"]:
            assert result.ranks[seat] > len(standing)
    assert all(ended.values()), ended  # both endings were exercised


def test_events_agree_with_the_state() -> None:
    for match in matches(30, 2_000):
        for (before, happened), after in zip(match.steps[1:], match.tables[1:], strict=True):
            counts = [len(hand) for hand in before["hands"]]
            deck = len(before["deck"])
            for event in events(happened):
                if event.kind == "card_flipped":
                    deck -= 1
                    counts = event.data["card_counts"]
                    assert event.data["deck_count"] == deck
            assert counts == [len(hand) for hand in after.state["hands"]]
            assert deck == len(after.state["deck"])


def test_the_same_seed_replays_the_same_match() -> None:
    first = random_match(77)
    again = random_match(77)
    assert first.tables[-1] == again.tables[-1]
    assert first.happened == again.happened
    assert random_match(78).tables[0].state["deck"] != first.tables[0].state["deck"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_property_every_match_conserves_the_deck_and_ends(seed: int) -> None:
    match = random_match(seed)
    for table in match.tables:
        check_invariants(table)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    seats=st.integers(min_value=2, max_value=6),
    options=st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in OPTION_CHOICES.items()}),
)
def test_property_all_cpu_matches_finish_at_the_start(seed: int, seats: int, options: JSON) -> None:
    rng = MatchRng(seed.to_bytes(32, "big"))
    table, happened = play.start(GAME, seats, options, Context(rng, 0.0, 0.0), range(seats))
    assert GAME.outcome(table.state) is not None
    check_invariants(table)
    flips = [e for e in events(happened) if e.kind == "card_flipped"]
    assert len(flips) == 100 - len(table.state["deck"])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    action=st.one_of(
        st.sampled_from(ACTIONS),
        st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.dictionaries(
            st.text(max_size=4), st.integers(), max_size=2)), max_size=3),
    ),
    seat=st.integers(min_value=0, max_value=5),
)  # fmt: skip
def test_property_any_action_is_applied_or_refused_with_a_code(seed: int, action: Any, seat: int) -> None:
    tables = random_match(seed % 500).tables
    table = tables[len(tables) // 2]
    before = copy.deepcopy(table)
    trial = copy.deepcopy(table)
    try:
        play.act(
            GAME, trial, seat % table.seats, action, Context(MatchRng(bytes(32)), 5_000.0, table.idle_since)
        )
    except RulesError as error:
        assert error.code and error.code == error.code.lower()
    else:
        check_invariants(trial)
    assert table == before


# ---------------------------------------------------------------- proto shapes


def test_every_view_event_and_action_fits_the_proto() -> None:
    seen_kinds: set[str] = set()
    seen_notices: set[str] = set()
    for number, match in enumerate(matches(40, 3_000)):
        if number < 12:  # views are large: every seat's and the spectator's, in a dozen matches
            for table in match.tables:
                for seat in [None, *range(table.seats)]:
                    message = assert_fits(pb.View, GAME.view(table.state, seat))
                    assert isinstance(message, pb.View)
        for item in match.happened:
            if isinstance(item, Notice):
                seen_notices.add(item.kind)
                continue
            assert item.audience is None  # everything in Bozu Mekuri is public
            assert_event_fits(pb.Event, item)
            seen_kinds.add(item.kind)
        for action in match.actions:
            assert_fits(pb.Action, action)
    assert seen_kinds == {
        "match_started", "turn_started", "card_flipped", "stopped", "turn_skipped", "semimaru_warning",
    }  # fmt: skip
    # Leaving, taking the seat back and the turn timer are the kit's notices now.
    assert seen_notices == {"LEFT", "CPU_TOOK_OVER", "SEAT_TAKEN_BACK"}


# ---------------------------------------------------------------- the hidden deck

QUOTED_NAMES = {number: json.dumps(card["name_ja"], ensure_ascii=False) for number, card in CARDS.items()}


def test_the_deck_order_never_appears_in_a_view_or_an_event() -> None:
    """No face-down card shows up anywhere before it is flipped: not as a Card, not
    by its poet's name, not as a run of numbers in deck order."""
    checked = 0
    for match in matches(25, 4_000):
        opening_events = [e.data for e in events(match.steps[0][1])]  # CPU openers may flip at the start
        assert not cards_in(opening_events) & set(match.tables[0].state["deck"])
        for (before, happened), table in zip(match.steps[1:], match.tables[1:], strict=True):
            after = table.state
            face_down = set(after["deck"])
            # A step's events show only cards face up by its end, and announce exactly
            # the cards that left the top of the deck, in order.
            assert not cards_in([e.data for e in events(happened)]) & face_down
            flipped_now = [e.data["card"]["number"] for e in events(happened) if e.kind == "card_flipped"]
            assert flipped_now == before["deck"][: len(before["deck"]) - len(after["deck"])]
            view = GAME.view(after, None)
            # Every seat sees exactly what a spectator sees, so checking that view covers them all.
            assert all(GAME.view(after, seat) == view for seat in range(table.seats))
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
