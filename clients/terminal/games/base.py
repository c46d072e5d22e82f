"""What every game's board has in common: it draws one seat's snapshot (the
game's own View inside it) and turns keys into the game's actions, which it
posts to the table screen to send; it never calls the server itself.

A board only ever shows what the snapshot holds, and the server builds each
seat's snapshot with only what that seat may see, so hidden information
(dice under a cup, other players' dice and tiles, the deck's order) stays
hidden here too: boards draw it as hidden, not as missing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from google.protobuf import any_pb2
from google.protobuf.message import Message as Proto
from rich.text import Text
from rodada.common.v1 import match_pb2
from textual.message import Message
from textual.widget import Widget

from clients.terminal.connection import unpack

V = TypeVar("V", bound=Proto)  # the game's View
E = TypeVar("E", bound=Proto)  # the game's Event
Names = Callable[[int], str]

ACTIVE = match_pb2.MATCH_STATUS_ACTIVE
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}
END_REASONS = {
    match_pb2.END_REASON_COMPLETED: "played to the end",
    match_pb2.END_REASON_FORFEIT: "by forfeit",
    match_pb2.END_REASON_INACTIVITY: "by inactivity",
}


def label(enum: Any, value: int) -> str:
    """An enum value's name for people: THREE_OF_A_KIND → Three of a kind."""
    return str(enum.DESCRIPTOR.values_by_number[value].name).replace("_", " ").capitalize()


def ordinal(place: int) -> str:
    return ORDINALS.get(place, f"{place}th")


def seat_name(snap: match_pb2.Snapshot, seat: int, you: str = "{name} (you)") -> str:
    """How a seat is called on screen: its player's name (the CPU's
    included), and for the viewer's own seat ``you`` with that name."""
    if not 0 <= seat < len(snap.seats):
        return f"seat {seat}"
    name = snap.seats[seat].display_name or f"seat {seat}"
    return you.format(name=name) if seat == snap.seat else name


class GamePanel(Widget, Generic[V, E], can_focus=True):
    """One game's board. Subclasses set the game's messages, ``draw`` the
    view, ``describe`` the game's events for the log, and bind keys to
    actions that call ``play``."""

    DEFAULT_CSS = "GamePanel { height: 1fr; padding: 0 1; }"

    View: ClassVar[type[Proto]]
    Action: ClassVar[type[Proto]]
    Event: ClassVar[type[Proto]]
    # Key actions that only make sense on the seat's turn (greyed out otherwise).
    TURN_ACTIONS: ClassVar[frozenset[str]] = frozenset()

    class Play(Message):
        """The seat wants to play ``action`` (the game's Action)."""

        def __init__(self, action: Proto) -> None:
            super().__init__()
            self.action = action

    class Ask(Message):
        """The seat asks the game ``question`` (the game's Question)."""

        def __init__(self, question: Proto) -> None:
            super().__init__()
            self.question = question

    def __init__(self, snap: match_pb2.Snapshot) -> None:
        super().__init__(id="board")
        self.snap = snap
        self.view: V = self._view(snap)
        self.note = ""  # a line of help for the current choice, e.g. "pick an end"

    def _view(self, snap: match_pb2.Snapshot) -> V:
        view: V = unpack(snap.view, self.View)  # type: ignore[assignment]
        return view

    def show(self, snap: match_pb2.Snapshot) -> None:
        """Draw a newer snapshot."""
        before = self.snap
        self.snap, self.view = snap, self._view(snap)
        self.note = ""
        self.changed(before)
        self.refresh()
        self.refresh_bindings()

    def changed(self, before: match_pb2.Snapshot) -> None:
        """A new snapshot arrived: reset whatever choice it made stale."""

    @property
    def my_turn(self) -> bool:
        return self.snap.status == ACTIVE and self.snap.seat in self.snap.to_act

    def who(self, seat: int) -> str:
        """A seat in a sentence: "you" for the viewer's own."""
        return seat_name(self.snap, seat, you="you")

    def player(self, seat: int) -> str:
        """A seat heading a row: "ana (you)" for the viewer's own."""
        return seat_name(self.snap, seat)

    def play(self, action: Proto) -> None:
        self.post_message(self.Play(action))

    def answered(self, answer: any_pb2.Any) -> None:
        """The game's answer to this board's last question."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "claim":
            return self.claimable
        if action in self.TURN_ACTIONS and not self.my_turn:
            return None  # shown, greyed out: not your turn
        return True

    @property
    def claimable(self) -> bool:
        """Whether the seat to act has run out of time (the table is told by
        an INACTIVE notice, which redraws the keys) and it is not us."""
        snap = self.snap
        overdue = snap.deadline_at > 0 and time.time() >= snap.deadline_at
        return snap.status == ACTIVE and overdue and not self.my_turn and snap.seat >= 0

    def action_claim(self) -> None:
        """Claim against (or remove) the seat to act for inactivity."""
        action = self.Action()
        action.claim_inactivity.SetInParent()  # type: ignore[attr-defined]
        self.play(action)

    def render(self) -> Text:
        text = self.draw()
        if self.note:
            text.append(f"\n{self.note}", style="bold yellow")
        if self.snap.status != ACTIVE:
            text.append("\n")
            text.append_text(self.result())
        return text

    def draw(self) -> Text:
        raise NotImplementedError

    @classmethod
    def describe(cls, event: E, names: Names) -> str:
        """One line for the log about one of the game's events."""
        raise NotImplementedError

    def result(self) -> Text:
        result = self.snap.result
        order = sorted(range(len(result.ranks)), key=lambda seat: (result.ranks[seat], seat))
        places = []
        for seat in order:
            score = f" {result.scores[seat]}" if result.scores else ""
            places.append(f"{ordinal(result.ranks[seat])} {self.who(seat)}{score}")
        why = END_REASONS.get(result.reason, "")
        return Text.assemble(("Match over", "bold reverse"), f" ({why}): ", "; ".join(places))


def turn_marker(panel: GamePanel[V, E], seat: int) -> str:
    return " ◀ to act" if panel.snap.status == ACTIVE and seat in panel.snap.to_act else ""
