"""Yatzy (docs/fairness.md "Yatzy"): a throw draws one die per die not kept,
in die order; the score card follows from the dice."""

from __future__ import annotations

from collections import Counter

from tools.verify.dice import DICE, kept
from tools.verify.record import JSON, Event, Mismatch
from tools.verify.replay import Expected, Shadow, end_reason, ranks_of

UPPER = {"ONES": 1, "TWOS": 2, "THREES": 3, "FOURS": 4, "FIVES": 5, "SIXES": 6}
CLASSIC = (*UPPER, "THREE_OF_A_KIND", "FOUR_OF_A_KIND", "FULL_HOUSE", "SMALL_STRAIGHT")
CLASSIC += ("LARGE_STRAIGHT", "YATZY", "CHANCE")
SCANDINAVIAN = (*UPPER, "ONE_PAIR", "TWO_PAIRS", "THREE_OF_A_KIND", "FOUR_OF_A_KIND", "SMALL_STRAIGHT")
SCANDINAVIAN += ("LARGE_STRAIGHT", "FULL_HOUSE", "CHANCE", "YATZY")
CARDS = {"CLASSIC": CLASSIC, "SCANDINAVIAN": SCANDINAVIAN}
BONUS = {"CLASSIC": 35, "SCANDINAVIAN": 50}
BONUS_AT = 63


def points(card: str, box: str, dice: list[int]) -> int:
    counts = Counter(dice)

    # Faces shown by at least n dice, highest first.
    def at_least(n: int) -> list[int]:
        return sorted((face for face, count in counts.items() if count >= n), reverse=True)

    full_house = sorted(counts.values()) == [2, 3]
    run = sorted(dice)
    if box in UPPER:
        return UPPER[box] * counts[UPPER[box]]
    if box == "CHANCE":
        return sum(dice)
    if box == "YATZY":
        return 50 if len(counts) == 1 else 0
    if card == "CLASSIC":
        if box == "THREE_OF_A_KIND":
            return sum(dice) if at_least(3) else 0
        if box == "FOUR_OF_A_KIND":
            return sum(dice) if at_least(4) else 0
        if box == "FULL_HOUSE":
            return 25 if full_house else 0
        if box == "SMALL_STRAIGHT":
            faces = set(dice)
            return 30 if any({s, s + 1, s + 2, s + 3} <= faces for s in (1, 2, 3)) else 0
        return 40 if run in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]) else 0  # LARGE_STRAIGHT
    if box == "ONE_PAIR":
        return 2 * at_least(2)[0] if at_least(2) else 0
    if box == "TWO_PAIRS":
        return 2 * sum(at_least(2)) if len(at_least(2)) == 2 else 0
    if box == "THREE_OF_A_KIND":
        return 3 * at_least(3)[0] if at_least(3) else 0
    if box == "FOUR_OF_A_KIND":
        return 4 * at_least(4)[0] if at_least(4) else 0
    if box == "SMALL_STRAIGHT":
        return 15 if run == [1, 2, 3, 4, 5] else 0
    if box == "LARGE_STRAIGHT":
        return 20 if run == [2, 3, 4, 5, 6] else 0
    return sum(dice) if full_house else 0  # FULL_HOUSE


def total(card: str, filled: dict[str, int]) -> int:
    upper = sum(p for box, p in filled.items() if box in UPPER)
    return sum(filled.values()) + (BONUS[card] if upper >= BONUS_AT else 0)


class Yatzy(Shadow):
    choices = frozenset({"rolled", "scored"})

    def start(self) -> list[Expected]:
        card = self.record.view.get("card", "CLASSIC")
        self.card = "CLASSIC" if card in ("CLASSIC", "CARD_UNSPECIFIED") else card
        self.filled: list[dict[str, int]] = [{} for _ in range(self.record.seats)]
        self.forfeits: list[tuple[int, str]] = []
        self.ended_by: str | None = None  # the departure that ended the match, if one did
        self.current: int | None = 0
        self.dice: list[int] = []
        self.throws = 0
        return [self._turn_started()]

    def choose(self, event: Event) -> list[Expected]:
        self.check_turn(event, self.current)
        seat = int(event.data.get("seat", 0))
        if event.kind == "rolled":
            keep = kept(event, self.throws)
            old = self.dice or [0] * DICE
            self.dice = [old[i] if i in keep else self.rng.die() for i in range(DICE)]
            self.throws += 1
            rolled = {"seat": seat, "dice": list(self.dice), "kept": keep, "throw_number": self.throws}
            return [Expected("rolled", rolled)]
        box = event.data.get("box", "")
        if box not in CARDS[self.card] or box in self.filled[seat] or not self.dice:
            raise Mismatch("box", f"an empty box of the {self.card} card, after a throw", box)
        self.filled[seat][box] = points(self.card, box, self.dice)
        scored = {
            "seat": seat,
            "box": box,
            "points": self.filled[seat][box],
            "total": total(self.card, self.filled[seat]),
        }
        return [Expected("scored", scored), *self._next_turn()]

    def depart(self, seat: int, why: str) -> list[Expected]:
        self.forfeits.append((seat, why))
        still_in = self._still_in()
        if not still_in or (self.record.seats > 1 and len(still_in) == 1):
            self._end()
            self.ended_by = why
            return []
        return self._next_turn() if seat == self.current else []

    def result(self) -> JSON:
        totals = [total(self.card, filled) for filled in self.filled]
        still_in = self._still_in()
        ranks = [0] * len(totals)
        for seat, rank in zip(still_in, ranks_of([totals[s] for s in still_in]), strict=True):
            ranks[seat] = rank
        for place, (seat, _) in enumerate(reversed(self.forfeits), start=len(still_in) + 1):
            ranks[seat] = place
        return {
            "ranks": ranks,
            "scores": totals,
            "reason": end_reason(self.ended_by),
            "forfeited": [seat for seat, _ in self.forfeits],
        }

    def _still_in(self) -> list[int]:
        out = {seat for seat, _ in self.forfeits}
        return [s for s in range(self.record.seats) if s not in out]

    def _next_turn(self) -> list[Expected]:
        """To the next seat still in with an empty box; none: the end."""
        assert self.current is not None
        seats = self.record.seats
        still_in = self._still_in()
        for step in range(1, seats + 1):
            seat = (self.current + step) % seats
            if seat in still_in and len(self.filled[seat]) < len(CARDS[self.card]):
                self.current, self.dice, self.throws = seat, [], 0
                return [self._turn_started()]
        self._end()
        return []

    def _turn_started(self) -> Expected:
        assert self.current is not None
        return Expected("turn_started", {"seat": self.current, "round": len(self.filled[self.current]) + 1})

    def _end(self) -> None:
        self.current, self.dice, self.throws = None, [], 0
        self.over = True


SHADOW = Yatzy
