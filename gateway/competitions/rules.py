"""Tournament rules, pure: pairing, points, tie-breaks and standings. The
Redis part (gateway/competitions/tournaments.py) stores what these decide.

An entrant is one player, or a team of two in partnership games. A board is
one table: two sides (duels, partnerships) or several entrants (Dudo, Yatzy,
Bozu Mekuri). Everything is decided from the entrants' ids, seeds, and the
boards already played, so two replicas computing a round from the same
record compute the same round.

Points (``placement_points``): at every table an entrant takes one point per
entrant placed below it and a half per entrant level with it: a duel's win,
draw and loss are 1, ½ and 0; a five-player Dudo table gives 4, 3, 2, 1, 0.

Swiss (``swiss_round``):
- entrants are ordered by score, then seed (1 = best rated);
- two-sided boards: the top unpaired entrant meets the next one it has not
  met, searching with backtracking so that nobody further down is left
  without a rematch-free opponent; only if no rematch-free pairing of the
  whole field exists (or none was found within ``SEARCH_BUDGET`` partial
  pairings) are rematches allowed (the same order, rematches
  permitted). With an odd number the lowest-ordered entrant without a bye
  sits out and takes a full point (1, as a win);
- multi-player tables: the ordered field is cut into tables as even as the
  table size allows (never more than it, never under the game's minimum),
  strongest together, so scores meet their like.
- Standings (``swiss_standings``): score, then Buchholz (the sum of the
  final scores of every entrant met at a table; a bye adds nothing), then
  seed.

Single elimination (``bracket``, ``next_elimination_round``): the bracket is
the next power of two; seeds are placed the standard way (1 meets 16, 8
meets 9 … in a bracket of 16, so 1 and 2 can only meet in the final) and the
missing entrants are byes, which fall to the best seeds. A drawn match goes
to the better seed. Places: the winner 1, the finalist 2, both semi-final
losers 3, then by the round lost in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

BYE_POINTS = 1.0


def placement_points(ranks: Sequence[int]) -> list[float]:
    """Each side's points from its rank at the table (1 = first)."""
    return [
        sum(1.0 for other in ranks if other > mine) + sum(0.5 for other in ranks if other == mine) - 0.5
        for mine in ranks
    ]


@dataclass
class Played:
    """What the finished boards say about the field."""

    scores: dict[str, float] = field(default_factory=dict)
    met: dict[str, set[str]] = field(default_factory=dict)
    byes: set[str] = field(default_factory=set)


def tally(
    entrants: Iterable[str],
    boards: Iterable[Sequence[str]],
    points: Iterable[Sequence[float]],
    byes: Iterable[str],
) -> Played:
    """Scores, opponents and byes from finished boards (each board's entrants
    and their points, in the same order) and the byes given."""
    played = Played()
    for entrant in entrants:
        played.scores[entrant] = 0.0
        played.met[entrant] = set()
    for seated, got in zip(boards, points, strict=True):
        for entrant, value in zip(seated, got, strict=True):
            played.scores[entrant] += value
            played.met[entrant].update(e for e in seated if e != entrant)
    for entrant in byes:
        played.scores[entrant] += BYE_POINTS
        played.byes.add(entrant)
    return played


def buchholz(played: Played) -> dict[str, float]:
    return {e: sum(played.scores[o] for o in played.met[e]) for e in played.scores}


def swiss_order(played: Played, seeds: Mapping[str, int]) -> list[str]:
    return sorted(played.scores, key=lambda e: (-played.scores[e], seeds[e]))


# How many partial pairings the search may try before it settles for
# rematches: late rounds of a small field can make a rematch-free pairing
# impossible, and proving that by exhaustion is exponential.
SEARCH_BUDGET = 20_000


class _OutOfBudget(Exception):
    pass


def _pair(
    order: list[str], met: Mapping[str, set[str]], rematches: bool, budget: list[int]
) -> list[tuple[str, str]] | None:
    """Pair ``order`` top down with backtracking; None if impossible."""
    if not order:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        raise _OutOfBudget
    first, rest = order[0], order[1:]
    for index, other in enumerate(rest):
        if not rematches and other in met[first]:
            continue
        tail = _pair(rest[:index] + rest[index + 1 :], met, rematches, budget)
        if tail is not None:
            return [(first, other), *tail]
    return None


def _pair_avoiding_rematches(order: list[str], met: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    try:
        pairs = _pair(order, met, False, [SEARCH_BUDGET])
    except _OutOfBudget:
        pairs = None
    if pairs is None:
        # Rematches allowed: the top-down pairing, found at the first try.
        pairs = _pair(order, met, True, [len(order)])
    assert pairs is not None  # an even field always pairs with rematches allowed
    return pairs


def swiss_round(
    played: Played, seeds: Mapping[str, int], table_size: int, min_size: int = 2
) -> tuple[list[list[str]], list[str]]:
    """The next Swiss round: its boards (entrants per table) and its bye."""
    order = swiss_order(played, seeds)
    if table_size > 2:
        return split_tables(order, table_size, min_size), []
    byes: list[str] = []
    if len(order) % 2:
        # The lowest-ordered entrant that has not had a bye yet.
        bye = next((e for e in reversed(order) if e not in played.byes), order[-1])
        byes = [bye]
        order = [e for e in order if e != bye]
    return [list(pair) for pair in _pair_avoiding_rematches(order, played.met)], byes


def split_tables(order: Sequence[str], table_size: int, min_size: int) -> list[list[str]]:
    """Cut an ordered field into the fewest tables of at most ``table_size``,
    as even as possible (bigger tables first)."""
    count = math.ceil(len(order) / table_size)
    base, extra = divmod(len(order), count)
    if base < min_size:
        raise ValueError(f"{len(order)} entrants cannot fill tables of {min_size} to {table_size}")
    tables, start = [], 0
    for index in range(count):
        size = base + (1 if index < extra else 0)
        tables.append(list(order[start : start + size]))
        start += size
    return tables


def swiss_rounds(entrants: int) -> int:
    """The default number of Swiss rounds: enough to single out a winner."""
    return max(1, math.ceil(math.log2(max(entrants, 2))))


def swiss_standings(played: Played, seeds: Mapping[str, int]) -> list[tuple[str, float, float]]:
    """(entrant, score, Buchholz), best first: score, Buchholz, seed."""
    tie_break = buchholz(played)
    order = sorted(played.scores, key=lambda e: (-played.scores[e], -tie_break[e], seeds[e]))
    return [(e, played.scores[e], tie_break[e]) for e in order]


# -- single elimination -----------------------------------------------------------------


def bracket_order(size: int) -> list[int]:
    """Seeds in bracket order for a bracket of ``size`` (a power of two):
    neighbours meet in the first round, 1 and 2 only in the final."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [seed for s in order for seed in (s, total - s)]
    return order


def bracket(by_seed: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    """The first round from the entrants in seed order: boards and byes.
    Returned in bracket order, a bye standing in its slot (as a one-entrant
    "board" in ``slots``): see ``first_round_slots``."""
    slots = first_round_slots(by_seed)
    return [s for s in slots if len(s) == 2], [s[0] for s in slots if len(s) == 1]


def first_round_slots(by_seed: Sequence[str]) -> list[list[str]]:
    size = 1 << max(1, math.ceil(math.log2(max(len(by_seed), 2))))
    order = bracket_order(size)
    slots = []
    for a, b in zip(order[::2], order[1::2], strict=True):
        pair = [by_seed[s - 1] for s in (a, b) if s <= len(by_seed)]
        slots.append(pair)
    return slots


def elimination_rounds(entrants: int) -> int:
    return max(1, math.ceil(math.log2(max(entrants, 2))))


def winner(seated: Sequence[str], ranks: Sequence[int], seeds: Mapping[str, int]) -> str:
    """The side that goes through: the better rank, then the better seed."""
    return min(zip(seated, ranks, strict=True), key=lambda pair: (pair[1], seeds[pair[0]]))[0]


def next_elimination_round(advancing: Sequence[str]) -> list[list[str]]:
    """The next round's boards: the winners of neighbouring slots meet."""
    return [list(advancing[i : i + 2]) for i in range(0, len(advancing), 2)]


def elimination_places(
    rounds: Sequence[Sequence[list[str]]], advancing: Sequence[Sequence[str]], seeds: Mapping[str, int]
) -> list[tuple[str, int]]:
    """Final places: ``rounds[r]`` are round r's slots (a bye is a slot of
    one), ``advancing[r]`` who went through each slot. Losers of a later
    round place above losers of an earlier one; both semi-final losers share
    third place, and so on for every round (a round's losers share a place)."""
    places: list[tuple[str, int]] = []
    champion = advancing[-1][0]
    places.append((champion, 1))
    place = 2
    for slots, through in zip(reversed(rounds), reversed(advancing), strict=True):
        losers = sorted(
            (e for slot, w in zip(slots, through, strict=True) for e in slot if e != w), key=seeds.__getitem__
        )
        places.extend((loser, place) for loser in losers)
        place += len(losers)
    return places


# -- league seasons -------------------------------------------------------------------------


def season_moves(standings: dict[int, list[str]], divisions: int, moves: int) -> dict[str, int]:
    """Where players go when a season closes: ``standings[d]`` is division
    d's players who played this season, best first (1 = the top division).
    The best ``moves`` of every division but the top go up one, the worst
    ``moves`` of every division but the lowest go down one; a division with
    fewer than twice ``moves`` players moves half of them each way (rounded
    down), so nobody goes both ways. Players who did not play stay."""
    moved: dict[str, int] = {}
    for division, ranked in standings.items():
        count = min(moves, len(ranked) // 2)
        if division > 1:
            moved.update((player, division - 1) for player in ranked[:count])
        if division < divisions and count:
            moved.update((player, division + 1) for player in ranked[-count:])
    return moved
