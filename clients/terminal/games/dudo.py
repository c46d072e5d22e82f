"""Dudo: your own dice face up, everyone else's as one "?" per die until a
call reveals them all (the view carries no one else's dice, and a reveal
carries every hand). A bid is drafted with the arrows and sent with b."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from google.protobuf import any_pb2
from rich.text import Text
from rodada.common.v1 import match_pb2
from rodada.dudo.v1 import dudo_pb2 as d
from textual.binding import Binding, BindingType

from clients.terminal.connection import unpack
from clients.terminal.games.base import ACTIVE, GamePanel, Names, ordinal, turn_marker

OUTCOMES = {
    d.BIDDER_LOSES: "the bid was false",
    d.CALLER_LOSES: "the bid held",
    d.CALZA_RIGHT: "exact!",
    d.CALZA_WRONG: "not exact",
}
OUT_REASONS = {d.NO_DICE: "no dice", d.LEFT: "left", d.REMOVED_INACTIVE: "removed"}


def dice(faces: list[int]) -> str:
    return "".join(f"[{face}]" for face in faces)


def bid(quantity: int, face: int) -> str:
    return f"{quantity} × {face}"


class DudoPanel(GamePanel[d.View, d.Event]):
    View, Action, Event = d.View, d.Action, d.Event
    TURN_ACTIONS = frozenset({"bid", "dudo", "calza"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "quantity(1)", "Qty +", show=False),
        Binding("down", "quantity(-1)", "Qty -", show=False),
        Binding("right", "face(1)", "Face +", show=False),
        Binding("left", "face(-1)", "Face -", show=False),
        Binding("b", "bid", "Bid"),
        Binding("d", "dudo", "Dudo!"),
        Binding("c", "calza", "Calza"),
        Binding("a", "assist", "Assist"),
        Binding("o", "odds", "Odds"),
        Binding("x", "claim", "Claim"),
    ]

    def __init__(self, snap: match_pb2.Snapshot) -> None:
        super().__init__(snap)
        self.quantity, self.face = self._draft()
        self.odds = ""

    def _draft(self) -> tuple[int, int]:
        """The bid offered by default: one more of the standing bid's face,
        or to open, what the seat's own dice suggest."""
        view = self.view
        if view.HasField("current_bid"):
            return min(view.current_bid.quantity + 1, max(view.dice_in_play, 1)), view.current_bid.face
        counts = Counter(face for face in view.my_dice if face != 1)
        face = counts.most_common(1)[0][0] if counts else 2
        return max(1, sum(1 for f in view.my_dice if f in (face, 1))), face

    def changed(self, before: match_pb2.Snapshot) -> None:
        self.quantity, self.face = self._draft()
        self.odds = ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "calza" and not self.view.options.calza:
            return False
        return super().check_action(action, parameters)

    # -- keys --------------------------------------------------------------

    def action_quantity(self, step: int) -> None:
        self.quantity = min(max(self.quantity + step, 1), max(self.view.dice_in_play, 1))
        self.odds = ""
        self.refresh()

    def action_face(self, step: int) -> None:
        self.face = (self.face - 1 + step) % 6 + 1
        self.odds = ""
        self.refresh()

    def action_bid(self) -> None:
        self.play(d.Action(bid=d.Bid(quantity=self.quantity, face=self.face)))

    def action_dudo(self) -> None:
        self.play(d.Action(dudo=d.Dudo()))

    def action_calza(self) -> None:
        self.play(d.Action(calza=d.Calza()))

    def action_assist(self) -> None:
        self.play(d.Action(set_assist=d.SetAssist(on=not self.view.assist)))

    def action_odds(self) -> None:
        self.post_message(self.Ask(d.Question(bid_odds=d.BidOdds(quantity=self.quantity, face=self.face))))

    def answered(self, answer: any_pb2.Any) -> None:
        chance = unpack(answer, d.Answer).bid_odds
        self.odds = f"{bid(chance.quantity, chance.face)}: {chance.probability:.0%}"
        self.refresh()

    # -- drawing -----------------------------------------------------------

    def draw(self) -> Text:
        view = self.view
        text = Text(f"Round {view.round}", style="bold")
        text.append(f" · {view.dice_in_play} dice in play · {self.who(view.opener)} to open")
        if view.palifico_round:
            text.append(" · PALIFICO: ones not wild", style="bold magenta")
        text.append("\nBid ")
        if view.HasField("current_bid"):
            text.append(bid(view.current_bid.quantity, view.current_bid.face), style="bold")
            text.append(f" by {self.who(view.bidder)}")
            if view.HasField("current_bid_probability"):
                text.append(f" · chance {view.current_bid_probability:.0%}", style="cyan")
        else:
            text.append("none yet")
        if len(view.round_bids) > 1:
            earlier = view.round_bids[:-1]
            text.append(
                " · before: " + ", ".join(f"{self.who(b.seat)} {bid(b.quantity, b.face)}" for b in earlier)
            )
        revealed = {hand.seat: hand.dice for hand in view.last_reveal.hands}
        text.append(f"\n{'':<17} {'dice':<16}{'last call' if revealed else ''}", style="dim")
        for player in view.players:
            text.append(f"\n {self.player(player.seat):<16} ")
            if player.out:
                place = f" {ordinal(player.place)}" if player.HasField("place") else ""
                cell, style = f"out{place}", "dim"
            elif player.seat == self.snap.seat:
                cell, style = dice(list(view.my_dice)), "bold green"
            else:
                cell, style = "[?]" * player.dice_count, ""  # hidden until a call
            text.append(f"{cell:<16}", style=style)
            text.append(" ".join(map(str, revealed.get(player.seat, []))), style="dim")
            text.append(turn_marker(self, player.seat), style="bold yellow")
        if view.HasField("last_reveal"):
            text.append("\n")
            text.append_text(self.reveal(view.last_reveal))
        if self.snap.status == ACTIVE and view.my_dice:
            text.append("\nYour bid ")
            text.append(f"▲▼ {self.quantity} × ◀▶ {self.face}", style="bold reverse")
            text.append(f" · assist {'on' if view.assist else 'off'}")
            if self.odds:
                text.append(f" · {self.odds}", style="cyan")
        return text

    def reveal(self, reveal: d.Reveal) -> Text:
        call = "Dudo!" if reveal.call == d.DUDO else "calza"
        text = Text(f"Round {reveal.round}: {self.who(reveal.caller)} called {call} on ", style="dim")
        text.append(f"{bid(reveal.bid.quantity, reveal.bid.face)}: {reveal.count} counted, ", style="dim")
        text.append(OUTCOMES.get(reveal.outcome, ""), style="dim")
        if reveal.HasField("loser"):
            text.append(f"; {self.who(reveal.loser)} lost a die", style="dim")
        return text

    @classmethod
    def describe(cls, event: d.Event, names: Names) -> str:
        kind = event.WhichOneof("event")
        if kind == "round_started":
            started = event.round_started
            return f"Round {started.round}: {names(started.opener)} opens ({started.dice_in_play} dice)"
        if kind == "dice_rolled":
            return f"Your dice: {dice(list(event.dice_rolled.dice))}"
        if kind == "bid_made":
            b = event.bid_made
            return f"{names(b.seat)} bids {bid(b.quantity, b.face)}"
        if kind == "revealed":
            r = event.revealed
            loser = f", {names(r.loser)} loses a die" if r.HasField("loser") else ""
            return f"{names(r.caller)} calls: {r.count} counted{loser}"
        if kind == "player_out":
            return f"{names(event.player_out.seat)} is out ({ordinal(event.player_out.place)})"
        if kind == "round_voided":
            return f"Round {event.round_voided.round} voided: {names(event.round_voided.seat)} left"
        if kind == "assist_changed":
            return f"Assist {'on' if event.assist_changed.on else 'off'}"
        return kind or "?"
