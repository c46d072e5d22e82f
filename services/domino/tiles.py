"""The double-six set and how a tile joins the line of play.

A tile is a pair of pip values, 0 (branca) to 6 (sena). In a hand a tile is
kept normalised (low half first) so that 5-2 and 2-5 are the same tile; on the
line it is kept oriented, its first half facing left, so that neighbouring
halves match and the two open ends are the first half of the leftmost tile and
the second half of the rightmost one.
"""

from __future__ import annotations

from collections.abc import Iterable

Tile = tuple[int, int]
Ends = tuple[int, int]  # (left, right)

HIGHEST_PIP = 6  # the sena; a double-six set
DOUBLE_SIX: Tile = (HIGHEST_PIP, HIGHEST_PIP)
LEFT = "LEFT"
RIGHT = "RIGHT"


def full_set() -> list[Tile]:
    """The 28 tiles, 0-0 to 6-6, each once, normalised."""
    return [(a, b) for a in range(HIGHEST_PIP + 1) for b in range(a, HIGHEST_PIP + 1)]


def normalised(tile: Iterable[int]) -> Tile:
    a, b = tile
    return (a, b) if a <= b else (b, a)


def pips(tiles: Iterable[Iterable[int]]) -> int:
    """A tile is worth the pips of both halves (3-4 is 7, 6-6 is 12)."""
    return sum(sum(tile) for tile in tiles)


def placements(tile: Tile, ends: Ends) -> dict[str, Ends]:
    """Each end the tile can join, with the open ends it would leave.

    The tile's matching half goes against the end; its other half becomes the
    new open end on that side.
    """
    left, right = ends
    a, b = tile
    options: dict[str, Ends] = {}
    if left in tile:
        options[LEFT] = (b if a == left else a, right)
    if right in tile:
        options[RIGHT] = (left, b if a == right else a)
    return options


def oriented(tile: Tile, end: str, ends: Ends) -> Tile:
    """The tile as it lies once joined to ``end``: its halves in line order."""
    a, b = tile
    if end == LEFT:
        return (a, b) if b == ends[0] else (b, a)
    return (a, b) if a == ends[1] else (b, a)


def can_play(hand: Iterable[Iterable[int]], ends: Ends) -> bool:
    return any(ends[0] in tile or ends[1] in tile for tile in hand)
