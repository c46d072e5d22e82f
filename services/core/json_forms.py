"""How proto3 JSON writes the values that are not JSON's own: a map's key,
bytes, 64-bit integers (as text, by ``str``), and floating-point numbers
out of JSON's range. Shared by the two printers of messages as JSON, the
gateway's (``gateway/protojson.py``) and the games' (``services.kit.game.to_json``),
both held to json_format's output by tests/unit/test_protojson.py."""

from __future__ import annotations

import base64
import math
from typing import Any

from google.protobuf.internal import type_checkers


def map_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def bytes_text(value: bytes) -> str:
    return base64.b64encode(value).decode("utf-8")


def double(value: float) -> float | str:
    if math.isinf(value):
        return "-Infinity" if value < 0 else "Infinity"
    if math.isnan(value):
        return "NaN"
    return value


def single(value: float) -> float | str:
    """A 32-bit float, by its shortest form that reads back the same."""
    special = double(value)
    return special if isinstance(special, str) else type_checkers.ToShortestFloat(value)
