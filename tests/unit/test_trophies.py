"""What a finished match wins: the platform's trophies from its result
(gateway/competitions/trophies.py), and each game's, declared in its folder
(services/<game>/trophies.py), from the result and the game's own events."""

from __future__ import annotations

from typing import Any

from gateway.competitions import trophies
from gateway.competitions.trophies import FIRST_WIN
from services.bozo.game import GAME as BOZO
from services.domino.game import GAME as DOMINO
from services.kit.engine import EndReason, Outcome
from services.kit.game import Game, discover
from services.yatzy.game import GAME as YATZY
from tests.conftest import TEST_PACKAGES


def result(ranks: list[int], scores: list[int] | None = None) -> dict[str, Any]:
    return {"ranks": ranks, "scores": scores or []}


def won(game: Game, ranks: list[int], scores: list[int], events: list[dict[str, Any]]) -> dict[int, set[str]]:
    """Each seat's trophies of ``game`` (by id), as its service finds them."""
    outcome = Outcome(ranks=ranks, scores=scores, reason=EndReason.COMPLETED)
    found: dict[int, set[str]] = {}
    for trophy in game.trophies:
        for seat in trophy.won(outcome, events):
            found.setdefault(seat, set()).add(trophy.id)
    return found


def test_a_win_needs_someone_beaten() -> None:
    assert trophies.from_result(result([2, 1])) == {1: {FIRST_WIN}}
    assert trophies.from_result(result([1, 1])) == {}  # a draw wins nothing
    assert trophies.from_result(result([1])) == {}  # alone at the table
    assert trophies.from_result(result([3, 1, 2])) == {1: {FIRST_WIN}}


def test_300_in_yatzy() -> None:
    assert won(YATZY, [1], [300], []) == {0: {"yatzy_300"}}
    assert won(YATZY, [2, 1], [299, 310], []) == {1: {"yatzy_300"}}
    assert trophies.from_result(result([2, 1], [299, 310])) == {1: {FIRST_WIN}}
    assert won(BOZO, [1, 2], [300, 10], []) == {}


def test_yatzy_of_fives() -> None:
    def rolled(seat: int, dice: list[int]) -> dict[str, Any]:
        return {"rolled": {"seat": seat, "dice": dice}}

    def scored(seat: int, box: str, points: int) -> dict[str, Any]:
        return {"scored": {"seat": seat, "box": box, "points": points}}

    events = [
        rolled(0, [5, 5, 5, 5, 5]),
        rolled(1, [6, 6, 6, 6, 6]),
        scored(1, "YATZY", 50),  # a Yatzy, of sixes
        scored(0, "YATZY", 50),
        rolled(1, [5, 5, 5, 5, 5]),
        scored(1, "FIVES", 25),  # five fives, not in the Yatzy box
    ]
    assert won(YATZY, [1, 2], [0, 0], events) == {0: {"yatzy_of_fives"}}
    # Five fives, but the Yatzy box crossed out long before (0 points) does not count.
    assert won(YATZY, [1], [0], [rolled(0, [5] * 5), scored(0, "YATZY", 0)]) == {}


def test_bozo_general() -> None:
    events = [
        {"scored": {"seat": 1, "box": "GENERAL", "points": 100}},
        {"scored": {"seat": 0, "box": "GENERAL"}},  # crossed out (0 points: left out in proto3 JSON)
        {"scored": {"seat": 0, "box": "QUADRA", "points": 40}},
    ]
    assert won(BOZO, [2, 1], [0, 0], events) == {1: {"bozo_general"}}


def test_domino_batida() -> None:
    events = [
        {"round_ended": {"kind": "TRANCA", "seat": 2}},
        {"round_ended": {"kind": "BATIDA", "seat": 3}},
    ]
    assert won(DOMINO, [1, 2, 1, 2], [50, 0, 50, 0], events) == {3: {"domino_batida"}}


def test_trophy_ids_are_unique_over_the_games() -> None:
    ids = [t.id for game in discover(TEST_PACKAGES).values() for t in game.trophies]
    ids += [kind.id for kind in trophies.PLATFORM_KINDS]
    assert len(ids) == len(set(ids))
