"""JSON Schemas of the API's messages, generated from the protos: one source
for the gRPC face, the HTTP bodies, the feeds' messages and the TypeScript
client. The HTTP API speaks proto3 JSON with the .proto's field names, so a
message's schema follows the proto3 JSON mapping:

- 32-bit integers are JSON integers, doubles numbers, enums their value's
  name (a string), bytes base64 strings;
- a ``oneof`` becomes a ``oneOf`` of objects that each set one member
  (e.g. a game's Action: ``{"roll": …} | {"score": …}``), so generated
  clients type each kind of action;
- ``google.protobuf.Any`` carries ``"@type"`` and the packed message's
  fields inline; where the API says which game messages it holds (a
  snapshot's view holds some game's View), it is a ``oneOf`` of those, each
  with its ``"@type"`` fixed.

Schemas are named by the message's full proto name (``rodada.yatzy.v1.View``)
so every game's types sit side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from rodada.common.v1 import annotations_pb2

JSON = dict[str, Any]
REF = "#/components/schemas/"
ANY = "google.protobuf.Any"
TYPE_URL = "type.googleapis.com/"

_INTEGERS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
}

# What the API's Structs hold: a game's options in proto JSON form, whose
# fields are scalars, enum names or lists of them (not recursive: TypeScript
# cannot name a type that refers to itself through an index).
VALUE = "google.protobuf.Value"
_SCALARS: list[JSON] = [{"type": "null"}, {"type": "boolean"}, {"type": "number"}, {"type": "string"}]
VALUE_SCHEMA: JSON = {
    "description": "An option's value: a scalar, an enum's name, or a list of them.",
    "oneOf": [*_SCALARS, {"type": "array", "items": {"oneOf": _SCALARS}}],
}


class Schemas:
    """Collects the schemas of messages and everything they refer to."""

    def __init__(self, game_packages: Iterable[Any]) -> None:
        # Each game's generated module: its Options, Action, View, … by name.
        self.games = list(game_packages)
        self.schemas: dict[str, JSON] = {}

    def ref(self, descriptor: Descriptor) -> JSON:
        """A reference to the message's schema (made on first use)."""
        self._message(descriptor)
        return {"$ref": REF + descriptor.full_name}

    def game_union(self, name: str) -> JSON:
        """Any game's message called ``name`` (View, Action, …) packed in an
        Any, told apart by ``@type``."""
        return {"oneOf": [self._typed(getattr(m, name).DESCRIPTOR) for m in self.games if hasattr(m, name)]}

    def game_messages(self, name: str) -> JSON:
        """Any game's message called ``name`` as a client writes it (an
        action for the table's game: no ``@type``)."""
        return {"oneOf": [self.ref(getattr(m, name).DESCRIPTOR) for m in self.games if hasattr(m, name)]}

    def _typed(self, descriptor: Descriptor) -> JSON:
        """The schema of a message packed in an Any: its fields and ``@type``
        (the message's own schema with ``@type`` among its properties: a
        reference to it would refuse ``@type`` as a property it does not
        have)."""
        name = f"{descriptor.full_name}@any"
        if name not in self.schemas:
            self.schemas[name] = {}  # reserve: messages may refer to themselves
            self._message(descriptor)
            typed = {"@type": {"const": TYPE_URL + descriptor.full_name}}
            schema = self.schemas[descriptor.full_name]
            if "allOf" in schema:  # fields and oneofs: the fields' part gets @type
                base, *unions = schema["allOf"]
                schema = {"allOf": [_with(base, typed), *unions]}
            elif "oneOf" in schema:  # a oneof alone: each member gets @type
                schema = {"oneOf": [_with(member, typed) for member in schema["oneOf"]]}
            else:
                schema = _with(schema, typed)
            self.schemas[name] = schema | {
                "description": f"A {descriptor.full_name} packed in a google.protobuf.Any."
            }
        return {"$ref": REF + name}

    def _message(self, descriptor: Descriptor) -> None:
        name = descriptor.full_name
        if name in self.schemas:
            return
        self.schemas[name] = {}  # reserve against cycles
        oneofs = [o for o in descriptor.oneofs if not o.name.startswith("_")]  # not proto3 `optional`
        in_oneof = {f.name for o in oneofs for f in o.fields}
        plain = [f for f in descriptor.fields if f.name not in in_oneof]
        # Fields without presence are always in our JSON (defaults included).
        base: JSON = {
            "type": "object",
            "properties": {f.name: self._field(f) for f in plain},
            "required": [f.name for f in plain if not f.has_presence],
        }
        if not oneofs:
            self.schemas[name] = base | {"additionalProperties": False}
            return
        # Each oneof: exactly one member set, typed as a union of objects
        # (a game's Action becomes {"roll": …} | {"score": …}).
        unions = [
            {
                "oneOf": [
                    {"type": "object", "properties": {f.name: self._field(f)}, "required": [f.name]}
                    for f in oneof.fields
                ]
            }
            for oneof in oneofs
        ]
        if not plain and len(unions) == 1:
            self.schemas[name] = unions[0]
        else:
            self.schemas[name] = {"allOf": [base, *unions]}

    def field(self, field: FieldDescriptor) -> JSON:
        """The schema of one field's value (a list for a repeated field)."""
        return self._field(field)

    def _field(self, field: FieldDescriptor) -> JSON:
        item = self._value(field)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value = field.message_type.fields_by_name["value"]
            return {"type": "object", "additionalProperties": self._value(value)}
        return {"type": "array", "items": item} if field.is_repeated else item

    def _value(self, field: FieldDescriptor) -> JSON:
        if field.type in _INTEGERS:
            low, high = _INTEGERS[field.type]
            return {"type": "integer", "minimum": low, "maximum": high}
        if field.type in (
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_UINT64,
            FieldDescriptor.TYPE_SINT64,
        ):
            return {"type": ["integer", "string"], "format": "int64"}
        if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return {"type": "number"}
        if field.type == FieldDescriptor.TYPE_BOOL:
            return {"type": "boolean"}
        if field.type == FieldDescriptor.TYPE_STRING:
            return {"type": "string"}
        if field.type == FieldDescriptor.TYPE_BYTES:
            return {"type": "string", "contentEncoding": "base64"}
        if field.enum_type is not None:
            return self._enum(field.enum_type)
        message = field.message_type
        assert message is not None, field.full_name
        if message.full_name == ANY:
            options = field.GetOptions()
            if options.Extensions[annotations_pb2.game_message]:
                return self.game_union(options.Extensions[annotations_pb2.game_message])
            if options.Extensions[annotations_pb2.any_message]:
                pool = descriptor_pool.Default()
                return self._typed(
                    pool.FindMessageTypeByName(options.Extensions[annotations_pb2.any_message])
                )
            return {"type": "object", "properties": {"@type": {"type": "string"}}, "required": ["@type"]}
        if message.full_name == "google.protobuf.Struct":
            # A game's options (GameInfo.option_defaults, Mode.options): typed
            # so that generated clients get their values, not an empty object.
            self.schemas.setdefault(VALUE, VALUE_SCHEMA)
            return {"type": "object", "additionalProperties": {"$ref": REF + VALUE}}
        return self.ref(message)

    def _enum(self, enum: EnumDescriptor) -> JSON:
        name = enum.full_name
        if name not in self.schemas:
            self.schemas[name] = {"type": "string", "enum": [v.name for v in enum.values]}
        return {"$ref": REF + name}


def _with(schema: JSON, properties: JSON) -> JSON:
    """An object schema with more properties, all of them required."""
    return schema | {
        "properties": schema.get("properties", {}) | properties,
        "required": [*schema.get("required", []), *properties],
    }
