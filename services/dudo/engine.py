"""Dudo (Liar's Dice) rules engine, the Lizumo table (RULES.md "Dudo", seed 001;
bids in ``bids.py``, assisted-mode odds in ``odds.py``).

A round: every player still in throws their dice in secret; the opener bids
on how many dice of a face lie on the whole table; then, to the left (the next
seat index still in), each player raises the standing bid or calls "Dudo!".
The call reveals every die: fewer dice matching than bid and the bidder loses
a die, otherwise the caller does. A player without dice is out; the last
player with dice wins, and the others are placed in reverse order of going
out. The first round's opener is drawn by the match generator; each later
round is opened by the player who just lost a die or, if that player is out,
by the first player to their left still in.

Decisions where RULES.md and the seed leave room (also in the .proto):

- Calza (variant): only the player to act, on the standing bid, instead of
  Dudo (the seed: "em vez de dizer Dudo"). Exactly the bid quantity: the
  caller wins back a die, never above the starting count; otherwise the
  caller loses one. Either way the caller opens the next round (after a wrong
  calza that is the loser anyway). Calza is allowed in palifico rounds.
- Palifico (variant): triggered when a player loses a die and is left with
  exactly one (a wrong calza included), at most once per player per match;
  only the next round is palifico. In it ones are an ordinary face: they are
  not wild, the opener may bid any face, ones included, and every later bid
  keeps that face and raises the quantity. With one die per player nobody
  ever drops to one, so there is no palifico round.
- Leaving or removal for inactivity mid-round: the player's dice leave the
  table unseen and the player is out, placed by that moment like any other
  elimination. If only one player is left, that player wins. If the standing
  bid was theirs, nobody could lose the die a call on it would cost, so the
  round is voided and replayed with fresh dice, opened by the player who had
  to answer that bid (palifico again if the player it is for is still in).
  Otherwise the round goes on with the dice still on the table; if it was
  their turn, the next player still in acts on the standing bid (or opens, if
  there is none yet).
- Inactivity: any other player still in may remove the player to act once
  120 s have passed since that player's turn began. The turn's start is kept
  in the state rather than read from ``ctx.last_action_at``, because
  ``set_assist`` is an accepted action that anyone may send at any time and
  would otherwise restart the clock.
- Assisted mode may be switched at any time, also off turn and when out; it is
  private to the seat.

State (JSON; never leaves the service, ``view`` is the only way out)::

    seats          number of seats
    options        dice_per_player, palifico, calza, open_on_ones
    counts         dice each seat owns (0 = out)
    dice           this round's throw of each seat, hidden; [] when out or over
    round          round number, from 1
    opener, turn   who opened this round / who acts now (None once over)
    turn_since     ctx.now when the seat to act got the turn
    bid, bidder    the standing bid {quantity, face} and its maker, or None
    round_bids     the bids of this round [{seat, quantity, face}]
    palifico_round this round is palifico; palifico_seat: the player it is for
    palifico_used  per seat, whether that player's palifico round has come
    assist         per seat, assisted mode on
    last_reveal    the last call and every die it showed (a Reveal), or None
    outs           [{seat, reason, place, claimed_by?}] in the order players went out
    winner         the last player with dice, once over (None while playing)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.dudo.bids import FACES, ONES, count_matching, lowest_raise
from services.dudo.odds import bid_probability
from services.kit.engine import JSON, Context, Engine, Event, InvalidAction, Result, RulesError

MIN_SEATS = 2
MAX_SEATS = 6
DEFAULT_DICE = 3
MAX_DICE = 5
INACTIVITY_SECONDS = 120.0

_FLAGS = ("palifico", "calza", "open_on_ones")
_ACTION_FIELDS: dict[str, frozenset[str]] = {
    "bid": frozenset({"quantity", "face"}),
    "dudo": frozenset(),
    "calza": frozenset(),
    "set_assist": frozenset({"on"}),
    "claim_inactivity": frozenset(),
}

# Call and Outcome enum names of the proto.
DUDO = "DUDO"
CALZA = "CALZA"
BIDDER_LOSES = "BIDDER_LOSES"
CALLER_LOSES = "CALLER_LOSES"
CALZA_RIGHT = "CALZA_RIGHT"
CALZA_WRONG = "CALZA_WRONG"

# OutReason enum names of the proto.
NO_DICE = "NO_DICE"
LEFT = "LEFT"
REMOVED_INACTIVE = "REMOVED_INACTIVE"


class DudoEngine:
    name = "dudo"
    min_seats = MIN_SEATS
    max_seats = MAX_SEATS

    # --- Engine protocol ---------------------------------------------------

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        if isinstance(seats, bool) or not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
            raise InvalidAction("invalid_seat_count", f"Dudo is played by {MIN_SEATS} to {MAX_SEATS} seats")
        if cpu_seats:
            raise InvalidAction("cpu_seats_unsupported", "Dudo has no CPU seats")
        rules = _parse_options(options)
        state: JSON = {
            "seats": seats,
            "options": rules,
            "counts": [rules["dice_per_player"]] * seats,
            "dice": [[] for _ in range(seats)],
            "round": 0,
            "opener": 0,
            "turn": None,
            "turn_since": ctx.now,
            "bid": None,
            "bidder": None,
            "round_bids": [],
            "palifico_round": False,
            "palifico_seat": None,
            "palifico_used": [False] * seats,
            "assist": [False] * seats,
            "last_reveal": None,
            "outs": [],
            "winner": None,
        }
        opener = ctx.rng.randbelow(seats)
        return state, _start_round(state, opener, None, ctx)

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        kind, body = _parse_action(action)
        _check_seat(state, seat)
        if kind == "bid":
            quantity, face = _parse_bid(body)
            _check_to_act(state, seat)
            return _bid(state, seat, quantity, face, ctx)
        if kind == "dudo":
            _check_to_act(state, seat)
            return _call(state, seat, DUDO, ctx)
        if kind == "calza":
            _check_running(state)
            if not state["options"]["calza"]:
                raise RulesError("calza_disabled", "this table plays without calza")
            _check_to_act(state, seat)
            return _call(state, seat, CALZA, ctx)
        if kind == "set_assist":
            on = _parse_assist(body)
            _check_running(state)
            return _set_assist(state, seat, on)
        _check_running(state)
        _check_in(state, seat)
        return _claim_inactivity(state, seat, ctx)

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        _check_seat(state, seat)
        _check_running(state)
        _check_in(state, seat)
        new = _copy_state(state)
        return new, _remove(new, seat, LEFT, None, ctx)

    def view(self, state: JSON, seat: int | None) -> JSON:
        if seat is not None:
            _check_seat(state, seat)
        over = state["winner"] is not None
        view: JSON = {
            "players": [_player_view(state, s) for s in range(state["seats"])],
            # Only ever the viewer's own dice: the one hidden thing a seat may see.
            "my_dice": [] if seat is None else list(state["dice"][seat]),
            "round": state["round"],
            "opener": state["opener"],
            "round_bids": [dict(made) for made in state["round_bids"]],
            "dice_in_play": sum(state["counts"]),
            "assist": seat is not None and state["assist"][seat],
            "options": dict(state["options"]),
            "palifico_round": state["palifico_round"],
            "over": over,
        }
        if seat is not None:
            view["seat"] = seat
        if state["turn"] is not None:
            view["turn"] = state["turn"]
            view["turn_started_at"] = state["turn_since"]
        bid = state["bid"]
        if bid is not None:
            view["current_bid"] = dict(bid)
            view["bidder"] = state["bidder"]
            if seat is not None and state["assist"][seat] and state["counts"][seat] > 0:
                view["current_bid_probability"] = bid_probability(state, seat, bid["quantity"], bid["face"])
        if state["last_reveal"] is not None:
            view["last_reveal"] = _copy_reveal(state["last_reveal"])
        if state["palifico_seat"] is not None:
            view["palifico_seat"] = state["palifico_seat"]
        if over:
            view["winner"] = state["winner"]
            view["end_reason"] = _end_reason(state).upper()
        return view

    def to_act(self, state: JSON) -> list[int]:
        return [] if state["turn"] is None else [state["turn"]]

    def result(self, state: JSON) -> Result | None:
        if state["winner"] is None:
            return None
        return Result(
            ranks=_ranks(state),
            reason=_end_reason(state),
            forfeited=_forfeited(state),
        )

    def ask(self, state: JSON, seat: int | None, question: JSON) -> JSON:
        """Assisted mode's odds for any bid the seat asks about (proto
        ``Question.bid_odds``): only a seated player with assist on may ask."""
        if set(question) != {"bid_odds"} or not isinstance(question["bid_odds"], dict):
            raise InvalidAction("malformed_question", "the question must be bid_odds")
        if seat is None:
            raise RulesError("not_seated", "only a seated player has dice to reason from")
        if not state["assist"][seat]:
            raise RulesError("assist_off", "turn assisted mode on (set_assist) to see the odds")
        bid = question["bid_odds"]
        quantity, face = bid.get("quantity", 0), bid.get("face", 0)
        probability = bid_probability(state, seat, quantity, face)
        return {"bid_odds": {"quantity": quantity, "face": face, "probability": probability}}


ENGINE: Engine = DudoEngine()


# --- Parsing: malformed input is InvalidAction, before any rule is checked ----


def _parse_options(options: JSON) -> JSON:
    if not isinstance(options, dict):
        raise InvalidAction("invalid_options", "options must be an object")
    unknown = sorted(set(options) - {"dice_per_player", *_FLAGS})
    if unknown:
        raise InvalidAction("invalid_options", f"unknown option(s): {', '.join(unknown)}")
    dice = options.get("dice_per_player")
    if dice is None:
        dice = DEFAULT_DICE
    if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= MAX_DICE:
        raise InvalidAction("invalid_options", f"dice_per_player must be 1 to {MAX_DICE}")
    rules: JSON = {"dice_per_player": dice}
    for flag in _FLAGS:
        value = options.get(flag)
        if value is None:
            value = False
        if not isinstance(value, bool):
            raise InvalidAction("invalid_options", f"{flag} must be true or false")
        rules[flag] = value
    return rules


def _parse_action(action: JSON) -> tuple[str, JSON]:
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAction("malformed_action", "an action has exactly one kind")
    ((kind, body),) = action.items()
    if kind not in _ACTION_FIELDS:
        raise InvalidAction("unknown_action", f"the action must be one of {', '.join(_ACTION_FIELDS)}")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidAction("malformed_action", f"{kind} must be an object")
    extra = sorted(set(body) - _ACTION_FIELDS[kind])
    if extra:
        raise InvalidAction("malformed_action", f"{kind} has no field(s) {', '.join(extra)}")
    return kind, body


def _parse_bid(body: JSON) -> tuple[int, int]:
    # proto3 JSON leaves out zero values, so a missing field is a 0.
    quantity = body.get("quantity", 0)
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
        raise InvalidAction("invalid_quantity", "a bid's quantity is a whole number from 1")
    face = body.get("face", 0)
    if isinstance(face, bool) or not isinstance(face, int) or face not in FACES:
        raise InvalidAction("invalid_face", "a bid's face is 1 to 6")
    return quantity, face


def _parse_assist(body: JSON) -> bool:
    on = body.get("on", False)
    if not isinstance(on, bool):
        raise InvalidAction("invalid_flag", "set_assist.on must be true or false")
    return on


def _check_seat(state: JSON, seat: int) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state["seats"]:
        raise InvalidAction("invalid_seat", "no such seat in this match")


def _check_running(state: JSON) -> None:
    if state["winner"] is not None:
        raise RulesError("game_over", "the match is over")


def _check_in(state: JSON, seat: int) -> None:
    if state["counts"][seat] == 0:
        raise RulesError("not_in_game", "this seat is out of the match")


def _check_to_act(state: JSON, seat: int) -> None:
    _check_running(state)
    _check_in(state, seat)
    if seat != state["turn"]:
        raise RulesError("not_your_turn", "it is another player's turn")


# --- Actions: each works on a copy, so a refused action changes nothing ------


def _bid(state: JSON, seat: int, quantity: int, face: int, ctx: Context) -> tuple[JSON, list[Event]]:
    in_play = sum(state["counts"])
    if quantity > in_play:
        raise RulesError("quantity_too_high", f"only {in_play} dice are in play")
    standing = state["bid"]
    if standing is None:
        # Ones are wild, hence rare, so the round may not open on them; in a
        # palifico round they are an ordinary face.
        if face == ONES and not (state["options"]["open_on_ones"] or state["palifico_round"]):
            raise RulesError("opening_on_ones", "the opening bid may not be on ones")
    else:
        q0, f0 = standing["quantity"], standing["face"]
        if state["palifico_round"]:
            if face != f0:
                raise RulesError("face_locked", f"in a palifico round every bid is on {f0}s")
            lowest = q0 + 1
        else:
            lowest = lowest_raise(q0, f0, face)
        if quantity < lowest:
            raise RulesError(
                "bid_too_low", f"after {q0} x {f0}s, a bid on {face}s needs at least {lowest} dice"
            )
    new = _copy_state(state)
    made = {"seat": seat, "quantity": quantity, "face": face}
    new["bid"] = {"quantity": quantity, "face": face}
    new["bidder"] = seat
    new["round_bids"].append(made)
    _give_turn(new, _next_in(new, seat), ctx)
    return new, [Event("bid_made", dict(made))]


def _call(state: JSON, seat: int, call: str, ctx: Context) -> tuple[JSON, list[Event]]:
    if state["bid"] is None:
        raise RulesError("no_bid", "there is no bid to call yet; open the round with a bid")
    new = _copy_state(state)
    return new, _reveal(new, seat, call, ctx)


def _set_assist(state: JSON, seat: int, on: bool) -> tuple[JSON, list[Event]]:
    new = _copy_state(state)
    new["assist"][seat] = on
    # Private: whether a player takes help is their own business.
    return new, [Event("assist_changed", {"seat": seat, "on": on}, audience=(seat,))]


def _claim_inactivity(state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
    idle = state["turn"]
    if seat == idle:
        raise RulesError("cannot_claim_yourself", "the player to act cannot claim against themselves")
    if ctx.now - state["turn_since"] < INACTIVITY_SECONDS:
        raise RulesError(
            "too_early", f"a claim is possible once the turn has lasted {INACTIVITY_SECONDS:.0f} s"
        )
    new = _copy_state(state)
    return new, _remove(new, idle, REMOVED_INACTIVE, seat, ctx)


# --- Rounds, calls and going out (these work on the copy they are given) -----


def _start_round(state: JSON, opener: int, palifico_seat: int | None, ctx: Context) -> list[Event]:
    """Everyone still in throws; ``opener`` bids first."""
    state["round"] += 1
    state["opener"] = opener
    _give_turn(state, opener, ctx)
    state["bid"] = None
    state["bidder"] = None
    state["round_bids"] = []
    state["palifico_round"] = palifico_seat is not None
    state["palifico_seat"] = palifico_seat
    # Seat by seat, die by die: the order a replay of the seed follows.
    state["dice"] = [[ctx.rng.randint(1, 6) for _ in range(count)] for count in state["counts"]]
    started: JSON = {
        "round": state["round"],
        "opener": opener,
        "dice_counts": list(state["counts"]),
        "dice_in_play": sum(state["counts"]),
        "palifico": palifico_seat is not None,
    }
    if palifico_seat is not None:
        started["palifico_seat"] = palifico_seat
    rolled = [
        Event("dice_rolled", {"round": state["round"], "seat": s, "dice": list(dice)}, audience=(s,))
        for s, dice in enumerate(state["dice"])
        if dice
    ]
    return [Event("round_started", started), *rolled]


def _reveal(state: JSON, caller: int, call: str, ctx: Context) -> list[Event]:
    """Show every die, settle the call, then start the next round or end."""
    quantity, face = state["bid"]["quantity"], state["bid"]["face"]
    bidder = state["bidder"]
    ones_wild = not state["palifico_round"]
    count = count_matching((die for dice in state["dice"] for die in dice), face, ones_wild)
    loser: int | None = None
    gainer: int | None = None
    if call == DUDO:
        outcome, loser = (BIDDER_LOSES, bidder) if count < quantity else (CALLER_LOSES, caller)
    elif count == quantity:
        outcome = CALZA_RIGHT
        if state["counts"][caller] < state["options"]["dice_per_player"]:
            gainer = caller
    else:
        outcome, loser = CALZA_WRONG, caller
    reveal: JSON = {
        "round": state["round"],
        "caller": caller,
        "call": call,
        "bidder": bidder,
        "bid": {"quantity": quantity, "face": face},
        "ones_wild": ones_wild and face != ONES,
        "hands": [{"seat": s, "dice": list(dice)} for s, dice in enumerate(state["dice"]) if dice],
        "count": count,
        "outcome": outcome,
    }
    if loser is not None:
        reveal["loser"] = loser
    if gainer is not None:
        reveal["gainer"] = gainer
    state["last_reveal"] = reveal
    events = [Event("revealed", _copy_reveal(reveal))]

    palifico_seat: int | None = None
    if gainer is not None:
        state["counts"][gainer] += 1
    if loser is not None:
        if state["counts"][loser] == 1:
            events.append(_put_out(state, loser, NO_DICE, None))
        else:
            state["counts"][loser] -= 1
            if _earns_palifico(state, loser):
                state["palifico_used"][loser] = True
                palifico_seat = loser
    if len(_players_in(state)) == 1:
        return [*events, _end(state)]
    # The loser opens; after a right calza nobody lost, and the caller opens.
    opener = loser if loser is not None else caller
    if state["counts"][opener] == 0:
        opener = _next_in(state, opener)
    return [*events, *_start_round(state, opener, palifico_seat, ctx)]


def _remove(state: JSON, seat: int, reason: str, claimed_by: int | None, ctx: Context) -> list[Event]:
    """``seat`` leaves or is removed mid-round; see the module docstring."""
    events = [_put_out(state, seat, reason, claimed_by)]
    if len(_players_in(state)) == 1:
        return [*events, _end(state)]
    if state["bidder"] == seat:
        # Nobody could lose the die a call on this bid would cost: replay the
        # round, opened by the player who had to answer the bid, and palifico
        # again if the player it is for is still in.
        events.append(Event("round_voided", {"round": state["round"], "seat": seat}))
        palifico_seat = state["palifico_seat"]
        if palifico_seat is not None and state["counts"][palifico_seat] == 0:
            palifico_seat = None
        return [*events, *_start_round(state, state["turn"], palifico_seat, ctx)]
    if state["turn"] == seat:
        following = _next_in(state, seat)
        if state["bid"] is None:
            state["opener"] = following
        _give_turn(state, following, ctx)
    return events


def _put_out(state: JSON, seat: int, reason: str, claimed_by: int | None) -> Event:
    """``seat`` is out: its dice leave the table and its place is fixed now."""
    out: JSON = {"seat": seat, "reason": reason, "place": len(_players_in(state))}
    if claimed_by is not None:
        out["claimed_by"] = claimed_by
    state["counts"][seat] = 0
    state["dice"][seat] = []
    state["outs"].append(out)
    return Event("player_out", dict(out))


def _end(state: JSON) -> Event:
    (winner,) = _players_in(state)
    state["winner"] = winner
    state["turn"] = None
    state["dice"] = [[] for _ in range(state["seats"])]
    state["bid"] = None
    state["bidder"] = None
    state["round_bids"] = []
    state["palifico_round"] = False
    state["palifico_seat"] = None
    game_over = {
        "winner": winner,
        "ranks": _ranks(state),
        "reason": _end_reason(state).upper(),
        "forfeited": _forfeited(state),
    }
    return Event("game_over", game_over)


def _earns_palifico(state: JSON, seat: int) -> bool:
    """Down to one die (from two, as a die was just lost), with the variant on,
    for the first time this match."""
    variant_on: bool = state["options"]["palifico"]
    return variant_on and state["counts"][seat] == 1 and not state["palifico_used"][seat]


def _give_turn(state: JSON, seat: int, ctx: Context) -> None:
    state["turn"] = seat
    state["turn_since"] = ctx.now


def _players_in(state: JSON) -> list[int]:
    return [s for s, count in enumerate(state["counts"]) if count > 0]


def _next_in(state: JSON, seat: int) -> int:
    """The first player to the left of ``seat`` (next seat index) still in."""
    seats: int = state["seats"]
    for step in range(1, seats):
        other = (seat + step) % seats
        if state["counts"][other] > 0:
            return other
    raise AssertionError("no other player is in")  # callers end the match first


def _ranks(state: JSON) -> list[int]:
    """The winner first, then in reverse order of going out (the place each
    player got when going out)."""
    ranks = [1] * state["seats"]
    for out in state["outs"]:
        ranks[out["seat"]] = out["place"]
    return ranks


def _end_reason(state: JSON) -> str:
    """Result.reason: a player who left outweighs removals for inactivity,
    which outweigh a match played to the end (as at the Yatzy table)."""
    reasons = {out["reason"] for out in state["outs"]}
    if LEFT in reasons:
        return "forfeit"
    if REMOVED_INACTIVE in reasons:
        return "inactivity"
    return "completed"


def _forfeited(state: JSON) -> list[int]:
    """Players who left or were removed, in that order."""
    return [out["seat"] for out in state["outs"] if out["reason"] != NO_DICE]


def _copy_state(state: JSON) -> JSON:
    """A copy sharing no list or dict with ``state``, so the input is never
    mutated. Written out because copy.deepcopy costs twenty times as much and
    every action and view is on the service's hot path; a test checks that no
    container is shared."""
    new = dict(state)
    new["options"] = dict(state["options"])
    for key in ("counts", "palifico_used", "assist"):
        new[key] = list(state[key])
    new["dice"] = [list(dice) for dice in state["dice"]]
    new["bid"] = None if state["bid"] is None else dict(state["bid"])
    new["round_bids"] = [dict(made) for made in state["round_bids"]]
    new["last_reveal"] = None if state["last_reveal"] is None else _copy_reveal(state["last_reveal"])
    new["outs"] = [dict(out) for out in state["outs"]]
    return new


def _copy_reveal(reveal: JSON) -> JSON:
    """A copy to hand out, so no view or event shares a list with the state."""
    hands = [{"seat": hand["seat"], "dice": list(hand["dice"])} for hand in reveal["hands"]]
    return {**reveal, "bid": dict(reveal["bid"]), "hands": hands}


def _player_view(state: JSON, seat: int) -> JSON:
    count = state["counts"][seat]
    player: dict[str, Any] = {"seat": seat, "dice_count": count, "out": count == 0}
    for out in state["outs"]:
        if out["seat"] == seat:
            player["out_reason"] = out["reason"]
            player["place"] = out["place"]
    if state["winner"] == seat:
        player["place"] = 1
    return player
