"""A table's screen, drawn from the seat's feed alone: the table before its
match (seats, the invite to share, start for the host), the game's board
after, and a log of everything the feed says, table chat included. The
board's keys become calls here; "/" opens the chat line (enter sends to the
table's players, or its spectators for a spectator; escape goes back to the
board). A dropped connection is resumed from the last event id, in the same
seat, and said so in the status line."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from rich.text import Text
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2 as p
from rodada.platform.v1 import social_pb2
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, RichLog, Static

from clients.terminal.connection import Connection, Refusal, pack, unpack
from clients.terminal.feed import Lost, TableFeed
from clients.terminal.games import panel as panel_of
from clients.terminal.games.base import ACTIVE, GamePanel, seat_name

C = p.TableChangeKind
TABLE_CHANGES = {
    C.TABLE_CHANGE_KIND_OPENED: "table opened",
    C.TABLE_CHANGE_KIND_JOINED: "{name} sat down",
    C.TABLE_CHANGE_KIND_LEFT: "seat {seat} was freed",
    C.TABLE_CHANGE_KIND_ARRANGED: "the host arranged the seats",
    C.TABLE_CHANGE_KIND_INVITE_CREATED: "new invite",
    C.TABLE_CHANGE_KIND_INVITE_REVOKED: "invite revoked",
    C.TABLE_CHANGE_KIND_STARTED: "the match starts",
    C.TABLE_CHANGE_KIND_REOPENED: "the start failed: the table is open again",
}
N = match_pb2.NoticeKind
NOTICES = {
    N.NOTICE_KIND_INACTIVE: "{name} is idle and may be claimed against (x)",
    N.NOTICE_KIND_CPU_TOOK_OVER: "the CPU plays for {name}",
    N.NOTICE_KIND_SEAT_TAKEN_BACK: "{name} took their seat back",
    N.NOTICE_KIND_DISCONNECTED: "{name} disconnected",
    N.NOTICE_KIND_RECONNECTED: "{name} is back",
    N.NOTICE_KIND_LEFT: "{name} left",
    N.NOTICE_KIND_CLAIMED: "{name} was claimed against by {by}",
    N.NOTICE_KIND_EXPIRED: "{name} ran out of time: the match ends",
}


class TablePanel(Widget, can_focus=True):
    """The table before its match."""

    DEFAULT_CSS = "TablePanel { height: 1fr; padding: 0 1; }"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("s", "start", "Start")]

    class Start(Message):
        """The host starts the match."""

    def __init__(self, table: p.Table, me: str) -> None:
        super().__init__(id="board")
        self.table, self.me = table, me

    def show(self, table: p.Table) -> None:
        self.table = table
        self.refresh()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.table.host == self.me  # the server says why a start is refused

    def action_start(self) -> None:
        self.post_message(self.Start())

    def render(self) -> Text:
        table = self.table
        text = Text(f"{table.game} · {table.mode} · {table.seats} seats", style="bold")
        text.append(f" · {'ranked' if table.ranked else 'casual'}")
        text.append(f"\nTable id: {table.id}")
        if table.invite_code:
            text.append("\nInvite code: ")
            text.append(table.invite_code, style="bold reverse")
        elif table.open:
            text.append("\nAn open table: anyone may sit (the last seat starts the match)")
        text.append("\n")
        for seat, player in enumerate(table.players):
            who = (
                player.name + (" (cpu)" if player.cpu else "") if player.user_id or player.cpu else "— free —"
            )
            host = " (host)" if player.user_id and player.user_id == table.host else ""
            you = " (you)" if player.user_id == self.me else ""
            text.append(f"\n seat {seat}: {who}{host}{you}")
        if table.host == self.me:
            text.append("\n\nPress s to start once every seat is taken.", style="dim")
        else:
            text.append("\n\nWaiting for the match to start…", style="dim")
        return text


class ChatLine(Input):
    """The line to say something at the table: enter sends, escape goes
    back to the board (not to the lobby, the screen's escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Board")]

    def action_back(self) -> None:
        self.value = ""
        self.screen.query_one("#board").focus()


class TableScreen(Screen[None]):
    DEFAULT_CSS = """
    #title { height: 1; background: $primary; color: $text; padding: 0 1; }
    #board { width: 1fr; }
    #log { width: 24; border-left: solid $primary; }
    #status { height: 1; padding: 0 1; }
    #chat { height: 1; border: none; padding: 0 1; background: $boost; }
    #chat:focus { background: $primary 30%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "lobby", "Lobby"),
        Binding("ctrl+l", "leave", "Leave"),
        Binding("slash", "chat", "Chat"),
    ]

    def __init__(self, conn: Connection, table_id: str) -> None:
        super().__init__()
        self.conn, self.table_id = conn, table_id
        self.feed = TableFeed(conn, table_id)
        self.table: p.Table | None = None
        self.snap: match_pb2.Snapshot | None = None
        self.over = False  # the feed ended: the match is over
        # The feed and the replies to the seat's calls both draw; one at a
        # time, since the first snapshot replaces the lobby's board.
        self.drawing = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Static(f"Table {self.table_id}", id="title")
        with Horizontal():
            yield Static("Connecting…", id="board")
            yield RichLog(id="log", wrap=True, min_width=20, max_lines=500)
        yield ChatLine(id="chat", placeholder="/ to chat · enter sends · escape: back to the board")
        yield Static("", id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.follow()

    # -- the feed ------------------------------------------------------------

    @work(exclusive=True, group="feed")
    async def follow(self) -> None:
        lost = False
        try:
            async for item in self.feed.items():
                if isinstance(item, Lost):
                    lost = True
                    self.status(f"Connection lost ({item.reason}); reconnecting…", error=True)
                    continue
                if lost:
                    lost = False
                    self.status(f"Reconnected: resumed after event {self.feed.last_event_id}")
                kind = item.WhichOneof("item")
                if kind == "event":
                    await self.record(item.event)
                elif kind == "table":
                    await self.show_table(item.table)
                elif kind == "snapshot":
                    await self.show_snapshot(item.snapshot)
        except Refusal as refusal:
            self.status(f"Cannot follow the table: {refusal}", error=True)
            return
        self.over = True
        self.status("The match is over. Escape: back to the lobby.")

    def who(self, seat: int) -> str:
        if self.snap is not None:
            return seat_name(self.snap, seat, you="{name}")
        if self.table is not None and 0 <= seat < len(self.table.players):
            return self.table.players[seat].name or f"seat {seat}"
        return f"seat {seat}"

    def describe(self, event: match_pb2.MatchEvent) -> str:
        body = event.WhichOneof("body")
        if body == "table":
            change = unpack(event.table, p.TableChange)
            seat = change.seat if change.HasField("seat") else -1
            return TABLE_CHANGES.get(change.kind, "table changed").format(name=self.who(seat), seat=seat)
        if body == "notice":
            notice = event.notice
            by = self.who(notice.by) if notice.HasField("by") else ""
            return NOTICES.get(notice.kind, "notice").format(name=self.who(notice.seat), by=by)
        if body == "chat":  # plain text: the log line is a Text, never parsed as markup
            chat = unpack(event.chat, social_pb2.ChatMessage)
            side = "" if chat.channel == social_pb2.CHAT_CHANNEL_TABLE_PLAYERS else " (spectator)"
            return f"{chat.sender_name}{side}: {chat.text}"
        if body == "event" and self.snap is not None:
            panel = panel_of(self.snap)
            return panel.describe(unpack(event.event, panel.Event), self.who)
        return body or "?"

    async def record(self, event: match_pb2.MatchEvent) -> None:
        """An event from the feed: into the log, and a table change onto
        the lobby's board until the match starts."""
        if event.WhichOneof("body") == "table" and self.snap is None:
            table = unpack(event.table, p.TableChange).table
            if self.table is not None and not table.invite_code:
                table.invite_code = self.table.invite_code  # only the host's own events carry it
            await self.show_table(table)
        if event.WhichOneof("body") == "notice" and isinstance(board := self.query_one("#board"), GamePanel):
            board.refresh_bindings()  # e.g. the seat to act may now be claimed against
        line = self.describe(event) + (" — match over" if event.final else "")
        self.query_one("#log", RichLog).write(Text(f"{event.id:>3} {line}"))

    async def show_table(self, table: p.Table) -> None:
        async with self.drawing:
            self.table = table
            board = self.query_one("#board")
            if isinstance(board, TablePanel):
                board.show(table)
            elif self.snap is None:
                await self._swap(TablePanel(table, self.conn.user.id))
            self.query_one("#title", Static).update(f"{table.game} · table {table.id} · lobby")

    async def show_snapshot(self, snap: match_pb2.Snapshot) -> None:
        """Draw ``snap`` unless a newer one is on screen already (a reply and
        the feed can bring the same version in either order)."""
        async with self.drawing:
            if self.snap is not None and snap.version < self.snap.version:
                return
            self.snap = snap
            board = self.query_one("#board")
            if isinstance(board, GamePanel):
                board.show(snap)
            else:
                await self._swap(panel_of(snap)(snap))
            to_act = ", ".join(seat_name(snap, s) for s in snap.to_act) if snap.status == ACTIVE else "over"
            you = f"{seat_name(snap, snap.seat)}, seat {snap.seat}" if snap.seat >= 0 else "spectator"
            self.query_one("#title", Static).update(
                f"{snap.game} · {snap.match_id} · {you} · v{snap.version} · to act: {to_act}"
            )

    async def _swap(self, board: Widget) -> None:
        await self.query_one("#board").remove()
        await self.query_one(Horizontal).mount(board, before=self.query_one("#log"))
        board.focus()

    def status(self, text: str, error: bool = False) -> None:
        self.query_one("#status", Static).update(Text(text, style="bold red" if error else "green"))

    # -- the seat's moves ----------------------------------------------------

    @contextmanager
    def refusals(self, failing: str) -> Iterator[None]:
        """Calls for the seat: a refusal goes to the status line, after what
        could not be done (``failing``)."""
        self.status("")
        try:
            yield
        except Refusal as refusal:
            self.status(f"{failing}: {refusal}", error=True)

    @on(GamePanel.Play)
    async def play(self, message: GamePanel.Play) -> None:
        if self.snap is None:
            return
        action = pack(message.action)
        request = p.ActRequest(table_id=self.table_id, expected_version=self.snap.version, action=action)
        with self.refusals("Refused"):
            reply: p.ActResponse = await self.conn.call(self.conn.api.Act, request)
            await self.show_snapshot(reply.match)

    @on(GamePanel.Ask)
    async def ask(self, message: GamePanel.Ask) -> None:
        request = p.AskRequest(table_id=self.table_id, question=pack(message.question))
        with self.refusals("Refused"):
            reply: p.AskResponse = await self.conn.call(self.conn.api.Ask, request)
            if isinstance(board := self.query_one("#board"), GamePanel):
                board.answered(reply.answer)

    @on(TablePanel.Start)
    async def start(self) -> None:
        request = p.StartTableRequest(table_id=self.table_id)
        with self.refusals("Cannot start"):
            reply: p.StartTableResponse = await self.conn.call(self.conn.api.StartTable, request)
            await self.show_snapshot(reply.match)

    async def action_leave(self) -> None:
        """Before the start: free the seat. During play: the game's leaving
        policy (concede, seat out, or a CPU plays on)."""
        request = p.LeaveTableRequest(table_id=self.table_id)
        with self.refusals("Cannot leave"):
            reply: p.LeaveTableResponse = await self.conn.call(self.conn.api.LeaveTable, request)
            if not reply.HasField("match"):
                self.app.pop_screen()
                return
            await self.show_snapshot(reply.match)
            self.status("You left the match.")

    def action_lobby(self) -> None:
        self.app.pop_screen()

    def action_chat(self) -> None:
        self.query_one("#chat", ChatLine).focus()

    @on(Input.Submitted, "#chat")
    async def say(self, submitted: Input.Submitted) -> None:
        """Send the chat line to the table; it comes back on the feed, in
        the log, like everyone's."""
        text = submitted.value
        if not text.strip():
            return
        request = social_pb2.SendTableMessageRequest(table_id=self.table_id, text=text)
        with self.refusals("Not sent"):
            await self.conn.call(self.conn.social.SendTableMessage, request)
            submitted.input.value = ""
