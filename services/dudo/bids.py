"""Bids, how they count and how they rise (RULES.md "Dudo"; seed 001, "Os 1 são
coringas" and "Como aumentar a aposta").

A bid (quantity, face) claims that at least ``quantity`` dice on the whole
table show ``face``. Ones are wild: they count for any other face, unless the
round is palifico, where every face, ones included, counts only itself.
"""

from __future__ import annotations

from collections.abc import Iterable

ONES = 1
FACES = range(1, 7)

Bid = tuple[int, int]  # (quantity, face)


def counts_for(die: int, face: int, ones_wild: bool) -> bool:
    """Whether one die counts for a bid on ``face``: a bid on ones counts only ones."""
    return die == face or (ones_wild and face != ONES and die == ONES)


def count_matching(dice: Iterable[int], face: int, ones_wild: bool) -> int:
    return sum(1 for die in dice if counts_for(die, face, ones_wild))


def lowest_raise(quantity: int, face: int, new_face: int) -> int:
    """The fewest dice a bid on ``new_face`` needs to raise (quantity, face),
    ones wild. Ones come up half as often as a wild face, hence the halving and
    doubling when a bid moves to or from them."""
    if face != ONES and new_face != ONES:
        # More dice of any face, or as many of a higher face.
        return quantity if new_face > face else quantity + 1
    if face != ONES:
        # To ones: half the dice, rounded up.
        return (quantity + 1) // 2
    if new_face == ONES:
        # Ones to ones: more dice.
        return quantity + 1
    # From ones: twice the dice, plus one.
    return 2 * quantity + 1


def legal_bids(standing: Bid | None, in_play: int, palifico: bool, open_on_ones: bool) -> list[Bid]:
    """Every bid the player to act may make: an opening bid (not on ones
    unless ``open_on_ones`` or in a palifico round, where ones are an ordinary
    face) or a raise of ``standing`` (in a palifico round on its face only),
    never above the ``in_play`` dice. By face, then quantity."""
    bids: list[Bid] = []
    for face in FACES:
        if standing is None:
            if face == ONES and not (open_on_ones or palifico):
                continue
            lowest = 1
        elif palifico:
            if face != standing[1]:
                continue
            lowest = standing[0] + 1
        else:
            lowest = lowest_raise(*standing, face)
        bids += [(quantity, face) for quantity in range(max(lowest, 1), in_play + 1)]
    return bids
