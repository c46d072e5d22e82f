"""The Dudo gRPC service: the shared kit around the Dudo engine."""

from rodada.dudo.v1 import dudo_pb2

from services.dudo.engine import ENGINE
from services.kit.matches import Game
from services.kit.server import run

GAME = Game(ENGINE, dudo_pb2)

if __name__ == "__main__":
    run(GAME)
