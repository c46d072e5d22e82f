"""Yatzy, declared: the facts the platform needs and the rules in engine.py."""

from rodada.yatzy.v1 import yatzy_pb2

from services.kit.game import CLAIMABLE, OTHERS, SEAT_OUT, Game, Mode, rules_pages
from services.yatzy import advice, advisor, engine, trophies

GAME = Game(
    name="yatzy",
    title="Yatzy",
    messages=yatzy_pb2,
    ports=(50055, 9105),
    # RULES.md: one or more players; a table seats up to eight.
    modes=(Mode("standard", seats=tuple(range(1, 9)), deadline=CLAIMABLE),),
    leaving=SEAT_OUT,
    claims=OTHERS,
    setup=engine.setup,
    moves={"roll": engine.roll, "score": engine.score},
    view=engine.view,
    public_view=True,
    to_act=engine.to_act,
    outcome=engine.outcome,
    scores=engine.totals,
    in_play=engine.in_play,
    depart=engine.depart,
    legal=engine.legal,
    defaults=engine.DEFAULTS,
    # Issue 17: CPU seats play the advisor's optimal policy from the seat's
    # view (ties drawn from the CPU stream); practice tables may ask it.
    cpu=advisor.cpu_move,
    cpu_seats=True,
    ask=advice.ask,
    practice_options=frozenset({"advice"}),
    prepare=advisor.prepare,
    trophies=trophies.TROPHIES,
    rules=rules_pages(__file__),
)
