"""Bozó: public dice, except that a cup throw hides its dice from everyone,
the thrower included, until the thrower declares how to read them; those
dice are drawn as "?". 1–5 keep dice, t throws, u throws with the cup,
p (por cima) and e (embaixo) declare, the arrows and s score."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from rodada.bozo.v1 import bozo_pb2 as b
from textual.binding import Binding, BindingType

from clients.terminal.games.base import Names, label, seat_name
from clients.terminal.games.dice import DicePanel, grid

BOX_NAMES = {int(b.AS): "Ás"}
TEAMS = {b.JADE: "Jade", b.AMBAR: "Âmbar"}
SIDES = {b.TOP: "por cima", b.BOTTOM: "embaixo"}


def box_label(box: int) -> str:
    return BOX_NAMES.get(box) or label(b.Box, box)


class BozoPanel(DicePanel[b.View, b.Event]):
    View, Action, Event = b.View, b.Action, b.Event
    TURN_ACTIONS = DicePanel.TURN_ACTIONS | {"cup", "declare"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "throw", "Throw"),
        Binding("u", "cup", "Cup"),
        Binding("p", "declare('TOP')", "Top"),
        Binding("e", "declare('BOTTOM')", "Bottom"),
    ]

    def faces(self) -> list[str]:
        return ["?" if die.hidden else str(die.face) for die in self.view.dice]

    def choices(self) -> list[tuple[int, int]]:
        return [(p.box, p.points) for p in self.view.preview]

    def box_label(self, box: int) -> str:
        return box_label(box)

    def score(self, box: int) -> b.Action:
        return b.Action(score=b.Score(box=box))  # type: ignore[arg-type]

    def _throw(self, cup: bool) -> None:
        keep = sorted(self.keep) if self.view.dice else []
        self.play(b.Action(throw=b.Throw(keep=keep, cup=cup)))

    def action_throw(self) -> None:
        self._throw(cup=False)

    def action_cup(self) -> None:
        self._throw(cup=True)

    def action_declare(self, side: str) -> None:
        self.play(b.Action(declare=b.Declare(side=b.Side.Value(side))))

    def card_name(self, card: b.Card) -> str:
        if card.team:
            return TEAMS.get(card.team, "?")
        return seat_name(self.snap, card.seats[0], you="you") if card.seats else "?"

    def draw(self) -> Text:
        view = self.view
        text = self.heading(
            label(b.Mode, view.mode),
            f"turn {view.turn} of {view.turns_total} · {view.throws_left} throws left",
        )
        if view.cup_pending:
            text.append("\nUnder the cup: declare p (por cima) or e (embaixo)", style="bold magenta")
        elif view.HasField("last_reveal"):
            turned = ", ".join(f"{c.from_face}→{c.to_face}" for c in view.last_reveal.conversions)
            text.append(f"\nCup read {SIDES.get(view.last_reveal.side, '')} {turned}", style="magenta")
        text.append("\n")
        text.append_text(self.choice_line())
        text.append("\n")
        filled = [{int(f.box): f for f in card.boxes} for card in view.cards]
        rows: list[list[str]] = []
        for box in range(b.AS, b.GENERAL + 1):
            row = ("▶ " if self.chosen(box) else "  ") + box_label(box)
            cells = [str(f[box].points) + ("b" if f[box].boca else "") if box in f else "·" for f in filled]
            rows.append([row, *cells])
        rows.append(["  Total", *(str(card.total) for card in view.cards)])
        text.append_text(grid(["", *(self.card_name(c) for c in view.cards)], rows))
        return text

    @classmethod
    def describe(cls, event: b.Event, names: Names) -> str:
        kind = event.WhichOneof("event")
        if kind == "turn_started":
            return f"Turn {event.turn_started.turn}: {names(event.turn_started.seat)}"
        if kind == "thrown":
            thrown = event.thrown
            faces = "under the cup" if thrown.cup else " ".join(map(str, thrown.faces))
            return f"{names(thrown.seat)} throws {faces}"
        if kind == "revealed":
            read = event.revealed
            return f"{names(read.seat)} reads {SIDES.get(read.side, '')}: {' '.join(map(str, read.faces))}"
        if kind == "scored":
            scored = event.scored
            return f"{names(scored.seat)}: {scored.points} in {box_label(scored.box)}"
        return kind or "?"
