"""Dudo played at random: thousands of seeded games checked move by move
against the rules written out again here, every view, event and action fitted
into the proto, and the secrecy of the dice."""

from __future__ import annotations

import copy
import hashlib
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.dudo.v1 import dudo_pb2

from services.dudo.engine import ENGINE
from services.kit.engine import Event, RulesError
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

JSON = dict[str, Any]
START = 1_000.0
MAX_STEPS = 20_000  # far above any game: each round ends with a call soon enough
PRIVATE = {"dice_rolled", "assist_changed"}


@dataclass(frozen=True)
class Step:
    """One move of a random game, as the checks and hooks see it."""

    before: JSON | None  # the state before; None for the match's creation
    seat: int | None  # who moved
    action: JSON | None  # None for a leave
    at: float  # ctx.now of the move
    after: JSON  # the state after (the same state when refused)
    events: list[Event]
    error: RulesError | None


Hook = Callable[[Step], None]


def redo(step: Step, state: JSON) -> tuple[JSON, list[Event]]:
    """The step's move again, on ``state``, with a fresh generator."""
    assert step.seat is not None
    context = ctx(MatchRng(bytes(32)), now=step.at)
    if step.action is None:
        return ENGINE.leave(state, step.seat, context)
    return ENGINE.apply(state, step.seat, step.action, context)


# --- The rules again, from RULES.md, for the checks ---------------------------


def refusal(table: JSON, quantity: int, face: int) -> str | None:
    """The error code RULES.md implies for bidding (quantity, face) on the
    public ``table`` (a spectator's view), or None if the bid is legal."""
    if quantity > table["dice_in_play"]:
        return "quantity_too_high"
    standing = table.get("current_bid")
    palifico = table["palifico_round"]
    if standing is None:
        if face == 1 and not (palifico or table["options"]["open_on_ones"]):
            return "opening_on_ones"
        return None
    q0, f0 = standing["quantity"], standing["face"]
    if palifico:
        if face != f0:
            return "face_locked"
        ok = quantity > q0
    elif f0 != 1 and face != 1:
        ok = quantity > q0 or (quantity == q0 and face > f0)
    elif f0 != 1:
        ok = quantity >= math.ceil(q0 / 2)
    elif face == 1:
        ok = quantity > q0
    else:
        ok = quantity >= 2 * q0 + 1
    return None if ok else "bid_too_low"


def matching(hands: list[JSON], face: int, palifico: bool) -> int:
    dice = [die for hand in hands for die in hand["dice"]]
    return dice.count(face) + (dice.count(1) if face != 1 and not palifico else 0)


def left_of(table: JSON, seat: int) -> int:
    """``seat`` if still in, else the first player to its left still in."""
    seats = len(table["players"])
    for step in range(seats):
        other = (seat + step) % seats
        if not table["players"][other]["out"]:
            return other
    raise AssertionError("nobody is in")


def visible(event: Event, seat: int | None) -> bool:
    return event.audience is None or (seat is not None and seat in event.audience)


# --- A random player and the move-by-move checks ------------------------------


def choose_move(chooser: random.Random, table: JSON, now: float) -> tuple[int, JSON | None, float]:
    """A move for someone: mostly the seat to act bidding or calling, at times
    an off-turn action, a leave (action None) or an illegal bid."""
    seats = len(table["players"])
    turn = table["turn"]
    in_play = [p["seat"] for p in table["players"] if not p["out"]]
    roll = chooser.random()
    if roll < 0.01:
        return chooser.choice(in_play), None, now
    if roll < 0.03:
        later = now + chooser.choice([0.0, 119.0, 120.0, 300.0])
        return chooser.randrange(seats), {"claim_inactivity": {}}, later
    if roll < 0.05:
        return chooser.randrange(seats), {"set_assist": {"on": chooser.random() < 0.5}}, now
    if roll < 0.06:
        return chooser.randrange(seats), {"bid": {"quantity": 1, "face": 2}}, now
    if "current_bid" in table and roll < 0.30:
        return turn, {"dudo": {}}, now
    if "current_bid" in table and roll < 0.36:
        return turn, {"calza": {}}, now
    face = chooser.randint(1, 6)
    if chooser.random() < 0.7:
        lowest = next((q for q in range(1, table["dice_in_play"] + 1) if refusal(table, q, face) is None), 1)
        quantity = lowest + chooser.choice([0, 0, 0, 1, 2])
    else:
        quantity = chooser.randint(1, table["dice_in_play"] + 1)
    return turn, {"bid": {"quantity": quantity, "face": face}}, now


def check_refusal(table: JSON, seat: int, action: JSON, error: RulesError, may_claim: bool) -> None:
    """The engine refused a move on the public ``table``: the rules must agree
    on why."""
    kind = next(iter(action))
    if table["players"][seat]["out"] and kind != "set_assist":
        assert error.code == "not_in_game"
    elif kind == "claim_inactivity":
        if seat == table["turn"]:
            assert error.code == "cannot_claim_yourself"
        else:
            assert error.code == "too_early" and not may_claim
    elif kind == "calza" and not table["options"]["calza"]:
        assert error.code == "calza_disabled"
    elif seat != table["turn"]:
        assert error.code == "not_your_turn"
    elif kind == "bid":
        assert error.code == refusal(table, action["bid"]["quantity"], action["bid"]["face"])
    else:
        raise AssertionError(f"{kind} refused with {error.code}")
    assert error.message


def check_accepted(
    before: JSON,
    after: JSON,
    seat: int,
    action: JSON | None,
    events: list[Event],
    hands: list[JSON],
    palifico_had: set[int],
    tally: Counter[str],
) -> None:
    """The engine accepted a move from the public ``before`` table to ``after``;
    ``hands`` are every player's own dice as their views showed them."""
    kinds = [event.kind for event in events]
    public = {event.kind: event.data for event in events if event.audience is None}
    for event in events:
        if event.kind == "dice_rolled":
            assert event.audience == (event.data["seat"],)
        elif event.kind == "assist_changed":
            assert event.audience == (seat,)
        else:
            assert event.audience is None
    delta = after["dice_in_play"] - before["dice_in_play"]
    kind = "leave" if action is None else next(iter(action))
    if kind == "bid":
        quantity, face = action["bid"]["quantity"], action["bid"]["face"]  # type: ignore[index]
        assert refusal(before, quantity, face) is None, (before, action)
        assert 1 <= quantity <= before["dice_in_play"]
        assert kinds == ["bid_made"]
        assert after["current_bid"] == {"quantity": quantity, "face": face}
        assert after["turn"] == left_of(after, (seat + 1) % len(after["players"]))
        assert delta == 0
        tally["bid"] += 1
    elif kind == "set_assist":
        assert kinds == ["assist_changed"] and delta == 0
        tally["set_assist"] += 1
    elif kind in ("leave", "claim_inactivity"):
        gone = seat if kind == "leave" else before["turn"]
        out = public["player_out"]
        assert out["seat"] == gone
        assert out["reason"] == ("LEFT" if kind == "leave" else "REMOVED_INACTIVE")
        assert out["place"] == sum(1 for p in before["players"] if not p["out"])
        assert delta == -before["players"][gone]["dice_count"]
        assert ("round_voided" in public) == (before.get("bidder") == gone and "game_over" not in public)
        tally[kind] += 1
        tally["round_voided"] += "round_voided" in public
    else:
        # Dudo or calza: every die revealed, the count and who loses, by the rules.
        reveal = public["revealed"]
        bid, bidder = before["current_bid"], before["bidder"]
        palifico = before["palifico_round"]
        assert reveal["hands"] == hands
        assert (reveal["bid"], reveal["bidder"], reveal["caller"]) == (bid, bidder, seat)
        count = matching(hands, bid["face"], palifico)
        assert reveal["count"] == count
        loser: int | None = None
        if kind == "dudo":
            loser = bidder if count < bid["quantity"] else seat
            assert reveal["outcome"] == ("BIDDER_LOSES" if loser == bidder else "CALLER_LOSES")
            assert delta == -1
        elif count == bid["quantity"]:
            assert reveal["outcome"] == "CALZA_RIGHT" and "loser" not in reveal
            below_start = before["players"][seat]["dice_count"] < before["options"]["dice_per_player"]
            assert reveal.get("gainer") == (seat if below_start else None)
            assert delta == (1 if below_start else 0)
            tally["calza_gain" if below_start else "calza_full"] += 1
        else:
            loser = seat
            assert reveal["outcome"] == "CALZA_WRONG"
            assert delta == -1
        assert reveal.get("loser") == loser
        tally[reveal["call"]] += 1
        if loser is not None:
            tally["out"] += after["players"][loser]["out"]
        if "round_started" in public:
            started = public["round_started"]
            assert started["opener"] == left_of(after, seat if loser is None else loser)
            assert started["dice_in_play"] == after["dice_in_play"] == sum(started["dice_counts"])
            dropped = loser is not None and after["players"][loser]["dice_count"] == 1
            palifico_now = before["options"]["palifico"] and dropped and loser not in palifico_had
            assert started["palifico"] == palifico_now
            if palifico_now:
                palifico_had.add(loser)  # type: ignore[arg-type]
                tally["palifico"] += 1
        else:
            assert "game_over" in public
    if "game_over" in public:
        check_game_over(after, public["game_over"])
        tally["games"] += 1
        tally[public["game_over"]["reason"]] += 1


def check_game_over(table: JSON, game_over: JSON) -> None:
    players = table["players"]
    still_in = [p["seat"] for p in players if not p["out"]]
    assert still_in == [game_over["winner"]] == [table["winner"]]
    assert sorted(game_over["ranks"]) == list(range(1, len(players) + 1))
    assert [p["place"] for p in players] == game_over["ranks"]
    assert game_over["ranks"][game_over["winner"]] == 1


def play(game: int, tally: Counter[str], hook: Hook | None = None) -> JSON:
    """One seeded game, checked move by move; returns its final state."""
    chooser = random.Random(game)
    rng = MatchRng(hashlib.sha256(b"dudo %d" % game).digest())
    seats = chooser.randint(2, 6)
    options = {
        "dice_per_player": chooser.choice([1, 2, 3, 3, 5]),
        "palifico": chooser.random() < 0.5,
        "calza": chooser.random() < 0.5,
        "open_on_ones": chooser.random() < 0.3,
    }
    now = turn_began = START
    state, events = ENGINE.new_match(seats, options, ctx(rng, now))
    if hook:
        hook(Step(None, None, None, now, state, events, None))
    palifico_had: set[int] = set()
    for _ in range(MAX_STEPS):
        if ENGINE.result(state) is not None:
            return state
        before = ENGINE.view(state, None)
        seat, action, at = choose_move(chooser, before, now)
        hands: list[JSON] = []
        if action is not None and ("dudo" in action or "calza" in action):
            # What a reveal must show: every player's dice as their own view had them.
            hands = [{"seat": s, "dice": ENGINE.view(state, s)["my_dice"]} for s in range(seats)]
            hands = [hand for hand in hands if hand["dice"]]
        may_claim = at - turn_began >= 120
        context = ctx(rng, now=at, last_action_at=now)
        try:
            if action is None:
                new, events = ENGINE.leave(state, seat, context)
            else:
                new, events = ENGINE.apply(state, seat, action, context)
        except RulesError as error:
            assert action is not None
            check_refusal(before, seat, action, error, may_claim)
            tally[error.code] += 1
            if hook:
                hook(Step(state, seat, action, at, state, [], error))
            continue
        after = ENGINE.view(new, None)
        check_accepted(before, after, seat, action, events, hands, palifico_had, tally)
        if action is not None and "claim_inactivity" in action:
            assert may_claim
        if (
            after.get("turn") != before["turn"]
            or after["round"] != before["round"]
            or "bid" in (action or {})
        ):
            turn_began = at  # a new turn: the inactivity clock starts again
        if hook:
            hook(Step(state, seat, action, at, new, events, None))
        state, now = new, at
    raise AssertionError(f"game {game} did not end")


# --- Thousands of games -------------------------------------------------------


def test_thousands_of_random_games_follow_the_rules() -> None:
    tally: Counter[str] = Counter()
    for game in range(2_000):
        play(game, tally)
    assert tally["games"] == 2_000
    # Everything the checks cover really happened, many times over.
    for seen in (
        "bid", "DUDO", "CALZA", "calza_gain", "calza_full", "palifico", "out", "leave", "claim_inactivity",
        "round_voided", "set_assist", "COMPLETED", "FORFEIT", "INACTIVITY",
        "bid_too_low", "quantity_too_high", "opening_on_ones", "face_locked", "not_your_turn",
        "calza_disabled", "too_early", "cannot_claim_yourself", "not_in_game",
    ):  # fmt: skip
        assert tally[seen] >= 10, (seen, tally)


@settings(max_examples=40, deadline=None)
@given(game=st.integers(min_value=10**6, max_value=2**40))
def test_any_seeded_game_follows_the_rules(game: int) -> None:
    tally: Counter[str] = Counter()
    final = play(game, tally)
    assert tally["games"] == 1
    result = ENGINE.result(final)
    assert result is not None
    assert sorted(result.ranks) == list(range(1, len(result.ranks) + 1))


# --- Every view, event and action fits the proto ------------------------------


def test_views_events_and_actions_fit_the_proto() -> None:
    counts: Counter[str] = Counter()

    def fit(step: Step) -> None:
        if step.action is not None:
            assert_fits(dudo_pb2.Action, step.action)
            counts["actions"] += 1
        for event in step.events:
            assert_event_fits(dudo_pb2.Event, event)
            counts[event.kind] += 1
        if step.error is None:
            for viewer in [None, *range(len(step.after["counts"]))]:
                view = ENGINE.view(step.after, viewer)
                assert_fits(dudo_pb2.View, view)
                counts["views"] += 1
                counts["odds"] += "current_bid_probability" in view

    for game in range(40):
        play(game, Counter(), fit)
    assert counts["actions"] > 1_000 and counts["views"] > 5_000 and counts["odds"] > 20
    kinds = {field.name for field in dudo_pb2.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
    assert {kind for kind in kinds if counts[kind] == 0} == set()


def containers(value: Any) -> dict[int, Any]:
    """Every list and dict inside ``value``, by identity."""
    found: dict[int, Any] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found[id(item)] = item
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


def test_states_views_and_events_share_nothing() -> None:
    """A new state shares no list or dict with the one it came from, nor with
    the events and views handed out, so nobody can change a state by accident."""
    checked: Counter[str] = Counter()

    def apart(step: Step) -> None:
        if step.error is not None:
            return
        held = containers(step.after)
        if step.before is not None:
            assert not held.keys() & containers(step.before).keys()
            checked["states"] += 1
        for event in step.events:
            assert not held.keys() & containers(event.data).keys()
            checked["events"] += 1
        for viewer in [None, *range(step.after["seats"])]:
            assert not held.keys() & containers(ENGINE.view(step.after, viewer)).keys()
            checked["views"] += 1

    for game in range(25):
        play(game, Counter(), apart)
    assert min(checked.values()) > 500, checked


# --- Secrecy: nothing shows another seat's dice before the reveal -------------


def rethrow_others(state: JSON, seat: int | None) -> JSON:
    """The same table with every die of every seat but ``seat`` changed."""
    other = copy.deepcopy(state)
    other["dice"] = [
        dice if s == seat else [die % 6 + 1 for die in dice] for s, dice in enumerate(state["dice"])
    ]
    return other


def test_no_view_event_or_error_depends_on_another_seats_dice() -> None:
    """For a seat (or a spectator), a table where everyone else threw other
    dice must look exactly the same until a reveal: its views (with assisted
    mode on too), the events it receives and the errors it gets."""
    seen: Counter[str] = Counter()

    def same_unless_revealed(step: Step) -> None:
        before = step.before
        if before is None or before["winner"] is not None:
            return
        for viewer in [None, *range(before["seats"])]:
            other = rethrow_others(before, viewer)
            assert ENGINE.view(before, viewer) == ENGINE.view(other, viewer)
            seen["views"] += 1
            if viewer is not None:
                assisted, _ = ENGINE.apply(before, viewer, {"set_assist": {"on": True}}, ctx())
                other_assisted, _ = ENGINE.apply(other, viewer, {"set_assist": {"on": True}}, ctx())
                assert ENGINE.view(assisted, viewer) == ENGINE.view(other_assisted, viewer)
                if before["dice"][viewer]:
                    # Not vacuous: changing the viewer's own dice changes its view.
                    assert ENGINE.view(rethrow_others(assisted, None), viewer) != ENGINE.view(
                        assisted, viewer
                    )
                    seen["own_dice_seen"] += 1
            try:
                _, events = redo(step, before)
            except RulesError as error:
                with_other = None
                try:
                    redo(step, other)
                except RulesError as other_error:
                    with_other = other_error
                assert with_other is not None
                assert (with_other.code, with_other.message) == (error.code, error.message)
                seen["errors"] += 1
                continue
            _, other_events = redo(step, other)
            mine = [(event.kind, event.data) for event in events if visible(event, viewer)]
            theirs = [(event.kind, event.data) for event in other_events if visible(event, viewer)]
            if any(event.kind == "revealed" for event in events):
                assert mine != theirs  # the reveal shows everyone's dice, as it should
                seen["reveals_differ"] += 1
            else:
                assert mine == theirs
                seen["events"] += 1

    for game in range(25):
        play(game, Counter(), same_unless_revealed)
    assert len(seen) == 5 and min(seen.values()) > 100, seen


def test_dice_go_only_to_their_owner() -> None:
    state, events = ENGINE.new_match(4, {"dice_per_player": 5}, ctx(MatchRng(b"\x07" * 32)))
    rolled = [event for event in events if event.kind == "dice_rolled"]
    assert [event.audience for event in rolled] == [(0,), (1,), (2,), (3,)]
    for event in rolled:
        (seat,) = event.audience or ()
        assert event.data["dice"] == ENGINE.view(state, seat)["my_dice"] == state["dice"][seat]
    public = [event for event in events if event.audience is None]
    assert [event.kind for event in public] == ["round_started"]
    assert set(public[0].data) == {"round", "opener", "dice_counts", "dice_in_play", "palifico"}


# --- Any input at any moment: accepted, or refused with nothing changed -------

_ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=True), st.text(max_size=3),
    st.lists(st.integers(1, 6), max_size=2),
)  # fmt: skip
_ANY_BODY = st.one_of(
    _ANY_VALUE, st.dictionaries(st.sampled_from(["quantity", "face", "on", "seat"]), _ANY_VALUE, max_size=3)
)
_ANY_ACTION = st.one_of(
    st.dictionaries(
        st.sampled_from(["bid", "dudo", "calza", "set_assist", "claim_inactivity", "pass"]),
        _ANY_BODY,
        max_size=2,
    ),
    _ANY_VALUE,
)


@settings(max_examples=300, deadline=None)
@given(game=st.integers(0, 300), steps=st.integers(0, 60), seat=st.integers(-1, 6), action=_ANY_ACTION)
def test_any_action_is_accepted_or_refused_cleanly(game: int, steps: int, seat: int, action: Any) -> None:
    moments: list[JSON] = []

    def keep(step: Step) -> None:
        moments.append(step.after)

    play(game, Counter(), keep)
    state = moments[min(steps, len(moments) - 1)]
    snapshot = copy.deepcopy(state)
    try:
        new, events = ENGINE.apply(state, seat, action, ctx(MatchRng(bytes(32)), now=START + 10_000))
    except RulesError as error:
        assert error.code and error.message
        assert state == snapshot
        return
    assert state == snapshot
    table = ENGINE.view(new, None)
    assert table["dice_in_play"] == sum(p["dice_count"] for p in table["players"])
    for event in events:
        assert_event_fits(dudo_pb2.Event, event)
