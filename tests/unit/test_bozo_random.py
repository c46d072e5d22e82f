"""Bozó over many seeded random matches played through the kit: invariants,
refusals, proto shapes, and the seed replaying today's dice.

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
from services.bozo.game import GAME
from services.kit import play
from services.kit.engine import JSON, EndReason, Event, RulesError
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

TURNS = {1: 10, 2: 20, 4: 20}
CARDS = {1: 1, 2: 2, 4: 2}
RULE_CODES = {
    # the rules'
    "cup_pending", "nothing_to_keep", "no_throws_left", "no_dice_to_throw",
    "nothing_to_declare", "must_throw_first", "box_taken",
    # the kit's (turn, end and claims)
    "not_your_turn", "game_over", "cannot_claim_yourself", "partner_cannot_claim", "too_early",
}  # fmt: skip


def match_rng(seed: int) -> MatchRng:
    return MatchRng(hashlib.sha256(seed.to_bytes(8, "big")).digest())


def side(seats: int, seat: int) -> int:
    return seat % 2 if seats == 4 else seat


@dataclass
class Match:
    """A match on the real generator, checking every step."""

    seats: int
    rng: MatchRng
    now: float = 1_000.0
    table: Table = field(init=False)
    events: list[Happening] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.table, happened = play.start(GAME, self.seats, {}, ctx(self.rng, now=self.now))
        self.record(happened)

    @property
    def state(self) -> JSON:
        return self.table.state

    def over(self) -> bool:
        return GAME.outcome(self.state) is not None

    def views(self) -> list[JSON]:
        return [GAME.view(self.state, seat) for seat in [*range(self.seats), None]]

    def record(self, happened: list[Happening]) -> None:
        for item in happened:
            assert item.audience is None
            if isinstance(item, Event):
                assert_event_fits(bozo_pb2.Event, item)
                if item.kind == "thrown":
                    # Faces go out with a throw only when it was made without the cup.
                    assert ("faces" in item.data) == (not item.data["cup"])
        self.events += happened
        views = self.views()
        for seen in views:
            assert_fits(bozo_pb2.View, seen)
        # Everyone sees the same table.
        assert all(seen == views[-1] for seen in views)
        check_view(self.table, views[-1])

    def try_action(self, seat: int, action: JSON) -> list[Happening] | None:
        """Apply, or check that the refusal changed nothing (table nor generator)."""
        assert_fits(bozo_pb2.Action, action)
        before, counter = copy.deepcopy(self.table), self.rng.counter
        trial = copy.deepcopy(self.table)
        try:
            happened = play.act(GAME, trial, seat, action, ctx(self.rng, now=self.now))
        except RulesError as error:
            assert error.code in RULE_CODES, error.code
            assert (self.table, self.rng.counter) == (before, counter)
            return None
        assert self.table == before
        self.table = trial
        self.record(happened)
        return happened


def check_view(table: Table, view: JSON) -> None:
    """Invariants that hold between any two actions."""
    state = table.state
    over = GAME.outcome(state) is not None
    assert 0 <= view["throw_number"] <= 3 and view["throws_left"] == 3 - view["throw_number"]
    assert len(view["cards"]) == CARDS[table.seats]
    filled = sum(len(card["boxes"]) for card in view["cards"])
    assert filled == state["turns_total"] - view["turns_left"] or over
    for card in view["cards"]:
        assert card["total"] == sum(box["points"] for box in card["boxes"])
        assert 0 <= card["total"] <= scoring.MAX_TOTAL
        assert len({box["box"] for box in card["boxes"]}) == len(card["boxes"])
    totals = [card["total"] for card in view["cards"]]
    assert GAME.scores is not None
    assert GAME.scores(state) == [totals[side(table.seats, s)] for s in range(table.seats)]
    hidden = [i for i, die in enumerate(view["dice"]) if die["hidden"]]
    if view["cup_pending"] and not over:
        assert hidden == view["just_thrown"] and view["preview"] == []
        assert all(view["dice"][i]["face"] == 0 for i in hidden)
    elif not over:
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


def play_match(seed: int, seats: int, ending: str = "completed") -> Match:
    """A whole random match, with wrong moves sprinkled in; it ends normally, by a
    leave or by a claim when ``ending`` says so (at a random moment)."""
    rnd = random.Random(seed)
    match = Match(seats, match_rng(seed))
    stop_at = rnd.randint(0, TURNS[seats] * 4)
    steps = 0
    while not match.over():
        steps += 1
        view = GAME.view(match.state, None)
        if ending != "completed" and steps >= stop_at:
            end_early(match, rnd, ending)
            break
        if rnd.random() < 0.2:
            match.try_action(rnd.randrange(seats), any_action(rnd))
            continue
        (seat,) = GAME.to_act(match.state)
        happened = match.try_action(seat, sensible_action(rnd, view))
        assert happened is not None
        for item in happened:
            if item.kind == "scored":
                assert isinstance(item, Event)
                check_scored(item.data, view)
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
        assert not match.over()
        happened = play.leave(GAME, match.table, leaver, ctx(match.rng, now=match.now))
        match.record(happened)
        result = GAME.outcome(match.state)
        assert result is not None and result.reason == EndReason.FORFEIT and result.forfeited == [leaver]
        if seats > 1:
            assert result.ranks[leaver] == 2 and sorted(set(result.ranks)) == [1, 2]
        return
    (idle,) = GAME.to_act(match.state)
    opponents = [s for s in range(seats) if side(seats, s) != side(seats, idle)]
    match.now = match.table.idle_since + 120
    claimed = match.try_action(rnd.choice(opponents), {"claim_inactivity": {}})
    assert claimed is not None and [n.kind for n in claimed] == ["CLAIMED"]
    result = GAME.outcome(match.state)
    assert result is not None and result.reason == EndReason.INACTIVITY and result.forfeited == [idle]
    assert result.ranks == [2 if side(seats, s) == side(seats, idle) else 1 for s in range(seats)]


@pytest.mark.parametrize("seats", [1, 2, 4])
def test_random_matches_run_to_the_end(seats: int) -> None:
    for seed in range(12):
        match = play_match(seed * 10 + seats, seats)
        kinds = [item.kind for item in match.events]
        # One box a turn, the right number of turns, and then the end (the
        # kit's final event: no game event for it).
        assert kinds.count("scored") == TURNS[seats] == kinds.count("turn_started")
        assert kinds[-1] == "scored"
        view = GAME.view(match.state, None)
        assert all(len(card["boxes"]) == 10 for card in view["cards"])
        assert GAME.to_act(match.state) == []
        result = GAME.outcome(match.state)
        assert result is not None and result.reason == EndReason.COMPLETED
        totals = [card["total"] for card in view["cards"]]
        seat_totals = [totals[side(seats, s)] for s in range(seats)]
        assert result.scores == seat_totals
        # Places are per card (a team is one competitor): 1 + the number of better cards.
        assert result.ranks == [1 + sum(t > mine for t in totals) for mine in seat_totals]
        winners = [s for s in range(seats) if result.ranks[s] == 1]
        assert winners == [s for s in range(seats) if seat_totals[s] == max(seat_totals)]
        if seats == 4:  # partners alternate: five turns each, on their team's card
            for card in view["cards"]:
                assert sorted(box["seat"] for box in card["boxes"]) == sorted(card["seats"] * 5)


@pytest.mark.parametrize("seats", [1, 2, 4])
def test_random_matches_ended_by_leaving(seats: int) -> None:
    for seed in range(8):
        match = play_match(1_000 + seed, seats, ending="leave")
        last = match.events[-1]
        assert isinstance(last, Notice) and last.kind == "LEFT"


@pytest.mark.parametrize("seats", [2, 4])
def test_random_matches_ended_by_a_claim(seats: int) -> None:
    for seed in range(8):
        match = play_match(2_000 + seed, seats, ending="claim")
        last = match.events[-1]
        assert isinstance(last, Notice) and last.kind == "CLAIMED"


def test_the_same_seed_replays_the_same_match() -> None:
    """Provably fair: the match generator alone decides every die."""
    first, again = play_match(77, 2), play_match(77, 2)
    assert first.events == again.events and first.state == again.state
    assert play_match(78, 2).events != first.events


def test_a_fixed_seed_throws_the_dice_it_always_threw() -> None:
    """The draw order is part of the fairness promise: a published seed must
    replay the same dice forever. Pinned to the values of the engine before
    the kit (one randint(1, 6) per thrown die, in ascending die order)."""
    rng = MatchRng(bytes(range(32)))
    table, _ = play.start(GAME, 2, {}, ctx(rng))
    steps: list[tuple[int, JSON]] = [
        (0, {"throw": {}}),
        (0, {"throw": {"keep": [0, 1], "cup": True}}),
        (0, {"declare": {"side": "BOTTOM"}}),
        (0, {"throw": {"keep": [0, 1, 2, 3]}}),
        (0, {"score": {"box": "AS"}}),
        (1, {"throw": {"cup": True}}),
        (1, {"declare": {"side": "TOP"}}),
    ]
    seen = []
    for seat, action in steps:
        happened = play.act(GAME, table, seat, action, ctx(rng))
        events = [(e.kind, e.data) for e in happened if isinstance(e, Event)]
        seen.append((events, list(table.state["dice"]), rng.counter))
    assert seen == [
        ([("thrown", {"seat": 0, "throw_number": 1, "thrown": [0, 1, 2, 3, 4], "kept": [], "cup": False,
                      "faces": [4, 5, 6, 3, 4]})],
         [4, 5, 6, 3, 4], 5),
        ([("thrown", {"seat": 0, "throw_number": 2, "thrown": [2, 3, 4], "kept": [0, 1], "cup": True})],
         [4, 5, 5, 6, 5], 8),
        ([("revealed", {"seat": 0, "side": "BOTTOM", "dice": [2, 3, 4], "faces": [2, 1, 2],
                        "conversions": [{"die": 2, "from_face": 5, "to_face": 2},
                                        {"die": 3, "from_face": 6, "to_face": 1},
                                        {"die": 4, "from_face": 5, "to_face": 2}]})],
         [4, 5, 2, 1, 2], 8),
        ([("thrown", {"seat": 0, "throw_number": 3, "thrown": [4], "kept": [0, 1, 2, 3], "cup": False,
                      "faces": [1]})],
         [4, 5, 2, 1, 1], 9),
        ([("scored", {"seat": 0, "box": "AS", "points": 2, "boca": False, "total": 2}),
          ("turn_started", {"seat": 1, "turn": 2})],
         [], 9),
        ([("thrown", {"seat": 1, "throw_number": 1, "thrown": [0, 1, 2, 3, 4], "kept": [], "cup": True})],
         [1, 5, 4, 2, 4], 14),
        ([("revealed", {"seat": 1, "side": "TOP", "dice": [0, 1, 2, 3, 4], "faces": [1, 5, 4, 2, 4],
                        "conversions": []})],
         [1, 5, 4, 2, 4], 14),
    ]  # fmt: skip


action_strategy = st.one_of(
    st.builds(
        lambda keep, cup: {"throw": {"keep": sorted(keep), "cup": cup}},
        st.sets(st.integers(0, 4)),
        st.booleans(),
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
        match.now = match.table.idle_since + idle
        before = GAME.view(match.state, None)
        happened = match.try_action(seat % seats, action)
        for item in happened or []:
            if isinstance(item, Event) and item.kind == "scored":
                check_scored(item.data, before)
        if match.over():
            break


def test_hidden_dice_stay_hidden_in_random_matches() -> None:
    """Across random play, a cup throw never shows its faces before the reveal,
    and the reveal shows exactly what the state had under the cup."""
    cup_throws = 0
    for seed in range(6):
        match = play_match(3_000 + seed, 4)
        events = [item for item in match.events if isinstance(item, Event)]
        for index, event in enumerate(events):
            if event.kind == "thrown" and event.data["cup"]:
                cup_throws += 1
                assert "faces" not in event.data
                reveal = events[index + 1]
                assert reveal.kind == "revealed" and reveal.data["dice"] == event.data["thrown"]
                for conversion in reveal.data["conversions"]:
                    assert conversion["to_face"] == 7 - conversion["from_face"]
    assert cup_throws > 25
