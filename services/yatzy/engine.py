"""Yatzy rules engine (RULES.md "Yatzy", seed 004; scoring in ``scoring.py``).

Seats play in seat order, seat 0 first. A turn: throw all five dice, re-throw
any of them up to twice more (the dice kept before a throw may be thrown on a
later one), then fill one empty box of the card with what the dice score there,
zero if nothing fits. The match ends when every card still in play is full
(13 turns each classic, 15 Scandinavian); the highest total wins and equal
totals share the rank.

Leaving (platform decision): the seat forfeits, ranked below every seat still
in, the earlier forfeit lower; the others play on. After 120 s without an
action any other seat still in may remove the seat to act, as if it had left.
Play stops once nobody is left, or only one seat is left of several.

Nothing is hidden: every view and event is public.

State (JSON)::

    card      "CLASSIC" | "SCANDINAVIAN"
    filled    per seat, {box: points} of the boxes filled so far
    forfeits  [{"seat": s, "reason": "forfeit" | "inactivity"}], in order
    current   the seat to act, None once over
    dice      the five current dice, [] before the turn's first throw
    throws    throws made this turn, 0..3
    over      True once the match has ended
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from services.kit.engine import JSON, Context, Engine, Event, InvalidAction, Result, RulesError
from services.yatzy import scoring

DICE = 5
MAX_THROWS = 3
INACTIVITY_SECONDS = 120.0

# Why a seat forfeited; also Result.reason.
LEFT = "forfeit"
INACTIVE = "inactivity"

# Options.card: CARD_UNSPECIFIED (or no card) means the default, the classic card.
_CARD_OPTIONS = {
    "CARD_UNSPECIFIED": scoring.CLASSIC,
    scoring.CLASSIC: scoring.CLASSIC,
    scoring.SCANDINAVIAN: scoring.SCANDINAVIAN,
}


class YatzyEngine:
    name = "yatzy"
    min_seats = 1
    max_seats = 8

    # --- Engine protocol ---------------------------------------------------

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        if (
            isinstance(seats, bool)
            or not isinstance(seats, int)
            or not self.min_seats <= seats <= self.max_seats
        ):
            raise InvalidAction("invalid_seat_count", "Yatzy is played by 1 to 8 seats")
        if cpu_seats:
            raise InvalidAction("cpu_seats_unsupported", "Yatzy has no CPU seats")
        state: JSON = {
            "card": _parse_options(options),
            "filled": [{} for _ in range(seats)],
            "forfeits": [],
            "current": 0,
            "dice": [],
            "throws": 0,
            "over": False,
        }
        return state, [_turn_started(state)]

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        kind, body = _parse_action(action)
        _check_seat(state, seat)
        if kind == "roll":
            keep = _parse_keep(body)
            _check_in_play(state, seat)
            _check_turn(state, seat)
            return _roll(state, seat, keep, ctx)
        if kind == "score":
            box = _parse_box(body, state["card"])
            _check_in_play(state, seat)
            _check_turn(state, seat)
            return _score(state, seat, box)
        if body:
            raise InvalidAction("malformed_action", "claim_inactivity has no fields")
        _check_in_play(state, seat)
        return _claim_inactivity(state, seat, ctx)

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        _check_seat(state, seat)
        _check_in_play(state, seat)
        new = copy.deepcopy(state)
        return new, _forfeit(new, seat, LEFT, [Event("seat_left", {"seat": seat})])

    def view(self, state: JSON, seat: int | None) -> JSON:
        # Yatzy hides nothing, so every seat and spectator gets the same view.
        card = state["card"]
        current = state["current"]
        rounds = len(scoring.boxes(card))
        view: JSON = {
            "card": card,
            "round": rounds if current is None else len(state["filled"][current]) + 1,
            "rounds": rounds,
            "dice": list(state["dice"]),
            "throws_used": state["throws"],
            "throws_left": 0 if state["over"] else MAX_THROWS - state["throws"],
            "cards": [_card_view(state, s) for s in range(len(state["filled"]))],
            "preview": [],
            "over": state["over"],
        }
        if current is not None:
            view["current_seat"] = current
            if state["dice"]:
                view["preview"] = [
                    {"box": box, "points": scoring.score(card, box, state["dice"])}
                    for box in scoring.boxes(card)
                    if box not in state["filled"][current]
                ]
        return view

    def to_act(self, state: JSON) -> list[int]:
        return [] if state["over"] else [state["current"]]

    def result(self, state: JSON) -> Result | None:
        if not state["over"]:
            return None
        return Result(
            ranks=_ranks(state),
            scores=_totals(state),
            reason=_end_reason(state),
            forfeited=[f["seat"] for f in state["forfeits"]],
        )


ENGINE: Engine = YatzyEngine()


# --- Parsing: malformed input is InvalidAction, before any rule is checked ----


def _parse_options(options: JSON) -> str:
    if not isinstance(options, dict) or set(options) - {"card"}:
        raise InvalidAction("invalid_options", "the only Yatzy option is card")
    card = options.get("card")
    if card is None:
        return scoring.CLASSIC
    if not isinstance(card, str) or card not in _CARD_OPTIONS:
        raise InvalidAction("invalid_options", "card must be CLASSIC or SCANDINAVIAN")
    return _CARD_OPTIONS[card]


def _parse_action(action: JSON) -> tuple[str, JSON]:
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAction("malformed_action", "an action has exactly one of roll, score, claim_inactivity")
    ((kind, body),) = action.items()
    if kind not in ("roll", "score", "claim_inactivity"):
        raise InvalidAction("unknown_action", "the action must be roll, score or claim_inactivity")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidAction("malformed_action", f"{kind} must be an object")
    return kind, body


def _parse_keep(body: JSON) -> list[int]:
    if set(body) - {"keep"}:
        raise InvalidAction("malformed_action", "roll has only the field keep")
    keep = body.get("keep")
    if keep is None:
        return []
    if not isinstance(keep, list):
        raise InvalidAction("malformed_action", "keep must be a list of die indices")
    for index in keep:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < DICE:
            raise InvalidAction("invalid_die_index", "die indices are 0 to 4")
    if len(set(keep)) != len(keep):
        raise InvalidAction("duplicate_die_index", "each die index may be kept once")
    return sorted(keep)


def _parse_box(body: JSON, card: str) -> str:
    if set(body) - {"box"}:
        raise InvalidAction("malformed_action", "score has only the field box")
    box = body.get("box")
    if not isinstance(box, str) or box not in scoring.ALL_BOXES:
        raise InvalidAction("unknown_box", "box must be one of the Box values")
    if box not in scoring.CARDS[card]:
        raise InvalidAction("box_not_on_card", f"{box} is not on the {card.lower()} card")
    return box


def _check_seat(state: JSON, seat: int) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(state["filled"]):
        raise InvalidAction("invalid_seat", "no such seat in this match")


def _check_in_play(state: JSON, seat: int) -> None:
    if state["over"]:
        raise RulesError("game_over", "the match is over")
    if _is_out(state, seat):
        raise RulesError("not_in_game", "this seat is no longer in the match")


def _check_turn(state: JSON, seat: int) -> None:
    if seat != state["current"]:
        raise RulesError("not_your_turn", "it is another seat's turn")


# --- Actions: each works on a copy, so a refused action changes nothing ------


def _roll(state: JSON, seat: int, keep: list[int], ctx: Context) -> tuple[JSON, list[Event]]:
    throws = state["throws"]
    if throws >= MAX_THROWS:
        raise RulesError("no_throws_left", "three throws already made; score a box")
    if throws == 0 and keep:
        raise RulesError("nothing_to_keep", "the first throw of a turn throws all five dice")
    if len(keep) == DICE:
        raise RulesError("must_throw_a_die", "a re-throw must throw at least one die")
    new = copy.deepcopy(state)
    old = new["dice"] or [0] * DICE
    # Dice are drawn in position order, so a replay with the seed reproduces them.
    new["dice"] = [old[i] if i in keep else ctx.rng.randint(1, 6) for i in range(DICE)]
    new["throws"] = throws + 1
    rolled = {"seat": seat, "dice": list(new["dice"]), "kept": keep, "throw_number": new["throws"]}
    return new, [Event("rolled", rolled)]


def _score(state: JSON, seat: int, box: str) -> tuple[JSON, list[Event]]:
    if state["throws"] == 0:
        raise RulesError("roll_first", "throw the dice before scoring")
    if box in state["filled"][seat]:
        raise RulesError("box_taken", f"{box} is already filled")
    new = copy.deepcopy(state)
    card = new["card"]
    points = scoring.score(card, box, new["dice"])
    new["filled"][seat][box] = points
    scored = {"seat": seat, "box": box, "points": points, "total": scoring.total(card, new["filled"][seat])}
    return new, [Event("scored", scored), *_next_turn(new)]


def _claim_inactivity(state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
    idle = state["current"]
    if seat == idle:
        raise RulesError("cannot_claim_yourself", "the seat to act cannot claim against itself")
    waited = ctx.now - ctx.last_action_at
    if waited < INACTIVITY_SECONDS:
        raise RulesError("too_early", f"a claim needs {INACTIVITY_SECONDS:.0f} s without an action")
    new = copy.deepcopy(state)
    return new, _forfeit(new, idle, INACTIVE, [Event("seat_removed", {"seat": idle, "by": seat})])


# --- Turn order, forfeits and the end ---------------------------------------


def _forfeit(state: JSON, seat: int, reason: str, events: list[Event]) -> list[Event]:
    """Put ``seat`` out of ``state`` (already a copy) and move play on."""
    state["forfeits"].append({"seat": seat, "reason": reason})
    still_in = _still_in(state)
    if not still_in or (len(state["filled"]) > 1 and len(still_in) == 1):
        return [*events, _end(state)]
    if seat == state["current"]:
        return [*events, *_next_turn(state)]
    return events


def _next_turn(state: JSON) -> list[Event]:
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
    return [_end(state)]


def _turn_started(state: JSON) -> Event:
    seat = state["current"]
    return Event("turn_started", {"seat": seat, "round": len(state["filled"][seat]) + 1})


def _end(state: JSON) -> Event:
    state["over"] = True
    state["current"] = None
    state["dice"] = []
    state["throws"] = 0
    game_over = {
        "ranks": _ranks(state),
        "scores": _totals(state),
        "reason": _end_reason(state).upper(),
        "forfeited": [f["seat"] for f in state["forfeits"]],
    }
    return Event("game_over", game_over)


def _is_out(state: JSON, seat: int) -> bool:
    return any(f["seat"] == seat for f in state["forfeits"])


def _still_in(state: JSON) -> list[int]:
    return [s for s in range(len(state["filled"])) if not _is_out(state, s)]


def _totals(state: JSON) -> list[int]:
    return [scoring.total(state["card"], filled) for filled in state["filled"]]


def _ranks(state: JSON) -> list[int]:
    """Standard competition ranking of the seats still in by total (ties share
    a rank, the next rank skips), then the forfeits, the latest highest."""
    totals = _totals(state)
    still_in = _still_in(state)
    ranks = [0] * len(totals)
    for seat in still_in:
        ranks[seat] = 1 + sum(1 for other in still_in if totals[other] > totals[seat])
    for place, forfeit in enumerate(reversed(state["forfeits"]), start=len(still_in) + 1):
        ranks[forfeit["seat"]] = place
    return ranks


def _end_reason(state: JSON) -> str:
    """Result.reason: a seat that left of its own accord outweighs removals for
    inactivity, which outweigh a match played to the end."""
    reasons = {f["reason"] for f in state["forfeits"]}
    if LEFT in reasons:
        return LEFT
    if INACTIVE in reasons:
        return INACTIVE
    return "completed"


def _card_view(state: JSON, seat: int) -> JSON:
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
        "removed_for_inactivity": INACTIVE in reasons,
    }
