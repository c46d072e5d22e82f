"""Assisted mode: the chance that a bid is true, seen from one seat (RULES.md
"Dudo", "Assisted mode"; seed 001, "Uma dica de probabilidade").

The seat knows its own dice and nothing else. With k of its dice counting for
the bid and n dice it cannot see, the bid holds when at least q - k of those n
match, each independently with chance p: 1/3 for a face 2 to 6 while ones are wild
(the face or a one), 1/6 for ones and for any face in a palifico round.
The sum is exact (fractions) and only the answer is rounded to a float.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from math import comb

from services.dudo.bids import FACES, ONES, count_matching
from services.kit.engine import JSON, InvalidAction, RulesError


def chance_at_least(needed: int, unseen: int, p: Fraction) -> Fraction:
    """P(X ≥ needed) for X ~ Binomial(unseen, p)."""
    if needed <= 0:
        return Fraction(1)
    return sum(
        (comb(unseen, x) * p**x * (1 - p) ** (unseen - x) for x in range(needed, unseen + 1)),
        start=Fraction(0),
    )


@cache
def tail_chances(unseen: int, p: Fraction) -> tuple[float, ...]:
    """P(X ≥ m) for X ~ Binomial(unseen, p), m = 0 .. unseen + 1: each sum
    exact, rounded once; cached, for players that weigh many bids (the CPU)."""
    return tuple(float(chance_at_least(m, unseen, p)) for m in range(unseen + 2))


def wild_chance(face: int, ones_wild: bool) -> Fraction:
    """The chance that one unseen die counts for a bid on ``face``: 1/3 for a
    face 2 to 6 while ones are wild (the face or a one), else 1/6."""
    return Fraction(1, 3) if ones_wild and face != ONES else Fraction(1, 6)


def bid_chance(own_dice: Sequence[int], unseen: int, quantity: int, face: int, ones_wild: bool) -> Fraction:
    """The exact chance that (quantity, face) is true given ``own_dice``."""
    own = count_matching(own_dice, face, ones_wild)
    return chance_at_least(quantity - own, unseen, wild_chance(face, ones_wild))


def bid_probability(state: JSON, seat: int, quantity: int, face: int) -> float:
    """The chance that the bid (quantity, face) is true this round, as ``seat``
    sees it: only that seat's dice are used, so the answer reveals nothing the
    seat does not know. A seat that is out sees no dice and gets the chance
    over the whole table."""
    if quantity < 1:
        raise InvalidAction("invalid_quantity", "a bid's quantity is a whole number from 1")
    if face not in FACES:
        raise InvalidAction("invalid_face", "a bid's face is 1 to 6")
    if state["winner"] is not None:
        raise RulesError("game_over", "the match is over")
    own_dice = state["dice"][seat]
    unseen = sum(state["counts"]) - len(own_dice)
    return float(bid_chance(own_dice, unseen, quantity, face, not state["palifico_round"]))
