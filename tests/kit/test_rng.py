"""The match generator, against its published description (docs/
fairness.md): block i is HMAC-SHA256(seed, i), a draw
below n is uniform by rejection, the CPUs draw from a generator of their own.
Every statistical check runs on a fixed seed, so it is deterministic."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from itertools import permutations

import pytest

from services.dudo.game import GAME as DUDO
from services.kit import play
from services.kit.rng import SEED_BYTES, MatchRng, cpu_seed, new_seed, seed_digest
from tests.rigged import ctx

SEED = bytes(range(32))
# The chi-square statistic's 99.9th percentile, by degrees of freedom: a fair
# generator exceeds it once in a thousand seeds, and these seeds are fixed.
CHI2_999 = {2: 13.816, 5: 20.515, 6: 22.458}


def chi_square(counts: Counter[int], categories: int) -> float:
    total = sum(counts.values())
    expected = total / categories
    return sum((counts[c] - expected) ** 2 / expected for c in range(categories))


def draws(rng: MatchRng, n: int, count: int) -> list[int]:
    return [rng.randbelow(n) for _ in range(count)]


def test_block_i_is_the_hmac_sha256_of_the_counter_keyed_by_the_seed() -> None:
    rng = MatchRng(SEED)
    for counter in range(5):
        block = int.from_bytes(hmac.digest(SEED, counter.to_bytes(8, "big"), "sha256"), "big")
        # A block below the rejection limit (all of these are) is drawn as block mod n.
        assert rng.randbelow(1_000_003) == block % 1_000_003
    assert rng.counter == 5


def test_the_same_seed_gives_the_same_draws_and_another_seed_others() -> None:
    assert draws(MatchRng(SEED), 1000, 50) == draws(MatchRng(SEED), 1000, 50)
    assert draws(MatchRng(SEED), 1000, 50) != draws(MatchRng(bytes(32)), 1000, 50)


def test_a_generator_restored_from_its_counter_continues_the_same_sequence() -> None:
    whole = MatchRng(SEED)
    deck = list(range(52))
    whole.shuffle(deck)
    whole.randint(1, 6)
    saved = whole.counter
    continuation = [whole.randint(1, 6) for _ in range(20)]
    restored = MatchRng(SEED, saved)
    assert [restored.randint(1, 6) for _ in range(20)] == continuation
    assert restored.counter == whole.counter


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 52, 1000, 2**64 + 13])
def test_a_draw_below_n_stays_in_range(n: int) -> None:
    assert all(0 <= value < n for value in draws(MatchRng(SEED), n, 500))


def test_randint_includes_both_ends() -> None:
    rng = MatchRng(SEED)
    assert set(rng.randint(1, 6) for _ in range(600)) == {1, 2, 3, 4, 5, 6}


@pytest.mark.parametrize("n", [0, -1])
def test_a_draw_below_nothing_is_refused(n: int) -> None:
    with pytest.raises(ValueError):
        MatchRng(SEED).randbelow(n)


@pytest.mark.parametrize("n", [6, 7])
def test_dice_are_uniform(n: int) -> None:
    counts = Counter(draws(MatchRng(SEED), n, 60_000))
    assert chi_square(counts, n) < CHI2_999[n - 1], counts


def test_rejection_keeps_a_range_that_does_not_divide_the_blocks_uniform() -> None:
    """n = 3·2^254: a quarter of all blocks lie above it. Taken modulo n
    instead of rejected, they would double the weight of the range's lowest
    third; rejected, the thirds are even."""
    n = 3 << 254
    rng = MatchRng(SEED)
    thirds = Counter(value // (n // 3) for value in draws(rng, n, 30_000))
    assert chi_square(thirds, 3) < CHI2_999[2], thirds
    assert rng.counter > 30_000  # some blocks were rejected


def test_a_shuffle_is_a_permutation_and_every_order_is_equally_likely() -> None:
    rng = MatchRng(SEED)
    deck = list(range(52))
    rng.shuffle(deck)
    assert sorted(deck) == list(range(52)) and deck != list(range(52))
    orders = list(permutations("abc"))
    counts: Counter[int] = Counter()
    for _ in range(12_000):
        items = list("abc")
        rng.shuffle(items)
        counts[orders.index(tuple(items))] += 1
    assert chi_square(counts, 6) < CHI2_999[5], counts


def test_the_published_digest_is_the_sha256_of_the_seed() -> None:
    assert seed_digest(bytes(32)) == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    seed = new_seed()
    assert seed_digest(seed) == hashlib.sha256(seed).hexdigest()


def test_seeds_are_fresh_and_of_one_length() -> None:
    seeds = {new_seed() for _ in range(100)}
    assert len(seeds) == 100 and {len(s) for s in seeds} == {SEED_BYTES}
    with pytest.raises(ValueError):
        MatchRng(bytes(SEED_BYTES - 1))


def test_the_cpu_generator_is_keyed_apart_from_the_match_generator() -> None:
    assert cpu_seed(SEED) == hashlib.sha256(b"rodada-cpu" + SEED).digest()
    assert draws(MatchRng(cpu_seed(SEED)), 1000, 50) != draws(MatchRng(SEED), 1000, 50)


def test_the_cpus_choices_draw_nothing_from_the_match_generator() -> None:
    """Dudo's CPU draws on every bid; a start where CPUs bid before the
    person draws from the match generator exactly what the setup alone
    draws (the dice), however the CPUs chose."""
    cpus = (0, 1, 2)
    setup_only = MatchRng(SEED)
    play.start(DUDO, 4, {}, ctx(setup_only))
    counters = set()
    for cpu_key in (b"one", b"two", b"three"):
        match_rng, cpu_rng = MatchRng(SEED), MatchRng(hashlib.sha256(cpu_key).digest())
        _, happened = play.start(DUDO, 4, {}, ctx(match_rng), cpus, cpu_rng)
        assert cpu_rng.counter > 0 and happened, "the CPUs did not play before the person"
        counters.add(match_rng.counter)
    assert counters == {setup_only.counter}
