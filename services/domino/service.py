"""The Dominó gRPC service."""

from services.domino.game import GAME
from services.kit.server import run

if __name__ == "__main__":
    run(GAME)
