"""Bozu Mekuri (docs/fairness.md "Bozu Mekuri"): one shuffle of the cards
1–100 in number order, then the opener is drawn; every flip shows the next
card, and what the card does follows from its kind and the table's rules."""

from __future__ import annotations

from tools.verify.record import JSON, Event, Mismatch
from tools.verify.replay import Expected, Shadow, ranks_of

# The printed categories of the Ogura Hyakunin Isshu (every other card is a noble).
LADIES = frozenset({2, 9, 19, 38, 53, 54, 56, 57, 58, 59, 60, 61, 62, 65, 67, 72, 80, 88, 89, 90, 92})
MONKS = frozenset({8, 12, 21, 47, 66, 69, 70, 82, 85, 86, 87, 95})
SEMIMARU = 10
EMPERORS = frozenset({1, 2, 13, 15, 68, 77, 99, 100})
CARDS = 100
WARNING_AT = 15  # "Semimaru is still in the deck" once 15 cards or fewer are left
DEFAULTS = {
    "semimaru": "OUT_AT_ONCE",
    "emperor": "KEEP_AND_FLIP_AGAIN",
    "lady": "TAKE_PILE",
    "allow_stopping": True,
    "turn_timer_seconds": 0,
}


def category(number: int) -> str:
    if number == SEMIMARU:
        return "SEMIMARU"
    return "LADY" if number in LADIES else "MONK" if number in MONKS else "NOBLE"


def acts_as(number: int, options: JSON) -> str:
    """NOBLE, LADY, MONK, EMPEROR (an emperor while the rule gives him an
    effect, whatever his category) or SEMIMARU (with an effect of his own)."""
    if number in EMPERORS and options["emperor"] != "ORDINARY":
        return "EMPEROR"
    if number == SEMIMARU and options["semimaru"] in ("AS_MONK", "AS_NOBLE"):
        return str(options["semimaru"]).removeprefix("AS_")
    return category(number)


class BozuMekuri(Shadow):
    choices = frozenset({"card_flipped", "stopped"})

    def start(self) -> list[Expected]:
        given = self.record.view.get("options", {})
        self.options = {name: given.get(name, default) for name, default in DEFAULTS.items()}
        seats = self.record.seats
        self.deck = list(range(1, CARDS + 1))
        self.rng.shuffle(self.deck)
        self.to_act = self.rng.below(seats)
        self.hands: list[list[int]] = [[] for _ in range(seats)]
        self.pile: list[int] = []
        self.eliminated: list[int] = []
        self.skip = [False] * seats
        self.extra = False
        self.warned = False
        self.left: list[int] = []  # seats whose player left and the computer plays
        started = {"seat_count": seats, "options": dict(self.options), "deck_count": len(self.deck)}
        return [Expected("match_started", started), Expected("turn_started", {"seat": self.to_act})]

    def notice(self, kind: str, data: JSON) -> list[Expected]:
        """Leaving hands the seat to the computer; nothing in the game changes."""
        seat = int(data.get("seat", 0))
        if kind == "LEFT":
            self.left.append(seat)
        elif kind == "SEAT_TAKEN_BACK" and seat in self.left:
            self.left.remove(seat)
        return []

    def choose(self, event: Event) -> list[Expected]:
        self.check_turn(event, self.to_act)
        seat = self.to_act
        if event.kind == "stopped":
            if not self.extra or not self.options["allow_stopping"]:
                raise Mismatch("event", "a flip (no extra flip to decline)", event.kind)
            return [Expected("stopped", {"seat": seat}), *self._pass_turn()]
        extra = self.extra
        number = self.deck.pop(0)
        effect, to_pile, taken, again = self._resolve(seat, number)
        ends = not self.deck or len(self.hands) - len(self.eliminated) == 1
        self.extra = again and not ends
        flipped = {
            "seat": seat,
            "card": {"number": number, "category": category(number), "emperor": number in EMPERORS},
            "extra": extra,
            "effect": effect,
            "cards_to_pile": to_pile,
            "cards_taken": taken,
            "extra_flip_offered": self.extra,
            "card_counts": [len(hand) for hand in self.hands],
            "pile_count": len(self.pile),
            "deck_count": len(self.deck),
        }
        events = [Expected("card_flipped", flipped)]
        if not self.warned and len(self.deck) <= WARNING_AT and SEMIMARU in self.deck:
            self.warned = True
            events.append(Expected("semimaru_warning", {"deck_count": len(self.deck)}))
        if ends:
            if self.deck:
                self.unshown.append(f"the order of the {len(self.deck)} cards left in the deck")
            self.over = True
        elif not self.extra:
            events += self._pass_turn()
        return events

    def result(self) -> JSON:
        counts = [len(hand) for hand in self.hands]
        standing = [s for s in range(len(counts)) if s not in self.eliminated]
        ranks = [0] * len(counts)
        for seat, rank in zip(standing, ranks_of([counts[s] for s in standing]), strict=True):
            ranks[seat] = rank
        for order, seat in enumerate(reversed(self.eliminated)):
            ranks[seat] = len(standing) + 1 + order
        return {"ranks": ranks, "scores": counts, "reason": "END_REASON_COMPLETED", "forfeited": self.left}

    def _resolve(self, seat: int, number: int) -> tuple[str, int, int, bool]:
        """(effect, cards sent to the pile, cards taken besides this one, one more flip)."""
        hand = self.hands[seat]
        kind = acts_as(number, self.options)
        if kind == "NOBLE":
            hand.append(number)
            return "KEPT", 0, 0, False
        if kind == "MONK":
            return "LOST_TO_PILE", self._to_pile([seat], number), 0, False
        if kind == "LADY":
            taken = len(self.pile)
            hand += [number, *self.pile]
            self.pile = []
            rule = self.options["lady"]
            again = rule == "TAKE_PILE_AND_FLIP_AGAIN" or (rule == "FLIP_AGAIN_IF_PILE_EMPTY" and not taken)
            return "TOOK_PILE", 0, taken, again
        if kind == "EMPEROR":
            hand.append(number)
            if self.options["emperor"] != "TAKE_EVERYONES_CARDS":
                return "KEPT", 0, 0, True
            others = [s for s in range(len(self.hands)) if s != seat]
            taken = sum(len(self.hands[s]) for s in others)
            for s in others:
                hand += self.hands[s]
                self.hands[s] = []
            return "TOOK_EVERYONES_CARDS", 0, taken, False
        rule = self.options["semimaru"]
        if rule == "SKIP_ONCE":
            hand.append(number)
            self.skip[seat] = True
            return "SKIPS_NEXT_TURN", 0, 0, False
        if rule == "OUT_AT_ONCE":
            self.eliminated.append(seat)
            return "KNOCKED_OUT", self._to_pile([seat], number), 0, False
        return "ALL_TO_PILE", self._to_pile(list(range(len(self.hands))), number), 0, False

    def _to_pile(self, seats: list[int], number: int) -> int:
        """The seats' cards, then the card flipped, go to the pile; how many."""
        lost = [n for s in seats for n in self.hands[s]] + [number]
        for s in seats:
            self.hands[s] = []
        self.pile += lost
        return len(lost)

    def _pass_turn(self) -> list[Expected]:
        """To the next seat not knocked out; a seat owing a skip loses this turn."""
        self.extra = False
        events = []
        seat = self.to_act
        while True:
            seat = (seat + 1) % len(self.hands)
            if seat in self.eliminated:
                continue
            if self.skip[seat]:
                self.skip[seat] = False
                events.append(Expected("turn_skipped", {"seat": seat}))
                continue
            break
        self.to_act = seat
        return [*events, Expected("turn_started", {"seat": seat})]


SHADOW = BozuMekuri
