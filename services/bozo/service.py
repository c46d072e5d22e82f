"""The Bozó gRPC service: the shared kit around the Bozó engine."""

from rodada.bozo.v1 import bozo_pb2

from services.bozo.engine import ENGINE
from services.kit.matches import Game
from services.kit.server import run

GAME = Game(ENGINE, bozo_pb2)

if __name__ == "__main__":
    run(GAME)
