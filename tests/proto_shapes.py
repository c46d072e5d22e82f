"""Checks that an engine's dicts are exactly the JSON form of its proto messages."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from services.kit.engine import Event


def assert_fits(message_cls: type[Message], data: dict[str, Any]) -> Message:
    """Parse ``data`` strictly (unknown fields fail) into ``message_cls``."""
    message = message_cls()
    json_format.ParseDict(data, message, ignore_unknown_fields=False)
    return message


def assert_event_fits(event_cls: type[Message], event: Event) -> Message:
    message = assert_fits(event_cls, {event.kind: event.data})
    assert message.WhichOneof("event") == event.kind, event.kind
    return message
