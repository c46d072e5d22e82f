"""The advice question (``Question.advice``) of practice tables: the exact
optimal play of the asker's card, from the advisor (``advisor.py``).

Only a table created with ``Options.advice`` answers it, only to a seated
player still in the match, and only while the match is on. The seat to act
gets every action it may take now with its expected final total, best first;
another seat gets its card's expected final total from its next turn start
and no options (it has none now). Yatzy hides nothing, so the position is
read from the public view.
"""

from __future__ import annotations

from typing import Any

from rodada.yatzy.v1 import yatzy_pb2

from services.kit.engine import JSON, InvalidAction, RulesError, State
from services.yatzy import advisor, engine, scoring


def ask(state: State, seat: int | None, question: yatzy_pb2.Question) -> JSON:
    if question.WhichOneof("question") != "advice":
        raise InvalidAction("malformed_question", "the question must be advice")
    check(state, seat)
    assert seat is not None
    return {"advice": advise(state, seat)}


def check(state: State, seat: int | None) -> None:
    """Why the advice is refused, if it is; the order is the order of the
    proto's list (the table first: a table without advice never answers)."""
    if not state.get("advice", False):
        raise RulesError("advice_off", "this table was created without the advice option")
    if seat is None:
        raise RulesError("not_seated", "only a seated player has a card to advise")
    if not engine.in_play(state, seat):
        raise RulesError("not_in_game", "this seat is no longer in the match")
    if engine.outcome(state) is not None:
        raise RulesError("game_over", "the match is over")


def advise(state: State, seat: int) -> JSON:
    """The Advice message's JSON for ``seat``."""
    view = engine.view(state, seat)
    card: str = view["card"]
    filled = {e["box"]: e["points"] for e in view["cards"][seat]["boxes"] if e["filled"]}
    best = advisor.advisor(card)
    if engine.to_act(state) != [seat]:
        full = len(filled) == len(scoring.boxes(card))
        expected = float(scoring.total(card, filled)) if full else best.expected_total(filled)
        return {"expected_final_score": expected, "options": []}
    advice = best.advise(filled, view["dice"], view["throws_used"])
    return {"expected_final_score": advice.expected_final_score, "options": options(advice)}


def options(advice: advisor.Advice) -> list[dict[str, Any]]:
    return [{"action": o.action, "expected_final_score": o.expected_final_score} for o in advice.options]
