"""The Bozu Mekuri gRPC service: the shared kit around the Bozu Mekuri engine."""

from typing import Any

from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2

from services.bozu_mekuri.engine import ENGINE
from services.kit.matches import Game
from services.kit.server import run


def turn_timer(state: dict[str, Any]) -> float | None:
    """The table's turn timer (none, 30 or 60 s): when it runs out the
    platform has the CPU play the turn."""
    return state["options"]["turn_timer_seconds"] or None


GAME = Game(ENGINE, bozu_mekuri_pb2, deadline=turn_timer)

if __name__ == "__main__":
    run(GAME)
