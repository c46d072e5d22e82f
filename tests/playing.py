"""Playing a game through the kit in unit tests, with exact dice.

Each call works on a copy of the table it is given and returns the new one,
so a test reads as a sequence of states; every call also checks what the
kit promises: the input is never changed, the action fits the game's proto,
and every rigged die was used.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.kit import play
from services.kit.engine import Context, Event, InvalidAction, Rng, RulesError
from services.kit.game import Game
from services.kit.play import Happening, Notice, Table
from tests.proto_shapes import assert_fits
from tests.rigged import RiggedRng, ctx

NOW = 1_000.0


def start(
    game: Game,
    seats: int,
    options: dict[str, Any] | None = None,
    *,
    cpu_seats: tuple[int, ...] = (),
    rng: Rng | None = None,
    cpu_rng: Rng | None = None,
    now: float = NOW,
) -> tuple[Table, list[Happening]]:
    return play.start(game, seats, options or {}, ctx(rng, now=now), cpu_seats, cpu_rng)


def _copy(table: Table) -> Table:
    return copy.deepcopy(table)


def act(
    game: Game,
    table: Table,
    seat: int,
    action: dict[str, Any],
    *values: int,
    rng: Rng | None = None,
    cpu_rng: Rng | None = None,
    now: float = NOW,
) -> tuple[Table, list[Happening]]:
    """``seat`` plays ``action``; its random draws are ``values`` (all used),
    or come from ``rng``."""
    assert_fits(game.messages.Action, action)
    rigged = RiggedRng(values) if rng is None else None
    new = _copy(table)
    happened = play.act(game, new, seat, action, ctx(rigged or rng, now=now), cpu_rng)
    if rigged is not None:
        assert not rigged.queue, "not every rigged value was drawn"
    return new, happened


def leave(
    game: Game, table: Table, seat: int, *values: int, now: float = NOW
) -> tuple[Table, list[Happening]]:
    rigged = RiggedRng(values)
    new = _copy(table)
    happened = play.leave(game, new, seat, ctx(rigged, now=now))
    assert not rigged.queue, "not every rigged value was drawn"
    return new, happened


def refused(
    game: Game, table: Table, seat: int, action: Any, code: str, *, invalid: bool = False, now: float = NOW
) -> None:
    """The action is refused with ``code`` (an InvalidAction if ``invalid``)
    and draws nothing; the table is untouched."""
    before = _copy(table)
    with pytest.raises(RulesError) as raised:
        play.act(game, _copy(table), seat, action, ctx(RiggedRng(), now=now))
    assert raised.value.code == code, raised.value.message
    assert isinstance(raised.value, InvalidAction) == invalid
    assert table == before


def claim(game: Game, table: Table, seat: int, waited: float, *values: int) -> tuple[Table, list[Happening]]:
    """``seat`` claims inactivity ``waited`` seconds after the idle seat's clock started."""
    return act(game, table, seat, {"claim_inactivity": {}}, *values, now=table.idle_since + waited)


def kinds(happened: list[Happening]) -> list[str]:
    """Event kinds, and notices as ``notice:<KIND>``."""
    return [h.kind if isinstance(h, Event) else f"notice:{h.kind}" for h in happened]


def events(happened: list[Happening]) -> list[Event]:
    """The game's own events (without the kit's notices)."""
    return [h for h in happened if isinstance(h, Event)]


def notices(happened: list[Happening]) -> list[Notice]:
    return [h for h in happened if isinstance(h, Notice)]


__all__ = [
    "Context",
    "InvalidAction",
    "RulesError",
    "act",
    "claim",
    "events",
    "kinds",
    "leave",
    "notices",
    "refused",
    "start",
]
