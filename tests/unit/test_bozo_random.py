"""Bozó over many seeded random matches: invariants, refusals and proto shapes.

Every action sent is parsed into the proto Action, every view (each seat and the
spectator) into View and every event into Event, strictly.
"""

from __future__ import annotations

import copy
import hashlib
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.bozo.v1 import bozo_pb2

from services.bozo import scoring
from services.bozo.engine import ENGINE
from services.kit.engine import JSON, Context, Event, RulesError
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits

TURNS = {1: 10, 2: 20, 4: 20}
CARDS = {1: 1, 2: 2, 4: 2}
RULE_CODES = {
    "not_your_turn", "cup_pending", "nothing_to_keep", "no_throws_left", "no_dice_to_throw",
    "nothing_to_declare", "must_throw_first", "box_taken", "no_claim_in_solo",
    "cannot_claim_yourself", "partner_cannot_claim", "too_early", "game_over",
}


def match_rng(seed: int) -> MatchRng:
    return MatchRng(hashlib.sha256(seed.to_bytes(8, "big")).digest())


@dataclass
class Match:
    """A match on the real generator, checking every step."""

    seats: int
    rng: MatchRng
    now: float = 1_000.0
    last_action_at: float = 1_000.0
    state: JSON = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state, events = ENGINE.new_match(self.seats, {}, self.ctx())
        self.record(events)

    def ctx(self) -> Context:
        return Context(rng=self.rng, now=self.now, last_action_at=self.last_action_at)

    def views(self) -> list[JSON]:
        return [ENGINE.view(self.state, seat) for seat in [*range(self.seats), None]]

    def record(self, events: list[Event]) -> None:
        for event in events:
            assert event.audience is None
            assert_event_fits(bozo_pb2.Event, event)
            if event.kind == "thrown":
                # Faces go out with a throw only when it was made without the cup.
                assert ("faces" in event.data) == (not event.data["cup"])
        self.events += events
        views = self.views()
        for view in views:
            assert_fits(bozo_pb2.View, view)
        # Everyone sees the same table; only the viewer's own seat number differs.
        public = [{k: v for k, v in view.items() if k != "seat"} for view in views]
        assert all(view == public[-1] for view in public)
        check_view(self.state, views[-1])

    def try_action(self, seat: int, action: JSON) -> list[Event] | None:
        """Apply, or check that the refusal changed nothing (state nor generator)."""
        assert_fits(bozo_pb2.Action, action)
        before, counter = copy.deepcopy(self.state), self.rng.counter
        try:
            state, events = ENGINE.apply(self.state, seat, action, self.ctx())
        except RulesError as error:
            assert error.code in RULE_CODES, error.code
            assert (self.state, self.rng.counter) == (before, counter)
            return None
        assert self.state == before, "apply mutated its input"
        self.state = state
        self.last_action_at = self.now
        self.record(events)
        return events


def check_view(state: JSON, view: JSON) -> None:
    """Invariants that hold between any two actions."""
    assert 0 <= view["throw_number"] <= 3 and view["throws_left"] == 3 - view["throw_number"]
    assert len(view["cards"]) == CARDS[state["seats"]]
    filled = sum(len(card["boxes"]) for card in view["cards"])
    assert filled == state["turns_total"] - view["turns_left"] or view["game_over"]
    for card in view["cards"]:
        assert card["total"] == sum(box["points"] for box in card["boxes"])
        assert 0 <= card["total"] <= scoring.MAX_TOTAL
        assert len({box["box"] for box in card["boxes"]}) == len(card["boxes"])
    hidden = [i for i, die in enumerate(view["dice"]) if die["hidden"]]
    if view["cup_pending"] and not view["game_over"]:
        assert hidden == view["just_thrown"] and view["preview"] == []
        assert all(view["dice"][i]["face"] == 0 for i in hidden)
    elif not view["game_over"]:
        assert hidden == []
        assert all(1 <= die["face"] <= 6 for die in view["dice"])
        assert len(view["dice"]) == (5 if view["throw_number"] else 0)


def sensible_action(rnd: random.Random, view: JSON) -> JSON:
    """A legal move of the seat to act, chosen at random."""
    if view["cup_pending"]:
        return {"declare": {"side": rnd.choice(["TOP", "BOTTOM"])}}
    if view["throw_number"] == 0:
        return {"throw": {"cup": rnd.random() < 0.3}}
    if view["throw_number"] < 3 and rnd.random() < 0.6:
        keep = sorted(rnd.sample(range(5), rnd.randint(0, 4)))
        return {"throw": {"keep": keep, "cup": rnd.random() < 0.3}}
    return {"score": {"box": rnd.choice(view["open_boxes"])}}


def any_action(rnd: random.Random) -> JSON:
    """Any well-formed action, legal or not."""
    kind = rnd.choice(["throw", "declare", "score", "claim_inactivity"])
    if kind == "throw":
        return {"throw": {"keep": sorted(rnd.sample(range(5), rnd.randint(0, 5))), "cup": rnd.random() < 0.5}}
    if kind == "declare":
        return {"declare": {"side": rnd.choice(["TOP", "BOTTOM"])}}
    if kind == "score":
        return {"score": {"box": rnd.choice(scoring.BOXES)}}
    return {"claim_inactivity": {}}


def play(seed: int, seats: int, ending: str = "completed") -> Match:
    """A whole random match, with wrong moves sprinkled in; it ends normally, by a
    leave or by a claim when ``ending`` says so (at a random moment)."""
    rnd = random.Random(seed)
    match = Match(seats, match_rng(seed))
    stop_at = rnd.randint(0, TURNS[seats] * 4)
    steps = 0
    while not match.state["over"]:
        steps += 1
        view = ENGINE.view(match.state, None)
        if ending != "completed" and steps >= stop_at:
            end_early(match, rnd, ending)
            break
        if rnd.random() < 0.2:
            match.try_action(rnd.randrange(seats), any_action(rnd))
            continue
        events = match.try_action(view["to_act"], sensible_action(rnd, view))
        assert events is not None
        for event in events:
            if event.kind == "scored":
                check_scored(event.data, view)
    return match


def check_scored(scored: JSON, before: JSON) -> None:
    """The points written are the table's points for the dice as they were shown."""
    assert scored["box"] in before["open_boxes"]
    dice = [die["face"] for die in before["dice"]]
    first = before["throw_number"] == 1
    assert (scored["points"], scored["boca"]) == scoring.points(scored["box"], dice, first)
    assert not scored["boca"] or first  # de boca only on the first throw


def end_early(match: Match, rnd: random.Random, ending: str) -> None:
    seats = match.seats
    if ending == "leave":
        leaver = rnd.randrange(seats)
        before = copy.deepcopy(match.state)
        match.state, events = ENGINE.leave(match.state, leaver, match.ctx())
        assert before["over"] is False
        match.record(events)
        result = ENGINE.result(match.state)
        assert result is not None and result.reason == "forfeit" and result.forfeited == [leaver]
        if seats > 1:
            assert result.ranks[leaver] == 2 and sorted(set(result.ranks)) == [1, 2]
        return
    idle = ENGINE.to_act(match.state)[0]
    opponents = [s for s in range(seats) if s % 2 != idle % 2] if seats == 4 else [1 - idle]
    match.now = match.last_action_at + 120
    events = match.try_action(rnd.choice(opponents), {"claim_inactivity": {}})
    assert events is not None and events[-1].kind == "game_over"
    result = ENGINE.result(match.state)
    assert result is not None and result.reason == "inactivity" and result.forfeited == [idle]
    side = (lambda seat: seat % 2) if seats == 4 else (lambda seat: seat)
    assert result.ranks == [2 if side(s) == side(idle) else 1 for s in range(seats)]


@pytest.mark.parametrize("seats", [1, 2, 4])
def test_random_matches_run_to_the_end(seats: int) -> None:
    for seed in range(12):
        match = play(seed * 10 + seats, seats)
        kinds = [event.kind for event in match.events]
        # One box a turn, the right number of turns, and then the end.
        assert kinds.count("scored") == TURNS[seats] == kinds.count("turn_started")
        assert kinds[-1] == "game_over" and kinds.count("game_over") == 1
        view = ENGINE.view(match.state, None)
        assert all(len(card["boxes"]) == 10 for card in view["cards"])
        assert ENGINE.to_act(match.state) == []
        result = ENGINE.result(match.state)
        assert result is not None and result.reason == "completed"
        totals = [card["total"] for card in view["cards"]]
        seat_totals = [totals[s % 2] if seats == 4 else totals[s] for s in range(seats)]
        assert result.scores == seat_totals
        # Places are per card (a team is one competitor): 1 + the number of better cards.
        assert result.ranks == [1 + sum(t > mine for t in totals) for mine in seat_totals]
        assert view["winners"] == [s for s in range(seats) if seat_totals[s] == max(seat_totals)]
        if seats == 4:  # partners alternate: five turns each, on their team's card
            for card in view["cards"]:
                assert sorted(box["seat"] for box in card["boxes"]) == sorted(card["seats"] * 5)


@pytest.mark.parametrize("seats", [1, 2, 4])
def test_random_matches_ended_by_leaving(seats: int) -> None:
    for seed in range(8):
        match = play(1_000 + seed, seats, ending="leave")
        assert match.events[-2].kind == "conceded"


@pytest.mark.parametrize("seats", [2, 4])
def test_random_matches_ended_by_a_claim(seats: int) -> None:
    for seed in range(8):
        match = play(2_000 + seed, seats, ending="claim")
        assert match.events[-2].kind == "claimed"


def test_the_same_seed_replays_the_same_match() -> None:
    """Provably fair: the match generator alone decides every die."""
    first, again = play(77, 2), play(77, 2)
    assert first.events == again.events and first.state == again.state
    assert play(78, 2).events != first.events


action_strategy = st.one_of(
    st.builds(
        lambda keep, cup: {"throw": {"keep": sorted(keep), "cup": cup}},
        st.sets(st.integers(0, 4)), st.booleans(),
    ),
    st.builds(lambda side: {"declare": {"side": side}}, st.sampled_from(["TOP", "BOTTOM"])),
    st.builds(lambda box: {"score": {"box": box}}, st.sampled_from(scoring.BOXES)),
    st.just({"claim_inactivity": {}}),
)


@settings(max_examples=60, deadline=None)
@given(
    seats=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**32),
    moves=st.lists(st.tuples(st.integers(0, 3), action_strategy, st.sampled_from([0, 60, 120])), max_size=60),
)
def test_any_sequence_of_actions_keeps_the_invariants(
    seats: int, seed: int, moves: list[tuple[int, JSON, int]]
) -> None:
    """Whatever is sent, refusals change nothing and the table stays consistent."""
    match = Match(seats, match_rng(seed))
    for seat, action, idle in moves:
        match.now = match.last_action_at + idle
        before = ENGINE.view(match.state, None)
        events = match.try_action(seat % seats, action)
        for event in events or []:
            if event.kind == "scored":
                check_scored(event.data, before)
        if match.state["over"]:
            break


def test_hidden_dice_stay_hidden_in_random_matches() -> None:
    """Across random play, a cup throw never shows its faces before the reveal,
    and the reveal shows exactly what the state had under the cup."""
    cup_throws = 0
    for seed in range(6):
        match = play(3_000 + seed, 4)
        for index, event in enumerate(match.events):
            if event.kind == "thrown" and event.data["cup"]:
                cup_throws += 1
                assert "faces" not in event.data
                reveal = match.events[index + 1]
                assert reveal.kind == "revealed" and reveal.data["dice"] == event.data["thrown"]
                for conversion in reveal.data["conversions"]:
                    assert conversion["to_face"] == 7 - conversion["from_face"]
    assert cup_throws > 25
