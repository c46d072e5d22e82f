"""Dudo, declared: the facts the platform needs and the rules in engine.py."""

from rodada.dudo.v1 import dudo_pb2

from services.dudo import cpu, engine
from services.kit.game import CLAIMABLE, OTHERS, SEAT_OUT, Game, Mode, rules_pages

GAME = Game(
    name="dudo",
    title="Dudo",
    messages=dudo_pb2,
    ports=(50052, 9102),
    # RULES.md: 2 to 6 players; the options (dice, variants) are table rules, not modes.
    modes=(Mode("standard", seats=tuple(range(2, 7)), deadline=CLAIMABLE),),
    # RULES.md: a leaver is out and play goes on; after 120 s idle any other
    # player still in may remove the seat to act the same way.
    leaving=SEAT_OUT,
    claims=OTHERS,
    # Issue 17: a table may give seats to the computer (cpu.py, from the seat's view alone).
    cpu_seats=True,
    setup=engine.setup,
    moves={"bid": engine.bid, "dudo": engine.dudo, "calza": engine.calza, "set_assist": engine.set_assist},
    anytime=frozenset({"set_assist"}),
    quiet=frozenset({"set_assist"}),  # switching assist is no play: it never holds off a claim
    view=engine.view,
    to_act=engine.to_act,
    outcome=engine.outcome,
    in_play=engine.in_play,
    depart=engine.depart,
    legal=engine.legal,
    ask=engine.ask,
    cpu=cpu.choose,
    defaults=engine.DEFAULTS,
    rules=rules_pages(__file__),
)
