"""The terminal client's application: one connection, and its screens —
log in, the lobby, matchmaking, a table."""

from __future__ import annotations

from textual.app import App

from clients.terminal.connection import Connection
from clients.terminal.login import LoginScreen


class RodadaTerminal(App[None]):
    TITLE = "Rodada"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, address: str) -> None:
        super().__init__()
        self.conn = Connection(address)

    def on_mount(self) -> None:
        self.push_screen(LoginScreen(self.conn))

    async def on_unmount(self) -> None:
        await self.conn.close()
