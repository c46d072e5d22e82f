"""Strict input, the same on both faces: a request either is exactly one of
the API's messages or is refused (INVALID_ARGUMENT, over HTTP 422), before
anything changes.

Over HTTP the JSON goes through protobuf's own parser, which refuses unknown
fields, wrong types and numbers out of their field's range, with one
leniency closed here: it takes any JSON number (``2.5``, ``true``) for an
enum, truncated, so a score in box 2.5 would be played as box 2. Over gRPC
the bytes have already been parsed; what a peer can still slip in is a field
this server does not know (a wire type that does not match its field — a
float for an integer — reads as one too) or an enum number the enum does not
define.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

# Their JSON is not an object of their fields (json_format checks them).
_OPAQUE = {
    "google.protobuf.Any",
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "google.protobuf.FieldMask",
}
_ENUM = FieldDescriptor.CPPTYPE_ENUM
_MESSAGE = FieldDescriptor.CPPTYPE_MESSAGE


class Invalid(ValueError):
    """What is wrong with a request, for the refusal's message."""


def parse_json(data: Any, message: Message) -> Message:
    """``data``, a decoded JSON object, into ``message`` (proto3 JSON, field
    names as in the .proto or in lowerCamelCase); raises :class:`Invalid`."""
    descriptor: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]
    if not isinstance(data, dict):
        raise Invalid(f"{descriptor.name}: expected a JSON object")
    _check_enums(data, descriptor, descriptor.name)
    try:
        json_format.ParseDict(data, message)
    except json_format.ParseError as exc:
        raise Invalid(str(exc)) from None
    return message


def _check_enums(data: dict[str, Any], descriptor: Descriptor, path: str) -> None:
    if descriptor.full_name in _OPAQUE or descriptor.file.name == "google/protobuf/wrappers.proto":
        return
    by_name, by_camel = descriptor.fields_by_name, descriptor.fields_by_camelcase_name
    for key, value in data.items():
        field = by_name.get(key) or by_camel.get(key)
        if field is None or value is None or field.cpp_type not in (_ENUM, _MESSAGE):
            continue  # json_format answers for the rest
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            field = field.message_type.fields_by_name["value"]
            if field.cpp_type not in (_ENUM, _MESSAGE) or not isinstance(value, dict):
                continue
            values: Any = value.values()
        elif field.is_repeated and isinstance(value, list):
            values = value
        else:
            values = (value,)
        for item in values:
            if field.cpp_type == _MESSAGE:
                if isinstance(item, dict):
                    assert field.message_type is not None
                    _check_enums(item, field.message_type, f"{path}.{field.name}")
                continue
            enum = field.enum_type
            assert enum is not None
            if enum.full_name == "google.protobuf.NullValue":
                continue
            if isinstance(item, bool) or not isinstance(item, str | int):
                raise Invalid(f"{path}.{field.name}: {item!r} is not a {enum.full_name} (a name or a number)")
            if isinstance(item, int) and item not in enum.values_by_number:
                raise Invalid(f"{path}.{field.name}: {enum.full_name} has no value {item}")


def check(message: Message) -> None:
    """A parsed message holds nothing this server does not know: no unknown
    field and no undefined enum number, at any depth (an Any's contents are
    checked where they are unpacked); raises :class:`Invalid`."""
    descriptor: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]
    if len(UnknownFieldSet(message)):
        raise Invalid(f"{descriptor.full_name}: a field this server does not know (or of the wrong type)")
    if descriptor.full_name in _OPAQUE:
        return
    for field, value in message.ListFields():
        if field.cpp_type == _ENUM:
            assert field.enum_type is not None
            defined = field.enum_type.values_by_number
            for number in value if field.is_repeated else (value,):
                if number not in defined:
                    raise Invalid(f"{field.full_name}: {field.enum_type.full_name} has no value {number}")
        elif field.cpp_type == _MESSAGE:
            assert field.message_type is not None
            if field.message_type.GetOptions().map_entry:
                entry = field.message_type.fields_by_name["value"]
                if entry.cpp_type == _MESSAGE:
                    for item in value.values():
                        check(item)
                elif entry.cpp_type == _ENUM:
                    assert entry.enum_type is not None
                    for number in value.values():
                        if number not in entry.enum_type.values_by_number:
                            raise Invalid(
                                f"{field.full_name}: {entry.enum_type.full_name} has no value {number}"
                            )
            else:
                for item in value if field.is_repeated else (value,):
                    check(item)
