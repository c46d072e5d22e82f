"""Helpers for talking gRPC to a game service directly, as a mobile app does."""

from __future__ import annotations

from typing import Any

from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def pack(message: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def unpack(packed: any_pb2.Any, message_cls: type[Message]) -> Any:
    message = message_cls()
    assert packed.Unpack(message), packed.type_url
    return message


def as_dict(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def event_kind(event: match_pb2.MatchEvent, event_cls: type[Message]) -> tuple[str, dict[str, Any]]:
    body = unpack(event.event, event_cls)
    kind = body.WhichOneof("event")
    return kind, as_dict(getattr(body, kind))
