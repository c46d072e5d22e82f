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
- A ``timeout`` has the CPU play the rest of the current turn of the seat to act
  (its flip and any flip-or-stop choices); that seat is the player's again from
  its next turn. Any seated player may claim it, a knocked-out one included;
  the seat of a player who left may not (nobody is there).
- CPU seats (``cpu_seats``) and seats whose player left are played inside the
  engine as soon as it is their turn, so ``to_act`` is always a seat with a
  player in it. ``Result.forfeited`` lists the seats whose player had left and
  not come back when the game ended (in the order they left); the reason stays
  ``completed``, since leaving does not end or concede the game here.

State (never leaves the service; ``view`` is the only way out): ``deck`` is the
face-down deck, top card first — the one secret of the match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from services.bozu_mekuri import cpu
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
from services.kit.engine import Context, Event, InvalidAction, Result, RulesError

JSON = dict[str, Any]

MIN_SEATS: Final = 2
MAX_SEATS: Final = 6
WARNING_DECK_SIZE: Final = 15  # "Semimaru still in the deck" at 15 cards or fewer
TIMER_CHOICES: Final = (0, 30, 60)

# Options: the proto enum's *_UNSPECIFIED name, then the allowed names, the default first.
_ENUM_OPTIONS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "semimaru": (
        "SEMIMARU_RULE_UNSPECIFIED",
        ("OUT_AT_ONCE", "SKIP_ONCE", "AS_MONK", "AS_NOBLE", "EVERYONE_TO_PILE"),
    ),
    "emperor": ("EMPEROR_RULE_UNSPECIFIED", ("KEEP_AND_FLIP_AGAIN", "TAKE_EVERYONES_CARDS", "ORDINARY")),
    "lady": ("LADY_RULE_UNSPECIFIED", ("TAKE_PILE", "TAKE_PILE_AND_FLIP_AGAIN", "FLIP_AGAIN_IF_PILE_EMPTY")),
}
_OPTION_KEYS: Final = frozenset({*_ENUM_OPTIONS, "allow_stopping", "turn_timer_seconds"})

_ACTIONS: Final = ("flip", "stop", "timeout", "take_over")


def parse_options(raw: JSON) -> JSON:
    """The table's rules with every default filled in; InvalidAction for anything else."""
    if not isinstance(raw, dict):
        raise InvalidAction("invalid_options", "options must be an object")
    unknown = sorted(set(raw) - _OPTION_KEYS)
    if unknown:
        raise InvalidAction("invalid_options", f"unknown option {unknown[0]!r}")
    options: JSON = {}
    for key, (unspecified, names) in _ENUM_OPTIONS.items():
        value = raw.get(key)
        if value is None or value == unspecified:
            value = names[0]
        if value not in names:
            raise InvalidAction("invalid_options", f"{key} must be one of {', '.join(names)}")
        options[key] = value
    allow_stopping = raw.get("allow_stopping")
    if allow_stopping is None:
        allow_stopping = True
    if not isinstance(allow_stopping, bool):
        raise InvalidAction("invalid_options", "allow_stopping must be true or false")
    options["allow_stopping"] = allow_stopping
    timer = raw.get("turn_timer_seconds")
    if timer is None:
        timer = 0
    if isinstance(timer, bool) or timer not in TIMER_CHOICES:
        raise InvalidAction("invalid_options", "turn_timer_seconds must be 0, 30 or 60")
    options["turn_timer_seconds"] = int(timer)
    return options


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


class BozuMekuriEngine:
    name = "bozu_mekuri"
    min_seats = MIN_SEATS
    max_seats = MAX_SEATS

    # ------------------------------------------------------------ lifecycle

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        if isinstance(seats, bool) or not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
            raise InvalidAction("invalid_seat_count", f"Bozu Mekuri is for {MIN_SEATS} to {MAX_SEATS} seats")
        rules = parse_options(options)
        cpus = list(cpu_seats)
        if len(set(cpus)) != len(cpus) or any(
            isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < seats for s in cpus
        ):
            raise InvalidAction("invalid_cpu_seats", "cpu_seats must be distinct seat indices")
        deck = list(NUMBERS)
        ctx.rng.shuffle(deck)
        first = ctx.rng.randbelow(seats)
        state: JSON = {
            "seat_count": seats,
            "options": rules,
            "deck": deck,
            "pile": [],
            "hands": [[] for _ in range(seats)],
            "eliminated": [],  # seats knocked out, in order
            "skip_next": [False] * seats,
            "cpu_seats": sorted(cpus),
            "left": [],  # seats whose player left and has not taken over, in leaving order
            "to_act": first,
            "turn": 1,  # turns started so far; a timeout plays exactly the current one
            "extra_flip": False,
            "last_flipped": None,
            "warned": False,
            "over": False,
            "end_reason": None,
        }
        events = [
            Event("match_started", {
                "seat_count": seats,
                "cpu_seats": sorted(cpus),
                "options": dict(rules),
                "deck_count": len(deck),
            }),
            _turn_started(state),
        ]
        _play_cpu_turns(state, events)
        return state, events

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        kind = _action_kind(action)
        _check_seat(state, seat)
        if state["over"]:
            raise RulesError("game_over", "the game is over")
        if seat in state["cpu_seats"]:
            raise RulesError("cpu_seat", "this seat is played by the computer")
        if kind == "take_over":
            return _take_over(state, seat)
        if seat in state["left"]:
            raise RulesError("seat_left", "a CPU is playing your seat: take it over first")
        if kind == "timeout":
            return _timeout(state, seat, ctx)
        if seat in state["eliminated"]:
            raise RulesError("eliminated", "you are out of the game")
        if seat != state["to_act"]:
            raise RulesError("not_your_turn", "it is not your turn")
        if kind == "stop":
            if not state["extra_flip"]:
                raise RulesError("no_extra_flip", "there is no extra flip to decline")
            if not state["options"]["allow_stopping"]:
                raise RulesError("stopping_not_allowed", "this table makes the extra flip mandatory")
        s = _copy(state)
        events: list[Event] = []
        if kind == "flip":
            _flip(s, events, by_cpu=False)
        else:
            _stop(s, events, by_cpu=False)
        _play_cpu_turns(s, events)
        return s, events

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        """The player leaves; a CPU plays the seat until they take it over (seed)."""
        _check_seat(state, seat)
        if state["over"]:
            raise RulesError("game_over", "the game is over")
        if seat in state["cpu_seats"]:
            raise RulesError("cpu_seat", "this seat is played by the computer")
        if seat in state["left"]:
            raise RulesError("already_left", "this seat's player has already left")
        s = _copy(state)
        s["left"].append(seat)
        events = [Event("player_left", {"seat": seat})]
        _play_cpu_turns(s, events)
        return s, events

    # ------------------------------------------------------------ reading

    def view(self, state: JSON, seat: int | None) -> JSON:
        """Everything flipped is public, so every seat and spectators see the same;
        of the deck only its size."""
        options = state["options"]
        extra = state["extra_flip"] and not state["over"]
        view: JSON = {
            "deck_count": len(state["deck"]),
            "pile_count": len(state["pile"]),
            "pile": [card_json(n) for n in state["pile"]],
            "seats": [_seat_view(state, s) for s in range(state["seat_count"])],
            "extra_flip_offered": extra,
            "can_stop": extra and options["allow_stopping"],
            "semimaru_warning": _semimaru_warning(state),
            "turn_timer_seconds": options["turn_timer_seconds"],
            "options": dict(options),
            "game_over": state["over"],
        }
        if not state["over"]:
            view["to_act"] = state["to_act"]
        if state["last_flipped"] is not None:
            view["last_flipped"] = card_json(state["last_flipped"])
        return view

    def to_act(self, state: JSON) -> list[int]:
        # CPU-controlled turns are played before any call returns, so this is a player.
        return [] if state["over"] else [state["to_act"]]

    def result(self, state: JSON) -> Result | None:
        if not state["over"]:
            return None
        counts = [len(hand) for hand in state["hands"]]
        return Result(
            ranks=placings(counts, state["eliminated"]),
            scores=counts,
            reason="completed",
            forfeited=list(state["left"]),
        )


ENGINE: Final = BozuMekuriEngine()


# ---------------------------------------------------------------- validation


def _action_kind(action: Any) -> str:
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAction("unknown_action", "an action is exactly one of: " + ", ".join(_ACTIONS))
    ((kind, body),) = action.items()
    if kind not in _ACTIONS:
        raise InvalidAction("unknown_action", "an action is exactly one of: " + ", ".join(_ACTIONS))
    if body is not None and body != {}:
        raise InvalidAction("malformed_action", f"{kind} takes no fields")
    return str(kind)


def _check_seat(state: JSON, seat: Any) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state["seat_count"]:
        raise InvalidAction("invalid_seat", "no such seat at this table")


def _copy(state: JSON) -> JSON:
    """A copy deep enough that nothing the engine changes is shared with ``state``."""
    s = dict(state)
    for key in ("deck", "pile", "eliminated", "skip_next", "cpu_seats", "left"):
        s[key] = list(state[key])
    s["hands"] = [list(hand) for hand in state["hands"]]
    s["options"] = dict(state["options"])
    return s


# ---------------------------------------------------------------- a turn


def _flip(s: JSON, events: list[Event], by_cpu: bool) -> None:
    """The seat to act flips the top card; the card acts, then the game ends,
    offers one more flip, or passes the turn."""
    seat = s["to_act"]
    extra = s["extra_flip"]
    number = s["deck"].pop(0)
    s["last_flipped"] = number
    effect, to_pile, taken, grants_extra = _resolve(s, seat, number)
    standing = [p for p in range(s["seat_count"]) if p not in s["eliminated"]]
    ends = not s["deck"] or len(standing) == 1
    s["extra_flip"] = grants_extra and not ends
    events.append(Event("card_flipped", {
        "seat": seat,
        "card": card_json(number),
        "extra": extra,
        "by_cpu": by_cpu,
        "effect": effect,
        "cards_to_pile": to_pile,
        "cards_taken": taken,
        "extra_flip_offered": s["extra_flip"],
        "card_counts": [len(hand) for hand in s["hands"]],
        "pile_count": len(s["pile"]),
        "deck_count": len(s["deck"]),
    }))
    if _semimaru_warning(s) and not s["warned"]:
        s["warned"] = True
        events.append(Event("semimaru_warning", {"deck_count": len(s["deck"])}))
    if len(standing) == 1:
        _end(s, events, "LAST_ONE_STANDING")
    elif not s["deck"]:
        _end(s, events, "DECK_EXHAUSTED")
    elif not s["extra_flip"]:
        _pass_turn(s, events)


def _resolve(s: JSON, seat: int, number: int) -> tuple[str, int, int, bool]:
    """What the card does to the seat: (effect, cards sent to the pile, cards
    taken besides the card itself, whether one more flip is offered)."""
    options = s["options"]
    hand: list[int] = s["hands"][seat]
    pile: list[int] = s["pile"]
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
            for other, other_hand in enumerate(s["hands"]):
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
        s["skip_next"][seat] = True
        return "SKIPS_NEXT_TURN", 0, 0, False
    if rule == "OUT_AT_ONCE":
        lost = [*hand, number]
        pile.extend(lost)
        hand.clear()
        s["eliminated"].append(seat)
        return "KNOCKED_OUT", len(lost), 0, False
    # EVERYONE_TO_PILE: every seat's cards, the flipper's included, then Semimaru.
    lost = [n for other_hand in s["hands"] for n in other_hand] + [number]
    pile.extend(lost)
    for other_hand in s["hands"]:
        other_hand.clear()
    return "ALL_TO_PILE", len(lost), 0, False


def _stop(s: JSON, events: list[Event], by_cpu: bool) -> None:
    events.append(Event("stopped", {"seat": s["to_act"], "by_cpu": by_cpu}))
    _pass_turn(s, events)


def _pass_turn(s: JSON, events: list[Event]) -> None:
    """To the next seat still in the game; a seat owing a skip loses this turn."""
    s["extra_flip"] = False
    seat = s["to_act"]
    while True:
        seat = (seat + 1) % s["seat_count"]
        if seat in s["eliminated"]:
            continue
        if s["skip_next"][seat]:
            s["skip_next"][seat] = False
            events.append(Event("turn_skipped", {"seat": seat}))
            continue
        break
    s["to_act"] = seat
    s["turn"] += 1
    events.append(_turn_started(s))


def _end(s: JSON, events: list[Event], reason: str) -> None:
    s["over"] = True
    s["extra_flip"] = False
    s["end_reason"] = reason
    counts = [len(hand) for hand in s["hands"]]
    events.append(Event("game_over", {
        "ranks": placings(counts, s["eliminated"]),
        "scores": counts,
        "reason": reason,
    }))


# ---------------------------------------------------------------- CPU, leaving, timer


def _cpu_controlled(s: JSON, seat: int) -> bool:
    return seat in s["cpu_seats"] or seat in s["left"]


def _cpu_step(s: JSON, events: list[Event]) -> None:
    """One CPU move for the seat to act: a flip, or the flip-or-stop choice."""
    if s["extra_flip"] and s["options"]["allow_stopping"] and not cpu.wants_extra_flip(_outlook(s)):
        _stop(s, events, by_cpu=True)
    else:
        _flip(s, events, by_cpu=True)


def _play_cpu_turns(s: JSON, events: list[Event]) -> None:
    """Play every turn that falls to a CPU-controlled seat, until a player's turn
    or the end (so with every seat CPU-controlled, to the end)."""
    while not s["over"] and _cpu_controlled(s, s["to_act"]):
        _cpu_step(s, events)


def _outlook(s: JSON) -> cpu.Outlook:
    seat = s["to_act"]
    own = len(s["hands"][seat])
    return cpu.Outlook.of(
        unseen=s["deck"],  # counted by kind inside: the CPU gets the composition, not the order
        own=own,
        pile=len(s["pile"]),
        others=sum(len(hand) for hand in s["hands"]) - own,
        active_seats=s["seat_count"] - len(s["eliminated"]),
        options=s["options"],
    )


def _timeout(state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
    timer = state["options"]["turn_timer_seconds"]
    if not timer:
        raise RulesError("no_timer", "this table has no turn timer")
    if ctx.now - ctx.last_action_at < timer:
        raise RulesError("too_early", f"the turn timer of {timer} s has not run out")
    s = _copy(state)
    events = [Event("timeout_claimed", {"by_seat": seat, "seat": s["to_act"]})]
    turn = s["turn"]
    while not s["over"] and s["turn"] == turn:
        _cpu_step(s, events)
    _play_cpu_turns(s, events)
    return s, events


def _take_over(state: JSON, seat: int) -> tuple[JSON, list[Event]]:
    if seat not in state["left"]:
        raise RulesError("not_left", "you are playing this seat already")
    s = _copy(state)
    s["left"].remove(seat)
    return s, [Event("seat_taken_over", {"seat": seat})]


# ---------------------------------------------------------------- view parts


def _semimaru_warning(s: JSON) -> bool:
    return len(s["deck"]) <= WARNING_DECK_SIZE and SEMIMARU_NUMBER in s["deck"]


def _turn_started(s: JSON) -> Event:
    seat = s["to_act"]
    return Event("turn_started", {"seat": seat, "cpu_controlled": _cpu_controlled(s, seat)})


def _seat_view(s: JSON, seat: int) -> JSON:
    hand = s["hands"][seat]
    return {
        "seat": seat,
        "card_count": len(hand),
        "cards": [card_json(n) for n in hand],
        "eliminated": seat in s["eliminated"],
        "skips_next_turn": s["skip_next"][seat],
        "cpu_controlled": _cpu_controlled(s, seat),
        "cpu_seat": seat in s["cpu_seats"],
        "left": seat in s["left"],
    }
