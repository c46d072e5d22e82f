"""Bozu Mekuri: every flipped card is public; the deck is drawn only as its
size (its order is never sent). f flips, s declines an extra flip, t takes
your seat back from the CPU after leaving."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from rodada.bozu_mekuri.v1 import bozu_mekuri_pb2 as bm
from textual.binding import Binding, BindingType

from clients.terminal.games.base import GamePanel, Names, label, turn_marker

EFFECTS = {
    bm.KEPT: "kept",
    bm.LOST_TO_PILE: "cards to the pile",
    bm.TOOK_PILE: "takes the pile",
    bm.KNOCKED_OUT: "knocked out",
    bm.SKIPS_NEXT_TURN: "skips next turn",
    bm.ALL_TO_PILE: "everyone's cards to the pile",
    bm.TOOK_EVERYONES_CARDS: "takes everyone's cards",
}


def card(c: bm.Card) -> str:
    kind = label(bm.Category, c.category).lower() + (", emperor" if c.emperor else "")
    return f"#{c.number} {c.name_romaji} ({kind})"


class BozuMekuriPanel(GamePanel[bm.View, bm.Event]):
    View, Action, Event = bm.View, bm.Action, bm.Event
    TURN_ACTIONS = frozenset({"flip", "stop"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "flip", "Flip"),
        Binding("s", "stop", "Stop"),
        Binding("t", "take_over", "Take back"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop" and not self.view.can_stop:
            return None
        if action == "take_over":
            seat = self.snap.seat
            return 0 <= seat < len(self.snap.seats) and self.snap.seats[seat].cpu_controlled
        return super().check_action(action, parameters)

    def action_flip(self) -> None:
        self.play(bm.Action(flip=bm.Flip()))

    def action_stop(self) -> None:
        self.play(bm.Action(stop=bm.Stop()))

    def action_take_over(self) -> None:
        self.play(bm.Action(take_over=bm.TakeOver()))

    def draw(self) -> Text:
        view = self.view
        text = Text(f"Deck {view.deck_count}", style="bold")
        text.append(f" · pile {view.pile_count}")
        if view.turn_timer_seconds:
            text.append(f" · {view.turn_timer_seconds} s a turn")
        if view.semimaru_warning:
            text.append("\nSemimaru is still in the deck!", style="bold red")
        text.append("\nLast flipped: ")
        text.append(card(view.last_flipped) if view.HasField("last_flipped") else "none yet", style="bold")
        if view.extra_flip_offered and self.my_turn:
            stop = " or s to stop" if view.can_stop else ""
            text.append(f"\nOne more flip on offer: f to flip{stop}", style="bold magenta")
        text.append("\n")
        for seat in view.seats:
            text.append(f"\n {self.player(seat.seat):<18} {seat.card_count:>3} cards")
            if seat.eliminated:
                text.append(" out", style="dim")
            if seat.skips_next_turn:
                text.append(" skips next turn", style="dim")
            if self.snap.seats[seat.seat].cpu_controlled and not self.snap.seats[seat.seat].cpu:
                text.append(" (cpu plays)", style="dim")
            text.append(turn_marker(self, seat.seat), style="bold yellow")
        if view.pile:
            text.append("\n\nPile: " + ", ".join(f"#{c.number}" for c in view.pile[-8:]))
        return text

    @classmethod
    def describe(cls, event: bm.Event, names: Names) -> str:
        kind = event.WhichOneof("event")
        if kind == "match_started":
            return f"{event.match_started.deck_count} cards shuffled"
        if kind == "turn_started":
            return f"{names(event.turn_started.seat)}'s turn"
        if kind == "card_flipped":
            flipped = event.card_flipped
            return f"{names(flipped.seat)}: {card(flipped.card)}, {EFFECTS.get(flipped.effect, '')}"
        if kind == "stopped":
            return f"{names(event.stopped.seat)} stops"
        if kind == "turn_skipped":
            return f"{names(event.turn_skipped.seat)} skips a turn"
        if kind == "semimaru_warning":
            return "Semimaru may be near"
        return kind or "?"
