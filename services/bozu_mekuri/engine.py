"""Bozu Mekuri (坊主めくり) — RULES.md "Bozu Mekuri", seed 002.

The 100 poet cards of the Hyakunin Isshu are shuffled into one face-down deck;
in turn each player flips the top card. A noble is kept, a monk sends your cards
and himself to the common pile, a lady takes the pile; Semimaru and the emperors
act by the table's local rules. The game ends when the deck runs out (the pile is
nobody's); the most cards wins.

Decisions this engine takes where the seed and RULES.md are silent:

- Who opens is drawn from the match generator right after the shuffle.
- With ``allow_stopping`` off the extra flip is mandatory but still the player's
  own ``flip`` action (not flipped for them), so every flip is a visible step and
  the turn timer covers it like any other.
- Semimaru under EVERYONE_TO_PILE goes to the pile with everyone's cards, as a
  monk would. An emperor under TAKE_EVERYONES_CARDS takes the other seats'
  cards, not the pile. A lady under FLIP_AGAIN_IF_PILE_EMPTY still takes a
  non-empty pile (and the turn ends).
- A card that grants one more flip as the deck's last card ends the game: there
  is nothing left to flip.
- The kit plays every CPU-controlled seat (CPU seats, and seats whose player
  left: leaving is CPU_PLAYS) through these same moves, choosing with
  ``cpu.cpu`` from the seat's view alone. The turn timer is the mode's deadline
  (CPU_TURN): when it runs out the kit has the CPU play the rest of the idle
  seat's turn. ``Result.forfeited`` (the kit's) lists the seats whose player
  left and had not come back; the reason stays COMPLETED, since leaving does
  not end or concede the game here.

State (JSON; never leaves the service, ``view`` is the only way out)::

    options     the table's rules, defaults filled in
    deck        the face-down deck, top card first: the one secret of the match
    pile        the common pile, oldest first
    hands       per seat, the cards it holds in the order it got them
    eliminated  seats knocked out, in order
    skip_next   per seat, owes a skipped turn (Semimaru SKIP_ONCE)
    to_act      the seat to act
    extra_flip  the seat to act has been offered one more flip
    last_flipped  the last card flipped, None before the first
    warned      the Semimaru warning has been announced
    over        the game has ended
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2 as pb

from services.bozu_mekuri.cards import (
    EMPEROR,
    LADY,
    MONK,
    NOBLE,
    NUMBERS,
    SEMIMARU_NUMBER,
    card_json,
    kind_under,
)
from services.kit.engine import JSON, Context, EndReason, Event, InvalidAction, Outcome, RulesError, State

WARNING_DECK_SIZE: Final = 15  # "Semimaru still in the deck" at 15 cards or fewer
TIMER_CHOICES: Final = (0, 30, 60)
DEFAULTS: Final = {
    "semimaru": "OUT_AT_ONCE",
    "emperor": "KEEP_AND_FLIP_AGAIN",
    "lady": "TAKE_PILE",
    "allow_stopping": True,
    "turn_timer_seconds": 0,
}


def rules(options: pb.Options) -> JSON:
    """The table's rules with every default filled in (an *_UNSPECIFIED enum
    means the default); ``invalid_options`` for a timer other than 0/30/60."""
    timer = options.turn_timer_seconds
    if timer not in TIMER_CHOICES:
        raise InvalidAction("invalid_options", "turn_timer_seconds must be 0, 30 or 60")
    return {
        "semimaru": pb.SemimaruRule.Name(options.semimaru) if options.semimaru else DEFAULTS["semimaru"],
        "emperor": pb.EmperorRule.Name(options.emperor) if options.emperor else DEFAULTS["emperor"],
        "lady": pb.LadyRule.Name(options.lady) if options.lady else DEFAULTS["lady"],
        "allow_stopping": options.allow_stopping if options.HasField("allow_stopping") else True,
        "turn_timer_seconds": timer,
    }


def setup(seats: int, options: pb.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    table_rules = rules(options)
    deck = list(NUMBERS)
    ctx.rng.shuffle(deck)
    first = ctx.rng.randbelow(seats)
    state: State = {
        "options": table_rules,
        "deck": deck,
        "pile": [],
        "hands": [[] for _ in range(seats)],
        "eliminated": [],
        "skip_next": [False] * seats,
        "to_act": first,
        "turn": 1,  # turns started so far (a seat may play two in a row)
        "extra_flip": False,
        "last_flipped": None,
        "warned": False,
        "over": False,
    }
    started = {"seat_count": seats, "options": dict(table_rules), "deck_count": len(deck)}
    return state, [Event("match_started", started), _turn_started(state)]


# --- Moves -------------------------------------------------------------------


def flip(state: State, seat: int, move: pb.Flip, ctx: Context) -> list[Event]:
    """The seat to act flips the top card; the card acts, then the game ends,
    offers one more flip, or passes the turn."""
    extra = state["extra_flip"]
    number = state["deck"].pop(0)
    state["last_flipped"] = number
    effect, to_pile, taken, grants_extra = _resolve(state, seat, number)
    ends = not state["deck"] or len(_standing(state)) == 1
    state["extra_flip"] = grants_extra and not ends
    flipped = {
        "seat": seat,
        "card": card_json(number),
        "extra": extra,
        "effect": effect,
        "cards_to_pile": to_pile,
        "cards_taken": taken,
        "extra_flip_offered": state["extra_flip"],
        "card_counts": _counts(state),
        "pile_count": len(state["pile"]),
        "deck_count": len(state["deck"]),
    }
    events = [Event("card_flipped", flipped)]
    if _semimaru_warning(state) and not state["warned"]:
        state["warned"] = True
        events.append(Event("semimaru_warning", {"deck_count": len(state["deck"])}))
    if ends:
        state["over"] = True
    elif not state["extra_flip"]:
        events += _pass_turn(state)
    return events


def stop(state: State, seat: int, move: pb.Stop, ctx: Context) -> list[Event]:
    """Decline the extra flip on offer; the turn passes."""
    if not state["extra_flip"]:
        raise RulesError("no_extra_flip", "there is no extra flip to decline")
    if not state["options"]["allow_stopping"]:
        raise RulesError("stopping_not_allowed", "this table makes the extra flip mandatory")
    return [Event("stopped", {"seat": seat}), *_pass_turn(state)]


def _resolve(state: State, seat: int, number: int) -> tuple[str, int, int, bool]:
    """What the card does to the seat: (effect, cards sent to the pile, cards
    taken besides the card itself, whether one more flip is offered)."""
    options = state["options"]
    hand: list[int] = state["hands"][seat]
    pile: list[int] = state["pile"]
    kind = kind_under(number, options)

    if kind == NOBLE:
        hand.append(number)
        return "KEPT", 0, 0, False

    if kind == MONK:
        lost = [*hand, number]
        pile.extend(lost)
        hand.clear()
        return "LOST_TO_PILE", len(lost), 0, False

    if kind == LADY:
        pile_was_empty = not pile
        taken = len(pile)
        hand.append(number)
        hand.extend(pile)
        pile.clear()
        rule = options["lady"]
        again = rule == "TAKE_PILE_AND_FLIP_AGAIN" or (rule == "FLIP_AGAIN_IF_PILE_EMPTY" and pile_was_empty)
        return "TOOK_PILE", 0, taken, again

    if kind == EMPEROR:
        hand.append(number)
        if options["emperor"] == "TAKE_EVERYONES_CARDS":
            taken = 0
            for other, other_hand in enumerate(state["hands"]):
                if other != seat:
                    taken += len(other_hand)
                    hand.extend(other_hand)
                    other_hand.clear()
            return "TOOK_EVERYONES_CARDS", 0, taken, False
        return "KEPT", 0, 0, True  # KEEP_AND_FLIP_AGAIN

    # Semimaru with an effect of his own (as a monk / as a noble were handled above).
    rule = options["semimaru"]
    if rule == "SKIP_ONCE":
        hand.append(number)
        state["skip_next"][seat] = True
        return "SKIPS_NEXT_TURN", 0, 0, False
    if rule == "OUT_AT_ONCE":
        lost = [*hand, number]
        pile.extend(lost)
        hand.clear()
        state["eliminated"].append(seat)
        return "KNOCKED_OUT", len(lost), 0, False
    # EVERYONE_TO_PILE: every seat's cards, the flipper's included, then Semimaru.
    lost = [n for other_hand in state["hands"] for n in other_hand] + [number]
    pile.extend(lost)
    for other_hand in state["hands"]:
        other_hand.clear()
    return "ALL_TO_PILE", len(lost), 0, False


def _pass_turn(state: State) -> list[Event]:
    """To the next seat still in the game; a seat owing a skip loses this turn."""
    state["extra_flip"] = False
    seats = len(state["hands"])
    seat = state["to_act"]
    events: list[Event] = []
    while True:
        seat = (seat + 1) % seats
        if seat in state["eliminated"]:
            continue
        if state["skip_next"][seat]:
            state["skip_next"][seat] = False
            events.append(Event("turn_skipped", {"seat": seat}))
            continue
        break
    state["to_act"] = seat
    state["turn"] += 1
    events.append(_turn_started(state))
    return events


# --- Reading the state ---------------------------------------------------------


def turn_number(state: State) -> int:
    return int(state["turn"])


def to_act(state: State) -> list[int]:
    return [] if state["over"] else [state["to_act"]]


def in_play(state: State, seat: int) -> bool:
    """False once Semimaru has knocked the seat out."""
    return seat not in state["eliminated"]


def scores(state: State) -> list[int]:
    """Each seat's card count."""
    return _counts(state)


def outcome(state: State) -> Outcome | None:
    """Placings by card count; ``forfeited`` is the kit's (CPU_PLAYS)."""
    if not state["over"]:
        return None
    counts = _counts(state)
    return Outcome(ranks=placings(counts, state["eliminated"]), scores=counts, reason=EndReason.COMPLETED)


def placings(counts: Sequence[int], eliminated: Sequence[int]) -> list[int]:
    """Ranks by seat: most cards first, equal counts share the place; the seats
    knocked out (``eliminated``, in the order they went out) come after everyone
    else, the earlier knocked out the lower."""
    out = set(eliminated)
    ranks = [0] * len(counts)
    for seat, count in enumerate(counts):
        if seat not in out:
            ranks[seat] = 1 + sum(1 for other, c in enumerate(counts) if other not in out and c > count)
    standing = len(counts) - len(out)
    for order, seat in enumerate(reversed(eliminated)):
        ranks[seat] = standing + 1 + order
    return ranks


def view(state: State, seat: int | None) -> JSON:
    """Everything flipped is public, so every seat and spectators see the same;
    of the deck only its size."""
    options = state["options"]
    extra = state["extra_flip"] and not state["over"]
    seen: JSON = {
        "deck_count": len(state["deck"]),
        "pile_count": len(state["pile"]),
        "pile": [card_json(n) for n in state["pile"]],
        "seats": [_seat_view(state, s) for s in range(len(state["hands"]))],
        "extra_flip_offered": extra,
        "can_stop": extra and options["allow_stopping"],
        "semimaru_warning": _semimaru_warning(state),
        "turn_timer_seconds": options["turn_timer_seconds"],
        "options": dict(options),
    }
    if state["last_flipped"] is not None:
        seen["last_flipped"] = card_json(state["last_flipped"])
    return seen


def legal(state: State, seat: int) -> list[JSON]:
    """A flip on the seat's turn; a stop too while an extra flip is on offer
    and the table allows stopping."""
    if state["over"] or seat != state["to_act"]:
        return []
    if state["extra_flip"] and state["options"]["allow_stopping"]:
        return [{"flip": {}}, {"stop": {}}]
    return [{"flip": {}}]


def deadline(state: State) -> float | None:
    """The table's turn timer (none, 30 or 60 s); when it runs out the kit has
    the CPU play the rest of the idle seat's turn."""
    return state["options"]["turn_timer_seconds"] or None


# --- Parts ---------------------------------------------------------------------


def _counts(state: State) -> list[int]:
    return [len(hand) for hand in state["hands"]]


def _standing(state: State) -> list[int]:
    return [s for s in range(len(state["hands"])) if s not in state["eliminated"]]


def _semimaru_warning(state: State) -> bool:
    return len(state["deck"]) <= WARNING_DECK_SIZE and SEMIMARU_NUMBER in state["deck"]


def _turn_started(state: State) -> Event:
    return Event("turn_started", {"seat": state["to_act"]})


def _seat_view(state: State, seat: int) -> JSON:
    hand = state["hands"][seat]
    return {
        "seat": seat,
        "card_count": len(hand),
        "cards": [card_json(n) for n in hand],
        "eliminated": seat in state["eliminated"],
        "skips_next_turn": state["skip_next"][seat],
    }
