"""One board per game: the five games' drawn boards by the game's name
(GameInfo.name), the generic board (games/generic.py) for any other; and
the game's table options built from the mode chosen plus any the player
types."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import any_pb2, descriptor_pool, json_format, message_factory
from rodada.common.v1 import match_pb2

from clients.terminal.connection import pack
from clients.terminal.games.base import GamePanel
from clients.terminal.games.bozo import BozoPanel
from clients.terminal.games.bozu_mekuri import BozuMekuriPanel
from clients.terminal.games.domino import DominoPanel
from clients.terminal.games.dudo import DudoPanel
from clients.terminal.games.generic import load_stubs, panel_for
from clients.terminal.games.yatzy import YatzyPanel

PANELS: dict[str, type[GamePanel[Any, Any]]] = {
    "bozo": BozoPanel,
    "bozu_mekuri": BozuMekuriPanel,
    "domino": DominoPanel,
    "dudo": DudoPanel,
    "yatzy": YatzyPanel,
}


def panel(snap: match_pb2.Snapshot) -> type[GamePanel[Any, Any]]:
    """The board for ``snap``'s game: its own, else the generic one."""
    return PANELS.get(snap.game) or panel_for(snap.view.type_url)


def options(game: match_pb2.GameInfo, mode: match_pb2.Mode, typed: str = "") -> any_pb2.Any:
    """The game's Options message for ``mode``, with the fields typed as
    proto JSON (e.g. ``{"card": "SCANDINAVIAN"}``) on top; ValueError if
    they are not the game's options."""
    load_stubs(game.proto_package)
    descriptor = descriptor_pool.Default().FindMessageTypeByName(f"{game.proto_package}.Options")
    fields = json_format.MessageToDict(mode.options)
    try:
        fields |= json.loads(typed) if typed.strip() else {}
        message = json_format.ParseDict(fields, message_factory.GetMessageClass(descriptor)())
    except (json.JSONDecodeError, TypeError, json_format.ParseError) as error:
        raise ValueError(f"options: {error}") from error
    return pack(message)
