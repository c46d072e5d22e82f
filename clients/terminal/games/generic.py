"""Any game, drawn from what every snapshot carries: its view as fields, and
what the seat may do now (``Snapshot.legal``) as a list of moves to walk
with the arrows (↑/↓, or k/j) and play with Enter. Nothing here knows a game:
a game without a board of its own is played with this one. Its messages
come from its generated stubs, found by the proto package its view names."""

from __future__ import annotations

import contextlib
import copy
import importlib
import itertools
from typing import Any, ClassVar

from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import Message as Proto
from rich.text import Text
from rodada.common.v1 import match_pb2
from textual.binding import Binding, BindingType

from clients.terminal.games.base import GamePanel, Names

JSON = dict[str, Any]
WINDOW = 8  # moves shown at once around the chosen one


def words(name: str) -> str:
    return name.replace("_", " ")


def inline(value: Any) -> str:
    """A value in one short line: lists joined, objects as their fields."""
    if isinstance(value, list):
        return ", ".join(inline(v) for v in value)
    if isinstance(value, dict):
        return " · ".join(words(k) if v == {} else f"{words(k)} {inline(v)}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _with(action: JSON, path: str, value: Any) -> JSON:
    result = copy.deepcopy(action)
    *parents, last = path.split(".")
    node = result
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return result


def expand(legal: match_pb2.LegalActions) -> list[JSON]:
    """Every action a LegalActions allows, as the Action's JSON: its plain
    actions, each value of its ranges, each choice of its subsets."""
    as_json = json_format.MessageToDict(legal, preserving_proto_field_name=True)

    def body(action: JSON) -> JSON:
        return {k: v for k, v in action.items() if k != "@type"}

    found = [body(action) for action in as_json.get("actions", [])]
    for item in as_json.get("ranges", []):
        low, high = item.get("min", 0), item.get("max", 0)
        found += [_with(body(item["action"]), item["path"], v) for v in range(low, high + 1)]
    for item in as_json.get("subsets", []):
        for size in range(item.get("min_size", 0), item.get("max_size", 0) + 1):
            for chosen in itertools.combinations(item.get("values", []), size):
                found.append(_with(body(item["action"]), item["path"], list(chosen)))
    return found


def load_stubs(package: str) -> None:
    """Import a game's generated stubs (``rodada.nim.v1`` →
    ``rodada.nim.v1.nim_pb2``) so that its messages are known."""
    # (Not found: perhaps loaded already under another module name.)
    with contextlib.suppress(ImportError, IndexError):
        importlib.import_module(f"{package}.{package.split('.')[-2]}_pb2")


def messages(type_url: str) -> tuple[type[Proto], type[Proto], type[Proto]]:
    """A game's View, Action and Event classes, from the package of the
    message ``type_url`` names."""
    package = type_url.rsplit("/", 1)[-1].rsplit(".", 1)[0]  # rodada.nim.v1
    load_stubs(package)
    pool = descriptor_pool.Default()
    return tuple(  # type: ignore[return-value]
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
        for name in ("View", "Action", "Event")
    )


class GenericPanel(GamePanel[Proto, Proto]):
    """The board of a game this client has no board for (see the module
    docstring); :func:`panel_for` makes one per game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "next", "Next move"),
        Binding("up,k", "previous", "Previous"),
        Binding("enter", "choose", "Play it"),
    ]

    def __init__(self, snap: match_pb2.Snapshot) -> None:
        super().__init__(snap)
        self.moves = expand(snap.legal)
        self.cursor = 0

    def changed(self, before: match_pb2.Snapshot) -> None:
        self.moves = expand(self.snap.legal)
        self.cursor = min(self.cursor, max(len(self.moves) - 1, 0))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next", "previous", "choose"):
            return True if self.moves else None
        return super().check_action(action, parameters)

    def action_next(self) -> None:
        self.cursor = (self.cursor + 1) % len(self.moves)
        self.refresh()

    def action_previous(self) -> None:
        self.cursor = (self.cursor - 1) % len(self.moves)
        self.refresh()

    def action_choose(self) -> None:
        self.play(json_format.ParseDict(self.moves[self.cursor], self.Action()))

    def draw(self) -> Text:
        fields = json_format.MessageToDict(
            self.view, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        text = Text()
        for key, value in fields.items():
            text.append(f"{words(key)}: ", style="bold")
            text.append(f"{inline(value)}\n")
        if self.moves:
            text.append("\nYour move (↑/↓, Enter):\n", style="bold magenta")
            start = max(0, min(self.cursor - WINDOW // 2, len(self.moves) - WINDOW))
            for index in range(start, min(start + WINDOW, len(self.moves))):
                chosen = index == self.cursor
                text.append(
                    f"{'▶' if chosen else ' '} {inline(self.moves[index])}\n",
                    style="reverse" if chosen else "",
                )
        return text

    @classmethod
    def describe(cls, event: Proto, names: Names) -> str:
        data = json_format.MessageToDict(event, preserving_proto_field_name=True)
        if not data:
            return "?"
        kind, body = next(iter(data.items()))
        body = dict(body) if isinstance(body, dict) else {}
        who = f"{names(body.pop('seat'))}: " if isinstance(body.get("seat"), int) else ""
        rest = inline(body)
        return f"{who}{words(kind)}" + (f" ({rest})" if rest else "")


_MADE: dict[str, type[GenericPanel]] = {}


def panel_for(type_url: str) -> type[GenericPanel]:
    """The generic board for the game whose view ``type_url`` names."""
    if type_url not in _MADE:
        view, action, event = messages(type_url)
        name = f"Generic{view.DESCRIPTOR.file.package.replace('.', '_')}"
        _MADE[type_url] = type(name, (GenericPanel,), {"View": view, "Action": action, "Event": event})
    return _MADE[type_url]
