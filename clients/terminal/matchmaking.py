"""Waiting for a match: the ticket's updates (position, queue length, the
estimated wait) until a table takes it, then that table. Escape leaves the
queue: the open stream is the ticket, so ending it drops the ticket."""

from __future__ import annotations

from typing import ClassVar

from rodada.platform.v1 import platform_pb2 as p
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from clients.terminal.connection import Connection, Refusal
from clients.terminal.feed import Lost, ticket_updates
from clients.terminal.table import TableScreen


def describe(update: p.TicketUpdate) -> str:
    kind = update.WhichOneof("update")
    if kind == "queue":
        queue = update.queue
        wait = (
            f", about {queue.estimated_wait_seconds:.0f} s to wait"
            if queue.HasField("estimated_wait_seconds")
            else ""
        )
        party = f"\nParty code for your partner: {queue.party_code}" if queue.party_code else ""
        return f"In the queue: {queue.position} of {queue.queue_length}{wait}{party}"
    if kind == "matched":
        matched = update.matched
        cpus = (
            f"\nNobody else came in time: the computer plays seats {', '.join(map(str, matched.cpu_seats))}"
            if matched.cpu_seats
            else ""
        )
        return f"Matched: table {matched.table_id}, seat {matched.seat}{cpus}"
    if kind == "closed":
        return f"The ticket closed ({update.closed.state}): {update.closed.reason}"
    return "…"


class MatchmakingScreen(Screen[None]):
    DEFAULT_CSS = """
    MatchmakingScreen { align: center middle; }
    #queue { width: 60; height: auto; border: round $primary; padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "leave", "Leave the queue")]

    def __init__(self, conn: Connection, request: p.FindMatchRequest, title: str) -> None:
        super().__init__()
        self.conn, self.request, self.title = conn, request, title

    def compose(self) -> ComposeResult:
        yield Static(f"Looking for a match: {self.title}…", id="queue")
        yield Footer()

    def on_mount(self) -> None:
        self.find()

    def show(self, text: str) -> None:
        self.query_one("#queue", Static).update(f"{self.title}\n\n{text}")

    @work(exclusive=True)
    async def find(self) -> None:
        try:
            async for update in ticket_updates(self.conn, self.request):
                if isinstance(update, Lost):
                    self.show(f"Connection lost ({update.reason}); following the ticket again…")
                    continue
                self.show(describe(update))
                if update.WhichOneof("update") == "matched":
                    self.app.switch_screen(TableScreen(self.conn, update.matched.table_id))
                    return
        except Refusal as refusal:
            self.show(f"Cannot queue: {refusal}\n\nEscape: back to the lobby.")

    def action_leave(self) -> None:
        self.workers.cancel_all()
        self.app.pop_screen()
