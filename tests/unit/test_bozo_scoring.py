"""The Bozó score card on its own: the seed's table, the boca rule, and properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.bozo import scoring

# The seed's "Tabela de pontuação do Bozó do portal", row by row.
SEED_TABLE = [
    ("AS", (1, 1, 3, 4, 6), 2),
    ("DUQUE", (2, 2, 2, 4, 6), 6),
    ("TERNO", (3, 3, 3, 3, 1), 12),
    ("QUADRA", (4, 4, 2, 3, 6), 8),
    ("QUINA", (5, 5, 5, 1, 2), 15),
    ("SENA", (6, 6, 6, 2, 4), 18),
    ("FULL", (2, 2, 5, 5, 5), 20),
    ("SEGUIDA", (5, 3, 1, 4, 2), 30),
    ("QUADRADA", (4, 4, 4, 4, 2), 40),
    ("GENERAL", (3, 3, 3, 3, 3), 50),
]

dice_strategy = st.lists(st.integers(1, 6), min_size=5, max_size=5)


@pytest.mark.parametrize(("box", "dice", "expected"), SEED_TABLE)
def test_seed_table_row(box: str, dice: tuple[int, ...], expected: int) -> None:
    assert scoring.base_points(box, dice) == expected


def test_card_has_the_ten_boxes_in_seed_order() -> None:
    assert [row[0] for row in SEED_TABLE] == list(scoring.BOXES)


@pytest.mark.parametrize(
    ("box", "boca_points"), [("FULL", 25), ("SEGUIDA", 35), ("QUADRADA", 45), ("GENERAL", 55)]
)
def test_boca_values_from_the_seed(box: str, boca_points: int) -> None:
    dice = next(row[1] for row in SEED_TABLE if row[0] == box)
    assert scoring.points(box, dice, first_throw=True) == (boca_points, True)
    assert scoring.points(box, dice, first_throw=False) == (boca_points - 5, False)


def test_four_sixes_in_sena_are_24_even_on_the_first_throw() -> None:
    assert scoring.points("SENA", (6, 6, 6, 6, 5), first_throw=True) == (24, False)


def test_the_worked_turn_offers_24_in_sena_or_40_in_quadrada() -> None:
    final = (6, 6, 6, 6, 5)
    assert scoring.points("SENA", final, first_throw=False) == (24, False)
    assert scoring.points("QUADRADA", final, first_throw=False) == (40, False)


def test_a_zero_is_never_de_boca() -> None:
    assert scoring.points("FULL", (1, 2, 3, 4, 6), first_throw=True) == (0, False)
    assert scoring.points("GENERAL", (6, 6, 6, 6, 5), first_throw=True) == (0, False)


def test_five_equal_dice_are_not_a_full_but_are_a_quadrada() -> None:
    assert scoring.base_points("FULL", (5, 5, 5, 5, 5)) == 0
    assert scoring.base_points("QUADRADA", (5, 5, 5, 5, 5)) == 40
    assert scoring.base_points("GENERAL", (5, 5, 5, 5, 5)) == 50


@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        ((1, 2, 3, 4, 5), 30),
        ((6, 5, 4, 3, 2), 30),
        ((1, 3, 4, 5, 6), 0),  # the seed: not accepted
        ((1, 2, 3, 4, 4), 0),
        ((2, 3, 4, 5, 5), 0),
    ],
)
def test_seguida_is_exactly_one_of_the_two_runs(dice: tuple[int, ...], expected: int) -> None:
    assert scoring.base_points("SEGUIDA", dice) == expected


@pytest.mark.parametrize(
    ("dice", "full"),
    [((2, 2, 5, 5, 5), 20), ((6, 1, 6, 1, 6), 20), ((2, 2, 5, 5, 1), 0), ((4, 4, 4, 4, 2), 0)],
)
def test_full_needs_three_and_two_of_different_faces(dice: tuple[int, ...], full: int) -> None:
    assert scoring.base_points("FULL", dice) == full


def test_quadrada_needs_four_equal() -> None:
    assert scoring.base_points("QUADRADA", (4, 4, 4, 2, 2)) == 0
    assert scoring.base_points("QUADRADA", (1, 4, 4, 4, 4)) == 40


def test_max_total_is_every_face_five_times_and_every_combination_de_boca() -> None:
    assert scoring.MAX_TOTAL == 5 * (1 + 2 + 3 + 4 + 5 + 6) + 25 + 35 + 45 + 55


def test_unknown_box_is_an_error() -> None:
    with pytest.raises(ValueError):
        scoring.base_points("CHANCE", (1, 2, 3, 4, 5))


@given(dice_strategy)
def test_number_boxes_count_only_their_face(dice: list[int]) -> None:
    for box, face in scoring.NUMBER_BOXES.items():
        assert scoring.base_points(box, dice) == face * dice.count(face)
        # Never de boca, whatever the throw.
        assert scoring.points(box, dice, first_throw=True) == (face * dice.count(face), False)


@given(dice_strategy)
def test_combinations_match_their_definitions(dice: list[int]) -> None:
    counts = sorted(Counter(dice).values())
    assert scoring.base_points("FULL", dice) == (20 if counts == [2, 3] else 0)
    assert scoring.base_points("QUADRADA", dice) == (40 if max(counts) >= 4 else 0)
    assert scoring.base_points("GENERAL", dice) == (50 if len(counts) == 1 else 0)
    is_run = sorted(dice) in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    assert scoring.base_points("SEGUIDA", dice) == (30 if is_run else 0)


@given(dice_strategy, st.booleans(), st.permutations(range(5)))
def test_points_do_not_depend_on_dice_order_and_boca_is_plus_five(
    dice: list[int], first_throw: bool, order: list[int]
) -> None:
    shuffled = [dice[i] for i in order]
    for box in scoring.BOXES:
        base = scoring.base_points(box, dice)
        assert scoring.base_points(box, shuffled) == base
        points, boca = scoring.points(box, dice, first_throw)
        assert boca == (first_throw and box in scoring.COMBINATION_POINTS and base > 0)
        assert points == base + (5 if boca else 0)
