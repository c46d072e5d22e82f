"""The Yatzy gRPC service: the shared kit around the Yatzy engine."""

from rodada.yatzy.v1 import yatzy_pb2

from services.kit.matches import Game
from services.kit.server import run
from services.yatzy.engine import ENGINE

GAME = Game(ENGINE, yatzy_pb2)

if __name__ == "__main__":
    run(GAME)
