"""Every box of both Yatzy cards: the seed's examples, the edges, and exhaustive
checks over all 6^5 throws of five dice."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from services.yatzy import scoring
from services.yatzy.scoring import (
    CHANCE,
    CLASSIC,
    FIVES,
    FOUR_OF_A_KIND,
    FOURS,
    FULL_HOUSE,
    LARGE_STRAIGHT,
    ONE_PAIR,
    ONES,
    SCANDINAVIAN,
    SIXES,
    SMALL_STRAIGHT,
    THREE_OF_A_KIND,
    THREES,
    TWO_PAIRS,
    TWOS,
    YATZY,
)

ALL_THROWS = list(itertools.product(range(1, 7), repeat=5))


def classic(box: str, dice: tuple[int, ...]) -> int:
    return scoring.score(CLASSIC, box, dice)


def scandinavian(box: str, dice: tuple[int, ...]) -> int:
    return scoring.score(SCANDINAVIAN, box, dice)


# --- The cards -----------------------------------------------------------------


def test_classic_card_has_the_seeds_13_boxes_in_order() -> None:
    assert scoring.boxes(CLASSIC) == (
        ONES, TWOS, THREES, FOURS, FIVES, SIXES,
        THREE_OF_A_KIND, FOUR_OF_A_KIND, FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT, YATZY, CHANCE,
    )  # fmt: skip


def test_scandinavian_card_has_the_seeds_15_boxes_in_order() -> None:
    assert scoring.boxes(SCANDINAVIAN) == (
        ONES, TWOS, THREES, FOURS, FIVES, SIXES,
        ONE_PAIR, TWO_PAIRS, THREE_OF_A_KIND, FOUR_OF_A_KIND,
        SMALL_STRAIGHT, LARGE_STRAIGHT, FULL_HOUSE, CHANCE, YATZY,
    )  # fmt: skip


def test_every_box_is_a_proto_box_value() -> None:
    from rodada.yatzy.v1 import yatzy_pb2

    proto_boxes = [value.name for value in yatzy_pb2.Box.DESCRIPTOR.values if value.number != 0]
    assert list(scoring.ALL_BOXES) == proto_boxes
    assert set(scoring.boxes(CLASSIC)) | set(scoring.boxes(SCANDINAVIAN)) == set(proto_boxes)


# --- Upper section (both cards) ------------------------------------------------


@pytest.mark.parametrize("card", [CLASSIC, SCANDINAVIAN])
def test_upper_boxes_count_only_their_face(card: str) -> None:
    # Seed: "três 5 em Cincos = 15".
    dice = (5, 5, 5, 2, 1)
    assert scoring.score(card, FIVES, dice) == 15
    assert scoring.score(card, ONES, dice) == 1
    assert scoring.score(card, TWOS, dice) == 2
    assert scoring.score(card, THREES, dice) == 0
    assert scoring.score(card, SIXES, (6, 6, 6, 6, 6)) == 30


# --- Classic -------------------------------------------------------------------


def test_classic_three_of_a_kind_sums_all_five_dice() -> None:
    assert classic(THREE_OF_A_KIND, (4, 4, 4, 2, 1)) == 15
    assert classic(THREE_OF_A_KIND, (4, 4, 4, 4, 1)) == 17  # "pelo menos três"
    assert classic(THREE_OF_A_KIND, (3, 3, 3, 3, 3)) == 15
    assert classic(THREE_OF_A_KIND, (4, 4, 2, 2, 1)) == 0


def test_classic_four_of_a_kind_sums_all_five_dice() -> None:
    assert classic(FOUR_OF_A_KIND, (2, 2, 2, 2, 6)) == 14
    assert classic(FOUR_OF_A_KIND, (6, 6, 6, 6, 6)) == 30
    assert classic(FOUR_OF_A_KIND, (2, 2, 2, 6, 6)) == 0


def test_classic_full_house_is_25_whatever_the_faces() -> None:
    # Seed examples 3-3-3-6-6 and 2-2-2-5-5.
    assert classic(FULL_HOUSE, (3, 3, 3, 6, 6)) == 25
    assert classic(FULL_HOUSE, (5, 2, 2, 5, 2)) == 25
    assert classic(FULL_HOUSE, (1, 1, 6, 6, 6)) == 25


def test_classic_five_equal_dice_are_not_a_full_house() -> None:
    assert classic(FULL_HOUSE, (4, 4, 4, 4, 4)) == 0
    assert classic(FULL_HOUSE, (4, 4, 4, 4, 2)) == 0
    assert classic(FULL_HOUSE, (4, 4, 2, 2, 1)) == 0


@pytest.mark.parametrize(
    "dice",
    [(1, 2, 3, 4, 6), (6, 5, 4, 3, 1), (3, 4, 5, 6, 6), (2, 3, 4, 5, 2), (1, 2, 3, 4, 5), (2, 3, 4, 5, 6)],
)
def test_classic_small_straight_is_any_four_in_sequence(dice: tuple[int, ...]) -> None:
    assert classic(SMALL_STRAIGHT, dice) == 30


def test_classic_small_straight_counts_a_repeated_die() -> None:
    assert classic(SMALL_STRAIGHT, (1, 2, 3, 4, 4)) == 30
    assert classic(SMALL_STRAIGHT, (4, 1, 4, 3, 2)) == 30


def test_classic_small_straight_needs_four_consecutive_faces() -> None:
    assert classic(SMALL_STRAIGHT, (1, 2, 3, 5, 6)) == 0
    assert classic(SMALL_STRAIGHT, (1, 2, 4, 5, 6)) == 0
    assert classic(SMALL_STRAIGHT, (1, 1, 2, 2, 3)) == 0


def test_classic_large_straight_is_five_in_sequence() -> None:
    assert classic(LARGE_STRAIGHT, (1, 2, 3, 4, 5)) == 40
    assert classic(LARGE_STRAIGHT, (6, 4, 2, 5, 3)) == 40
    assert classic(LARGE_STRAIGHT, (1, 2, 3, 4, 4)) == 0
    assert classic(LARGE_STRAIGHT, (1, 3, 4, 5, 6)) == 0


def test_classic_yatzy_and_chance() -> None:
    assert classic(YATZY, (2, 2, 2, 2, 2)) == 50
    assert classic(YATZY, (2, 2, 2, 2, 3)) == 0
    assert classic(CHANCE, (1, 3, 5, 6, 6)) == 21


def test_classic_card_has_no_scandinavian_boxes() -> None:
    assert ONE_PAIR not in scoring.CARDS[CLASSIC]
    assert TWO_PAIRS not in scoring.CARDS[CLASSIC]


# --- Scandinavian ----------------------------------------------------------------


def test_scandinavian_one_pair_takes_the_highest_pair() -> None:
    # Seed: "dois 6 = 12".
    assert scandinavian(ONE_PAIR, (6, 6, 1, 2, 3)) == 12
    assert scandinavian(ONE_PAIR, (2, 2, 5, 5, 1)) == 10
    assert scandinavian(ONE_PAIR, (3, 3, 3, 6, 6)) == 12
    assert scandinavian(ONE_PAIR, (4, 4, 4, 4, 4)) == 8
    assert scandinavian(ONE_PAIR, (1, 2, 3, 4, 6)) == 0


def test_scandinavian_two_pairs_need_two_different_faces() -> None:
    assert scandinavian(TWO_PAIRS, (6, 6, 5, 5, 1)) == 22
    assert scandinavian(TWO_PAIRS, (1, 1, 2, 2, 6)) == 6
    assert scandinavian(TWO_PAIRS, (3, 3, 3, 6, 6)) == 18  # a full house holds two pairs
    assert scandinavian(TWO_PAIRS, (4, 4, 4, 4, 1)) == 0  # four equal dice: one face
    assert scandinavian(TWO_PAIRS, (4, 4, 4, 4, 4)) == 0
    assert scandinavian(TWO_PAIRS, (4, 4, 1, 2, 3)) == 0


def test_scandinavian_three_of_a_kind_counts_only_the_matching_dice() -> None:
    assert scandinavian(THREE_OF_A_KIND, (5, 5, 5, 6, 6)) == 15
    assert scandinavian(THREE_OF_A_KIND, (5, 5, 5, 5, 6)) == 15
    assert scandinavian(THREE_OF_A_KIND, (2, 2, 2, 2, 2)) == 6
    assert scandinavian(THREE_OF_A_KIND, (5, 5, 6, 6, 1)) == 0


def test_scandinavian_four_of_a_kind_counts_four_dice_even_from_five_equal() -> None:
    assert scandinavian(FOUR_OF_A_KIND, (3, 3, 3, 3, 6)) == 12
    assert scandinavian(FOUR_OF_A_KIND, (6, 6, 6, 6, 6)) == 24
    assert scandinavian(FOUR_OF_A_KIND, (3, 3, 3, 6, 6)) == 0


def test_scandinavian_straights_are_exact() -> None:
    assert scandinavian(SMALL_STRAIGHT, (5, 4, 3, 2, 1)) == 15
    assert scandinavian(SMALL_STRAIGHT, (1, 2, 3, 4, 4)) == 0
    assert scandinavian(SMALL_STRAIGHT, (2, 3, 4, 5, 6)) == 0
    assert scandinavian(LARGE_STRAIGHT, (6, 5, 4, 3, 2)) == 20
    assert scandinavian(LARGE_STRAIGHT, (1, 2, 3, 4, 5)) == 0
    assert scandinavian(LARGE_STRAIGHT, (3, 4, 5, 6, 6)) == 0


def test_scandinavian_full_house_is_the_sum_of_the_five() -> None:
    assert scandinavian(FULL_HOUSE, (2, 2, 2, 5, 5)) == 16
    assert scandinavian(FULL_HOUSE, (6, 6, 6, 5, 5)) == 28
    assert scandinavian(FULL_HOUSE, (5, 5, 5, 5, 5)) == 0  # five equal: not a full house
    assert scandinavian(FULL_HOUSE, (5, 5, 5, 5, 2)) == 0


def test_scandinavian_yatzy_and_chance() -> None:
    assert scandinavian(YATZY, (1, 1, 1, 1, 1)) == 50
    assert scandinavian(YATZY, (1, 1, 1, 1, 2)) == 0
    assert scandinavian(CHANCE, (6, 6, 6, 6, 5)) == 29


# --- Bonus and totals ------------------------------------------------------------

# Three of each face is exactly 63.
THREE_OF_EACH = {ONES: 3, TWOS: 6, THREES: 9, FOURS: 12, FIVES: 15, SIXES: 18}


@pytest.mark.parametrize(("card", "bonus"), [(CLASSIC, 35), (SCANDINAVIAN, 50)])
def test_upper_bonus_at_63_not_at_62(card: str, bonus: int) -> None:
    at_63 = dict(THREE_OF_EACH)
    at_62 = {**THREE_OF_EACH, ONES: 2}
    assert scoring.upper_subtotal(at_63) == 63
    assert scoring.upper_bonus(card, at_63) == bonus
    assert scoring.total(card, at_63) == 63 + bonus
    assert scoring.upper_subtotal(at_62) == 62
    assert scoring.upper_bonus(card, at_62) == 0
    assert scoring.total(card, at_62) == 62


def test_lower_boxes_do_not_count_towards_the_bonus() -> None:
    filled = {SIXES: 30, FIVES: 25, CHANCE: 30, YATZY: 50}
    assert scoring.upper_subtotal(filled) == 55
    assert scoring.upper_bonus(CLASSIC, filled) == 0
    assert scoring.total(CLASSIC, filled) == 135


def test_a_bonus_is_possible_before_the_upper_section_is_full() -> None:
    filled = {SIXES: 30, FIVES: 25, FOURS: 8}
    assert scoring.upper_bonus(SCANDINAVIAN, filled) == 50


# --- Exhaustive: every throw of five dice ----------------------------------------


def count_scoring(card: str, box: str) -> int:
    return sum(1 for dice in ALL_THROWS if scoring.score(card, box, dice) > 0)


def test_combination_frequencies_match_combinatorics() -> None:
    # Independent counts over the 7776 ordered throws.
    assert count_scoring(CLASSIC, YATZY) == 6
    assert count_scoring(CLASSIC, FULL_HOUSE) == 6 * 5 * 10  # faces for the three, the two, positions
    assert count_scoring(CLASSIC, LARGE_STRAIGHT) == 2 * 120
    assert count_scoring(CLASSIC, SMALL_STRAIGHT) == 1200
    assert count_scoring(CLASSIC, FOUR_OF_A_KIND) == 6 * 5 * 5 + 6
    assert count_scoring(CLASSIC, THREE_OF_A_KIND) == 6 * 10 * 5 * 4 + 300 + 150 + 6
    assert count_scoring(SCANDINAVIAN, ONE_PAIR) == 6**5 - 6 * 5 * 4 * 3 * 2
    assert count_scoring(SCANDINAVIAN, TWO_PAIRS) == 15 * 4 * 30 + 300
    assert count_scoring(SCANDINAVIAN, SMALL_STRAIGHT) == 120
    assert count_scoring(SCANDINAVIAN, LARGE_STRAIGHT) == 120
    assert count_scoring(SCANDINAVIAN, FULL_HOUSE) == 300


# The values each box can take: zero or the rules' points.
POSSIBLE_POINTS = {
    (CLASSIC, FULL_HOUSE): {0, 25},
    (CLASSIC, SMALL_STRAIGHT): {0, 30},
    (CLASSIC, LARGE_STRAIGHT): {0, 40},
    (CLASSIC, YATZY): {0, 50},
    (CLASSIC, THREE_OF_A_KIND): {0, *range(5, 31)},
    (SCANDINAVIAN, SMALL_STRAIGHT): {0, 15},
    (SCANDINAVIAN, LARGE_STRAIGHT): {0, 20},
    (SCANDINAVIAN, YATZY): {0, 50},
    (SCANDINAVIAN, ONE_PAIR): {0, 2, 4, 6, 8, 10, 12},
    (SCANDINAVIAN, TWO_PAIRS): {0, 6, 8, 10, 12, 14, 16, 18, 20, 22},
    (SCANDINAVIAN, THREE_OF_A_KIND): {0, 3, 6, 9, 12, 15, 18},
    (SCANDINAVIAN, FOUR_OF_A_KIND): {0, 4, 8, 12, 16, 20, 24},
}


@pytest.mark.parametrize(("card", "box"), sorted(POSSIBLE_POINTS))
def test_box_takes_exactly_its_possible_values(card: str, box: str) -> None:
    seen = {scoring.score(card, box, dice) for dice in ALL_THROWS}
    assert seen == POSSIBLE_POINTS[card, box]


def test_upper_boxes_chance_and_yatzy_over_every_throw() -> None:
    for dice in ALL_THROWS:
        counts = Counter(dice)
        for face, box in enumerate((ONES, TWOS, THREES, FOURS, FIVES, SIXES), start=1):
            assert scoring.score(CLASSIC, box, dice) == face * counts[face]
        for card in (CLASSIC, SCANDINAVIAN):
            assert scoring.score(card, CHANCE, dice) == sum(dice)
            assert (scoring.score(card, YATZY, dice) > 0) == (len(counts) == 1)
        # Scandinavian combinations never count more than the dice they use.
        assert scoring.score(SCANDINAVIAN, FOUR_OF_A_KIND, dice) <= sum(dice)
        assert scoring.score(SCANDINAVIAN, TWO_PAIRS, dice) <= sum(dice)


def test_order_of_the_dice_never_matters() -> None:
    for dice in ALL_THROWS[::151]:
        for card in (CLASSIC, SCANDINAVIAN):
            for box in scoring.boxes(card):
                expected = scoring.score(card, box, dice)
                assert all(scoring.score(card, box, p) == expected for p in itertools.permutations(dice))


@pytest.mark.parametrize("card", [CLASSIC, SCANDINAVIAN])
def test_every_box_scored_at_once_is_each_box_scored_alone(card: str) -> None:
    """``scores`` (a view's preview, worked out once per sorted throw) gives
    every throw, in any order, what each box's own rule gives it."""
    for dice in ALL_THROWS:
        assert dict(scoring.scores(card, list(dice))) == {
            box: scoring.score(card, box, dice) for box in scoring.boxes(card)
        }
