"""Bozó (docs/fairness.md "Bozó"): a throw draws one die per die thrown, in
die order; under the cup the faces show only when declared (BOTTOM turns
each to 7 − face); the score card follows from the dice."""

from __future__ import annotations

from collections import Counter

from tools.verify.dice import DICE, kept
from tools.verify.record import JSON, Event, Mismatch
from tools.verify.replay import Expected, Shadow, end_reason

TURNS = {"SOLO": 10, "DUEL": 20, "DUPLAS": 20}
TEAMS = ("JADE", "AMBAR")
NUMBERS = {"AS": 1, "DUQUE": 2, "TERNO": 3, "QUADRA": 4, "QUINA": 5, "SENA": 6}
COMBINATIONS = {"FULL": 20, "SEGUIDA": 30, "QUADRADA": 40, "GENERAL": 50}
BOCA = 5


def points(box: str, dice: list[int], first_throw: bool) -> tuple[int, bool]:
    """The box's points and whether they are de boca (+5, combinations only,
    when the turn used its first throw alone)."""
    if box in NUMBERS:
        return NUMBERS[box] * dice.count(NUMBERS[box]), False
    counts = sorted(Counter(dice).values())
    made = {
        "FULL": counts == [2, 3],
        "SEGUIDA": sorted(dice) in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]),
        "QUADRADA": counts[-1] >= 4,
        "GENERAL": counts == [5],
    }[box]
    boca = made and first_throw
    return (COMBINATIONS[box] + (BOCA if boca else 0)) if made else 0, boca


class Bozo(Shadow):
    choices = frozenset({"thrown", "revealed", "scored"})
    # This turn's: throws made, the five true faces, the dice of the last
    # throw, whether they wait under the cup.
    throws: int
    dice: list[int]
    thrown: list[int]
    cup: bool

    def start(self) -> list[Expected]:
        mode = self.record.view.get("mode", "")
        self.mode = mode if mode in TURNS else {1: "SOLO", 2: "DUEL", 4: "DUPLAS"}[self.record.seats]
        self.seats = self.record.seats
        self.cards: list[dict[str, int]] = [{} for _ in range(2 if self.mode == "DUPLAS" else self.seats)]
        self.turn = 0
        self.departed: tuple[int, str] | None = None
        self._new_turn()
        return [self._turn_started()]

    def choose(self, event: Event) -> list[Expected]:
        seat = int(event.data.get("seat", 0))
        self.check_turn(event, self.turn % self.seats)
        if event.kind == "thrown":
            if self.cup:
                raise Mismatch("event", "revealed (the cup is down)", event.kind)
            keep = kept(event, self.throws)
            cup = bool(event.data.get("cup", False))
            thrown = [i for i in range(DICE) if i not in keep]
            self.dice = self.dice or [0] * DICE
            for i in thrown:
                self.dice[i] = self.rng.die()
            self.throws += 1
            self.thrown, self.cup = thrown, cup
            data = {"seat": seat, "throw_number": self.throws, "thrown": thrown, "kept": keep, "cup": cup}
            data["faces"] = [] if cup else [self.dice[i] for i in thrown]
            return [Expected("thrown", data)]
        if event.kind == "revealed":
            side = event.data.get("side", "")
            if not self.cup or side not in ("TOP", "BOTTOM"):
                raise Mismatch("side", "TOP or BOTTOM, for dice under the cup", side)
            conversions = []
            if side == "BOTTOM":
                for i in self.thrown:
                    conversions.append({"die": i, "from_face": self.dice[i], "to_face": 7 - self.dice[i]})
                    self.dice[i] = 7 - self.dice[i]
            self.cup = False
            faces = [self.dice[i] for i in self.thrown]
            revealed = {"seat": seat, "side": side, "dice": self.thrown, "faces": faces}
            return [Expected("revealed", {**revealed, "conversions": conversions})]
        box = event.data.get("box", "")
        card = self.cards[self._side(seat)]
        if box not in {**NUMBERS, **COMBINATIONS} or box in card or not self.throws or self.cup:
            raise Mismatch("box", "an empty box, after a throw, no cup waiting", box)
        card[box], boca = points(box, self.dice, first_throw=self.throws == 1)
        scored = {"seat": seat, "box": box, "points": card[box], "boca": boca, "total": sum(card.values())}
        events = [Expected("scored", {**scored, **self._team(seat)})]
        self.turn += 1
        self._new_turn()
        if self.turn == TURNS[self.mode]:
            self.over = True
            return events
        return [*events, self._turn_started()]

    def depart(self, seat: int, why: str) -> list[Expected]:
        if self.cup:
            self.unshown.append(f"the dice under the cup when the match ended (dice {self.thrown})")
        self.departed = (seat, why)
        self.over = True
        return []

    def result(self) -> JSON:
        totals = [sum(card.values()) for card in self.cards]
        scores = [totals[self._side(seat)] for seat in range(self.seats)]
        if self.mode == "SOLO":
            ranks = [1]
        elif self.departed is None:
            ranks = [1 + sum(1 for other in totals if other > mine) for mine in scores]
        else:
            losing = self._side(self.departed[0])
            ranks = [2 if self._side(seat) == losing else 1 for seat in range(self.seats)]
        return {
            "ranks": ranks,
            "scores": scores,
            "reason": end_reason(self.departed[1] if self.departed else None),
            "forfeited": [self.departed[0]] if self.departed else [],
        }

    def _side(self, seat: int) -> int:
        return seat % 2 if self.mode == "DUPLAS" else seat

    def _team(self, seat: int) -> JSON:
        return {"team": TEAMS[self._side(seat)]} if self.mode == "DUPLAS" else {}

    def _new_turn(self) -> None:
        self.throws, self.dice, self.thrown, self.cup = 0, [], [], False

    def _turn_started(self) -> Expected:
        seat = self.turn % self.seats
        return Expected("turn_started", {"seat": seat, "turn": self.turn + 1, **self._team(seat)})


SHADOW = Bozo
