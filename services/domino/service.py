"""The Dominó gRPC service: the shared kit around the Dominó engine."""

from rodada.domino.v1 import domino_pb2

from services.domino.engine import ENGINE
from services.kit.matches import Game
from services.kit.server import run

GAME = Game(ENGINE, domino_pb2)

if __name__ == "__main__":
    run(GAME)
