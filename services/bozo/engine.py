"""Bozó, the Brazilian five-dice game (RULES.md "Bozó"; seed 000, bozo.com.br).

Reads top to bottom like the rules: the modes and their turn order, then a turn
(throw, cup declaration, score), then the end of the match (completed, leaving,
inactivity claim), then what a seat may see.

The state is a plain dict that never leaves the service:

- ``mode`` SOLO / DUEL / DUPLAS, ``seats``, ``turns_total``;
- ``turn``: index of the current turn, which is also the number of turns played;
  the seat to act is ``turn % seats`` in every mode (duplas: Jade 1, Âmbar 1,
  Jade 2, Âmbar 2 are seats 0, 1, 2, 3);
- the current turn: ``throws`` made (0..3), ``dice`` (five true faces once thrown,
  the ones under the cup included), ``kept`` and ``just_thrown`` (indices of the
  last throw), ``cup_pending``, ``last_reveal`` (the last declaration, or None);
- ``cards``: one per side (a seat in solo and duel, a team in duplas), each a
  dict box → ``{"points", "boca", "seat"}`` of the filled boxes;
- ``over``, ``reason`` (``completed`` / ``forfeit`` / ``inactivity``),
  ``winners`` and ``forfeited`` (seats).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from services.bozo import scoring
from services.kit.engine import JSON, Context, Event, InvalidAction, Result, Rng, RulesError

# --- The table --------------------------------------------------------------

MODE_SEATS: dict[str, int] = {"SOLO": 1, "DUEL": 2, "DUPLAS": 4}
MODE_FOR_SEATS: dict[int, str] = {seats: mode for mode, seats in MODE_SEATS.items()}
# Solo trains one card; duel and duplas both play 20 turns (10 per card).
MODE_TURNS: dict[str, int] = {"SOLO": 10, "DUEL": 20, "DUPLAS": 20}
TEAMS: tuple[str, str] = ("JADE", "AMBAR")  # duplas side 0 and side 1

DICE = 5
THROWS_PER_TURN = 3
INACTIVITY_SECONDS = 120
SIDES: tuple[str, str] = ("TOP", "BOTTOM")

# The fields each action kind may carry (its proto message's fields).
_ACTION_FIELDS: dict[str, frozenset[str]] = {
    "throw": frozenset({"keep", "cup"}),
    "declare": frozenset({"side"}),
    "score": frozenset({"box"}),
    "claim_inactivity": frozenset(),
}


def _side_of(state: JSON, seat: int) -> int:
    """The index of the card a seat plays on: its own, or its team's in duplas."""
    return seat % 2 if state["mode"] == "DUPLAS" else seat


def _seats_of_side(state: JSON, side: int) -> list[int]:
    return [seat for seat in range(state["seats"]) if _side_of(state, seat) == side]


def _side_count(state: JSON) -> int:
    return len(state["cards"])


def _seat_to_act(state: JSON) -> int:
    return int(state["turn"]) % int(state["seats"])


def _total(card: JSON) -> int:
    return sum(int(entry["points"]) for entry in card.values())


def _open_boxes(card: JSON) -> list[str]:
    return [box for box in scoring.BOXES if box not in card]


def _team_field(state: JSON, seat: int) -> JSON:
    """``{"team": …}`` for a duplas seat, nothing otherwise (proto default)."""
    return {"team": TEAMS[_side_of(state, seat)]} if state["mode"] == "DUPLAS" else {}


def _reset_turn(state: JSON) -> None:
    state.update(throws=0, dice=[], kept=[], just_thrown=[], cup_pending=False, last_reveal=None)


def _turn_started(state: JSON) -> Event:
    seat = _seat_to_act(state)
    return Event("turn_started", {"seat": seat, "turn": state["turn"] + 1, **_team_field(state, seat)})


def _mode(seats: int, options: JSON) -> str:
    """The mode asked for, or the one that fits the seat count."""
    if not isinstance(options, dict) or set(options) - {"mode"}:
        raise InvalidAction("invalid_options", "Bozó's only option is mode")
    mode = options.get("mode") or "MODE_UNSPECIFIED"
    if mode == "MODE_UNSPECIFIED":
        if seats not in MODE_FOR_SEATS:
            raise InvalidAction("invalid_seats", "Bozó is played by 1 (solo), 2 (duel) or 4 (duplas) seats")
        return MODE_FOR_SEATS[seats]
    if mode not in MODE_SEATS:
        raise InvalidAction("invalid_options", "mode must be SOLO, DUEL or DUPLAS")
    if MODE_SEATS[mode] != seats:
        raise InvalidAction("invalid_options", f"{mode} is played by {MODE_SEATS[mode]} seat(s)")
    return str(mode)


# --- Reading an action ---------------------------------------------------------
# Malformed input is refused here, before any rule is looked at, as InvalidAction.


def _parse(action: Any) -> tuple[str, JSON]:
    """The action's kind and its body with defaults filled in and values checked."""
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAction(
            "malformed_action", "an action holds exactly one of throw, declare, score, claim_inactivity"
        )
    ((kind, body),) = action.items()
    if kind not in _ACTION_FIELDS:
        raise InvalidAction("unknown_action", "unknown action kind")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidAction("malformed_action", f"{kind} must be an object")
    if set(body) - _ACTION_FIELDS[kind]:
        raise InvalidAction("malformed_action", f"{kind} has an unknown field")
    if kind == "throw":
        return kind, {"keep": _parse_keep(body.get("keep")), "cup": _parse_cup(body.get("cup"))}
    if kind == "declare":
        side = body.get("side")
        if side not in SIDES:
            raise InvalidAction("unknown_side", "side must be TOP or BOTTOM")
        return kind, {"side": side}
    if kind == "score":
        box = body.get("box")
        if box not in scoring.BOXES:
            raise InvalidAction("unknown_box", "box must be one of " + ", ".join(scoring.BOXES))
        return kind, {"box": box}
    return kind, {}


def _parse_keep(keep: Any) -> list[int]:
    if keep is None:
        return []
    if not isinstance(keep, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in keep):
        raise InvalidAction("malformed_action", "keep is a list of die indices")
    if any(not 0 <= i < DICE for i in keep):
        raise InvalidAction("invalid_die_index", "die indices are 0 to 4")
    if len(set(keep)) != len(keep):
        raise InvalidAction("duplicate_die_index", "a die is listed twice in keep")
    return sorted(keep)


def _parse_cup(cup: Any) -> bool:
    if cup is None:
        return False
    if not isinstance(cup, bool):
        raise InvalidAction("malformed_action", "cup is true or false")
    return cup


def _check_seat(state: JSON, seat: Any) -> None:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state["seats"]:
        raise InvalidAction("invalid_seat", "no such seat at this table")


# --- A turn ---------------------------------------------------------------------
# Each step checks every rule before it changes anything or draws a die, so a
# refused action leaves the state (and the match generator) untouched.


def _throw(state: JSON, seat: int, keep: list[int], cup: bool, rng: Rng) -> list[Event]:
    """First throw: all five dice. Re-throws: every die not kept, at least one."""
    if state["cup_pending"]:
        raise RulesError("cup_pending", "declare TOP or BOTTOM for the dice under the cup first")
    throws = int(state["throws"])
    if throws >= THROWS_PER_TURN:
        raise RulesError("no_throws_left", "three throws already this turn: score a box")
    if throws == 0 and keep:
        raise RulesError("nothing_to_keep", "the first throw of a turn throws all five dice")
    if len(keep) == DICE:
        raise RulesError("no_dice_to_throw", "a re-throw throws at least one die")

    thrown = [i for i in range(DICE) if i not in keep]
    dice = list(state["dice"]) or [0] * DICE
    for i in thrown:
        dice[i] = rng.randint(1, 6)
    state.update(
        throws=throws + 1, dice=dice, kept=keep, just_thrown=thrown, cup_pending=cup, last_reveal=None
    )
    data: JSON = {"seat": seat, "throw_number": throws + 1, "thrown": thrown, "kept": keep, "cup": cup}
    if not cup:  # under the cup nobody, the thrower included, may see the faces yet
        data["faces"] = [dice[i] for i in thrown]
    return [Event("thrown", data)]


def _declare(state: JSON, seat: int, side: str) -> list[Event]:
    """Lift the cup: TOP keeps the faces, BOTTOM turns each die of that throw to
    7 - face. Kept dice were never in the cup and never change."""
    if not state["cup_pending"]:
        raise RulesError("nothing_to_declare", "there is no cup throw waiting for a declaration")
    dice = list(state["dice"])
    thrown: list[int] = list(state["just_thrown"])
    conversions: list[JSON] = []
    if side == "BOTTOM":
        for i in thrown:
            conversions.append({"die": i, "from_face": dice[i], "to_face": 7 - dice[i]})
            dice[i] = 7 - dice[i]
    state.update(dice=dice, cup_pending=False, last_reveal={"side": side, "conversions": conversions})
    return [
        Event(
            "revealed",
            {
                "seat": seat,
                "side": side,
                "dice": thrown,
                "faces": [dice[i] for i in thrown],
                "conversions": conversions,
            },
        )
    ]


def _score(state: JSON, seat: int, box: str) -> list[Event]:
    """Fill one empty box (zero allowed) and end the turn; de boca only if the
    turn used its first throw alone (a cup declaration is not a throw)."""
    if state["throws"] == 0:
        raise RulesError("must_throw_first", "throw the dice before scoring")
    if state["cup_pending"]:
        raise RulesError("cup_pending", "declare TOP or BOTTOM for the dice under the cup first")
    side = _side_of(state, seat)
    card: JSON = state["cards"][side]
    if box in card:
        raise RulesError("box_taken", f"{box} is already filled on this card")

    points, boca = scoring.points(box, state["dice"], first_throw=state["throws"] == 1)
    card[box] = {"points": points, "boca": boca, "seat": seat}
    events = [
        Event(
            "scored",
            {
                "seat": seat,
                "box": box,
                "points": points,
                "boca": boca,
                "total": _total(card),
                **_team_field(state, seat),
            },
        )
    ]
    state["turn"] += 1
    _reset_turn(state)
    if state["turn"] == state["turns_total"]:
        totals = [_total(c) for c in state["cards"]]
        best = max(totals)
        winners = [s for s in range(state["seats"]) if totals[_side_of(state, s)] == best]
        return events + _finish(state, "completed", winners, [])
    return [*events, _turn_started(state)]


# --- The end of a match ---------------------------------------------------------------


def _claim(state: JSON, seat: int, ctx: Context) -> list[Event]:
    """After 120 s without action by the seat to act, the opposing side may take
    the match; the idle seat's own partner may not."""
    if state["mode"] == "SOLO":
        raise RulesError("no_claim_in_solo", "there is nobody to claim against in solo training")
    idle = _seat_to_act(state)
    if seat == idle:
        raise RulesError("cannot_claim_yourself", "it is your own turn")
    if _side_of(state, seat) == _side_of(state, idle):
        raise RulesError("partner_cannot_claim", "you cannot claim the match against your own team")
    if ctx.now - ctx.last_action_at < INACTIVITY_SECONDS:
        raise RulesError("too_early", f"a claim needs {INACTIVITY_SECONDS} s without action")
    winners = _seats_of_side(state, _side_of(state, seat))
    claimed = Event("claimed", {"seat": seat, "idle_seat": idle})
    return [claimed, *_finish(state, "inactivity", winners, [idle])]


def _finish(state: JSON, reason: str, winners: list[int], forfeited: list[int]) -> list[Event]:
    """End the match. A cup still pending stays unrevealed: nobody declared it."""
    state.update(over=True, reason=reason, winners=winners, forfeited=forfeited)
    result = _result(state)
    return [
        Event(
            "game_over",
            {
                "reason": reason.upper(),
                "winners": winners,
                "ranks": result.ranks,
                "scores": result.scores,
                "forfeited": forfeited,
            },
        )
    ]


def _result(state: JSON) -> Result:
    totals = [_total(card) for card in state["cards"]]
    scores = [totals[_side_of(state, seat)] for seat in range(state["seats"])]
    if state["mode"] == "SOLO":
        ranks = [1]
    elif state["reason"] == "completed":
        # Equal totals share the win: a rank is 1 + the number of better cards.
        ranks = [1 + sum(1 for other in totals if other > score) for score in scores]
    else:  # forfeit or inactivity: the winning side is first whatever the totals
        ranks = [1 if seat in state["winners"] else 2 for seat in range(state["seats"])]
    return Result(ranks=ranks, scores=scores, reason=state["reason"], forfeited=list(state["forfeited"]))


# --- The engine ------------------------------------------------------------------------


class BozoEngine:
    """The Bozó table: solo training, duel and duplas."""

    name = "bozo"
    min_seats = 1
    max_seats = 4

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        mode = _mode(seats, options)
        if cpu_seats:
            raise InvalidAction("invalid_options", "Bozó has no CPU seats")
        state: JSON = {
            "mode": mode,
            "seats": seats,
            "turns_total": MODE_TURNS[mode],
            "turn": 0,
            "cards": [{} for _ in range(2 if mode == "DUPLAS" else seats)],
            "over": False,
            "reason": None,
            "winners": [],
            "forfeited": [],
        }
        _reset_turn(state)
        return state, [_turn_started(state)]

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        kind, body = _parse(action)
        _check_seat(state, seat)
        if state["over"]:
            raise RulesError("game_over", "the match is over")
        new = copy.deepcopy(state)
        if kind == "claim_inactivity":
            return new, _claim(new, seat, ctx)
        if seat != _seat_to_act(new):
            raise RulesError("not_your_turn", "it is not your turn")
        if kind == "throw":
            return new, _throw(new, seat, body["keep"], body["cup"], ctx.rng)
        if kind == "declare":
            return new, _declare(new, seat, body["side"])
        return new, _score(new, seat, body["box"])

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        """Leaving concedes the match to the opposing side; in solo it just ends."""
        _check_seat(state, seat)
        if state["over"]:
            raise RulesError("game_over", "the match is over")
        new = copy.deepcopy(state)
        side = _side_of(new, seat)
        winners = [s for s in range(new["seats"]) if _side_of(new, s) != side]
        return new, [Event("conceded", {"seat": seat}), *_finish(new, "forfeit", winners, [seat])]

    def view(self, state: JSON, seat: int | None) -> JSON:
        """Everyone sees the same table; dice under the cup are hidden from all."""
        over = bool(state["over"])
        hidden = set(state["just_thrown"]) if state["cup_pending"] else set()
        dice = state["dice"]
        view: JSON = {
            "mode": state["mode"],
            "turn": min(int(state["turn"]) + 1, int(state["turns_total"])),
            "turns_total": state["turns_total"],
            "turns_left": state["turns_total"] - state["turn"],
            "throw_number": state["throws"],
            "throws_left": THROWS_PER_TURN - state["throws"],
            "dice": [
                {"face": 0, "hidden": True} if i in hidden else {"face": face, "hidden": False}
                for i, face in enumerate(dice)
            ],
            "kept": list(state["kept"]),
            "just_thrown": list(state["just_thrown"]),
            "cup_pending": state["cup_pending"],
            "cards": [self._card_view(state, side) for side in range(_side_count(state))],
            "open_boxes": [],
            "preview": [],
            "game_over": over,
            "winners": list(state["winners"]),
            "forfeited": list(state["forfeited"]),
        }
        if seat is not None:
            view["seat"] = seat
        if state["last_reveal"] is not None:
            view["last_reveal"] = copy.deepcopy(state["last_reveal"])
        if over:
            view["end_reason"] = str(state["reason"]).upper()
            return view
        acting = _seat_to_act(state)
        view["to_act"] = acting
        if state["mode"] == "DUPLAS":
            view["to_act_team"] = TEAMS[_side_of(state, acting)]
        card = state["cards"][_side_of(state, acting)]
        view["open_boxes"] = _open_boxes(card)
        if dice and not hidden:
            for box in view["open_boxes"]:
                points, boca = scoring.points(box, dice, first_throw=state["throws"] == 1)
                view["preview"].append({"box": box, "points": points, "boca": boca})
        return view

    @staticmethod
    def _card_view(state: JSON, side: int) -> JSON:
        card = state["cards"][side]
        view: JSON = {
            "seats": _seats_of_side(state, side),
            "boxes": [{"box": box, **card[box]} for box in scoring.BOXES if box in card],
            "total": _total(card),
        }
        if state["mode"] == "DUPLAS":
            view["team"] = TEAMS[side]
        return view

    def to_act(self, state: JSON) -> list[int]:
        return [] if state["over"] else [_seat_to_act(state)]

    def result(self, state: JSON) -> Result | None:
        return _result(state) if state["over"] else None


ENGINE = BozoEngine()
