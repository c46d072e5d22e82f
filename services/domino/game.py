"""Dominó, declared: the facts the platform needs and the rules in engine.py."""

from rodada.domino.v1 import domino_pb2

from services.domino import cpu, engine, trophies
from services.kit.game import CLAIMABLE, CONCEDE, OPPONENTS, Game, Mode, Team, rules_pages

GAME = Game(
    name="domino",
    title="Dominó",
    messages=domino_pb2,
    ports=(50054, 9104),
    # RULES.md: 4 players in 2 teams, partners opposite (team 0: seats 0 & 2).
    modes=(
        Mode(
            "standard",
            seats=(4,),
            teams=(Team("TEAM_0", (0, 2)), Team("TEAM_1", (1, 3))),
            deadline=CLAIMABLE,
        ),
    ),
    # RULES.md (Decision): leaving concedes the match to the opposing team;
    # after 120 s only the opposing team may claim it.
    leaving=CONCEDE,
    claims=OPPONENTS,
    setup=engine.setup,
    moves={"play": engine.play},
    view=engine.view,
    to_act=engine.to_act,
    outcome=engine.outcome,
    scores=engine.scores,
    depart=engine.depart,
    legal=engine.legal,
    # A table may give seats to the computer (issue 17); it plays from its seat's view.
    cpu=cpu.choose,
    cpu_seats=True,
    # The seed: "Não existe mesa privada" — every table is open.
    open_tables=True,
    trophies=trophies.TROPHIES,
    rules=rules_pages(__file__),
)
