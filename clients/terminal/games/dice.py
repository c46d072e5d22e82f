"""What Bozó and Yatzy boards share: five dice kept by their number keys
before a re-throw, a box chosen with the arrows among those the dice can
fill, and a score card drawn as a table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

from google.protobuf.message import Message as Proto
from rich.text import Text
from rodada.common.v1 import match_pb2
from textual.binding import Binding, BindingType

from clients.terminal.games.base import GamePanel, turn_marker

V = TypeVar("V", bound=Proto)
E = TypeVar("E", bound=Proto)

DIE_KEYS = [Binding(str(n), f"keep({n - 1})", f"Keep {n}", show=False) for n in range(1, 6)]


def grid(header: Sequence[str], rows: Sequence[Sequence[str]], first: int = 18, width: int = 6) -> Text:
    """A score card: labels in the first column, one column per card."""
    text = Text(
        header[0].ljust(first) + "".join(h[: width - 1].rjust(width) for h in header[1:]), style="bold"
    )
    for row in rows:
        text.append("\n" + row[0].ljust(first) + "".join(cell.rjust(width) for cell in row[1:]))
    return text


class DicePanel(GamePanel[V, E]):
    """A board with five dice to keep and a box to score. Subclasses say
    what the dice show, which boxes the seat may fill now and how to score."""

    TURN_ACTIONS = frozenset({"keep", "box", "score", "throw"})
    BINDINGS: ClassVar[list[BindingType]] = [
        *DIE_KEYS,
        Binding("up", "box(-1)", "Box ▲", show=False),
        Binding("down", "box(1)", "Box ▼", show=False),
        Binding("s", "score", "Score"),
        Binding("x", "claim", "Claim"),
    ]

    def __init__(self, snap: match_pb2.Snapshot) -> None:
        super().__init__(snap)
        self.keep: set[int] = set()
        self.box_at = self._best()

    def faces(self) -> list[str]:
        """The current dice as drawn, e.g. "5", or "?" under a cup."""
        raise NotImplementedError

    def choices(self) -> list[tuple[int, int]]:
        """The boxes the current dice may fill, as (box, points now)."""
        raise NotImplementedError

    def box_label(self, box: int) -> str:
        raise NotImplementedError

    def score(self, box: int) -> Proto:
        raise NotImplementedError

    def _best(self) -> int:
        choices = self.choices()
        return max(range(len(choices)), key=lambda i: choices[i][1]) if choices else 0

    def changed(self, before: match_pb2.Snapshot) -> None:
        if self._view(before) != self.view:  # new dice or a new turn: choose afresh
            self.keep.clear()
            self.box_at = self._best()

    def action_keep(self, die: int) -> None:
        if die < len(self.faces()):
            self.keep ^= {die}
            self.refresh()

    def action_box(self, step: int) -> None:
        if choices := self.choices():
            self.box_at = (self.box_at + step) % len(choices)
            self.refresh()

    def action_score(self) -> None:
        choices = self.choices()
        if 0 <= self.box_at < len(choices):
            self.play(self.score(choices[self.box_at][0]))

    def heading(self, title: str, progress: str) -> Text:
        """The first lines of the board: the game, how far it is and whose
        turn, then the dice."""
        acting = self.snap.to_act[0] if self.snap.to_act else -1
        text = Text(title, style="bold")
        text.append(f" · {progress}")
        if acting >= 0:
            text.append(f" · {self.who(acting)}{turn_marker(self, acting)}", style="bold yellow")
        return text.append("\n").append_text(self.dice_line())

    def dice_line(self) -> Text:
        text = Text("Dice ")
        if not self.faces():
            return text.append("not thrown yet", style="dim")
        for i, face in enumerate(self.faces()):
            kept = i in self.keep
            text.append(f" {i + 1}:")
            text.append(f"[{face}]", style="bold reverse" if kept else "bold")
        if self.keep:
            text.append("  keep " + " ".join(str(i + 1) for i in sorted(self.keep)), style="green")
        return text

    def choice_line(self) -> Text:
        choices = self.choices()
        if not self.my_turn or not choices:
            return Text()
        box, points = choices[min(self.box_at, len(choices) - 1)]
        return Text.assemble("Score in ", (f"▲▼ {self.box_label(box)} → {points}", "bold reverse"))

    def chosen(self, box: int) -> bool:
        """Whether ``box`` is the one the arrows point at (marked on the card)."""
        choices = self.choices()
        return self.my_turn and 0 <= self.box_at < len(choices) and choices[self.box_at][0] == box
