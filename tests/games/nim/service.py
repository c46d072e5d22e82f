"""The Nim gRPC service."""

from services.kit.server import run
from tests.games.nim.game import GAME

if __name__ == "__main__":
    run(GAME)
