"""Engine apply time per game, in process (issue 15: ≤ 20 µs median).

Random playouts of every game through ``services.kit.play.act``, the call a
service makes for a move once it has the match record and the unpacked
Action message: the rules, the turn clock and any CPU turns that follow.
Choosing the move (``legal``) and parsing it are left out of the timing.
"""

from __future__ import annotations

import random
import statistics
import time

from google.protobuf.message import Message

from services.kit import play
from services.kit.engine import Context
from services.kit.game import Game, discover
from services.kit.rng import SEED_BYTES, MatchRng

# Seats per game for the playouts: each game's commonest table.
SEATS = {"bozo": 1, "bozu_mekuri": 2, "domino": 4, "dudo": 4, "yatzy": 1}


def apply_times(game: Game, seats: int, moves: int, seed: int = 1) -> list[float]:
    """Seconds per ``play.act`` over random playouts until ``moves`` moves."""
    assert game.legal is not None, f"{game.name} offers no legal actions to play from"
    rnd = random.Random(seed)
    times: list[float] = []
    while len(times) < moves:
        rng = MatchRng(rnd.randbytes(SEED_BYTES))
        now = 1_000.0
        table, _ = play.start(game, seats, {}, Context(rng, now, now))
        while game.outcome(table.state) is None and len(times) < moves:
            now += 1.0
            seat = game.to_act(table.state)[0]
            action: Message = game.action(rnd.choice(game.legal(table.state, seat)))
            ctx = Context(rng, now, table.idle_since)
            started = time.perf_counter()
            play.act(game, table, seat, action, ctx)
            times.append(time.perf_counter() - started)
    return times


def engine_medians(moves: int = 5000) -> dict[str, float]:
    """Median µs per move, by game."""
    games = discover()
    return {
        name: statistics.median(apply_times(games[name], SEATS.get(name, 2), moves)) * 1e6
        for name in sorted(games)
    }


if __name__ == "__main__":
    for name, micros in engine_medians().items():
        print(f"{name:<12} {micros:7.1f} µs")
