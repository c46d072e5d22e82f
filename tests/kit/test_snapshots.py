"""A watched match's snapshots, one per seat and the spectators', share what
every audience sees (built once per version) and differ only in the seat,
the view and the legal actions: each must be, byte for byte, the snapshot
built for that audience alone, in every game, at every version of random
matches (departures, claims, deadlines, CPU seats and the finish included).
Sharing must change nothing: no audience may get another's view or actions,
and a game that declares its view public (made once for all) must show
every audience the view it would have been made alone.
(When the base was introduced, both were also held to the old build, one
whole constructor per audience, on the same matches.)"""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.kit.game import discover
from services.kit.matches import snapshot, snapshots
from tests.records import random_match

GAMES = discover()
MATCHES_EACH = 2


Config = tuple[str, int, dict[str, Any], tuple[int, ...]]  # game, seats, options, CPU seats


def _configs() -> list[Config]:
    """Every game's every mode, at its smallest and largest table, with a
    CPU seat where the game has them and the table has room for a person."""
    configs: list[Config] = []
    for name, game in GAMES.items():
        for mode in game.modes:
            for seats in sorted({min(mode.seats), max(mode.seats)}):
                cpu_seats = (seats - 1,) if game.cpu_seats and seats > 1 else ()
                configs.append((name, seats, dict(mode.options), cpu_seats))
    return configs


@pytest.mark.parametrize(("name", "seats", "options", "cpu_seats"), _configs())
def test_every_audiences_snapshot_is_the_one_built_for_it_alone(
    name: str, seats: int, options: dict[str, Any], cpu_seats: tuple[int, ...]
) -> None:
    game = GAMES[name]
    rnd = random.Random(f"{name}-{seats}-{sorted(options.items())}")
    audiences = (*range(seats), None)  # as the service lists them
    for _ in range(MATCHES_EACH):
        record = random_match(game, seats, options, rnd=rnd, cpu_seats=cpu_seats, departures=0.04)
        for stored in record.versions:
            alone = [snapshot(game, stored, seat).SerializeToString() for seat in audiences]
            shared = [built.SerializeToString() for built in snapshots(game, stored, audiences)]
            assert shared == alone, f"version {stored.version}"
