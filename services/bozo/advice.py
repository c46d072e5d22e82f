"""The advice question (``Question.advice``) of practice tables: the exact
optimal play of the asker's card (its team's card in duplas), from the
advisor (``advisor.py``).

Only a table created with ``Options.advice`` answers it, only to a seated
player, and only while the match is on. The position is read from the
asker's view, so dice under the cup stay unknown to the advice as to
everyone. The seat to act gets every action it may take now (each throw
without and with the cup: equal values) with its expected final total, best
first. Any other seat gets no options and the expected final total of its
card from where it stands: a turn start if the other side is playing, the
partner's position (valued as if the partner plays optimally) in duplas.
"""

from __future__ import annotations

from rodada.bozo.v1 import bozo_pb2

from services.bozo import advisor, engine
from services.bozo.scoring import BOXES
from services.kit.engine import JSON, InvalidAction, RulesError, State
from services.yatzy.advice import options


def ask(state: State, seat: int | None, question: bozo_pb2.Question) -> JSON:
    if question.WhichOneof("question") != "advice":
        raise InvalidAction("malformed_question", "the question must be advice")
    if not state.get("advice", False):
        raise RulesError("advice_off", "this table was created without the advice option")
    if seat is None:
        raise RulesError("not_seated", "only a seated player has a card to advise")
    if engine.outcome(state) is not None:
        raise RulesError("game_over", "the match is over")
    return {"advice": advise(state, seat)}


def advise(state: State, seat: int) -> JSON:
    """The Advice message's JSON for ``seat``."""
    view = engine.view(state, seat)
    cards = view["cards"]
    side = seat % len(cards)
    filled = {e["box"]: e["points"] for e in cards[side]["boxes"]}
    best = advisor.advisor()
    (to_act,) = engine.to_act(state)
    if len(filled) == len(BOXES):
        return {"expected_final_score": float(cards[side]["total"]), "options": []}
    if to_act % len(cards) != side:  # the other side is playing: our card waits at a turn start
        return {"expected_final_score": best.expected_total(filled), "options": []}
    dice = [die["face"] for die in view["dice"]]
    advice = best.advise(
        filled, dice, view["throw_number"], cup_pending=view["cup_pending"], with_cup=to_act == seat
    )
    if to_act != seat:  # the partner is playing our card: its value, but nothing for us to do
        return {"expected_final_score": advice.expected_final_score, "options": []}
    return {"expected_final_score": advice.expected_final_score, "options": options(advice)}
