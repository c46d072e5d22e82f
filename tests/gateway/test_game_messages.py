"""A game's messages from an HTTP client's JSON: each spelling is parsed
once and remembered (GameClient.pack), and what comes back is what parsing
gives, every time, a fresh Any each time; what does not parse is refused
every time, never remembered."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from google.protobuf import any_pb2
from rodada.common.v1 import match_pb2
from rodada.yatzy.v1 import yatzy_pb2

from gateway.games import PACKED, GameClient
from services.core.errors import Refused


def yatzy() -> GameClient:
    messages = SimpleNamespace(Action=yatzy_pb2.Action, Options=yatzy_pb2.Options)
    return GameClient(match_pb2.GameInfo(name="yatzy"), messages, stub=None)  # type: ignore[arg-type]


def parsed(data: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(yatzy().parse("Action", data))
    return packed


@pytest.mark.parametrize(
    "data", [{"roll": {}}, {"roll": {"keep": [0, 2]}}, {"score": {"box": "TWOS"}}, {"score": {"box": 3}}]
)
def test_an_action_packed_again_is_the_one_parsed(data: dict[str, Any]) -> None:
    game = yatzy()
    first, second = game.pack("Action", data), game.pack("Action", data)
    assert first == second == parsed(data)
    assert first is not second
    first.value = b"changed by its caller"
    assert game.pack("Action", data) == parsed(data)


def test_spellings_that_json_tells_apart_are_not_mixed_up() -> None:
    game = yatzy()
    assert game.pack("Action", {"score": {"box": 3}}) == parsed({"score": {"box": 3}})
    with pytest.raises(Refused) as refused:
        game.pack("Action", {"score": {"box": 3.5}})  # not an enum's number
    assert refused.value.reason == "malformed_action"
    # And the same JSON as an Action and as Options are not one entry.
    with pytest.raises(Refused):
        game.pack("Options", {"score": {"box": 3}})


def test_a_refusal_is_not_remembered() -> None:
    game = yatzy()
    for _ in range(2):
        with pytest.raises(Refused) as refused:
            game.pack("Action", {"jump": {}})
        assert refused.value.reason == "malformed_action"
    assert ("Action", b'{"jump":{}}') not in game._packed


def test_the_cache_is_bounded() -> None:
    game = yatzy()
    for box in range(PACKED + 5):
        game.pack("Action", {"roll": {"keep": [box]}})
    assert len(game._packed) <= PACKED
