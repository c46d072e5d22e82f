"""The games the gateway knows: where each is served, its proto messages, and
the table policies that differ per game. The gateway reaches games only
through their gRPC MatchService."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import grpc
from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2_grpc

from gateway.tables import Teams

if TYPE_CHECKING:
    from rodada.common.v1.match_pb2_grpc import MatchServiceAsyncStub


@dataclass(frozen=True)
class Policy:
    """What the gateway must know of a game without asking it."""

    seat_counts: frozenset[int]  # table sizes a host may create
    # The sides of team tables, by table size: (name, seats) each, the names
    # as the game's proto spells them.
    teams: Mapping[int, Teams] = field(default_factory=dict)
    cpu_seats: bool = False  # a host may give seats to the computer
    open_tables: bool = False  # tables are listed and anyone may sit; no invites
    # When the seat to act runs out of time (RULES.md "Leaving, inactivity,
    # CPU seats"): "notify" tells the table the seat may now be claimed
    # against or removed, which the players do through the game's action;
    # "cpu_turn" has the CPU play the turn (the game's `timeout` action).
    on_deadline: str = "notify"
    solo_expires: bool = False  # a one-seat match left idle is ended (Bozó solo training)


POLICIES: dict[str, Policy] = {
    "bozo": Policy(frozenset({1, 2, 4}), teams={4: (("JADE", (0, 2)), ("AMBAR", (1, 3)))}, solo_expires=True),
    "dudo": Policy(frozenset(range(2, 7))),
    "bozu_mekuri": Policy(frozenset(range(2, 7)), cpu_seats=True, on_deadline="cpu_turn"),
    # The seed: "Não existe mesa privada" -- friends sit at the same open table.
    "domino": Policy(frozenset({4}), teams={4: (("TEAM_0", (0, 2)), ("TEAM_1", (1, 3)))}, open_tables=True),
    "yatzy": Policy(frozenset(range(1, 9))),
}


class BadGameInput(ValueError):
    """Options or an action that do not parse as the game's proto message."""


@dataclass
class GameClient:
    name: str
    messages: ModuleType
    policy: Policy
    stub: MatchServiceAsyncStub

    def pack(self, message_name: str, data: Any) -> any_pb2.Any:
        """JSON from an HTTP client → the game's message, packed; strict."""
        if not isinstance(data, dict):
            raise BadGameInput(f"{message_name.lower()} must be a JSON object")
        message: Message = getattr(self.messages, message_name)()
        try:
            json_format.ParseDict(data, message)
        except json_format.ParseError as exc:
            raise BadGameInput(str(exc)) from None
        packed = any_pb2.Any()
        packed.Pack(message)
        return packed


def load_clients(addresses: dict[str, str]) -> tuple[dict[str, GameClient], list[grpc.aio.Channel]]:
    """One long-lived channel per game whose stubs were generated."""
    clients, channels = {}, []
    for name, policy in POLICIES.items():
        try:
            messages = importlib.import_module(f"rodada.{name}.v1.{name}_pb2")
        except ModuleNotFoundError:
            continue
        channel = grpc.aio.insecure_channel(addresses[name])
        channels.append(channel)
        stub = cast("MatchServiceAsyncStub", match_pb2_grpc.MatchServiceStub(channel))
        clients[name] = GameClient(name, messages, policy, stub)
    return clients, channels


def message_json(message: Message) -> dict[str, Any]:
    """A reply for HTTP clients: proto JSON with field names as in the .proto."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
