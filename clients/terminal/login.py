"""The first screen: log in, sign up, or play as a guest."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Static

from clients.terminal.connection import Connection, Refusal
from clients.terminal.lobby import LobbyScreen


class LoginScreen(Screen[None]):
    AUTO_FOCUS = "#username"
    DEFAULT_CSS = """
    LoginScreen { align: center middle; }
    #login-form { width: 50; height: auto; border: round $primary; padding: 0 1; }
    #login-form Input { margin-bottom: 1; }
    #login-form Horizontal { height: auto; margin-bottom: 1; }
    #login-form Button { width: auto; margin-right: 2; }
    #status { height: auto; color: $error; }
    """

    def __init__(self, conn: Connection) -> None:
        super().__init__()
        self.conn = conn

    def compose(self) -> ComposeResult:
        with Vertical(id="login-form"):
            yield Static(f"Rodada at {self.conn.address}\n")
            yield Input(placeholder="username", id="username", compact=True)
            yield Input(placeholder="password", password=True, id="password", compact=True)
            with Horizontal():
                yield Button("Log in", id="login", variant="primary", compact=True)
                yield Button("Sign up", id="signup", compact=True)
            yield Input(placeholder="your name, to play as a guest", id="guest-name", compact=True)
            yield Button("Play as guest", id="guest", compact=True)
            yield Static("", id="status")
        yield Footer()

    @on(Input.Submitted, "#username")
    def next_field(self) -> None:
        self.query_one("#password").focus()

    @on(Input.Submitted, "#password")
    @on(Button.Pressed, "#login")
    async def log_in(self) -> None:
        await self._enter("login")

    @on(Button.Pressed, "#signup")
    async def sign_up(self) -> None:
        await self._enter("signup")

    @on(Input.Submitted, "#guest-name")
    @on(Button.Pressed, "#guest")
    async def guest(self) -> None:
        await self._enter("guest")

    async def _enter(self, how: str) -> None:
        username = self.query_one("#username", Input).value.strip()
        password = self.query_one("#password", Input).value
        try:
            if how == "guest":
                await self.conn.log_in_as_guest(self.query_one("#guest-name", Input).value.strip())
            elif how == "signup":
                await self.conn.sign_up(username, password)
            else:
                await self.conn.log_in(username, password)
        except Refusal as refusal:
            self.query_one("#status", Static).update(str(refusal))
            return
        self.app.switch_screen(LobbyScreen(self.conn))
