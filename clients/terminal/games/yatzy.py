"""Yatzy: nothing is hidden; every seat's card, the dice of the seat to act
and what they would score. 1–5 keep dice, r rolls, the arrows and s score."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from rodada.yatzy.v1 import yatzy_pb2 as y
from textual.binding import Binding, BindingType

from clients.terminal.games.base import Names, label
from clients.terminal.games.dice import DicePanel, grid

UPPER = {y.ONES, y.TWOS, y.THREES, y.FOURS, y.FIVES, y.SIXES}


class YatzyPanel(DicePanel[y.View, y.Event]):
    View, Action, Event = y.View, y.Action, y.Event
    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "throw", "Roll")]

    def faces(self) -> list[str]:
        return [str(face) for face in self.view.dice]

    def choices(self) -> list[tuple[int, int]]:
        return [(p.box, p.points) for p in self.view.preview]

    def box_label(self, box: int) -> str:
        return label(y.Box, box)

    def score(self, box: int) -> y.Action:
        return y.Action(score=y.Score(box=box))  # type: ignore[arg-type]

    def action_throw(self) -> None:
        self.play(y.Action(roll=y.Roll(keep=sorted(self.keep) if self.view.dice else [])))

    def draw(self) -> Text:
        view = self.view
        text = self.heading(
            f"{label(y.Card, view.card)} card",
            f"round {view.round} of {view.rounds} · {view.throws_left} throws left",
        )
        text.append("\n")
        text.append_text(self.choice_line())
        text.append("\n")
        header = ["", *(self.who(c.seat) for c in view.cards)]
        rows: list[list[str]] = []
        boxes = [entry.box for entry in view.cards[0].boxes] if view.cards else []
        for i, box in enumerate(boxes):
            row = ("▶ " if self.chosen(box) else "  ") + self.box_label(box)
            rows.append([row, *(str(c.boxes[i].points) if c.boxes[i].filled else "·" for c in view.cards)])
            if box == y.SIXES:
                rows.append(["  Bonus", *(str(c.bonus) for c in view.cards)])
        rows.append(["  Total", *(str(c.total) + ("✗" if c.forfeited else "") for c in view.cards)])
        text.append_text(grid(header, rows))
        return text

    @classmethod
    def describe(cls, event: y.Event, names: Names) -> str:
        kind = event.WhichOneof("event")
        if kind == "turn_started":
            return f"{names(event.turn_started.seat)}'s turn ({event.turn_started.round})"
        if kind == "rolled":
            rolled = event.rolled
            return f"{names(rolled.seat)} rolls {' '.join(map(str, rolled.dice))}"
        if kind == "scored":
            scored = event.scored
            return f"{names(scored.seat)}: {scored.points} in {label(y.Box, scored.box)}"
        return kind or "?"
