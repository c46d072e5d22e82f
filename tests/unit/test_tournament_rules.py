"""The pure tournament rules (gateway/competitions/rules.py): points, Swiss
pairing without rematches, Buchholz, elimination seeding and byes."""

from __future__ import annotations

import itertools
import random

import pytest

from gateway.competitions import rules


def test_placement_points() -> None:
    assert rules.placement_points([1, 2]) == [1.0, 0.0]
    assert rules.placement_points([1, 1]) == [0.5, 0.5]
    assert rules.placement_points([3, 1, 2, 5, 4]) == [2.0, 4.0, 3.0, 0.0, 1.0]
    assert rules.placement_points([1, 2, 2, 4]) == [3.0, 1.5, 1.5, 0.0]


def _play_swiss(entrants: int, rounds: int, seed: int) -> tuple[list[list[list[str]]], rules.Played]:
    """A whole Swiss event with random results; every round's boards."""
    rng = random.Random(seed)
    ids = [f"e{i}" for i in range(1, entrants + 1)]
    seeds = {e: i for i, e in enumerate(ids, 1)}
    boards: list[list[str]] = []
    points: list[list[float]] = []
    byes: list[str] = []
    history = []
    for _ in range(rounds):
        played = rules.tally(ids, boards, points, byes)
        paired, bye = rules.swiss_round(played, seeds, 2)
        history.append(paired)
        assert sorted([e for b in paired for e in b] + bye) == sorted(ids)
        for board in paired:
            ranks = rng.choice([[1, 2], [2, 1], [1, 1]])
            boards.append(board)
            points.append(rules.placement_points(ranks))
        byes += bye
    return history, rules.tally(ids, boards, points, byes)


@pytest.mark.parametrize("entrants", [16, 15, 8, 7])
def test_swiss_never_repeats_a_pairing_and_seats_everyone(entrants: int) -> None:
    for seed in range(20):
        history, played = _play_swiss(entrants, rules.swiss_rounds(entrants), seed)
        pairs = [frozenset(b) for round_ in history for b in round_]
        assert len(pairs) == len(set(pairs)), "a rematch"
        for round_ in history:
            seated = [e for b in round_ for e in b]
            assert len(seated) == len(set(seated))
            assert len(seated) == entrants - entrants % 2
        # A bye goes to a different entrant each round.
        assert len(played.byes) == (len(history) if entrants % 2 else 0)


def test_swiss_pairs_by_score_then_seed() -> None:
    ids = ["a", "b", "c", "d"]
    seeds = {"a": 1, "b": 2, "c": 3, "d": 4}
    # a beat b, c beat d: the winners meet, and the losers.
    played = rules.tally(ids, [["a", "b"], ["c", "d"]], [[1.0, 0.0], [1.0, 0.0]], [])
    boards, byes = rules.swiss_round(played, seeds, 2)
    assert boards == [["a", "c"], ["b", "d"]] and byes == []
    # With the first round's pairs as the only score-neighbours left, the
    # search moves down rather than repeat: a-b met, so a meets c.
    played = rules.tally(ids, [["a", "b"], ["c", "d"]], [[0.5, 0.5], [0.5, 0.5]], [])
    boards, _ = rules.swiss_round(played, seeds, 2)
    assert boards == [["a", "c"], ["b", "d"]]


def test_swiss_backtracks_rather_than_strand_the_last_pair() -> None:
    # a-b, c-d, a-c, b-d met: the only rematch-free pairing is a-d, b-c.
    ids = ["a", "b", "c", "d"]
    seeds = {e: i for i, e in enumerate(ids, 1)}
    boards = [["a", "b"], ["c", "d"], ["a", "c"], ["b", "d"]]
    played = rules.tally(ids, boards, [[0.5, 0.5]] * 4, [])
    paired, _ = rules.swiss_round(played, seeds, 2)
    assert paired == [["a", "d"], ["b", "c"]]
    # Six entrants where the first choice (a-b) would force a rematch below.
    ids = list("abcdef")
    seeds = {e: i for i, e in enumerate(ids, 1)}
    met = [["c", "d"], ["c", "e"], ["c", "f"], ["d", "e"], ["d", "f"]]
    played = rules.tally(ids, met, [[0.0, 0.0]] * len(met), [])  # equal scores: seed order
    paired, _ = rules.swiss_round(played, seeds, 2)
    # Greedy a-b would leave c with only opponents it has met: back up to a-c.
    assert paired == [["a", "c"], ["b", "d"], ["e", "f"]]


def test_odd_field_bye_goes_to_the_lowest_without_one() -> None:
    ids = ["a", "b", "c"]
    seeds = {"a": 1, "b": 2, "c": 3}
    played = rules.tally(ids, [], [], [])
    _, byes = rules.swiss_round(played, seeds, 2)
    assert byes == ["c"]
    played = rules.tally(ids, [["a", "b"]], [[1.0, 0.0]], ["c"])
    boards, byes = rules.swiss_round(played, seeds, 2)
    # c (1 point) and a (1 point) lead; b has 0 and no bye yet: b sits out.
    assert byes == ["b"] and boards == [["a", "c"]]
    assert played.scores == {"a": 1.0, "b": 0.0, "c": 1.0}


def test_buchholz_breaks_ties() -> None:
    ids = ["a", "b", "c", "d"]
    seeds = {"a": 4, "b": 3, "c": 2, "d": 1}
    # Round 1: a beats b, c beats d. Round 2: a loses to c, b beats d.
    boards = [["a", "b"], ["c", "d"], ["a", "c"], ["b", "d"]]
    points = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]
    played = rules.tally(ids, boards, points, [])
    assert rules.buchholz(played) == {"a": 1.0 + 2.0, "b": 1.0 + 0.0, "c": 0.0 + 1.0, "d": 2.0 + 1.0}
    standings = rules.swiss_standings(played, seeds)
    # c 2 points; a and b 1 point each: a's Buchholz 3 beats b's 1 (though b
    # has the better seed); d last.
    assert [e for e, _, _ in standings] == ["c", "a", "b", "d"]
    # Equal score and Buchholz: the better seed.
    played = rules.tally(ids, [["a", "b"], ["c", "d"]], [[0.5, 0.5], [0.5, 0.5]], [])
    assert [e for e, _, _ in rules.swiss_standings(played, seeds)] == ["d", "c", "b", "a"]


def test_multi_player_tables_are_even_and_by_score() -> None:
    order = [f"e{i}" for i in range(1, 11)]
    assert [len(t) for t in rules.split_tables(order, 6, 2)] == [5, 5]
    assert [len(t) for t in rules.split_tables(order, 4, 2)] == [4, 3, 3]
    assert rules.split_tables(order, 4, 2)[0] == ["e1", "e2", "e3", "e4"]
    with pytest.raises(ValueError):
        rules.split_tables(["a"], 4, 2)
    ids = order
    seeds = {e: i for i, e in enumerate(ids, 1)}
    played = rules.tally(ids, [ids[:5], ids[5:]], [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]], [])
    boards, byes = rules.swiss_round(played, seeds, 6)
    assert byes == []
    assert sorted(boards[0]) == sorted(["e5", "e4", "e6", "e7", "e3"])


def test_bracket_order_and_byes() -> None:
    assert rules.bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert rules.bracket_order(16)[:4] == [1, 16, 8, 9]
    by_seed = [f"s{i}" for i in range(1, 7)]  # six entrants in a bracket of eight
    slots = rules.first_round_slots(by_seed)
    assert slots == [["s1"], ["s4", "s5"], ["s2"], ["s3", "s6"]]
    boards, byes = rules.bracket(by_seed)
    assert byes == ["s1", "s2"] and boards == [["s4", "s5"], ["s3", "s6"]]
    # Seeds 1 and 2 are in opposite halves for every field size.
    for n in range(2, 33):
        slots = rules.first_round_slots([f"s{i}" for i in range(1, n + 1)])
        half = len(slots) // 2
        top = {e for s in slots[:half] for e in s} if half else {e for s in slots for e in s}
        assert "s1" in top and ("s2" not in top or n == 2)
        assert sum(len(s) == 1 for s in slots) == (1 << (n - 1).bit_length()) - n


def test_elimination_winners_and_places() -> None:
    seeds = {f"s{i}": i for i in range(1, 5)}
    assert rules.winner(["s3", "s2"], [1, 2], seeds) == "s3"
    assert rules.winner(["s3", "s2"], [1, 1], seeds) == "s2"  # a draw goes to the better seed
    rounds = [[["s1", "s4"], ["s2", "s3"]], [["s1", "s3"]]]
    advancing = [["s1", "s3"], ["s3"]]
    assert rules.elimination_places(rounds, advancing, seeds) == [("s3", 1), ("s1", 2), ("s2", 3), ("s4", 3)]
    assert rules.next_elimination_round(["a", "b", "c", "d"]) == [["a", "b"], ["c", "d"]]


def test_rounds_needed() -> None:
    assert [rules.swiss_rounds(n) for n in (2, 3, 4, 16, 17)] == [1, 2, 2, 4, 5]
    assert rules.elimination_rounds(8) == 3 and rules.elimination_rounds(6) == 3
    assert rules.bracket_order(2) == [1, 2]


def test_season_moves_up_and_down() -> None:
    standings = {1: ["a", "b", "c", "d"], 2: ["e", "f", "g"], 3: ["h", "i", "j", "k", "l"]}
    moved = rules.season_moves(standings, 3, 2)
    # Top division: the worst two go down. Middle (three players): one each way.
    # Lowest: the best two go up, nobody lower to go to.
    assert moved == {"c": 2, "d": 2, "e": 1, "g": 3, "h": 2, "i": 2}
    assert rules.season_moves({2: ["x"]}, 2, 1) == {}  # alone: nobody to be better than
    assert rules.season_moves({2: ["x", "y"]}, 2, 1) == {"x": 1}
    assert rules.season_moves({1: ["x", "y"]}, 2, 3) == {"y": 2}


def test_an_impossible_rematch_free_round_is_given_up_within_the_budget() -> None:
    # Nine entrants who have each met all eleven others, and never each other:
    # every rematch-free pairing would pair the nine among themselves, which
    # an odd group cannot do. Proving it by exhaustion takes 2.3 million
    # partial pairings (11 s); the search gives up within its budget of
    # 20,000 and allows rematches.
    group_a = [f"a{i}" for i in range(9)]
    group_b = [f"b{i:02d}" for i in range(11)]
    ids = [e for pair in itertools.zip_longest(group_b, group_a) for e in pair if e]
    seeds = {e: i for i, e in enumerate(ids, 1)}
    boards = [[x, y] for x in group_a for y in group_b]
    played = rules.tally(ids, boards, [[0.0, 0.0]] * len(boards), [])
    paired, byes = rules.swiss_round(played, seeds, 2)
    assert byes == [] and sorted(e for p in paired for e in p) == sorted(ids)
    assert paired == [[ids[i], ids[i + 1]] for i in range(0, 20, 2)]  # seed order, rematches and all
