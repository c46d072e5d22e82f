"""The lobby: choose a game and a mode (as the games describe themselves),
then open a table, queue for a match, sit at an open table, join one with
an invite code, or open a table you are seated at by its id (to resume
after restarting the client)."""

from __future__ import annotations

from typing import ClassVar

from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2 as p
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Checkbox, Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from clients.terminal import games
from clients.terminal.connection import Connection, Refusal
from clients.terminal.matchmaking import MatchmakingScreen
from clients.terminal.table import TableScreen


class OpenTables(ModalScreen[str]):
    """A game's open tables; enter sits at the highlighted one."""

    DEFAULT_CSS = """
    OpenTables { align: center middle; }
    #open-tables { width: 70; height: auto; max-height: 20; border: round $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss('')", "Close")]

    def __init__(self, tables: list[p.Table]) -> None:
        super().__init__()
        self.tables = tables

    def compose(self) -> ComposeResult:
        options = [
            Option(
                f"{t.id} · {sum(1 for s in t.players if s.user_id or s.cpu)}/{t.seats} · "
                + ", ".join(s.name for s in t.players if s.name),
                id=t.id,
            )
            for t in self.tables
        ]
        yield OptionList(*options, id="open-tables")
        yield Footer()

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id or "")


class LobbyScreen(Screen[None]):
    DEFAULT_CSS = """
    #title { height: 1; background: $primary; padding: 0 1; }
    #lists { height: 8; }
    #games { width: 24; }
    #modes { width: 30; }
    .row { height: 1; margin-top: 1; }
    .row Label { width: 12; }
    .row Input { width: 28; }
    .row #options { width: 40; }
    .row Button { margin-left: 1; }
    #status { height: auto; margin-top: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "create", "Create table"),
        Binding("f3", "find", "Find match"),
        Binding("f4", "open_tables", "Open tables"),
        Binding("f5", "go_to('invite')", "Invite code"),
        Binding("f6", "go_to('table-id')", "Table id"),
    ]

    def __init__(self, conn: Connection) -> None:
        super().__init__()
        self.conn = conn
        self.games: dict[str, match_pb2.GameInfo] = {}

    def compose(self) -> ComposeResult:
        user = self.conn.user
        yield Static(f"{user.name} ({user.role}) · Rodada at {self.conn.address}", id="title")
        with Horizontal(id="lists"):
            yield OptionList(id="games")
            yield OptionList(id="modes")
        with Vertical():
            with Horizontal(classes="row"):
                yield Label("Seats")
                yield Input(id="seats", type="integer", compact=True)
                yield Label(" CPU seats")
                yield Input(id="cpu", placeholder="e.g. 1 2", compact=True)
            with Horizontal(classes="row"):
                yield Label("Options")
                yield Input(id="options", placeholder='JSON, e.g. {"dice_per_player": 5}', compact=True)
                yield Checkbox("Ranked", id="ranked", compact=True)
            with Horizontal(classes="row"):
                yield Button("Create table", id="create", compact=True)
                yield Button("Find match", id="find", compact=True)
                yield Button("Open tables", id="open-tables", compact=True)
            with Horizontal(classes="row"):
                yield Label("Invite code")
                yield Input(id="invite", compact=True)
                yield Button("Join", id="join", compact=True)
            with Horizontal(classes="row"):
                yield Label("Table id")
                yield Input(id="table-id", compact=True)
                yield Button("Open", id="open", compact=True)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#games").border_title = "Game"
        self.query_one("#modes").border_title = "Mode"
        self.load_games()

    @work
    async def load_games(self) -> None:
        try:
            listed: p.ListGamesResponse = await self.conn.call(self.conn.api.ListGames, p.ListGamesRequest())
        except Refusal as refusal:
            self.status(f"Cannot list the games: {refusal}")
            return
        self.games = {
            g.name: g for g in listed.games
        }  # a game without a board of its own gets the generic one
        game_list = self.query_one("#games", OptionList)
        game_list.add_options([Option(g.title, id=g.name) for g in self.games.values()])
        game_list.highlighted = 0
        game_list.focus()

    # -- choosing ----------------------------------------------------------

    @property
    def game(self) -> match_pb2.GameInfo | None:
        highlighted = self.query_one("#games", OptionList).highlighted_option
        return self.games.get(highlighted.id or "") if highlighted else None

    @property
    def mode(self) -> match_pb2.Mode | None:
        game, modes = self.game, self.query_one("#modes", OptionList)
        if game is None or modes.highlighted is None or modes.highlighted >= len(game.modes):
            return None
        return game.modes[modes.highlighted]

    @on(OptionList.OptionHighlighted, "#games")
    def game_chosen(self) -> None:
        modes = self.query_one("#modes", OptionList)
        modes.clear_options()
        if self.game is not None:
            modes.add_options(
                [Option(f"{m.name} ({'/'.join(map(str, m.seat_counts))} seats)") for m in self.game.modes]
            )
            modes.highlighted = 0
            self.mode_chosen()

    @on(OptionList.OptionHighlighted, "#modes")
    def mode_chosen(self) -> None:
        if self.mode is not None:
            self.query_one("#seats", Input).value = str(self.mode.seat_counts[0])

    def status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def _choice(self) -> tuple[match_pb2.GameInfo, match_pb2.Mode, p.CreateTableRequest] | None:
        game, mode = self.game, self.mode
        if game is None or mode is None:
            self.status("Choose a game and a mode first.")
            return None
        try:
            options = games.options(game, mode, self.query_one("#options", Input).value)
            cpu = [int(s) for s in self.query_one("#cpu", Input).value.replace(",", " ").split()]
            seats = int(self.query_one("#seats", Input).value or mode.seat_counts[0])
        except ValueError as error:
            self.status(str(error))
            return None
        return game, mode, p.CreateTableRequest(game=game.name, seats=seats, options=options, cpu_seats=cpu)

    # -- going to a table ----------------------------------------------------

    @on(Button.Pressed, "#create")
    async def action_create(self) -> None:
        if (choice := self._choice()) is None:
            return
        try:
            reply: p.CreateTableResponse = await self.conn.call(self.conn.api.CreateTable, choice[2])
        except Refusal as refusal:
            self.status(f"Cannot create the table: {refusal}")
            return
        self.app.push_screen(TableScreen(self.conn, reply.table.id))

    @on(Button.Pressed, "#find")
    def action_find(self) -> None:
        if (choice := self._choice()) is None:
            return
        game, mode, table = choice
        request = p.FindMatchRequest(
            game=game.name, options=table.options, ranked=self.query_one("#ranked", Checkbox).value
        )
        self.app.push_screen(MatchmakingScreen(self.conn, request, f"{game.title} · {mode.name}"))

    @on(Button.Pressed, "#open-tables")
    async def action_open_tables(self) -> None:
        if (game := self.game) is None:
            return
        if not game.open_tables:
            self.status(f"{game.title} tables are private: join one with its invite code.")
            return
        try:
            listed: p.ListOpenTablesResponse = await self.conn.call(
                self.conn.api.ListOpenTables, p.ListOpenTablesRequest(game=game.name)
            )
        except Refusal as refusal:
            self.status(f"Cannot list the tables: {refusal}")
            return
        if not listed.tables:
            self.status(f"No open {game.title} table has a free seat: create one.")
            return
        self.app.push_screen(OpenTables(list(listed.tables)), self.sit)

    async def sit(self, table_id: str | None) -> None:
        if not table_id:
            return
        try:
            await self.conn.call(self.conn.api.SitAtTable, p.SitAtTableRequest(table_id=table_id))
        except Refusal as refusal:
            self.status(f"Cannot sit: {refusal}")
            return
        self.app.push_screen(TableScreen(self.conn, table_id))

    def action_go_to(self, field: str) -> None:
        self.query_one(f"#{field}").focus()

    @on(Input.Submitted, "#invite")
    @on(Button.Pressed, "#join")
    async def join(self) -> None:
        code = self.query_one("#invite", Input).value.strip()
        try:
            reply: p.JoinTableResponse = await self.conn.call(
                self.conn.api.JoinTable, p.JoinTableRequest(invite_code=code)
            )
        except Refusal as refusal:
            self.status(f"Cannot join: {refusal}")
            return
        self.app.push_screen(TableScreen(self.conn, reply.table.id))

    @on(Input.Submitted, "#table-id")
    @on(Button.Pressed, "#open")
    def open_table(self) -> None:
        if table_id := self.query_one("#table-id", Input).value.strip():
            self.app.push_screen(TableScreen(self.conn, table_id))
