"""Nim, declared (a game that exists only for the tests)."""

from rodada.nim.v1 import nim_pb2

from services.kit.game import CLAIMABLE, OTHERS, SEAT_OUT, Game, Mode, Trophy, rules_pages
from tests.games.nim import engine

GAME = Game(
    name="nim",
    title="Nim",
    messages=nim_pb2,
    ports=(50099, 9199),
    modes=(Mode("standard", seats=(2, 3, 4), deadline=CLAIMABLE),),
    leaving=SEAT_OUT,
    claims=OTHERS,
    setup=engine.setup,
    moves={"take": engine.take},
    view=engine.view,
    to_act=engine.to_act,
    outcome=engine.outcome,
    in_play=engine.in_play,
    depart=engine.depart,
    legal=engine.legal,
    trophies=(Trophy("nim_last_stone", "Last stone", "Take the last stone in Nim.", engine.last_stone),),
    rules=rules_pages(__file__),
)
