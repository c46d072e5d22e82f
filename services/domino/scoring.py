"""How a round ends and what it is worth (RULES.md "Dominó": batida, tranca).

Seats 0 & 2 are team 0, seats 1 & 3 team 1: partners sit opposite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.domino.tiles import pips

BATIDA = "BATIDA"
TRANCA = "TRANCA"

Hand = Sequence[Sequence[int]]


def team_of(seat: int) -> int:
    return seat % 2


@dataclass(frozen=True)
class RoundOutcome:
    kind: str  # BATIDA or TRANCA
    seat: int  # who went out (batida) or made the blocking play (tranca)
    winning_team: int
    points: int
    team_pips: tuple[int, int]  # pips left in each team's two hands


def _team_pips(hands: Sequence[Hand]) -> tuple[int, int]:
    return (pips([*hands[0], *hands[2]]), pips([*hands[1], *hands[3]]))


def batida(hands: Sequence[Hand], seat: int) -> RoundOutcome:
    """The team that went out scores the two opponents' hands.

    The partner's hand never counts, for or against, and the tile that went
    out is worth nothing extra (no lá-e-lô, carroça or cruzada bonus).
    """
    team_pips = _team_pips(hands)
    winner = team_of(seat)
    return RoundOutcome(BATIDA, seat, winner, team_pips[1 - winner], team_pips)


def tranca(hands: Sequence[Hand], blocker: int) -> RoundOutcome:
    """Nobody can play: the team with fewer pips wins and scores the other's.

    On equal sums the team that blocked loses, so closing the table without a
    real advantage does not pay.
    """
    team_pips = _team_pips(hands)
    if team_pips[0] != team_pips[1]:
        winner = 0 if team_pips[0] < team_pips[1] else 1
    else:
        winner = 1 - team_of(blocker)
    return RoundOutcome(TRANCA, blocker, winner, team_pips[1 - winner], team_pips)
