"""Dudo's computer player: a move for one seat from that seat's view alone.

The view holds the seat's own dice, the public bids, the dice counts and the
table's options: nothing else is read, so the choice cannot depend on anyone
else's hidden dice. Every bid is weighed by the exact chance that it is true
given the seat's own dice (``odds.py``, as in assisted mode: k own matching
dice, n unseen dice, P(X ≥ q − k) for X ~ Binomial(n, p), p = 1/3 for a face
with wild ones, else 1/6), over the bids the rules allow now (``bids.py``:
palifico rounds keep their face and make ones ordinary, the opening bid is on
ones only when allowed).

On its turn the player compares what each choice is likely to cost it:

- Dudo costs a die when the standing bid is true: P(true).
- Calza (with the variant on) costs a die unless the bid is exact, and wins one
  back if it is (below the starting count): 1 − P(exact) − P(exact)·GAIN.
- Raising costs a die only if the raise is false and then called; the raise is
  the most likely legal bid (the highest of the equally likely ones), so the
  cost is taken as (1 − P(raise)) · CALL_RATE.

It picks the cheapest. A raise is now and then a bluff, drawn from the
generator it is given: one of the less likely raises that are still plausible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.dudo.bids import ONES, Bid, count_matching, legal_bids
from services.dudo.odds import tail_chances, wild_chance
from services.kit.engine import JSON, Rng

# How often a raise is a bluff (1 in BLUFF_ODDS) and how plausible a bluff must be.
BLUFF_ODDS = 8
BLUFF_FLOOR = 0.5
# The chance that a false raise gets called (the next player may raise instead).
CALL_RATE = 0.4
# What a die won back by a right calza is worth against a die lost.
GAIN = 0.5


@dataclass(frozen=True)
class Seen:
    """What one seat knows of this round: its own dice and how many it cannot see."""

    own: tuple[int, ...]
    unseen: int
    ones_wild: bool

    def needed(self, bid: Bid) -> int:
        """Matching dice the bid needs among the unseen ones."""
        quantity, face = bid
        return quantity - count_matching(self.own, face, self.ones_wild)

    def chance(self, bid: Bid) -> float:
        """The chance that ``bid`` is true."""
        return self._at_least(self.needed(bid), bid[1])

    def exact(self, bid: Bid) -> float:
        """The chance that ``bid`` is exactly right (calza)."""
        needed = self.needed(bid)
        return self._at_least(needed, bid[1]) - self._at_least(needed + 1, bid[1]) if needed >= 0 else 0.0

    def _at_least(self, needed: int, face: int) -> float:
        if needed <= 0:
            return 1.0
        if needed > self.unseen:
            return 0.0
        return tail_chances(self.unseen, wild_chance(face, self.ones_wild))[needed]


def choose(view: JSON, seat: int, rng: Rng) -> JSON:
    """The move of ``seat`` (the seat to act), from its ``view``."""
    options: dict[str, Any] = view["options"]
    palifico = bool(view.get("palifico_round", False))
    own = tuple(view["my_dice"])
    in_play: int = view["dice_in_play"]
    seen = Seen(own, in_play - len(own), ones_wild=not palifico)
    current = view.get("current_bid")
    standing: Bid | None = None if current is None else (current["quantity"], current["face"])
    raises = legal_bids(standing, in_play, palifico, bool(options.get("open_on_ones", False)))
    best = max(raises, key=lambda b: (seen.chance(b), _height(b)), default=None)
    if standing is None:
        assert best is not None  # one die of any face 2..6 is always a legal opening
        return _bid(_maybe_bluff(seen, raises, best, rng))
    costs: list[tuple[float, int, JSON]] = [(seen.chance(standing), 0, {"dudo": {}})]
    if options.get("calza", False):
        exact = seen.exact(standing)
        below_start = view["players"][seat]["dice_count"] < options["dice_per_player"]
        costs.append((1.0 - exact - (exact * GAIN if below_start else 0.0), 1, {"calza": {}}))
    if best is not None:
        costs.append(((1.0 - seen.chance(best)) * CALL_RATE, 2, {}))
    _, _, action = min(costs, key=lambda c: (c[0], c[1]))
    if action:
        return action
    assert best is not None
    return _bid(_maybe_bluff(seen, raises, best, rng))


def _maybe_bluff(seen: Seen, raises: list[Bid], best: Bid, rng: Rng) -> Bid:
    """``best``, or now and then a less likely raise that is still plausible."""
    if rng.randbelow(BLUFF_ODDS) != 0:
        return best
    top = seen.chance(best)
    bluffs = [b for b in raises if BLUFF_FLOOR <= seen.chance(b) < top]
    return bluffs[rng.randbelow(len(bluffs))] if bluffs else best


def _height(bid: Bid) -> tuple[int, int]:
    """How high a bid stands, to prefer the higher of equally likely bids: a
    one counts as two dice of another face (the rules' halving)."""
    quantity, face = bid
    return (2 * quantity, 7) if face == ONES else (quantity, face)


def _bid(bid: Bid) -> JSON:
    return {"bid": {"quantity": bid[0], "face": bid[1]}}
