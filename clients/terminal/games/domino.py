"""Dominó: your own hand face up, the others' as a count of backs, the line
as it lies, and each round's hands once its end reveals them. On your turn
the cursor walks the tiles you may play; enter lays it where it fits, l and
r choose the end when it fits both."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from rodada.common.v1 import match_pb2
from rodada.domino.v1 import domino_pb2 as dm
from textual.binding import Binding, BindingType

from clients.terminal.games.base import GamePanel, Names, turn_marker

ENDS = {dm.LEFT: "left", dm.RIGHT: "right"}
ROUND_ENDS = {dm.BATIDA: "batida", dm.TRANCA: "tranca"}


def tile(t: dm.Tile) -> str:
    return f"[{t.a}|{t.b}]"


def same(a: dm.Tile, b: dm.Tile) -> bool:
    return sorted((a.a, a.b)) == sorted((b.a, b.b))


def team(seat: int) -> int:
    """Partners sit opposite: team 0 is seats 0 and 2, team 1 seats 1 and 3."""
    return seat % 2


class DominoPanel(GamePanel[dm.View, dm.Event]):
    View, Action, Event = dm.View, dm.Action, dm.Event
    TURN_ACTIONS = frozenset({"lay", "lay_at"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "◀ tile", show=False),
        Binding("right", "move(1)", "▶ tile", show=False),
        Binding("enter", "lay", "Play"),
        Binding("l", "lay_at('left')", "Left"),
        Binding("r", "lay_at('right')", "Right"),
        Binding("x", "claim", "Claim"),
    ]

    def __init__(self, snap: match_pb2.Snapshot) -> None:
        super().__init__(snap)
        self.cursor = 0
        self.changed(snap)

    def choices(self) -> list[int]:
        """Indices into the hand the cursor walks: the playable tiles on
        your turn, every tile otherwise."""
        hand = self.view.hand
        if not self.my_turn:
            return list(range(len(hand)))
        return [i for i, t in enumerate(hand) if any(same(t, p.tile) for p in self.view.playable)]

    def changed(self, before: match_pb2.Snapshot) -> None:
        choices = self.choices()
        if self.cursor not in choices:
            self.cursor = choices[0] if choices else 0

    def selected(self) -> dm.PlayableTile | None:
        if self.cursor >= len(self.view.hand):
            return None
        chosen = self.view.hand[self.cursor]
        return next((p for p in self.view.playable if same(p.tile, chosen)), None)

    # -- keys --------------------------------------------------------------

    def action_move(self, step: int) -> None:
        choices = self.choices()
        if choices:
            at = choices.index(self.cursor) if self.cursor in choices else 0
            self.cursor = choices[(at + step) % len(choices)]
            self.refresh()

    def action_lay(self) -> None:
        playable = self.selected()
        if playable is None:
            self.note = "That tile fits neither end."
        elif playable.end_required:
            self.note = "It fits both ends: press l or r."
        else:
            self.play(dm.Action(play=dm.Play(tile=playable.tile)))
            return
        self.refresh()

    def action_lay_at(self, end: str) -> None:
        playable = self.selected()
        if playable is None:
            self.note = "That tile fits neither end."
            self.refresh()
            return
        self.play(dm.Action(play=dm.Play(tile=playable.tile, end=dm.End.Value(end.upper()))))

    # -- drawing -----------------------------------------------------------

    def draw(self) -> Text:
        view, snap = self.view, self.snap
        text = Text(f"Round {view.round}", style="bold")
        text.append(f" · first team to {view.target}")
        for side in (0, 1):
            partners = " & ".join(self.who(s) for s in range(len(snap.seats)) if team(s) == side)
            score = snap.scores[side] if len(snap.scores) > side else 0
            text.append("\n" if side == 0 else " · ")
            text.append(f"{partners}: {score}", style="bold")
        text.append("\nLine ")
        if view.line:
            text.append(f"open ends {view.left_end} ◀ and ▶ {view.right_end}", style="bold cyan")
            per_row = max(1, (self.content_size.width or 50) // 5)  # whole tiles to a row
            tiles = [tile(t.tile) for t in view.line]
            for at in range(0, len(tiles), per_row):
                text.append("\n" + "".join(tiles[at : at + per_row]))
        elif view.HasField("opening_tile"):
            text.append(f"empty: opens with {tile(view.opening_tile)}")
        else:
            text.append("empty: any tile opens")
        passes = {p.seat: p for p in view.passes}  # each seat's last pass this round
        for seat, count in enumerate(view.hand_counts):
            text.append(f"\n {self.player(seat):<16} ")
            text.append(f"{count} tiles" if seat == snap.seat else "▮" * count)
            if seat in passes:
                text.append(f" passed on {passes[seat].left_end}/{passes[seat].right_end}", style="dim")
            text.append(turn_marker(self, seat), style="bold yellow")
        if view.hand:
            text.append("\nHand ")
            choices = set(self.choices()) if self.my_turn else set()
            for i, t in enumerate(view.hand):
                style = "reverse bold" if i == self.cursor else ("bold green" if i in choices else "")
                text.append(tile(t), style=style)
                text.append(" ")
            playable = self.selected()
            if self.my_turn and playable is not None:
                ends = " or ".join(ENDS[e] for e in playable.ends) or "opening"
                text.append(f"\n {tile(playable.tile)} fits {ends}: enter", style="green")
                if playable.end_required:
                    text.append(" (l or r: which end)", style="green")
        if view.HasField("last_round"):
            text.append("\n")
            text.append_text(self.summary(view.last_round))
        return text

    def summary(self, summary: dm.RoundSummary) -> Text:
        text = Text(
            f"Round {summary.round}: {ROUND_ENDS.get(summary.kind, '')} by {self.who(summary.seat)}, "
            f"team {summary.winning_team} +{summary.points}",
            style="dim",
        )
        for hand in summary.hands:
            text.append(
                f"\n {self.player(hand.seat):<16} {''.join(tile(t) for t in hand.tiles)}", style="dim"
            )
        return text

    @classmethod
    def describe(cls, event: dm.Event, names: Names) -> str:
        kind = event.WhichOneof("event")
        if kind == "round_started":
            round_started = event.round_started
            return f"Round {round_started.round}: {names(round_started.opener)} opens"
        if kind == "dealt":
            return "Your hand: " + "".join(tile(t) for t in event.dealt.tiles)
        if kind == "played":
            played = event.played
            where = f" {ENDS[played.end]}" if played.end in ENDS else ""
            return f"{names(played.seat)} plays {tile(played.tile)}{where}"
        if kind == "passed":
            return f"{names(event.passed.seat)} passes"
        if kind == "round_ended":
            ended = event.round_ended
            return f"{ROUND_ENDS.get(ended.kind, '').title()}: team {ended.winning_team} +{ended.points}"
        return kind or "?"
