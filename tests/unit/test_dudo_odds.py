"""Assisted mode's probability (services/dudo/odds.py) against computations
written separately here: full enumeration of the unseen dice for small tables,
a direct binomial sum with math.comb for larger ones."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import chain, product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.dudo.game import GAME
from services.dudo.odds import bid_chance, bid_probability
from services.kit.engine import InvalidAction, RulesError
from tests import playing
from tests.rigged import RiggedRng


def enumerate_chance(own: list[int], unseen: int, quantity: int, face: int, ones_wild: bool) -> Fraction:
    """Throw the unseen dice every possible way and count the throws where the
    bid holds."""

    def matches(die: int) -> bool:
        return die == face or (ones_wild and face != 1 and die == 1)

    own_matching = len([die for die in own if matches(die)])
    true = 0
    for throw in product(range(1, 7), repeat=unseen):
        if own_matching + len([die for die in throw if matches(die)]) >= quantity:
            true += 1
    return Fraction(true, 6**unseen)


def direct_sum(needed: int, unseen: int, p: float) -> float:
    return sum(
        math.comb(unseen, x) * p**x * (1 - p) ** (unseen - x) for x in range(max(needed, 0), unseen + 1)
    )


ENUMERATED = [
    # own dice, unseen, quantity, face, ones wild
    ([5, 5, 3], 4, 4, 5, True),
    ([5, 1, 3], 4, 4, 5, True),
    ([5, 1, 3], 4, 4, 5, False),
    ([2, 2], 5, 3, 1, True),
    ([1, 1, 6], 5, 3, 1, True),
    ([1, 1, 6], 5, 5, 1, True),
    ([6], 5, 1, 6, True),
    ([6], 5, 7, 6, True),
    ([4, 4, 4, 4, 4], 5, 9, 4, True),
    ([], 5, 2, 3, True),
    ([], 5, 2, 3, False),
    ([3], 0, 1, 3, True),
    ([3], 0, 2, 3, True),
    ([2, 3, 4], 3, 3, 6, False),
    ([1, 2], 4, 2, 2, False),
]


@pytest.mark.parametrize(("own", "unseen", "quantity", "face", "ones_wild"), ENUMERATED)
def test_exact_chance_matches_enumeration(
    own: list[int], unseen: int, quantity: int, face: int, ones_wild: bool
) -> None:
    assert bid_chance(own, unseen, quantity, face, ones_wild) == enumerate_chance(
        own, unseen, quantity, face, ones_wild
    )


def _state(hands: list[list[int]], **options: Any) -> dict[str, Any]:
    """A match's state whose first throw is ``hands``, seat 0 opening."""
    options.setdefault("dice_per_player", max(len(hand) for hand in hands))
    rng = RiggedRng([0, *chain.from_iterable(hands)])
    table, _ = playing.start(GAME, len(hands), options, rng=rng)
    assert not rng.queue
    return table.state


# The seed's example table: 12 dice in play, you hold three, two of them 5s.
SEED_TABLE = [[5, 5, 3], [2, 2, 2], [2, 2, 2], [2, 2, 2]]


@pytest.mark.parametrize(
    ("quantity", "face", "needed", "p"),
    [
        (4, 5, 2, 1 / 3),  # «quatro 5» is prudent …
        (7, 5, 5, 1 / 3),  # … «sete 5» a bold bluff
        (2, 5, 0, 1 / 3),  # held already
        (12, 5, 10, 1 / 3),  # more than the unseen dice can give
        (2, 1, 2, 1 / 6),  # ones: a sixth of the unseen dice
        (3, 6, 3, 1 / 3),
        (5, 3, 4, 1 / 3),
    ],
)
def test_bid_probability_at_the_seed_table(quantity: int, face: int, needed: int, p: float) -> None:
    expected = direct_sum(needed, 9, p)
    assert bid_probability(_state(SEED_TABLE), 0, quantity, face) == pytest.approx(expected, abs=1e-12)


def test_the_seeds_rule_of_thumb() -> None:
    state = _state(SEED_TABLE)
    # "Os outros 9 dados darão em média três 5": the mean of Binomial(9, 1/3).
    mean = sum(x * math.comb(9, x) * (1 / 3) ** x * (2 / 3) ** (9 - x) for x in range(10))
    assert mean == pytest.approx(3)
    assert bid_probability(state, 0, 4, 5) > 0.85  # prudent
    assert bid_probability(state, 0, 7, 5) < 0.15  # "um senhor blefe"
    # "Já nos 1 a conta é um sexto: com 9 dados escondidos, espere 1 ou 2."
    assert bid_probability(state, 0, 1, 1) > 0.5 > bid_probability(state, 0, 3, 1)


def test_palifico_rounds_use_one_in_six_and_no_wild_ones() -> None:
    state = _state([[5, 1, 3], [2, 2, 2], [2, 2, 2], [2, 2, 2]], palifico=True)
    state["palifico_round"] = True
    # Only the 5 counts: two more 5s needed among nine dice, at 1/6 each.
    assert bid_probability(state, 0, 3, 5) == pytest.approx(direct_sum(2, 9, 1 / 6), abs=1e-12)
    state["palifico_round"] = False
    assert bid_probability(state, 0, 3, 5) == pytest.approx(direct_sum(1, 9, 1 / 3), abs=1e-12)


def test_a_seat_without_dice_sees_the_whole_table_unseen() -> None:
    state = _state([[5, 5, 3], [2, 2, 2]])
    state["counts"][0], state["dice"][0] = 0, []
    assert bid_probability(state, 0, 2, 5) == pytest.approx(direct_sum(2, 3, 1 / 3), abs=1e-12)


# The asking seat is the caller's own (the service seats it), never client input.
@pytest.mark.parametrize(
    ("quantity", "face", "code"),
    [
        (0, 5, "invalid_quantity"),
        (-3, 5, "invalid_quantity"),
        (2, 0, "invalid_face"),
        (2, 7, "invalid_face"),
    ],
)
def test_bid_probability_refuses_malformed_questions(quantity: int, face: int, code: str) -> None:
    with pytest.raises(InvalidAction) as refused:
        bid_probability(_state(SEED_TABLE), 0, quantity, face)
    assert refused.value.code == code


def test_no_odds_once_over() -> None:
    rng = RiggedRng([0, 2, 3])
    table, _ = playing.start(GAME, 2, {"dice_per_player": 1}, rng=rng)
    table, _ = playing.act(GAME, table, 0, {"bid": {"quantity": 1, "face": 6}})
    table, _ = playing.act(GAME, table, 1, {"dudo": {}})
    assert GAME.outcome(table.state) is not None
    with pytest.raises(RulesError) as refused:
        bid_probability(table.state, 1, 1, 2)
    assert refused.value.code == "game_over"


@settings(max_examples=300, deadline=None)
@given(
    own=st.lists(st.integers(1, 6), max_size=5),
    unseen=st.integers(0, 29),
    quantity=st.integers(1, 35),
    face=st.integers(1, 6),
    ones_wild=st.booleans(),
)
def test_chance_is_the_binomial_tail(
    own: list[int], unseen: int, quantity: int, face: int, ones_wild: bool
) -> None:
    wild = ones_wild and face != 1
    held = sum(1 for die in own if die == face or (wild and die == 1))
    chance = bid_chance(own, unseen, quantity, face, ones_wild)
    assert 0 <= chance <= 1
    assert float(chance) == pytest.approx(
        direct_sum(quantity - held, unseen, 1 / 3 if wild else 1 / 6), abs=1e-12
    )
    if quantity <= held:
        assert chance == 1
    if quantity > held + unseen:
        assert chance == 0
    # A higher bid on the same face is never more likely.
    assert bid_chance(own, unseen, quantity + 1, face, ones_wild) <= chance
