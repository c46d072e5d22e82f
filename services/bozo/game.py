"""Bozó, declared: the facts the platform needs and the rules in engine.py."""

from rodada.bozo.v1 import bozo_pb2

from services.bozo import advice, advisor, engine, trophies
from services.kit.game import CLAIMABLE, CONCEDE, EXPIRE, OPPONENTS, Game, Mode, Team, rules_pages

GAME = Game(
    name="bozo",
    title="Bozó",
    messages=bozo_pb2,
    ports=(50051, 9101),
    # RULES.md: solo training, duel, duplas (teams Jade and Âmbar). Options.mode
    # picks the mode; unset, the seat count does.
    modes=(
        Mode("solo", seats=(1,), options={"mode": "SOLO"}, rated=False, queued=False, deadline=EXPIRE),
        Mode("duel", seats=(2,), options={"mode": "DUEL"}, deadline=CLAIMABLE),
        Mode(
            "duplas",
            seats=(4,),
            teams=(Team("JADE", (0, 2)), Team("AMBAR", (1, 3))),
            options={"mode": "DUPLAS"},
            deadline=CLAIMABLE,
        ),
    ),
    leaving=CONCEDE,
    claims=OPPONENTS,
    setup=engine.setup,
    moves={"throw": engine.throw, "declare": engine.declare, "score": engine.score},
    view=engine.view,
    public_view=True,
    to_act=engine.to_act,
    outcome=engine.outcome,
    scores=engine.scores,
    depart=engine.depart,
    legal=engine.legal,
    # Issue 17: CPU seats (duel; duplas as partner or opponent, any of seats
    # 1-3) play the advisor's optimal policy for their side's card from the
    # seat's view, never with the cup (worth the same); practice tables may
    # ask the advisor.
    cpu=advisor.cpu_move,
    cpu_seats=True,
    ask=advice.ask,
    practice_options=frozenset({"advice"}),
    prepare=advisor.prepare,
    trophies=trophies.TROPHIES,
    rules=rules_pages(__file__),
)
