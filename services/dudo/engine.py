"""Dudo (Liar's Dice) rules, the Lizumo table (RULES.md "Dudo", seed 001;
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
- Leaving or removal for inactivity mid-round (``depart``; the kit tells the
  LEFT or CLAIMED notice): the player's dice leave the table unseen and the
  player is out, placed by that moment like any other elimination. If only
  one player is left, that player wins. If the standing bid was theirs,
  nobody could lose the die a call on it would cost, so the round is voided
  and replayed with fresh dice, opened by the player who had to answer that
  bid (palifico again if the player it is for is still in). Otherwise the
  round goes on with the dice still on the table; if it was their turn, the
  next player still in acts on the standing bid (or opens, if there is none
  yet).
- Inactivity: the kit's claim (any other player still in, 120 s after the
  seat to act got the turn or last acted); the engine keeps no clock.
  set_assist is a setting, not play (the game declares it quiet): it
  restarts nobody's clock, the seat to act's included.
- CPU seats (issue 17): ``cpu.py`` chooses a CPU seat's move from that seat's
  view alone; the kit plays it through these same moves.
- Assisted mode may be switched at any time while in, also off turn (an
  ``anytime`` move); it is private to the seat.
- Every die is drawn from the match generator seat by seat, die by die, at the
  start of each round (a voided round's rethrow included), after the first
  opener's draw: a replay of the seed gives the same dice.

State (JSON; never leaves the service, ``view`` is the only way out)::

    seats          number of seats
    options        dice_per_player, palifico, calza, open_on_ones
    counts         dice each seat owns (0 = out)
    dice           this round's throw of each seat, hidden; [] when out or over
    round          round number, from 1
    opener, turn   who opened this round / who acts now (None once over)
    bid, bidder    the standing bid {quantity, face} and its maker, or None
    round_bids     the bids of this round [{seat, quantity, face}]
    palifico_round this round is palifico; palifico_seat: the player it is for
    palifico_used  per seat, whether that player's palifico round has come
    assist         per seat, assisted mode on
    last_reveal    the last call and every die it showed (a Reveal), or None
    outs           [{seat, reason, place}] in the order players went out
    winner         the last player with dice, once over (None while playing)
"""

from __future__ import annotations

from typing import Any, Final

from rodada.dudo.v1 import dudo_pb2

from services.dudo import bids
from services.dudo.bids import FACES, ONES, count_matching, lowest_raise
from services.dudo.odds import bid_probability
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

DEFAULTS: Final = {"dice_per_player": 3}  # Options fields left unset
MAX_DICE = 5

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


def setup(seats: int, options: dudo_pb2.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    dice = options.dice_per_player if options.HasField("dice_per_player") else DEFAULTS["dice_per_player"]
    if not 1 <= dice <= MAX_DICE:
        raise InvalidAction("invalid_options", f"dice_per_player must be 1 to {MAX_DICE}")
    rules: JSON = {
        "dice_per_player": dice,
        "palifico": options.palifico,
        "calza": options.calza,
        "open_on_ones": options.open_on_ones,
    }
    state: State = {
        "seats": seats,
        "options": rules,
        "counts": [dice] * seats,
        "dice": [[] for _ in range(seats)],
        "round": 0,
        "opener": 0,
        "turn": None,
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


# --- Moves (the kit has checked the match runs, the seat is in and, but for
# set_assist, that it is the seat to act) ------------------------------------


def bid(state: State, seat: int, move: dudo_pb2.Bid, ctx: Context) -> list[Event]:
    quantity, face = move.quantity, move.face
    if quantity < 1:
        raise InvalidAction("invalid_quantity", "a bid's quantity is a whole number from 1")
    if face not in FACES:
        raise InvalidAction("invalid_face", "a bid's face is 1 to 6")
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
    made = {"seat": seat, "quantity": quantity, "face": face}
    state["bid"] = {"quantity": quantity, "face": face}
    state["bidder"] = seat
    state["round_bids"].append(made)
    state["turn"] = _next_in(state, seat)
    return [Event("bid_made", dict(made))]


def dudo(state: State, seat: int, move: dudo_pb2.Dudo, ctx: Context) -> list[Event]:
    _check_bid(state)
    return _reveal(state, seat, DUDO, ctx)


def calza(state: State, seat: int, move: dudo_pb2.Calza, ctx: Context) -> list[Event]:
    if not state["options"]["calza"]:
        raise RulesError("calza_disabled", "this table plays without calza")
    _check_bid(state)
    return _reveal(state, seat, CALZA, ctx)


def set_assist(state: State, seat: int, move: dudo_pb2.SetAssist, ctx: Context) -> list[Event]:
    state["assist"][seat] = move.on
    # Private: whether a player takes help is their own business.
    return [Event("assist_changed", {"seat": seat, "on": move.on}, audience=(seat,))]


def depart(state: State, seat: int, why: Departure, ctx: Context) -> list[Event]:
    """``seat`` leaves or is removed mid-round; see the module docstring."""
    events = [_put_out(state, seat, LEFT if why is Departure.LEFT else REMOVED_INACTIVE)]
    if len(_players_in(state)) == 1:
        _end(state)
        return events
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
        state["turn"] = following
    return events


# --- Reading the state ----------------------------------------------------------


def to_act(state: State) -> list[int]:
    return [] if state["turn"] is None else [state["turn"]]


def in_play(state: State, seat: int) -> bool:
    return bool(state["counts"][seat] > 0)


def outcome(state: State) -> Outcome | None:
    if state["winner"] is None:
        return None
    return Outcome(ranks=_ranks(state), reason=_end_reason(state), forfeited=_forfeited(state))


def view(state: State, seat: int | None) -> JSON:
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
    }
    standing = state["bid"]
    if standing is not None:
        view["current_bid"] = dict(standing)
        view["bidder"] = state["bidder"]
        if seat is not None and state["assist"][seat] and state["counts"][seat] > 0:
            view["current_bid_probability"] = bid_probability(
                state, seat, standing["quantity"], standing["face"]
            )
    if state["last_reveal"] is not None:
        view["last_reveal"] = state["last_reveal"]
    if state["palifico_seat"] is not None:
        view["palifico_seat"] = state["palifico_seat"]
    return view


def legal(state: State, seat: int) -> list[JSON]:
    """Every action ``seat`` may make now: switching its assisted mode while
    in, and on its turn every legal bid (each quantity and face), Dudo and
    calza."""
    if state["winner"] is not None or state["counts"][seat] == 0:
        return []
    # Either setting is accepted (and told) at any time; the switch first.
    on = not state["assist"][seat]
    actions: list[JSON] = [{"set_assist": {"on": on}}, {"set_assist": {"on": not on}}]
    if seat != state["turn"]:
        return actions
    actions += [{"bid": {"quantity": q, "face": f}} for q, f in legal_bids(state)]
    if state["bid"] is not None:
        actions.append({"dudo": {}})
        if state["options"]["calza"]:
            actions.append({"calza": {}})
    return actions


def legal_bids(state: State) -> list[tuple[int, int]]:
    """Every (quantity, face) the seat to act may bid now, by face then quantity."""
    standing = state["bid"]
    return bids.legal_bids(
        None if standing is None else (standing["quantity"], standing["face"]),
        sum(state["counts"]),
        state["palifico_round"],
        state["options"]["open_on_ones"],
    )


def ask(state: State, seat: int | None, question: dudo_pb2.Question) -> JSON:
    """Assisted mode's odds for any bid the seat asks about (``Question.bid_odds``):
    only a seated player with assist on may ask."""
    if question.WhichOneof("question") != "bid_odds":
        raise InvalidAction("malformed_question", "the question must be bid_odds")
    if seat is None:
        raise RulesError("not_seated", "only a seated player has dice to reason from")
    if not state["assist"][seat]:
        raise RulesError("assist_off", "turn assisted mode on (set_assist) to see the odds")
    quantity, face = question.bid_odds.quantity, question.bid_odds.face
    probability = bid_probability(state, seat, quantity, face)
    return {"bid_odds": {"quantity": quantity, "face": face, "probability": probability}}


# --- Rounds, calls and going out ------------------------------------------------


def _check_bid(state: State) -> None:
    if state["bid"] is None:
        raise RulesError("no_bid", "there is no bid to call yet; open the round with a bid")


def _start_round(state: State, opener: int, palifico_seat: int | None, ctx: Context) -> list[Event]:
    """Everyone still in throws; ``opener`` bids first."""
    state["round"] += 1
    state["opener"] = opener
    state["turn"] = opener
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


def _reveal(state: State, caller: int, call: str, ctx: Context) -> list[Event]:
    """Show every die, settle the call, then start the next round or end."""
    quantity, face = state["bid"]["quantity"], state["bid"]["face"]
    bidder = state["bidder"]
    ones_wild = not state["palifico_round"]
    count = count_matching((die for dice in state["dice"] for die in dice), face, ones_wild)
    loser: int | None = None
    gainer: int | None = None
    if call == DUDO:
        result, loser = (BIDDER_LOSES, bidder) if count < quantity else (CALLER_LOSES, caller)
    elif count == quantity:
        result = CALZA_RIGHT
        if state["counts"][caller] < state["options"]["dice_per_player"]:
            gainer = caller
    else:
        result, loser = CALZA_WRONG, caller
    reveal: JSON = {
        "round": state["round"],
        "caller": caller,
        "call": call,
        "bidder": bidder,
        "bid": {"quantity": quantity, "face": face},
        "ones_wild": ones_wild and face != ONES,
        "hands": [{"seat": s, "dice": list(dice)} for s, dice in enumerate(state["dice"]) if dice],
        "count": count,
        "outcome": result,
    }
    if loser is not None:
        reveal["loser"] = loser
    if gainer is not None:
        reveal["gainer"] = gainer
    state["last_reveal"] = reveal
    events = [Event("revealed", reveal)]

    palifico_seat: int | None = None
    if gainer is not None:
        state["counts"][gainer] += 1
    if loser is not None:
        if state["counts"][loser] == 1:
            events.append(_put_out(state, loser, NO_DICE))
        else:
            state["counts"][loser] -= 1
            if _earns_palifico(state, loser):
                state["palifico_used"][loser] = True
                palifico_seat = loser
    if len(_players_in(state)) == 1:
        _end(state)
        return events
    # The loser opens; after a right calza nobody lost, and the caller opens.
    opener = loser if loser is not None else caller
    if state["counts"][opener] == 0:
        opener = _next_in(state, opener)
    return [*events, *_start_round(state, opener, palifico_seat, ctx)]


def _put_out(state: State, seat: int, reason: str) -> Event:
    """``seat`` is out: its dice leave the table and its place is fixed now."""
    out: JSON = {"seat": seat, "reason": reason, "place": len(_players_in(state))}
    state["counts"][seat] = 0
    state["dice"][seat] = []
    state["outs"].append(out)
    return Event("player_out", dict(out))


def _end(state: State) -> None:
    (winner,) = _players_in(state)
    state["winner"] = winner
    state["turn"] = None
    state["dice"] = [[] for _ in range(state["seats"])]
    state["bid"] = None
    state["bidder"] = None
    state["round_bids"] = []
    state["palifico_round"] = False
    state["palifico_seat"] = None


def _earns_palifico(state: State, seat: int) -> bool:
    """Down to one die (from two, as a die was just lost), with the variant on,
    for the first time this match."""
    variant_on: bool = state["options"]["palifico"]
    return variant_on and state["counts"][seat] == 1 and not state["palifico_used"][seat]


def _players_in(state: State) -> list[int]:
    return [s for s, count in enumerate(state["counts"]) if count > 0]


def _next_in(state: State, seat: int) -> int:
    """The first player to the left of ``seat`` (next seat index) still in."""
    seats: int = state["seats"]
    for step in range(1, seats):
        other = (seat + step) % seats
        if state["counts"][other] > 0:
            return other
    raise AssertionError("no other player is in")  # callers end the match first


def _ranks(state: State) -> list[int]:
    """The winner first, then in reverse order of going out (the place each
    player got when going out)."""
    ranks = [1] * state["seats"]
    for out in state["outs"]:
        ranks[out["seat"]] = out["place"]
    return ranks


def _end_reason(state: State) -> EndReason:
    """How the match ended (match.proto's EndReason), told by the last player
    out: leaving left one player in (FORFEIT), a removal for inactivity did
    (INACTIVITY), or a lost last die — played to the end (COMPLETED), whoever
    left before (they are in ``forfeited``), as at every table."""
    last = state["outs"][-1]["reason"] if state["outs"] else NO_DICE
    if last == LEFT:
        return EndReason.FORFEIT
    if last == REMOVED_INACTIVE:
        return EndReason.INACTIVITY
    return EndReason.COMPLETED


def _forfeited(state: State) -> list[int]:
    """Players who left or were removed, in that order."""
    return [out["seat"] for out in state["outs"] if out["reason"] != NO_DICE]


def _player_view(state: State, seat: int) -> JSON:
    count = state["counts"][seat]
    player: dict[str, Any] = {"seat": seat, "dice_count": count, "out": count == 0}
    for out in state["outs"]:
        if out["seat"] == seat:
            player["out_reason"] = out["reason"]
            player["place"] = out["place"]
    if state["winner"] == seat:
        player["place"] = 1
    return player
