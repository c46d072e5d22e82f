"""What a finished match wins (gateway/competitions/trophies.py), from its
result and from the game's own events."""

from __future__ import annotations

from typing import Any

from rodada.bozo.v1 import bozo_pb2
from rodada.domino.v1 import domino_pb2
from rodada.yatzy.v1 import yatzy_pb2

from gateway.competitions import trophies
from gateway.competitions.trophies import (
    BOZO_GENERAL,
    DOMINO_BATIDA,
    FIRST_WIN,
    MOMENTS,
    YATZY_300,
    YATZY_OF_FIVES,
)


def result(ranks: list[int], scores: list[int] | None = None) -> dict[str, Any]:
    return {"ranks": ranks, "scores": scores or []}


def test_a_win_needs_someone_beaten() -> None:
    assert trophies.from_result("bozo", result([2, 1])) == {1: {FIRST_WIN}}
    assert trophies.from_result("bozo", result([1, 1])) == {}  # a draw wins nothing
    assert trophies.from_result("yatzy", result([1])) == {}  # alone at the table
    assert trophies.from_result("dudo", result([3, 1, 2])) == {1: {FIRST_WIN}}


def test_300_in_yatzy() -> None:
    assert trophies.from_result("yatzy", result([1], [300])) == {0: {YATZY_300}}
    assert trophies.from_result("yatzy", result([2, 1], [299, 310])) == {1: {FIRST_WIN, YATZY_300}}
    assert trophies.from_result("bozo", result([1, 2], [300, 10])) == {0: {FIRST_WIN}}


def test_yatzy_of_fives() -> None:
    def rolled(seat: int, dice: list[int]) -> yatzy_pb2.Event:
        return yatzy_pb2.Event(rolled=yatzy_pb2.Rolled(seat=seat, dice=dice))

    def scored(seat: int, box: int, points: int) -> yatzy_pb2.Event:
        return yatzy_pb2.Event(scored=yatzy_pb2.Scored(seat=seat, box=box, points=points))

    events = [
        rolled(0, [5, 5, 5, 5, 5]),
        rolled(1, [6, 6, 6, 6, 6]),
        scored(1, yatzy_pb2.YATZY, 50),  # a Yatzy, of sixes
        scored(0, yatzy_pb2.YATZY, 50),
        rolled(1, [5, 5, 5, 5, 5]),
        scored(1, yatzy_pb2.FIVES, 25),  # five fives, not in the Yatzy box
    ]
    assert MOMENTS["yatzy"](yatzy_pb2, events) == {0: {YATZY_OF_FIVES}}
    # Five fives, but the Yatzy box crossed out long before (0 points) does not count.
    assert MOMENTS["yatzy"](yatzy_pb2, [rolled(0, [5] * 5), scored(0, yatzy_pb2.YATZY, 0)]) == {}


def test_bozo_general() -> None:
    events = [
        bozo_pb2.Event(scored=bozo_pb2.Scored(seat=1, box=bozo_pb2.GENERAL, points=100)),
        bozo_pb2.Event(scored=bozo_pb2.Scored(seat=0, box=bozo_pb2.GENERAL, points=0)),  # crossed out
        bozo_pb2.Event(scored=bozo_pb2.Scored(seat=0, box=bozo_pb2.QUADRA, points=40)),
    ]
    assert MOMENTS["bozo"](bozo_pb2, events) == {1: {BOZO_GENERAL}}


def test_domino_batida() -> None:
    events = [
        domino_pb2.Event(round_ended=domino_pb2.RoundSummary(kind=domino_pb2.TRANCA, seat=2)),
        domino_pb2.Event(round_ended=domino_pb2.RoundSummary(kind=domino_pb2.BATIDA, seat=3)),
    ]
    assert MOMENTS["domino"](domino_pb2, events) == {3: {DOMINO_BATIDA}}
