"""Bozu Mekuri, declared: the facts the platform needs and the rules in engine.py."""

from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2

from services.bozu_mekuri import engine
from services.bozu_mekuri.cpu import cpu
from services.kit.game import CPU_PLAYS, CPU_TURN, NOBODY, Game, Mode, rules_pages

GAME = Game(
    name="bozu_mekuri",
    title="Bozu Mekuri",
    messages=bozu_mekuri_pb2,
    ports=(50053, 9103),
    # RULES.md: 2–6 players; the turn timer, when the table sets one, has the
    # CPU play the idle seat's turn.
    modes=(Mode("standard", seats=tuple(range(2, 7)), deadline=CPU_TURN),),
    # RULES.md: "Leaving: a CPU plays the seat; the player can come back and resume it."
    leaving=CPU_PLAYS,
    claims=NOBODY,
    cpu_seats=True,
    setup=engine.setup,
    moves={"flip": engine.flip, "stop": engine.stop},
    view=engine.view,
    public_view=True,
    to_act=engine.to_act,
    outcome=engine.outcome,
    scores=engine.scores,
    in_play=engine.in_play,
    deadline=engine.deadline,
    turn_number=engine.turn_number,
    cpu=cpu,
    legal=engine.legal,
    defaults=engine.DEFAULTS,
    rules=rules_pages(__file__),
)
