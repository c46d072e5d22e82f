"""Invariants of Yatzy over random dice and random games, and the proto shapes
of every view, event and action they produce."""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rodada.yatzy.v1 import yatzy_pb2

from services.kit import play
from services.kit.engine import JSON, EndReason, Event, RulesError
from services.kit.play import Happening, Table
from services.kit.rng import MatchRng
from services.yatzy import scoring
from services.yatzy.engine import MAX_THROWS
from services.yatzy.game import GAME
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

CARDS = (scoring.CLASSIC, scoring.SCANDINAVIAN)
dice_st = st.lists(st.integers(1, 6), min_size=5, max_size=5)

# The most each box can score, from the rules (five sixes, 6-6-5-5-x, 6-6-6-5-5, …).
MAX_POINTS = {
    scoring.CLASSIC: {
        "ONES": 5, "TWOS": 10, "THREES": 15, "FOURS": 20, "FIVES": 25, "SIXES": 30,
        "THREE_OF_A_KIND": 30, "FOUR_OF_A_KIND": 30, "FULL_HOUSE": 25, "SMALL_STRAIGHT": 30,
        "LARGE_STRAIGHT": 40, "YATZY": 50, "CHANCE": 30,
    },
    scoring.SCANDINAVIAN: {
        "ONES": 5, "TWOS": 10, "THREES": 15, "FOURS": 20, "FIVES": 25, "SIXES": 30,
        "ONE_PAIR": 12, "TWO_PAIRS": 22, "THREE_OF_A_KIND": 18, "FOUR_OF_A_KIND": 24,
        "SMALL_STRAIGHT": 15, "LARGE_STRAIGHT": 20, "FULL_HOUSE": 28, "CHANCE": 30, "YATZY": 50,
    },
}  # fmt: skip


# --- Scoring properties --------------------------------------------------------------


@given(dice=dice_st, card=st.sampled_from(CARDS))
def test_every_box_scores_between_zero_and_its_maximum(dice: list[int], card: str) -> None:
    assert set(MAX_POINTS[card]) == set(scoring.boxes(card))
    for box in scoring.boxes(card):
        assert 0 <= scoring.score(card, box, dice) <= MAX_POINTS[card][box]


@given(dice=dice_st, card=st.sampled_from(CARDS), seed=st.integers(0, 2**32))
def test_scores_do_not_depend_on_the_order_of_the_dice(dice: list[int], card: str, seed: int) -> None:
    shuffled = list(dice)
    random.Random(seed).shuffle(shuffled)
    for box in scoring.boxes(card):
        assert scoring.score(card, box, dice) == scoring.score(card, box, shuffled)


@given(dice=dice_st)
def test_combinations_imply_each_other(dice: list[int]) -> None:
    def c(box: str) -> int:
        return scoring.score(scoring.CLASSIC, box, dice)

    def s(box: str) -> int:
        return scoring.score(scoring.SCANDINAVIAN, box, dice)

    if c("YATZY"):
        assert c("FOUR_OF_A_KIND") == c("THREE_OF_A_KIND") == c("CHANCE")
        assert c("FULL_HOUSE") == s("FULL_HOUSE") == s("TWO_PAIRS") == 0
        assert s("FOUR_OF_A_KIND") == 4 * dice[0]
    if c("FOUR_OF_A_KIND"):
        assert c("THREE_OF_A_KIND") == c("FOUR_OF_A_KIND")
    if c("LARGE_STRAIGHT"):
        assert c("SMALL_STRAIGHT") == 30
        assert s("SMALL_STRAIGHT") + s("LARGE_STRAIGHT") in (15, 20)
    if s("SMALL_STRAIGHT") or s("LARGE_STRAIGHT"):
        assert c("LARGE_STRAIGHT") == 40
    if c("FULL_HOUSE"):
        assert s("FULL_HOUSE") == sum(dice)
        assert s("TWO_PAIRS") > s("ONE_PAIR") > 0
        assert s("THREE_OF_A_KIND") > 0
    # Scandinavian combinations count only their own dice.
    assert s("ONE_PAIR") % 2 == 0 and s("TWO_PAIRS") % 2 == 0
    assert s("THREE_OF_A_KIND") % 3 == 0 and s("FOUR_OF_A_KIND") % 4 == 0
    if s("TWO_PAIRS"):
        faces = [face for face, n in Counter(dice).items() if n >= 2]
        assert len(faces) == 2 and s("TWO_PAIRS") == 2 * sum(faces)


@given(
    card=st.sampled_from(CARDS),
    filled=st.dictionaries(st.sampled_from(scoring.ALL_BOXES), st.integers(0, 50)),
)
def test_total_is_the_boxes_plus_the_bonus(card: str, filled: dict[str, int]) -> None:
    upper = sum(points for box, points in filled.items() if box in scoring.UPPER_FACES)
    bonus = scoring.UPPER_BONUS[card] if upper >= 63 else 0
    assert scoring.upper_subtotal(filled) == upper
    assert scoring.upper_bonus(card, filled) == bonus
    assert scoring.total(card, filled) == sum(filled.values()) + bonus


# --- Random games ----------------------------------------------------------------------


@dataclass
class Match:
    """A match driven by a policy, checking every invariant after each step."""

    table: Table
    clock: float = 1_000.0
    events: list[Happening] = field(default_factory=list)
    states: list[JSON] = field(default_factory=list)
    actions: list[JSON] = field(default_factory=list)
    turns: int = 0  # scored turns

    def step(self, rng: MatchRng, seat: int, action: JSON | None, wait: float = 1.0) -> None:
        """Apply ``action`` (None: the seat leaves) and check what changed."""
        before = copy.deepcopy(self.table.state)
        self.clock += wait
        context = ctx(rng, now=self.clock)
        if action is None:
            events = play.leave(GAME, self.table, seat, context)
        else:
            assert_fits(yatzy_pb2.Action, action)
            self.actions.append(action)
            events = play.act(GAME, self.table, seat, action, context)
        check_transition(before, self.table.state, seat, action, events)
        self.states.append(copy.deepcopy(self.table.state))
        self.events += events
        self.turns += action is not None and "score" in action

    @property
    def state(self) -> JSON:
        return self.table.state

    def refuse(self, seat: int, action: JSON, wait: float = 1.0) -> None:
        """An action the rules must refuse; nothing may change."""
        before = copy.deepcopy(self.table)
        context = ctx(MatchRng(bytes(32)), now=self.clock + wait)
        with pytest.raises(RulesError):
            play.act(GAME, copy.deepcopy(self.table), seat, action, context)
        assert self.table == before


def check_transition(
    before: JSON, after: JSON, seat: int, action: JSON | None, events: list[Happening]
) -> None:
    card = after["card"]
    assert all(e.audience is None for e in events)  # nothing is hidden in Yatzy
    new_boxes = [
        (s, box)
        for s in range(len(after["filled"]))
        for box in after["filled"][s]
        if box not in before["filled"][s]
    ]
    if action is not None and "score" in action:
        # Exactly one empty box of the acting seat, with what the dice score there.
        box = action["score"]["box"]
        assert new_boxes == [(seat, box)]
        assert after["filled"][seat][box] == scoring.score(card, box, before["dice"])
        assert before["filled"][seat] == {b: p for b, p in after["filled"][seat].items() if b != box}
        assert events[0] == Event(
            "scored",
            {"seat": seat, "box": box, "points": after["filled"][seat][box],
             "total": scoring.total(card, after["filled"][seat])},
        )  # fmt: skip
    else:
        assert new_boxes == []
        assert all(after["filled"][s] == before["filled"][s] for s in range(len(after["filled"])))
    if action is not None and "roll" in action:
        keep = action["roll"].get("keep", [])
        assert after["throws"] == before["throws"] + 1 <= MAX_THROWS
        assert all(after["dice"][i] == before["dice"][i] for i in keep)
        assert events == [
            Event(
                "rolled",
                {"seat": seat, "dice": after["dice"], "kept": sorted(keep), "throw_number": after["throws"]},
            )
        ]
    check_state(after)


def check_state(state: JSON) -> None:
    card = state["card"]
    rounds = len(scoring.boxes(card))
    views = [GAME.view(state, seat) for seat in range(len(state["filled"]))]
    spectator = GAME.view(state, None)
    assert all(view == spectator for view in views), "every seat sees the public view"
    out = {f["seat"] for f in state["forfeits"]}
    still_in = [s for s in range(len(state["filled"])) if s not in out]
    for seat, card_view in enumerate(spectator["cards"]):
        filled = {b["box"]: b["points"] for b in card_view["boxes"] if b["filled"]}
        assert filled == state["filled"][seat]
        assert [b["box"] for b in card_view["boxes"]] == list(scoring.boxes(card))
        assert all(0 <= p <= MAX_POINTS[card][b] for b, p in filled.items())
        assert all(b["points"] == 0 for b in card_view["boxes"] if not b["filled"])
        upper = sum(p for b, p in filled.items() if b in scoring.UPPER_FACES)
        assert card_view["upper_subtotal"] == upper
        assert card_view["bonus"] == (scoring.UPPER_BONUS[card] if upper >= 63 else 0)
        assert card_view["total"] == sum(filled.values()) + card_view["bonus"]
        assert card_view["forfeited"] == (seat in out)
    # Turns go round in seat order: the cards still in play differ by one box at most.
    counts = [len(state["filled"][s]) for s in still_in]
    assert not counts or max(counts) - min(counts) <= 1
    result = GAME.outcome(state)
    if result is not None:
        assert GAME.to_act(state) == []
        assert result.scores == [c["total"] for c in spectator["cards"]]
        assert sorted(result.forfeited) == sorted(out)
        if len(still_in) > 1 or (len(state["filled"]) == 1 and still_in):
            assert all(n == rounds for n in counts)
        for s in still_in:
            assert result.ranks[s] == 1 + sum(result.scores[o] > result.scores[s] for o in still_in)
        for place, s in enumerate(reversed(result.forfeited), start=len(still_in) + 1):
            assert result.ranks[s] == place
    else:
        (current,) = GAME.to_act(state)
        assert current in still_in
        assert len(state["filled"][current]) < rounds
        assert spectator["round"] == len(state["filled"][current]) + 1
        assert len(state["dice"]) == (5 if state["throws"] else 0)
        assert all(1 <= d <= 6 for d in state["dice"])
        assert spectator["throws_used"] + spectator["throws_left"] == MAX_THROWS
        preview = {p["box"]: p["points"] for p in spectator["preview"]}
        if state["dice"]:
            assert set(preview) == set(scoring.boxes(card)) - set(state["filled"][current])
            assert all(p == scoring.score(card, b, state["dice"]) for b, p in preview.items())
        else:
            assert preview == {}


def play_random_game(seed: int, policy: random.Random, *, leaves: bool, max_seats: int = 8) -> Match:
    """A whole match: dice from a MatchRng keyed by ``seed``, choices from ``policy``."""
    seats = policy.randint(1, max_seats)
    card = policy.choice(["CLASSIC", "SCANDINAVIAN", "CARD_UNSPECIFIED"])
    rng = MatchRng(seed.to_bytes(32, "big"))
    table, events = play.start(GAME, seats, {"card": card}, ctx(rng))
    game = Match(table, events=list(events), states=[copy.deepcopy(table.state)])
    check_state(table.state)
    while GAME.outcome(game.state) is None:
        state = game.state
        (current,) = GAME.to_act(state)
        others = [
            s for s in range(seats) if s != current and not any(f["seat"] == s for f in state["forfeits"])
        ]
        if leaves and policy.random() < 0.01:
            game.step(rng, policy.choice(others) if others and policy.random() < 0.5 else current, None)
            continue
        if leaves and others and policy.random() < 0.01:
            game.refuse(policy.choice(others), {"claim_inactivity": {}}, wait=60.0)
            game.step(rng, policy.choice(others), {"claim_inactivity": {}}, wait=150.0)
            continue
        empty = [b for b in scoring.boxes(state["card"]) if b not in state["filled"][current]]
        if state["throws"] == 0:
            game.refuse(current, {"score": {"box": policy.choice(empty)}})
            game.step(rng, current, {"roll": {}})
        elif state["throws"] < MAX_THROWS and policy.random() < 0.6:
            keep = sorted(policy.sample(range(5), policy.randint(0, 4)))
            game.step(rng, current, {"roll": {"keep": keep}} if keep else {"roll": {}})
        else:
            taken = [b for b in scoring.boxes(state["card"]) if b in state["filled"][current]]
            if taken:
                game.refuse(current, {"score": {"box": policy.choice(taken)}})
            if state["throws"] == MAX_THROWS:
                game.refuse(current, {"roll": {}})
            if others:
                game.refuse(policy.choice(others), {"roll": {}})
            game.step(rng, current, {"score": {"box": policy.choice(empty)}})
    return game


@pytest.mark.parametrize("seed", range(24))
def test_random_games_keep_every_invariant(seed: int) -> None:
    game = play_random_game(seed, random.Random(seed), leaves=seed % 3 == 0)
    result = GAME.outcome(game.state)
    assert result is not None
    assert game.events[0].kind == "turn_started"
    if not result.forfeited:
        seats = len(game.state["filled"])
        assert game.turns == seats * len(scoring.boxes(game.state["card"]))
        assert result.reason == EndReason.COMPLETED


def test_the_same_seed_replays_the_same_match() -> None:
    first = play_random_game(7, random.Random(1), leaves=True)
    second = play_random_game(7, random.Random(1), leaves=True)
    other = play_random_game(8, random.Random(1), leaves=True)
    assert first.events == second.events
    assert first.state == second.state
    assert [e.data["dice"] for e in first.events if isinstance(e, Event) and e.kind == "rolled"] != [
        e.data["dice"] for e in other.events if isinstance(e, Event) and e.kind == "rolled"
    ]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), policy_seed=st.integers(0, 2**32), leaves=st.booleans())
def test_property_random_games(seed: int, policy_seed: int, leaves: bool) -> None:
    game = play_random_game(seed, random.Random(policy_seed), leaves=leaves)
    assert GAME.outcome(game.state) is not None


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_property_refused_actions_change_nothing(data: st.DataObject) -> None:
    seats = data.draw(st.integers(1, 4))
    table, _ = play.start(GAME, seats, {"card": data.draw(st.sampled_from(CARDS))}, ctx())
    rng = MatchRng(bytes(32))
    for _ in range(data.draw(st.integers(0, 12))):
        (current,) = GAME.to_act(table.state)
        if table.state["throws"] == 0:
            play.act(GAME, table, current, {"roll": {}}, ctx(rng))
        else:
            empty = [b for b in scoring.boxes(table.state["card"]) if b not in table.state["filled"][current]]
            play.act(GAME, table, current, {"score": {"box": data.draw(st.sampled_from(empty))}}, ctx(rng))
    action: JSON = data.draw(
        st.one_of(
            st.fixed_dictionaries(
                {"roll": st.fixed_dictionaries({"keep": st.lists(st.integers(-2, 7), max_size=6)})}
            ),
            st.fixed_dictionaries(
                {"score": st.fixed_dictionaries({"box": st.sampled_from(scoring.ALL_BOXES)})}
            ),
            st.just({"claim_inactivity": {}}),
            st.dictionaries(st.sampled_from(["roll", "score", "bid"]), st.just({}), max_size=3),
        )
    )
    seat = data.draw(st.integers(0, seats - 1))
    waited = data.draw(st.sampled_from([0.0, 119.0, 120.0]))
    before = copy.deepcopy(table)
    trial = copy.deepcopy(table)
    try:
        events = play.act(GAME, trial, seat, action, ctx(MatchRng(bytes(32)), now=table.idle_since + waited))
    except RulesError as refusal:
        assert refusal.code and refusal.code == refusal.code.lower() and " " not in refusal.code
    else:
        assert events
        check_transition(before.state, trial.state, seat, action, events)
    assert table == before


def test_every_view_event_and_action_fits_the_proto() -> None:
    kinds: set[str] = set()
    for seed in range(8):
        game = play_random_game(100 + seed, random.Random(seed), leaves=True, max_seats=4)
        for state in game.states:
            for seat in [*range(len(state["filled"])), None]:
                assert_fits(yatzy_pb2.View, GAME.view(state, seat))
        for event in game.events:
            if isinstance(event, Event):
                assert_event_fits(yatzy_pb2.Event, event)
        for action in game.actions:
            message = assert_fits(yatzy_pb2.Action, action)
            # What the service hands back after decoding the client's message is what was sent.
            assert json_format.MessageToDict(message, preserving_proto_field_name=True) == action
        kinds |= {e.kind for e in game.events if isinstance(e, Event)}
    assert kinds == {f.name for f in yatzy_pb2.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
