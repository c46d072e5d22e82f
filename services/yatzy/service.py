"""The Yatzy gRPC service."""

from services.kit.server import run
from services.yatzy.game import GAME

if __name__ == "__main__":
    run(GAME)
