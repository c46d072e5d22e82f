"""Dudo played at random through the kit: thousands of seeded games checked
move by move against the rules written out again here, every view, event and
action fitted into the proto, and the secrecy of the dice."""

from __future__ import annotations

import copy
import hashlib
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from rodada.dudo.v1 import dudo_pb2

from services.dudo.game import GAME
from services.kit import play
from services.kit.engine import EndReason, Event, RulesError
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx

JSON = dict[str, Any]
START = 1_000.0
MAX_STEPS = 20_000  # far above any game: each round ends with a call soon enough


@dataclass(frozen=True)
class Step:
    """One move of a random game, as the checks and hooks see it."""

    before: Table | None  # the table before; None for the match's creation
    seat: int | None  # who moved
    action: JSON | None  # None for a leave
    at: float  # ctx.now of the move
    after: Table  # the table after (the same table when refused)
    happened: list[Happening]
    error: RulesError | None


Hook = Callable[[Step], None]


def fresh(table: Table) -> Table:
    """The table decoded anew, as the service does before every step (the kit
    throws a table away when a move is refused)."""
    state = orjson.loads(orjson.dumps(table.state))
    return Table(state, table.seats, table.mode, list(table.cpu_seats), list(table.left), table.idle_since)


def run(table: Table, seat: int, action: JSON | None, at: float, rng: Any) -> list[Happening]:
    """``seat`` plays ``action`` (None: leaves) on ``table``, at ``at``."""
    context = ctx(rng, now=at, idle_since=table.idle_since)
    if action is None:
        return play.leave(GAME, table, seat, context)
    return play.act(GAME, table, seat, action, context)


def redo(step: Step, before: Table) -> tuple[Table, list[Happening]]:
    """The step's move again, on a copy of ``before``, with a fresh generator."""
    assert step.seat is not None
    table = fresh(before)
    return table, run(table, step.seat, step.action, step.at, MatchRng(bytes(32)))


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


def visible(item: Happening, seat: int | None) -> bool:
    return item.audience is None or (seat is not None and seat in item.audience)


def seen_by(happened: list[Happening], seat: int | None) -> list[Any]:
    return [
        (item.kind, item.data) if isinstance(item, Event) else item
        for item in happened
        if visible(item, seat)
    ]


# --- A random player and the move-by-move checks ------------------------------


def choose_move(chooser: random.Random, table: JSON, turn: int, now: float) -> tuple[int, JSON | None, float]:
    """A move for someone: mostly the seat to act bidding or calling, at times
    an off-turn action, a leave (action None) or an illegal bid."""
    seats = len(table["players"])
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


def check_refusal(
    table: JSON, turn: int, seat: int, action: JSON, error: RulesError, may_claim: bool
) -> None:
    """The kit or the rules refused a move on the public ``table``: the rules
    must agree on why (the kit's checks come first: the seat is in, then the
    turn, for every move but set_assist)."""
    kind = next(iter(action))
    if table["players"][seat]["out"]:
        assert error.code == "not_in_game"
    elif kind == "claim_inactivity":
        if seat == turn:
            assert error.code == "cannot_claim_yourself"
        else:
            assert error.code == "too_early" and not may_claim
    elif seat != turn:
        assert kind != "set_assist" and error.code == "not_your_turn"
    elif kind == "calza" and not table["options"]["calza"]:
        assert error.code == "calza_disabled"
    elif kind == "bid":
        assert error.code == refusal(table, action["bid"]["quantity"], action["bid"]["face"])
    else:
        raise AssertionError(f"{kind} refused with {error.code}")
    assert error.message


def check_accepted(
    before: JSON,
    turn: int,
    after: Table,
    seat: int,
    action: JSON | None,
    happened: list[Happening],
    hands: list[JSON],
    palifico_had: set[int],
    tally: Counter[str],
) -> None:
    """The kit accepted a move from the public ``before`` table (``turn`` to
    act) to ``after``; ``hands`` are every player's own dice as their views
    showed them."""
    events = [item for item in happened if isinstance(item, Event)]
    notices = [item for item in happened if isinstance(item, Notice)]
    kinds = [event.kind for event in events]
    public = {event.kind: event.data for event in events if event.audience is None}
    for event in events:
        if event.kind == "dice_rolled":
            assert event.audience == (event.data["seat"],)
        elif event.kind == "assist_changed":
            assert event.audience == (seat,)
        else:
            assert event.audience is None
    table = GAME.view(after.state, None)
    over = GAME.outcome(after.state) is not None
    delta = table["dice_in_play"] - before["dice_in_play"]
    kind = "leave" if action is None else next(iter(action))
    if kind == "bid":
        quantity, face = action["bid"]["quantity"], action["bid"]["face"]  # type: ignore[index]
        assert refusal(before, quantity, face) is None, (before, action)
        assert 1 <= quantity <= before["dice_in_play"]
        assert kinds == ["bid_made"] and notices == []
        assert table["current_bid"] == {"quantity": quantity, "face": face}
        assert GAME.to_act(after.state) == [left_of(table, (seat + 1) % len(table["players"]))]
        assert delta == 0
        tally["bid"] += 1
    elif kind == "set_assist":
        assert kinds == ["assist_changed"] and notices == [] and delta == 0
        tally["set_assist"] += 1
    elif kind in ("leave", "claim_inactivity"):
        gone = seat if kind == "leave" else turn
        # The kit's notice first (LEFT, or CLAIMED by the claimant), then the game's consequences.
        assert notices == [Notice("LEFT", seat) if kind == "leave" else Notice("CLAIMED", turn, by=seat)]
        assert happened[0] == notices[0]
        out = public["player_out"]
        assert out == {
            "seat": gone,
            "reason": "LEFT" if kind == "leave" else "REMOVED_INACTIVE",
            "place": sum(1 for p in before["players"] if not p["out"]),
        }
        assert delta == -before["players"][gone]["dice_count"]
        assert ("round_voided" in public) == (before.get("bidder") == gone and not over)
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
            tally["out"] += table["players"][loser]["out"]
        if "round_started" in public:
            started = public["round_started"]
            assert started["opener"] == left_of(table, seat if loser is None else loser)
            assert started["dice_in_play"] == table["dice_in_play"] == sum(started["dice_counts"])
            dropped = loser is not None and table["players"][loser]["dice_count"] == 1
            palifico_now = before["options"]["palifico"] and dropped and loser not in palifico_had
            assert started["palifico"] == palifico_now
            if palifico_now:
                palifico_had.add(loser)  # type: ignore[arg-type]
                tally["palifico"] += 1
        else:
            assert over
    if over:
        check_end(after)
        tally["games"] += 1
        result = GAME.outcome(after.state)
        assert result is not None
        tally[result.reason] += 1


def check_end(after: Table) -> None:
    """The match is over: one player in, the Result's ranks are the places."""
    result = GAME.outcome(after.state)
    assert result is not None
    players = GAME.view(after.state, None)["players"]
    still_in = [p["seat"] for p in players if not p["out"]]
    assert len(still_in) == 1 and result.ranks[still_in[0]] == 1
    assert sorted(result.ranks) == list(range(1, len(players) + 1))
    assert [p["place"] for p in players] == result.ranks
    assert result.scores == []
    assert GAME.to_act(after.state) == []


def play_game(game: int, tally: Counter[str], hook: Hook | None = None) -> Table:
    """One seeded game through the kit, checked move by move; returns its
    final table."""
    chooser = random.Random(game)
    rng = MatchRng(hashlib.sha256(b"dudo %d" % game).digest())
    seats = chooser.randint(2, 6)
    options = {
        "dice_per_player": chooser.choice([1, 2, 3, 3, 5]),
        "palifico": chooser.random() < 0.5,
        "calza": chooser.random() < 0.5,
        "open_on_ones": chooser.random() < 0.3,
    }
    now = clock = START
    table, happened = play.start(GAME, seats, options, ctx(rng, now))
    if hook:
        hook(Step(None, None, None, now, table, happened, None))
    palifico_had: set[int] = set()
    for _ in range(MAX_STEPS):
        if GAME.outcome(table.state) is not None:
            return table
        before = GAME.view(table.state, None)
        (turn,) = GAME.to_act(table.state)
        seat, action, at = choose_move(chooser, before, turn, now)
        hands: list[JSON] = []
        if action is not None and ("dudo" in action or "calza" in action):
            # What a reveal must show: every player's dice as their own view had them.
            hands = [{"seat": s, "dice": GAME.view(table.state, s)["my_dice"]} for s in range(seats)]
            hands = [hand for hand in hands if hand["dice"]]
        # The turn clock: from when the seat to act got the turn or last acted.
        assert table.idle_since == clock
        may_claim = at - clock >= 120
        after = fresh(table)
        try:
            happened = run(after, seat, action, at, rng)
        except RulesError as error:
            assert action is not None
            check_refusal(before, turn, seat, action, error, may_claim)
            tally[error.code] += 1
            if hook:
                hook(Step(table, seat, action, at, table, [], error))
            continue
        check_accepted(before, turn, after, seat, action, happened, hands, palifico_had, tally)
        if action is not None and "claim_inactivity" in action:
            assert may_claim
        if GAME.to_act(after.state) != [turn] or (action is not None and seat == turn):
            clock = at
        if hook:
            hook(Step(table, seat, action, at, after, happened, None))
        table, now = after, at
    raise AssertionError(f"game {game} did not end")


# --- Thousands of games -------------------------------------------------------


def test_thousands_of_random_games_follow_the_rules() -> None:
    tally: Counter[str] = Counter()
    for game in range(2_000):
        play_game(game, tally)
    assert tally["games"] == 2_000
    # Everything the checks cover really happened, many times over.
    for seen in (
        "bid", "DUDO", "CALZA", "calza_gain", "calza_full", "palifico", "out", "leave", "claim_inactivity",
        "round_voided", "set_assist", EndReason.COMPLETED, EndReason.FORFEIT, EndReason.INACTIVITY,
        "bid_too_low", "quantity_too_high", "opening_on_ones", "face_locked", "not_your_turn",
        "calza_disabled", "too_early", "cannot_claim_yourself", "not_in_game",
    ):  # fmt: skip
        assert tally[seen] >= 10, (seen, tally)


@settings(max_examples=40, deadline=None)
@given(game=st.integers(min_value=10**6, max_value=2**40))
def test_any_seeded_game_follows_the_rules(game: int) -> None:
    tally: Counter[str] = Counter()
    final = play_game(game, tally)
    assert tally["games"] == 1
    result = GAME.outcome(final.state)
    assert result is not None
    assert sorted(result.ranks) == list(range(1, len(result.ranks) + 1))


# --- Every view, event and action fits the proto ------------------------------


def test_views_events_and_actions_fit_the_proto() -> None:
    counts: Counter[str] = Counter()

    def fit(step: Step) -> None:
        if step.action is not None:
            assert_fits(dudo_pb2.Action, step.action)
            counts["actions"] += 1
        for event in step.happened:
            if isinstance(event, Event):
                assert_event_fits(dudo_pb2.Event, event)
                counts[event.kind] += 1
        if step.error is None:
            for viewer in [None, *range(step.after.seats)]:
                view = GAME.view(step.after.state, viewer)
                assert_fits(dudo_pb2.View, view)
                counts["views"] += 1
                counts["odds"] += "current_bid_probability" in view

    for game in range(40):
        play_game(game, Counter(), fit)
    assert counts["actions"] > 1_000 and counts["views"] > 5_000 and counts["odds"] > 20
    kinds = {field.name for field in dudo_pb2.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
    assert {kind for kind in kinds if counts[kind] == 0} == set()


# --- Secrecy: nothing shows another seat's dice before the reveal -------------


def rethrow_others(table: Table, seat: int | None) -> Table:
    """The same table with every die of every seat but ``seat`` changed."""
    other = fresh(table)
    other.state["dice"] = [
        dice if s == seat else [die % 6 + 1 for die in dice] for s, dice in enumerate(table.state["dice"])
    ]
    return other


def with_assist(table: Table, seat: int) -> Table:
    assisted = fresh(table)
    play.act(GAME, assisted, seat, {"set_assist": {"on": True}}, ctx())
    return assisted


def test_no_view_event_or_error_depends_on_another_seats_dice() -> None:
    """For a seat (or a spectator), a table where everyone else threw other
    dice must look exactly the same until a reveal: its views (with assisted
    mode on too), the events and notices it receives and the errors it gets."""
    seen: Counter[str] = Counter()

    def same_unless_revealed(step: Step) -> None:
        before = step.before
        if before is None or GAME.outcome(before.state) is not None:
            return
        for viewer in [None, *range(before.seats)]:
            other = rethrow_others(before, viewer)
            assert GAME.view(before.state, viewer) == GAME.view(other.state, viewer)
            seen["views"] += 1
            if viewer is not None and GAME.in_play(before.state, viewer):
                assisted, other_assisted = with_assist(before, viewer), with_assist(other, viewer)
                assert GAME.view(assisted.state, viewer) == GAME.view(other_assisted.state, viewer)
                # Not vacuous: changing the viewer's own dice changes its view.
                changed = rethrow_others(assisted, None)
                assert GAME.view(changed.state, viewer) != GAME.view(assisted.state, viewer)
                seen["own_dice_seen"] += 1
            try:
                _, happened = redo(step, before)
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
            _, other_happened = redo(step, other)
            mine, theirs = seen_by(happened, viewer), seen_by(other_happened, viewer)
            if any(isinstance(item, Event) and item.kind == "revealed" for item in happened):
                assert mine != theirs  # the reveal shows everyone's dice, as it should
                seen["reveals_differ"] += 1
            else:
                assert mine == theirs
                seen["events"] += 1

    for game in range(25):
        play_game(game, Counter(), same_unless_revealed)
    assert len(seen) == 5 and min(seen.values()) > 100, seen


def test_dice_go_only_to_their_owner() -> None:
    table, happened = play.start(GAME, 4, {"dice_per_player": 5}, ctx(MatchRng(b"\x07" * 32)))
    rolled = [event for event in happened if isinstance(event, Event) and event.kind == "dice_rolled"]
    assert [event.audience for event in rolled] == [(0,), (1,), (2,), (3,)]
    for event in rolled:
        (seat,) = event.audience or ()
        assert event.data["dice"] == GAME.view(table.state, seat)["my_dice"] == table.state["dice"][seat]
    public = [event for event in happened if event.audience is None]
    assert [event.kind for event in public] == ["round_started"]  # type: ignore[union-attr]
    assert set(public[0].data) == {"round", "opener", "dice_counts", "dice_in_play", "palifico"}  # type: ignore[union-attr]


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


# The acting seat is the caller's own (the service seats it): any seat of the table.
@settings(max_examples=300, deadline=None)
@given(game=st.integers(0, 300), steps=st.integers(0, 60), seat=st.integers(0, 5), action=_ANY_ACTION)
def test_any_action_is_accepted_or_refused_cleanly(game: int, steps: int, seat: int, action: Any) -> None:
    moments: list[Table] = []

    def keep(step: Step) -> None:
        moments.append(step.after)

    play_game(game, Counter(), keep)
    table = moments[min(steps, len(moments) - 1)]
    snapshot = copy.deepcopy(table)
    trial = fresh(table)
    try:
        happened = play.act(
            GAME, trial, seat % table.seats, action, ctx(MatchRng(bytes(32)), now=START + 10_000)
        )
    except RulesError as error:
        assert error.code and error.message
        assert table == snapshot
        return
    assert table == snapshot
    view = GAME.view(trial.state, None)
    assert view["dice_in_play"] == sum(p["dice_count"] for p in view["players"])
    for event in happened:
        if isinstance(event, Event):
            assert_event_fits(dudo_pb2.Event, event)
