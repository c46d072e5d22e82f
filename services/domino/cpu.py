"""The CPU's play: which tile, on which end, from its own seat's view alone.

A Dominó turn is forced except for the choice among playable tiles and ends
(passes are automatic). The CPU is a partnership player that decides from
what its seat may see: its hand, the line of play (so every tile played and
by whom, its partner's plays included), this round's passes, and the counts
of tiles in every hand. It never sees another hand; its only randomness is
the generator it is given, to break ties between equally good plays.

What it infers. A tile it neither holds nor sees on the line is in one of the
other three hands. A pass shows that the passer held neither of the two open
numbers then, so it holds no tile with either number now. Spreading each
unseen tile over the seats that may hold it, in proportion to how many tiles
each still holds (balanced so that each seat's expected count is its real
count), gives for each seat the chance that it holds a number.

How it values a play, in rough points:

- the last tile goes out, on whichever end: nothing to weigh;
- a play that closes the table (a tranca) is worth the expected swing: the
  chance its team has fewer pips (its own hand is known, its partner's is
  estimated; an equal count loses, since it made the blocking play) times
  the opponents' pips, less the other chance times its own team's pips;
- otherwise: heavy tiles and doubles first (pips left in hand count for the
  opponents when they go out, and a double fits only one number, so it is
  the hardest tile to place late); the next opponent's chance of playing on
  the ends it leaves counts against; when that opponent must pass, the
  partner meets these ends, so the partner's chance of playing on them counts
  for, weighted by the chance of that pass; the other opponent's chance
  counts a little against; and ends the CPU itself can still follow count
  for (keeping control of the ends, the seed's "deixar nas duas pontas os
  números que você tem em abundância").

The weights were measured with ``python -m tools.domino_strength`` against a
partnership that always lays its heaviest tile: the CPU partnership wins 80%
of 2,000 matches to 50 (95% CI 78% to 82%).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from services.domino.tiles import LEFT, RIGHT, Ends, Tile, full_set, normalised, placements
from services.kit.engine import JSON, Rng

SEATS = 4
ALL_TILES = frozenset(full_set())

GOING_OUT = 1_000.0  # the last tile: every play of it empties the hand
PIP = 0.5  # per pip laid: a pip kept is worth about this much to the opponents
DOUBLE = 3.0  # a double laid while it still fits
NEXT_PLAYS = -6.0  # times the chance the next opponent can follow
PARTNER_PLAYS = 3.0  # times the chance the next opponent passes and the partner can follow
PREVIOUS_PLAYS = -2.0  # times the chance the other opponent can follow
OWN_FOLLOWS = 1.5  # per tile of the CPU's own that fits the ends left (up to two)
TIE = 1e-9


@dataclass(frozen=True)
class Option:
    """One legal play: the tile (as held), the end (None on the opening) and
    the open ends it leaves."""

    tile: Tile
    end: str | None
    ends: Ends

    def action(self) -> JSON:
        body: JSON = {"tile": {"a": self.tile[0], "b": self.tile[1]}}
        if self.end is not None:
            body["end"] = self.end
        return {"play": body}


class Knowledge:
    """What a seat knows of where the unseen tiles are."""

    def __init__(self, view: JSON, seat: int) -> None:
        self.seat = seat
        self.partner = (seat + 2) % SEATS
        self.next = (seat + 1) % SEATS
        self.previous = (seat + 3) % SEATS
        self.hand = {_tile(t) for t in view.get("hand", [])}
        self.line = {_tile(p["tile"]) for p in view.get("line", [])}
        self.counts: list[int] = list(view.get("hand_counts", [0] * SEATS))
        self.unseen = sorted(ALL_TILES - self.hand - self.line)
        lacks: dict[int, set[int]] = {s: set() for s in range(SEATS)}
        for passed in view.get("passes", []):
            lacks[passed.get("seat", 0)] |= {passed.get("left_end", 0), passed.get("right_end", 0)}
        self.lacks = lacks
        self.where = self._spread()

    def _spread(self) -> dict[Tile, dict[int, float]]:
        """Each unseen tile's chance of being in each other seat's hand.

        A tile may be where no pass rules it out; among those seats it is
        spread in proportion to factors fitted so that each seat's expected
        number of tiles is its real count (iterative proportional fitting)."""
        others = [s for s in range(SEATS) if s != self.seat and self.counts[s] > 0]
        holders: dict[Tile, list[int]] = {}
        for tile in self.unseen:
            fits = [s for s in others if tile[0] not in self.lacks[s] and tile[1] not in self.lacks[s]]
            holders[tile] = fits or others  # passes never contradict the counts; but be safe
        factor = {s: float(self.counts[s]) for s in others}
        where: dict[Tile, dict[int, float]] = {}
        for _ in range(25):
            where = {}
            for tile, seats in holders.items():
                total = sum(factor[s] for s in seats)
                where[tile] = {s: factor[s] / total for s in seats} if total > 0 else {}
            for s in others:
                expected = sum(chances.get(s, 0.0) for chances in where.values())
                if expected > 0:
                    factor[s] *= self.counts[s] / expected
        return where

    def chance_to_follow(self, seat: int, ends: Ends) -> float:
        """The chance ``seat`` holds a tile with either open number."""
        if seat == self.seat:
            return 1.0 if any(ends[0] in t or ends[1] in t for t in self.hand) else 0.0
        none = 1.0
        for tile, chances in self.where.items():
            if ends[0] in tile or ends[1] in tile:
                none *= 1.0 - chances.get(seat, 0.0)
        return 1.0 - none

    def pips_of(self, seat: int) -> tuple[float, float]:
        """Expected pips in ``seat``'s hand, and their variance."""
        mean = variance = 0.0
        for tile, chances in self.where.items():
            p = chances.get(seat, 0.0)
            mean += p * sum(tile)
            variance += p * (1.0 - p) * sum(tile) ** 2
        return mean, variance


def choose(view: JSON, seat: int, rng: Rng) -> JSON:
    """The CPU's play for ``seat`` from that seat's view; ties broken by ``rng``."""
    options = legal_options(view)
    if not options:
        raise ValueError("the CPU was asked to play with no playable tile")
    if len(options) == 1:
        return options[0].action()
    know = Knowledge(view, seat)
    scored = [(value(know, option), option) for option in options]
    best = max(score for score, _ in scored)
    ties = [option for score, option in scored if score >= best - TIE]
    pick = ties[0] if len(ties) == 1 else ties[rng.randbelow(len(ties))]
    return pick.action()


def legal_options(view: JSON) -> list[Option]:
    """Every play the view offers: each playable tile on each end it fits."""
    options: list[Option] = []
    ends: Ends | None = None
    if view.get("line"):
        ends = (view.get("left_end", 0), view.get("right_end", 0))
    for playable in view.get("playable", []):
        tile = _tile(playable["tile"])
        if ends is None:
            options.append(Option(tile, None, tile))
            continue
        fits = placements(tile, ends)
        options += [Option(tile, end, fits[end]) for end in (LEFT, RIGHT) if end in fits]
    return options


def value(know: Knowledge, option: Option) -> float:
    """How good the play is for the CPU's team, in rough points (see the module)."""
    rest = know.hand - {option.tile}
    if not rest:
        return GOING_OUT
    ends = option.ends
    if not any(ends[0] in t or ends[1] in t for t in (*know.unseen, *rest)):
        return _tranca(know, rest)
    score = PIP * sum(option.tile)
    if option.tile[0] == option.tile[1]:
        score += DOUBLE
    follows = know.chance_to_follow(know.next, ends)
    score += NEXT_PLAYS * follows
    # The partner meets these ends when the next opponent passes.
    score += PARTNER_PLAYS * (1.0 - follows) * know.chance_to_follow(know.partner, ends)
    score += PREVIOUS_PLAYS * know.chance_to_follow(know.previous, ends)
    score += OWN_FOLLOWS * min(2, sum(1 for t in rest if ends[0] in t or ends[1] in t))
    return score


def _tranca(know: Knowledge, rest: Iterable[Tile]) -> float:
    """The expected swing of closing the table now: the CPU's team wins with
    fewer pips (an equal count loses: it blocked) and scores the opponents'."""
    partner, variance = know.pips_of(know.partner)
    unseen = sum(sum(t) for t in know.unseen)
    ours = sum(sum(t) for t in rest) + partner
    theirs = unseen - partner
    # Our team's sum and theirs move together (the partner's pips are the
    # rest of the unseen): the margin's spread is twice the partner's.
    spread = 2.0 * math.sqrt(variance) + 1.0
    win = 0.5 * (1.0 + math.erf((theirs - ours - 0.5) / (spread * math.sqrt(2.0))))
    return win * theirs - (1.0 - win) * ours


def _tile(data: JSON) -> Tile:
    return normalised((data.get("a", 0), data.get("b", 0)))
