"""The Bozu Mekuri gRPC service: the shared kit around the Bozu Mekuri engine."""

from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2

from services.bozu_mekuri.engine import ENGINE
from services.kit.matches import Game
from services.kit.server import run

GAME = Game(ENGINE, bozu_mekuri_pb2)

if __name__ == "__main__":
    run(GAME)
