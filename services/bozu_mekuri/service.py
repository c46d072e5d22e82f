"""The Bozu Mekuri gRPC service."""

from services.bozu_mekuri.game import GAME
from services.kit.server import run

if __name__ == "__main__":
    run(GAME)
