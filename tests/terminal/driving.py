"""Driving the terminal client as a person would, through Textual's pilot:
keys and clicks in, the screen's text out. Tests read the client's state
only to decide what to press and to check what it received; every move is
a key press."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import OptionList

from clients.terminal.app import RodadaTerminal
from clients.terminal.games.base import GamePanel
from clients.terminal.table import TableScreen

SIZE = (80, 24)  # the client must be readable on the smallest usual terminal


def screen(app: RodadaTerminal) -> str:
    """Everything the terminal shows now, as text, one line per row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(pilot: Pilot[Any], check: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
    """Let the app (and the bots) run until ``check()``; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}\n{screen(pilot.app)}"  # type: ignore[arg-type]
        await pilot.pause(0.05)


async def type_into(pilot: Pilot[Any], selector: str, text: str) -> None:
    """Click a field, clear it and type."""
    await pilot.click(selector)
    await pilot.press("end", *["backspace"] * 40, *text)


async def log_in_as_guest(pilot: Pilot[Any], name: str) -> None:
    await type_into(pilot, "#guest-name", name)
    await pilot.press("enter")
    await until(pilot, lambda: "Game" in screen(pilot.app), what="the lobby")  # type: ignore[arg-type]


async def sign_up(pilot: Pilot[Any], username: str, password: str) -> None:
    await type_into(pilot, "#username", username)
    await type_into(pilot, "#password", password)
    await pilot.click("#signup")
    await until(pilot, lambda: "Game" in screen(pilot.app), what="the lobby")  # type: ignore[arg-type]


async def choose_game(pilot: Pilot[Any], game: str, seats: int | None = None, cpu: str = "") -> None:
    """In the lobby: the game (by walking the list with the arrows), its
    seat count and CPU seats."""
    games = pilot.app.screen.query_one("#games", OptionList)
    await until(pilot, lambda: games.option_count > 0, what="the games")
    names = [games.get_option_at_index(i).id for i in range(games.option_count)]
    games.focus()
    await pilot.press("home", *["down"] * names.index(game))
    if seats is not None:
        await type_into(pilot, "#seats", str(seats))
    if cpu:
        await type_into(pilot, "#cpu", cpu)


def table_screen(app: RodadaTerminal) -> TableScreen:
    assert isinstance(app.screen, TableScreen), f"not at a table:\n{screen(app)}"
    return app.screen


def board(app: RodadaTerminal) -> GamePanel[Any, Any]:
    """The game's board on screen (to read what it shows)."""
    found = table_screen(app).query_one("#board")
    assert isinstance(found, GamePanel), f"no game on screen:\n{screen(app)}"
    return found


def playing(app: RodadaTerminal) -> bool:
    return isinstance(app.screen, TableScreen) and isinstance(app.screen.query_one("#board"), GamePanel)


async def fits(pilot: Pilot[Any], panel: GamePanel[Any, Any]) -> bool:
    """The board's text, wrapped as drawn, is no taller than its space (once
    laid out: a board redrawn for a new state may have no size for a moment)."""
    await until(pilot, lambda: panel.content_size.width > 0, timeout=5, what="the board's layout")
    width, height = panel.content_size
    lines = panel.render().wrap(Console(width=width), width)
    return len(lines) <= height


def row(app: RodadaTerminal, name: str) -> str:
    """What the board shows beside a player in their row: boards draw a
    name column 16 wide (after the board's margin), then the player's state."""
    for line in screen(app).splitlines():
        if line[2:18].rstrip() in (name, f"{name} (you)"):
            return line[19:].split("│")[0]
    raise AssertionError(f"no row for {name}:\n{screen(app)}")


async def create_table(pilot: Pilot[Any]) -> tuple[str, str]:
    """Create the table chosen in the lobby: its id and the invite code it shows."""
    app: RodadaTerminal = pilot.app  # type: ignore[assignment]
    await pilot.press("f2")
    await until(pilot, lambda: "Invite code" in screen(app), what="the new table")
    code = re.search(r"Invite code: (\S+)", screen(app))
    assert code is not None, screen(app)
    return table_screen(app).table_id, code[1]


async def open_table_and_start(pilot: Pilot[Any]) -> None:
    """Create the table chosen in the lobby and start it (the host)."""
    app: RodadaTerminal = pilot.app  # type: ignore[assignment]
    await pilot.press("f2")
    await until(pilot, lambda: "Press s to start" in screen(app), what="the new table")
    await pilot.press("s")
    await until(pilot, lambda: playing(app), what="the match")


async def move(pilot: Pilot[Any], *keys: str) -> None:
    """Press ``keys`` on the seat's turn and wait for the match to move on
    (a refusal shows in the status line and fails the test)."""
    app: RodadaTerminal = pilot.app  # type: ignore[assignment]
    before = board(app).snap.version
    await pilot.press(*keys)
    await until(
        pilot,
        lambda: board(app).snap.version > before or "Refused" in screen(app),
        what=f"the match to move on after {keys}",
    )
    assert "Refused" not in screen(app), screen(app)


async def my_turn(pilot: Pilot[Any], timeout: float = 30) -> bool:
    """Wait for the seat's turn (True) or the match's end (False)."""
    app: RodadaTerminal = pilot.app  # type: ignore[assignment]
    await until(pilot, lambda: board(app).my_turn or table_screen(app).over, timeout, "my turn")
    return board(app).my_turn
