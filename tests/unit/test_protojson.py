"""gateway/protojson.py prints exactly what json_format prints (with the
options the gateway uses), and so does the games' ``to_json`` (with the
options it names): on every snapshot view and event of random
playouts of every game, on each game's GameInfo, on the platform's messages,
and on a message made here with every kind of field our protos do not use
yet (maps, 64-bit integers, bytes, floats at their limits)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    json_format,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2

from gateway.protojson import message_json
from services.kit import play
from services.kit.engine import Context, RulesError
from services.kit.game import Game, discover, to_json
from services.kit.matches import encode, packed, result_message
from services.kit.rng import MatchRng, cpu_seed
from tests.conftest import TEST_PACKAGES

GAMES = discover(TEST_PACKAGES)


def reference(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def stored(message: Message) -> dict[str, Any]:
    """What the games store (to_json): the fields left at their default absent."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def same(message: Message) -> None:
    assert message_json(message) == reference(message), message
    assert to_json(message) == stored(message), message


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_view_and_event_of_random_playouts(name: str) -> None:
    game: Game = GAMES[name]
    same(match_pb2.DescribeResponse(game=game.info()))
    for seed in range(3):
        rnd = random.Random(seed)
        mode = game.modes[seed % len(game.modes)]
        seats = mode.seats[seed % len(mode.seats)]
        rng = MatchRng(bytes([seed]) * 32)
        cpu_rng = MatchRng(cpu_seed(bytes([seed]) * 32))
        table, happened = play.start(game, seats, dict(mode.options), Context(rng, 0.0, 0.0), [], cpu_rng)
        version = 1
        for _ in range(300):
            outcome = play.outcome(game, table)
            for event in encode(game.messages.Event, happened, version, 1.5, outcome):
                same(event)
            for seat in (*range(seats), None):
                snapshot = match_pb2.Snapshot(
                    match_id="m",
                    game=name,
                    version=version,
                    seat=-1 if seat is None else seat,
                    to_act=[] if outcome else game.to_act(table.state),
                    view=packed(game.messages.View, game.view(table.state, seat)),
                    result=result_message(outcome) if outcome else None,
                    scores=game.scores(table.state) if game.scores else [],
                )
                same(snapshot)
            if outcome is not None or game.legal is None:
                break
            (actor, *_) = game.to_act(table.state)
            choices = game.legal(table.state, actor)
            try:
                happened = play.act(game, table, actor, rnd.choice(choices), Context(rng, 2.0, 1.0), cpu_rng)
            except RulesError:
                break
            version += 1


def test_platform_messages() -> None:
    for module in (platform_pb2, match_pb2):
        for message_type in module.DESCRIPTOR.message_types_by_name.values():
            same(getattr(module, message_type.name)())
    ticket = platform_pb2.Ticket(
        id="t", game="yatzy", members=[platform_pb2.User(id="u", name="ana")], position=0, enqueued_at=1.5
    )
    ticket.options.Pack(struct_pb2.Struct(fields={"card": struct_pb2.Value(string_value="CLASSIC")}))
    same(ticket)


def test_well_known_types() -> None:
    value = struct_pb2.Value()
    value.struct_value.update({"a": [1, "two", None, True, {"b": 2.5}], "c": {}})
    for inner in (
        value,
        struct_pb2.Value(),
        struct_pb2.ListValue(values=[struct_pb2.Value(number_value=3)]),
        timestamp_pb2.Timestamp(seconds=1_796_000_000, nanos=5_000),
        duration_pb2.Duration(seconds=-3, nanos=-500_000_000),
        wrappers_pb2.Int64Value(value=2**40),
        wrappers_pb2.BytesValue(value=b"\x00\xff"),
        wrappers_pb2.FloatValue(value=0.1),
        match_pb2.Seat(user_id="u"),
    ):
        wrapped = any_pb2.Any()
        wrapped.Pack(inner)
        same(inner)
        same(wrapped)
    same(any_pb2.Any())


def every_kind_of_field() -> type[Message]:
    """A message type with the field kinds none of our protos has yet."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="protojson_test.proto", package="protojson.test", syntax="proto3"
    )
    kinds = descriptor_pb2.FieldDescriptorProto
    entry = proto.message_type.add(name="Kinds")
    fields = [
        ("i64", kinds.TYPE_INT64),
        ("u64", kinds.TYPE_UINT64),
        ("s64", kinds.TYPE_SINT64),
        ("f64", kinds.TYPE_FIXED64),
        ("blob", kinds.TYPE_BYTES),
        ("single", kinds.TYPE_FLOAT),
        ("double", kinds.TYPE_DOUBLE),
    ]
    for number, (name, kind) in enumerate(fields, start=1):
        entry.field.add(name=name, number=number, type=kind, label=kinds.LABEL_OPTIONAL)
    entry.field.add(name="many", number=20, type=kinds.TYPE_INT64, label=kinds.LABEL_REPEATED)
    for number, (name, key_kind) in enumerate(
        [("by_text", kinds.TYPE_STRING), ("by_flag", kinds.TYPE_BOOL)], 30
    ):
        map_entry = entry.nested_type.add(name=f"{name.title().replace('_', '')}Entry")
        map_entry.options.map_entry = True
        map_entry.field.add(name="key", number=1, type=key_kind, label=kinds.LABEL_OPTIONAL)
        map_entry.field.add(name="value", number=2, type=kinds.TYPE_INT64, label=kinds.LABEL_OPTIONAL)
        entry.field.add(
            name=name,
            number=number,
            type=kinds.TYPE_MESSAGE,
            type_name=f".protojson.test.Kinds.{map_entry.name}",
            label=kinds.LABEL_REPEATED,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("protojson.test.Kinds"))


@pytest.mark.parametrize("limit", [0.0, 0.1, -2.5e38, math.inf, -math.inf, math.nan])
def test_every_kind_of_field(limit: float) -> None:
    kinds_cls = every_kind_of_field()
    same(kinds_cls())
    message = kinds_cls(
        i64=-(2**62),
        u64=2**63,
        s64=-5,
        f64=7,
        blob=b"\x00rodada\xff",
        single=limit,
        double=limit,
        many=[1, -(2**60)],
    )
    message.by_text["a"] = 2**50
    message.by_flag[True] = 1
    message.by_flag[False] = -1
    for printed, expected in (
        (message_json(message), reference(message)),
        (to_json(message), stored(message)),
    ):
        if math.isnan(limit):
            assert printed.pop("single", None) == expected.pop("single", None) == "NaN"
            assert printed.pop("double", None) == expected.pop("double", None) == "NaN"
        assert printed == expected
