"""Yatzy rules (RULES.md "Yatzy", seed 004; scoring in ``scoring.py``).

Seats play in seat order, seat 0 first. A turn: throw all five dice, re-throw
any of them up to twice more (the dice kept before a throw may be thrown on a
later one), then fill one empty box of the card with what the dice score there,
zero if nothing fits. The match ends when every card still in play is full
(13 turns each classic, 15 Scandinavian); the highest total wins and equal
totals share the rank.

Leaving (platform decision): the seat forfeits, ranked below every seat still
in, the earlier forfeit lower; the others play on. An inactivity claim (the
kit's) removes the seat to act the same way. Play stops once nobody is left,
or only one seat is left of several.

Nothing is hidden: every view and event is public.

State (JSON)::

    card      "CLASSIC" | "SCANDINAVIAN"
    filled    per seat, {box: points} of the boxes filled so far
    forfeits  [{"seat": s, "reason": "left" | "inactive"}], in order
    current   the seat to act, None once over
    dice      the five current dice, [] before the turn's first throw
    throws    throws made this turn, 0..3
    advice    Options.advice: seated players may ask the advisor (advice.py)
"""

from __future__ import annotations

from typing import Any, Final

from rodada.yatzy.v1 import yatzy_pb2

from services.kit.engine import (
    JSON,
    Context,
    Departure,
    EndReason,
    Event,
    InvalidAction,
    Outcome,
    RulesError,
    State,
    competition_ranks,
)
from services.yatzy import scoring

DICE = 5
DEFAULTS: Final = {"card": "CLASSIC"}  # Options fields left unset
MAX_THROWS = 3


def setup(seats: int, options: yatzy_pb2.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    card = scoring.SCANDINAVIAN if options.card == yatzy_pb2.SCANDINAVIAN else scoring.CLASSIC
    state: State = {
        "card": card,
        "filled": [{} for _ in range(seats)],
        "forfeits": [],
        "current": 0,
        "dice": [],
        "throws": 0,
        "advice": options.advice,
    }
    return state, [_turn_started(state)]


# --- Moves -------------------------------------------------------------------


def roll(state: State, seat: int, move: yatzy_pb2.Roll, ctx: Context) -> list[Event]:
    keep = sorted(move.keep)
    if any(not 0 <= index < DICE for index in keep):
        raise InvalidAction("invalid_die_index", "die indices are 0 to 4")
    if len(set(keep)) != len(keep):
        raise InvalidAction("duplicate_die_index", "each die index may be kept once")
    throws = state["throws"]
    if throws >= MAX_THROWS:
        raise RulesError("no_throws_left", "three throws already made; score a box")
    if throws == 0 and keep:
        raise RulesError("nothing_to_keep", "the first throw of a turn throws all five dice")
    if len(keep) == DICE:
        raise RulesError("must_throw_a_die", "a re-throw must throw at least one die")
    old = state["dice"] or [0] * DICE
    # Dice are drawn in position order, so a replay with the seed reproduces them.
    state["dice"] = [old[i] if i in keep else ctx.rng.randint(1, 6) for i in range(DICE)]
    state["throws"] = throws + 1
    rolled = {"seat": seat, "dice": list(state["dice"]), "kept": keep, "throw_number": state["throws"]}
    return [Event("rolled", rolled)]


def score(state: State, seat: int, move: yatzy_pb2.Score, ctx: Context) -> list[Event]:
    box = yatzy_pb2.Box.Name(move.box)
    if box not in scoring.ALL_BOXES:
        raise InvalidAction("unknown_box", "box must be one of the Box values")
    card = state["card"]
    if box not in scoring.CARDS[card]:
        raise InvalidAction("box_not_on_card", f"{box} is not on the {card.lower()} card")
    if state["throws"] == 0:
        raise RulesError("roll_first", "throw the dice before scoring")
    if box in state["filled"][seat]:
        raise RulesError("box_taken", f"{box} is already filled")
    points = scoring.score(card, box, state["dice"])
    state["filled"][seat][box] = points
    scored = {"seat": seat, "box": box, "points": points, "total": scoring.total(card, state["filled"][seat])}
    return [Event("scored", scored), *_next_turn(state)]


def depart(state: State, seat: int, why: Departure, ctx: Context) -> list[Event]:
    """The seat forfeits (it left or was removed); play moves on."""
    state["forfeits"].append({"seat": seat, "reason": why.value})
    still_in = _still_in(state)
    if not still_in or (len(state["filled"]) > 1 and len(still_in) == 1):
        _end(state)
        state["ended_by"] = why.value  # this departure ended the match: the reason
        return []
    if seat == state["current"]:
        return _next_turn(state)
    return []


# --- Reading the state ---------------------------------------------------------


def to_act(state: State) -> list[int]:
    return [] if state["current"] is None else [state["current"]]


def in_play(state: State, seat: int) -> bool:
    return not _is_out(state, seat)


def totals(state: State) -> list[int]:
    return [scoring.total(state["card"], filled) for filled in state["filled"]]


def outcome(state: State) -> Outcome | None:
    if state["current"] is not None:
        return None
    return Outcome(
        ranks=_ranks(state),
        scores=totals(state),
        reason=_end_reason(state),
        forfeited=[f["seat"] for f in state["forfeits"]],
    )


def view(state: State, seat: int | None) -> JSON:
    """Yatzy hides nothing, so every seat and spectator gets the same view."""
    card = state["card"]
    current = state["current"]
    rounds = len(scoring.boxes(card))
    view: JSON = {
        "card": card,
        "round": rounds if current is None else len(state["filled"][current]) + 1,
        "rounds": rounds,
        "dice": list(state["dice"]),
        "throws_used": state["throws"],
        "throws_left": 0 if current is None else MAX_THROWS - state["throws"],
        "cards": [_card_view(state, s) for s in range(len(state["filled"]))],
        "preview": [],
    }
    if current is not None and state["dice"]:
        points = scoring.scores(card, state["dice"])
        view["preview"] = [
            {"box": box, "points": points[box]}
            for box in scoring.boxes(card)
            if box not in state["filled"][current]
        ]
    return view


# Every re-throw: each set of dice to keep but all five, as index sets. The
# same every time, and the callers only read actions: made once.
_RE_THROWS: Final = tuple(
    {"roll": {"keep": [i for i in range(DICE) if mask >> i & 1]}} for mask in range(2**DICE - 1)
)


def legal(state: State, seat: int) -> list[JSON]:
    """Every action the seat to act may make now (distinct keeps as index sets)."""
    if seat != state["current"]:
        return []
    if state["throws"] == 0:
        return [{"roll": {}}]
    actions: list[JSON] = list(_RE_THROWS) if state["throws"] < MAX_THROWS else []
    actions += [
        {"score": {"box": box}} for box in scoring.boxes(state["card"]) if box not in state["filled"][seat]
    ]
    return actions


# --- Turn order, forfeits and the end ---------------------------------------


def _next_turn(state: State) -> list[Event]:
    """Pass the dice to the next seat still in whose card has an empty box."""
    seats = len(state["filled"])
    rounds = len(scoring.boxes(state["card"]))
    for step in range(1, seats + 1):
        seat = (state["current"] + step) % seats
        if not _is_out(state, seat) and len(state["filled"][seat]) < rounds:
            state["current"] = seat
            state["dice"] = []
            state["throws"] = 0
            return [_turn_started(state)]
    # Turns go round in order, so the next seat's card is full only when all are.
    _end(state)
    return []


def _turn_started(state: State) -> Event:
    seat = state["current"]
    return Event("turn_started", {"seat": seat, "round": len(state["filled"][seat]) + 1})


def _end(state: State) -> None:
    state["current"] = None
    state["dice"] = []
    state["throws"] = 0


def _is_out(state: State, seat: int) -> bool:
    return any(f["seat"] == seat for f in state["forfeits"])


def _still_in(state: State) -> list[int]:
    return [s for s in range(len(state["filled"])) if not _is_out(state, s)]


def _ranks(state: State) -> list[int]:
    """Standard competition ranking of the seats still in by total (ties share
    a rank, the next rank skips), then the forfeits, the latest highest."""
    scores = totals(state)
    still_in = _still_in(state)
    ranks = [0] * len(scores)
    for seat, rank in zip(still_in, competition_ranks([scores[s] for s in still_in]), strict=True):
        ranks[seat] = rank
    for place, forfeit in enumerate(reversed(state["forfeits"]), start=len(still_in) + 1):
        ranks[forfeit["seat"]] = place
    return ranks


def _end_reason(state: State) -> EndReason:
    """How the match ended (match.proto's EndReason): by the departure that
    left nobody to play against — FORFEIT for leaving, INACTIVITY for a
    removal — or COMPLETED when it was played to its end, whoever left
    before (they are in ``forfeited``, ranked last), as at every table."""
    ended_by = state.get("ended_by")
    return Departure(ended_by).end_reason if ended_by else EndReason.COMPLETED


def _card_view(state: State, seat: int) -> JSON:
    card = state["card"]
    filled: dict[str, int] = state["filled"][seat]
    reasons = [f["reason"] for f in state["forfeits"] if f["seat"] == seat]
    entries: list[dict[str, Any]] = [
        {"box": box, "filled": box in filled, "points": filled.get(box, 0)} for box in scoring.boxes(card)
    ]
    return {
        "seat": seat,
        "boxes": entries,
        "upper_subtotal": scoring.upper_subtotal(filled),
        "bonus": scoring.upper_bonus(card, filled),
        "total": scoring.total(card, filled),
        "forfeited": bool(reasons),
        "removed_for_inactivity": Departure.INACTIVE in reasons,
    }
