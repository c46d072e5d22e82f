"""What five dice score in each box of the two Yatzy score cards.

Read next to RULES.md "Yatzy" and seed 004. Box and card names are the
``Box`` and ``Card`` enum value names of ``rodada.yatzy.v1``. Every function
takes the five dice (faces 1..6, any order) and returns the box's points, 0
when the dice do not make the combination.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache

Dice = Sequence[int]

CLASSIC = "CLASSIC"
SCANDINAVIAN = "SCANDINAVIAN"

ONES = "ONES"
TWOS = "TWOS"
THREES = "THREES"
FOURS = "FOURS"
FIVES = "FIVES"
SIXES = "SIXES"
ONE_PAIR = "ONE_PAIR"
TWO_PAIRS = "TWO_PAIRS"
THREE_OF_A_KIND = "THREE_OF_A_KIND"
FOUR_OF_A_KIND = "FOUR_OF_A_KIND"
FULL_HOUSE = "FULL_HOUSE"
SMALL_STRAIGHT = "SMALL_STRAIGHT"
LARGE_STRAIGHT = "LARGE_STRAIGHT"
CHANCE = "CHANCE"
YATZY = "YATZY"

# Every box of either card, in the proto enum's order.
ALL_BOXES = (
    ONES, TWOS, THREES, FOURS, FIVES, SIXES,
    ONE_PAIR, TWO_PAIRS, THREE_OF_A_KIND, FOUR_OF_A_KIND, FULL_HOUSE,
    SMALL_STRAIGHT, LARGE_STRAIGHT, CHANCE, YATZY,
)  # fmt: skip

# The upper section: each box counts only the dice of its face.
UPPER_FACES: Mapping[str, int] = {ONES: 1, TWOS: 2, THREES: 3, FOURS: 4, FIVES: 5, SIXES: 6}

# Both cards give their bonus at 63 in the upper section: three of each face.
BONUS_THRESHOLD = 63
UPPER_BONUS: Mapping[str, int] = {CLASSIC: 35, SCANDINAVIAN: 50}


def _faces_with_at_least(dice: Dice, count: int) -> list[int]:
    """Faces shown by ``count`` or more dice, highest first."""
    return sorted((face for face, n in Counter(dice).items() if n >= count), reverse=True)


def _is_full_house(dice: Dice) -> bool:
    # Three of one face and two of *another*: five equal dice have no second
    # face, so they are not a full house (no joker rule).
    return sorted(Counter(dice).values()) == [2, 3]


def _upper(face: int) -> Callable[[Dice], int]:
    def points(dice: Dice) -> int:
        return face * sum(1 for die in dice if die == face)

    return points


def chance(dice: Dice) -> int:
    return sum(dice)


def yatzy(dice: Dice) -> int:
    return 50 if len(set(dice)) == 1 else 0


# --- Classic card ----------------------------------------------------------


def classic_three_of_a_kind(dice: Dice) -> int:
    """At least three equal dice: the sum of all five."""
    return sum(dice) if _faces_with_at_least(dice, 3) else 0


def classic_four_of_a_kind(dice: Dice) -> int:
    """At least four equal dice: the sum of all five."""
    return sum(dice) if _faces_with_at_least(dice, 4) else 0


def classic_full_house(dice: Dice) -> int:
    return 25 if _is_full_house(dice) else 0


def classic_small_straight(dice: Dice) -> int:
    """Four in sequence anywhere among the five (1-2-3-4-4 counts): 30."""
    faces = set(dice)
    runs = ({1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6})
    return 30 if any(run <= faces for run in runs) else 0


def classic_large_straight(dice: Dice) -> int:
    """Five in sequence, 1-2-3-4-5 or 2-3-4-5-6: 40."""
    return 40 if sorted(dice) in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]) else 0


# --- Scandinavian card: only the dice forming the combination count --------


def scandinavian_one_pair(dice: Dice) -> int:
    """The highest pair, its two dice (three or more equal dice hold a pair)."""
    pairs = _faces_with_at_least(dice, 2)
    return 2 * pairs[0] if pairs else 0


def scandinavian_two_pairs(dice: Dice) -> int:
    """Pairs of two different faces, their four dice; four equal dice are one
    face, so not two pairs. Five dice hold at most two such faces."""
    pairs = _faces_with_at_least(dice, 2)
    return 2 * sum(pairs) if len(pairs) == 2 else 0


def scandinavian_three_of_a_kind(dice: Dice) -> int:
    """The three matching dice only."""
    triples = _faces_with_at_least(dice, 3)
    return 3 * triples[0] if triples else 0


def scandinavian_four_of_a_kind(dice: Dice) -> int:
    """Four matching dice only: five equal dice still score four of them."""
    quads = _faces_with_at_least(dice, 4)
    return 4 * quads[0] if quads else 0


def scandinavian_small_straight(dice: Dice) -> int:
    """Exactly 1-2-3-4-5: 15."""
    return 15 if sorted(dice) == [1, 2, 3, 4, 5] else 0


def scandinavian_large_straight(dice: Dice) -> int:
    """Exactly 2-3-4-5-6: 20."""
    return 20 if sorted(dice) == [2, 3, 4, 5, 6] else 0


def scandinavian_full_house(dice: Dice) -> int:
    """Three of one face and two of another: the sum of the five."""
    return sum(dice) if _is_full_house(dice) else 0


# --- The cards: each box's scoring, in the order the card prints them ------

_UPPER_SECTION: dict[str, Callable[[Dice], int]] = {box: _upper(face) for box, face in UPPER_FACES.items()}

CARDS: Mapping[str, Mapping[str, Callable[[Dice], int]]] = {
    CLASSIC: {
        **_UPPER_SECTION,
        THREE_OF_A_KIND: classic_three_of_a_kind,
        FOUR_OF_A_KIND: classic_four_of_a_kind,
        FULL_HOUSE: classic_full_house,
        SMALL_STRAIGHT: classic_small_straight,
        LARGE_STRAIGHT: classic_large_straight,
        YATZY: yatzy,
        CHANCE: chance,
    },
    SCANDINAVIAN: {
        **_UPPER_SECTION,
        ONE_PAIR: scandinavian_one_pair,
        TWO_PAIRS: scandinavian_two_pairs,
        THREE_OF_A_KIND: scandinavian_three_of_a_kind,
        FOUR_OF_A_KIND: scandinavian_four_of_a_kind,
        SMALL_STRAIGHT: scandinavian_small_straight,
        LARGE_STRAIGHT: scandinavian_large_straight,
        FULL_HOUSE: scandinavian_full_house,
        CHANCE: chance,
        YATZY: yatzy,
    },
}


def boxes(card: str) -> tuple[str, ...]:
    """The card's boxes in printed order (13 classic, 15 Scandinavian)."""
    return tuple(CARDS[card])


def score(card: str, box: str, dice: Dice) -> int:
    """What ``dice`` score in ``box`` of ``card`` (the box must be on the card)."""
    return CARDS[card][box](dice)


def scores(card: str, dice: Dice) -> Mapping[str, int]:
    """What ``dice`` score in every box of ``card`` (every view shows the
    open boxes' points; a card has 252 throws in all, so each is worked out
    once; the mapping is shared: read it, never change it)."""
    return _scores(card, tuple(sorted(dice)))


@cache
def _scores(card: str, dice: tuple[int, ...]) -> Mapping[str, int]:
    return {box: points(dice) for box, points in CARDS[card].items()}


def upper_subtotal(filled: Mapping[str, int]) -> int:
    """Sum of the filled upper boxes (Ones to Sixes)."""
    return sum(points for box, points in filled.items() if box in UPPER_FACES)


def upper_bonus(card: str, filled: Mapping[str, int]) -> int:
    return UPPER_BONUS[card] if upper_subtotal(filled) >= BONUS_THRESHOLD else 0


def total(card: str, filled: Mapping[str, int]) -> int:
    """Every filled box plus the upper bonus."""
    return sum(filled.values()) + upper_bonus(card, filled)
