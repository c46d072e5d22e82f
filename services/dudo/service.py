"""The Dudo gRPC service."""

from services.dudo.game import GAME
from services.kit.server import run

if __name__ == "__main__":
    run(GAME)
