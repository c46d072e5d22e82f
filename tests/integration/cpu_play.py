"""Playing a person's seat over HTTP as the game's own CPU would, so that one
test drives any game with CPU seats (issue 17) without a strategy of its own:
the games offering CPU seats come from their declarations
(``Game.cpu_seats``), and the person's moves from ``Game.cpu`` applied to
the view the gateway gave that person."""

from __future__ import annotations

import hashlib
from typing import Any

from services.kit.game import Game, discover
from services.kit.rng import MatchRng
from tests.integration.http_client import ACTIVE, Player

MAX_MOVES = 3_000  # a person's moves in one match; every game ends far sooner


def cpu_games() -> list[Game]:
    """Every game of the product whose tables may give seats to the computer."""
    return [game for game in discover().values() if game.cpu_seats]


def cpu_table(game: Game) -> tuple[int, dict[str, Any]]:
    """Seats and options of a table for one person and CPUs: the largest
    table of at most four seats any mode has (a partnership mode gives the
    person a CPU partner), with the options that select that mode."""
    seats, options = max(
        ((s, dict(mode.options)) for mode in game.modes for s in mode.seats if 2 <= s <= 4),
        key=lambda found: found[0],
    )
    return seats, options


def seat_view(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The game's view in a snapshot as the game's own functions read it
    (the proto JSON the gateway sends, without the Any's type)."""
    return {k: v for k, v in snapshot["view"].items() if k != "@type"}


async def play_as_cpu(
    player: Player, game: Game, table_id: str, seat: int, snapshot: dict[str, Any]
) -> tuple[dict[str, Any], int]:
    """Play ``seat`` until the match ends: each move is the game's CPU
    choice from the seat's own view, sent through the gateway like any
    person's. The CPU seats are played by the services in between, so the
    seat is always the one to act while the match goes on. Returns the final
    snapshot and how many moves the seat made."""
    assert game.cpu is not None
    rng = MatchRng(hashlib.sha256(f"person {table_id}".encode()).digest())
    moves = 0
    while snapshot["status"] == ACTIVE:
        assert seat in snapshot["to_act"], f"the CPUs stopped with seats {snapshot['to_act']} to act"
        assert moves < MAX_MOVES, "the match does not end"
        action = game.cpu(seat_view(snapshot), seat, rng)
        snapshot = await player.act(table_id, snapshot["version"], action)
        moves += 1
    return snapshot, moves
