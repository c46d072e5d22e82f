"""Bozó, the Brazilian five-dice game (RULES.md "Bozó"; seed 000, bozo.com.br).

Reads top to bottom like the rules: the modes and their turn order, then a turn
(throw, cup declaration, score), then the end of the match (completed, a side
leaving or claimed against), then what a seat may see.

Decisions kept from the rules:

- The seat to act is ``turn % seats`` in every mode (duplas: Jade 1, Âmbar 1,
  Jade 2, Âmbar 2 are seats 0, 1, 2, 3). Solo plays 10 turns, duel and duplas
  20 (10 per card).
- The dice of a throw are drawn in ascending die order, one ``randint(1, 6)``
  each, so the match's seed replays every throw.
- Under the cup the thrown faces are in the state only: no view, event or
  error carries them until the declaration. A match that ends with the cup
  pending never reveals it.
- Leaving (the kit's CONCEDE) concedes the match to the opposing side; the
  kit's inactivity claim (OPPONENTS) does the same against the idle seat's
  side. In solo, leaving or an expired idle match (EXPIRE) simply ends the
  training. Equal totals share the win.

The state is a plain dict:

- ``mode`` SOLO / DUEL / DUPLAS, ``seats``, ``turns_total``;
- ``turn``: index of the current turn, which is also the number of turns played;
- the current turn: ``throws`` made (0..3), ``dice`` (five true faces once thrown,
  the ones under the cup included), ``kept`` and ``just_thrown`` (indices of the
  last throw), ``cup_pending``, ``last_reveal`` (the last declaration, or None);
- ``cards``: one per side (a seat in solo and duel, a team in duplas), each a
  dict box → ``{"points", "boca", "seat"}`` of the filled boxes;
- ``advice``: Options.advice, seated players may ask the advisor (advice.py);
- ``reason``: None while playing, then the EndReason value; ``forfeited``: the
  seat that left, was claimed against or expired, if any.
"""

from __future__ import annotations

from rodada.bozo.v1 import bozo_pb2

from services.bozo import scoring
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
)

# --- The table --------------------------------------------------------------

# The kit's mode names (GameInfo) → the proto's Mode; solo trains one card,
# duel and duplas both play 20 turns (10 per card).
MODES: dict[str, str] = {"solo": "SOLO", "duel": "DUEL", "duplas": "DUPLAS"}
MODE_TURNS: dict[str, int] = {"SOLO": 10, "DUEL": 20, "DUPLAS": 20}
TEAMS: tuple[str, str] = ("JADE", "AMBAR")  # duplas side 0 (seats 0, 2) and side 1 (seats 1, 3)

DICE = 5
THROWS_PER_TURN = 3


def setup(seats: int, options: bozo_pb2.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    """The kit chose the mode from the options and the seat count."""
    name = MODES[mode]
    state: State = {
        "mode": name,
        "seats": seats,
        "turns_total": MODE_TURNS[name],
        "turn": 0,
        "cards": [{} for _ in range(2 if name == "DUPLAS" else seats)],
        "reason": None,
        "forfeited": [],
        "advice": options.advice,
    }
    _reset_turn(state)
    return state, [_turn_started(state)]


def _side_of(state: State, seat: int) -> int:
    """The index of the card a seat plays on: its own, or its team's in duplas."""
    return seat % 2 if state["mode"] == "DUPLAS" else seat


def _seats_of_side(state: State, side: int) -> list[int]:
    return [seat for seat in range(state["seats"]) if _side_of(state, seat) == side]


def _seat_to_act(state: State) -> int:
    return int(state["turn"]) % int(state["seats"])


def _total(card: JSON) -> int:
    return sum(int(entry["points"]) for entry in card.values())


def _open_boxes(card: JSON) -> list[str]:
    return [box for box in scoring.BOXES if box not in card]


def _team_field(state: State, seat: int) -> JSON:
    """``{"team": …}`` for a duplas seat, nothing otherwise (proto default)."""
    return {"team": TEAMS[_side_of(state, seat)]} if state["mode"] == "DUPLAS" else {}


def _reset_turn(state: State) -> None:
    state.update(throws=0, dice=[], kept=[], just_thrown=[], cup_pending=False, last_reveal=None)


def _turn_started(state: State) -> Event:
    seat = _seat_to_act(state)
    return Event("turn_started", {"seat": seat, "turn": state["turn"] + 1, **_team_field(state, seat)})


# --- A turn ---------------------------------------------------------------------
# The kit has checked that the match is on and that ``seat`` is to act. Each
# move checks every rule before it draws a die, so a refused action leaves the
# match generator untouched.


def throw(state: State, seat: int, move: bozo_pb2.Throw, ctx: Context) -> list[Event]:
    """First throw: all five dice. Re-throws: every die not kept, at least one."""
    keep = sorted(move.keep)
    if any(not 0 <= i < DICE for i in keep):
        raise InvalidAction("invalid_die_index", "die indices are 0 to 4")
    if len(set(keep)) != len(keep):
        raise InvalidAction("duplicate_die_index", "a die is listed twice in keep")
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
    for i in thrown:  # ascending die order: the seed replays the same dice
        dice[i] = ctx.rng.randint(1, 6)
    cup = move.cup
    state.update(
        throws=throws + 1, dice=dice, kept=keep, just_thrown=thrown, cup_pending=cup, last_reveal=None
    )
    data: JSON = {"seat": seat, "throw_number": throws + 1, "thrown": thrown, "kept": keep, "cup": cup}
    if not cup:  # under the cup nobody, the thrower included, may see the faces yet
        data["faces"] = [dice[i] for i in thrown]
    return [Event("thrown", data)]


def declare(state: State, seat: int, move: bozo_pb2.Declare, ctx: Context) -> list[Event]:
    """Lift the cup: TOP keeps the faces, BOTTOM turns each die of that throw to
    7 - face. Kept dice were never in the cup and never change."""
    side = bozo_pb2.Side.Name(move.side)
    if side == "SIDE_UNSPECIFIED":
        raise InvalidAction("unknown_side", "side must be TOP or BOTTOM")
    if not state["cup_pending"]:
        raise RulesError("nothing_to_declare", "there is no cup throw waiting for a declaration")
    dice = state["dice"]
    thrown: list[int] = state["just_thrown"]
    conversions: list[JSON] = []
    if side == "BOTTOM":
        for i in thrown:
            conversions.append({"die": i, "from_face": dice[i], "to_face": 7 - dice[i]})
            dice[i] = 7 - dice[i]
    state.update(cup_pending=False, last_reveal={"side": side, "conversions": conversions})
    revealed = {
        "seat": seat,
        "side": side,
        "dice": list(thrown),
        "faces": [dice[i] for i in thrown],
        "conversions": [dict(c) for c in conversions],
    }
    return [Event("revealed", revealed)]


def score(state: State, seat: int, move: bozo_pb2.Score, ctx: Context) -> list[Event]:
    """Fill one empty box (zero allowed) and end the turn; de boca only if the
    turn used its first throw alone (a cup declaration is not a throw)."""
    box = bozo_pb2.Box.Name(move.box)
    if box not in scoring.BOXES:
        raise InvalidAction("unknown_box", "box must be one of " + ", ".join(scoring.BOXES))
    if state["throws"] == 0:
        raise RulesError("must_throw_first", "throw the dice before scoring")
    if state["cup_pending"]:
        raise RulesError("cup_pending", "declare TOP or BOTTOM for the dice under the cup first")
    card: JSON = state["cards"][_side_of(state, seat)]
    if box in card:
        raise RulesError("box_taken", f"{box} is already filled on this card")

    points, boca = scoring.points(box, state["dice"], first_throw=state["throws"] == 1)
    card[box] = {"points": points, "boca": boca, "seat": seat}
    scored = {"seat": seat, "box": box, "points": points, "boca": boca, "total": _total(card)}
    events = [Event("scored", {**scored, **_team_field(state, seat)})]
    state["turn"] += 1
    _reset_turn(state)
    if state["turn"] == state["turns_total"]:
        state["reason"] = EndReason.COMPLETED.value
        return events
    return [*events, _turn_started(state)]


# --- The end of a match ---------------------------------------------------------------


def depart(state: State, seat: int, why: Departure, ctx: Context) -> list[Event]:
    """A seat left, or was claimed against (or, in solo, expired) for
    inactivity: its side concedes the match to the opposing side; in solo the
    training ends. A cup still pending stays unrevealed: nobody declared it.
    The kit tells the table (LEFT / CLAIMED notices, the final result)."""
    state.update(reason=why.end_reason.value, forfeited=[seat])
    return []


def outcome(state: State) -> Outcome | None:
    if state["reason"] is None:
        return None
    reason = EndReason(state["reason"])
    totals = [_total(card) for card in state["cards"]]
    per_seat = scores(state)
    if state["mode"] == "SOLO":
        ranks = [1]
    elif reason == EndReason.COMPLETED:
        # Equal totals share the win; places count cards (a team is one
        # competitor): 1 + the number of better cards.
        ranks = [1 + sum(1 for other in totals if other > mine) for mine in per_seat]
    else:  # the side of the seat that departed loses, whatever the totals
        losing = _side_of(state, state["forfeited"][0])
        ranks = [2 if _side_of(state, seat) == losing else 1 for seat in range(state["seats"])]
    return Outcome(ranks=ranks, scores=per_seat, reason=reason, forfeited=list(state["forfeited"]))


# --- Reading the state -----------------------------------------------------------------


def to_act(state: State) -> list[int]:
    return [] if state["reason"] is not None else [_seat_to_act(state)]


def scores(state: State) -> list[int]:
    """Each seat's card total (partners repeat their team's)."""
    totals = [_total(card) for card in state["cards"]]
    return [totals[_side_of(state, seat)] for seat in range(state["seats"])]


def view(state: State, seat: int | None) -> JSON:
    """Everyone sees the same table; dice under the cup are hidden from all."""
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
        "cards": [_card_view(state, side) for side in range(len(state["cards"]))],
        "open_boxes": [],
        "preview": [],
    }
    if state["last_reveal"] is not None:
        reveal = state["last_reveal"]
        view["last_reveal"] = {
            "side": reveal["side"],
            "conversions": [dict(c) for c in reveal["conversions"]],
        }
    if state["reason"] is not None:
        return view
    card = state["cards"][_side_of(state, _seat_to_act(state))]
    view["open_boxes"] = _open_boxes(card)
    if dice and not hidden:
        for box in view["open_boxes"]:
            points, boca = scoring.points(box, dice, first_throw=state["throws"] == 1)
            view["preview"].append({"box": box, "points": points, "boca": boca})
    return view


def _card_view(state: State, side: int) -> JSON:
    card = state["cards"][side]
    view: JSON = {
        "seats": _seats_of_side(state, side),
        "boxes": [{"box": box, **card[box]} for box in scoring.BOXES if box in card],
        "total": _total(card),
    }
    if state["mode"] == "DUPLAS":
        view["team"] = TEAMS[side]
    return view


def legal(state: State, seat: int) -> list[JSON]:
    """Every action the seat may make now (keeps as index sets, each with and
    without the cup). Claims are the kit's and not listed."""
    if state["reason"] is not None or seat != _seat_to_act(state):
        return []
    if state["cup_pending"]:
        return [{"declare": {"side": side}} for side in ("TOP", "BOTTOM")]
    actions: list[JSON] = []
    if state["throws"] < THROWS_PER_TURN:
        # A first throw keeps nothing; a re-throw keeps any set but all five.
        masks = [0] if state["throws"] == 0 else range(2**DICE - 1)
        for mask in masks:
            keep: JSON = {"keep": [i for i in range(DICE) if mask >> i & 1]} if mask else {}
            actions += [{"throw": keep}, {"throw": {**keep, "cup": True}}]
    if state["throws"] > 0:
        card = state["cards"][_side_of(state, seat)]
        actions += [{"score": {"box": box}} for box in _open_boxes(card)]
    return actions
