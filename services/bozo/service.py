"""The Bozó gRPC service."""

from services.bozo.game import GAME
from services.kit.server import run

if __name__ == "__main__":
    run(GAME)
