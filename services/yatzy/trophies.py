"""Yatzy's trophies (the platform awards them; services/kit/game.py ``Trophy``)."""

from __future__ import annotations

from collections.abc import Iterator

from services.kit.engine import JSON, Outcome
from services.kit.game import Trophy


def _three_hundred(outcome: Outcome, events: list[JSON]) -> Iterator[int]:
    return (seat for seat, score in enumerate(outcome.scores) if score >= 300)


def _yatzy_of_fives(outcome: Outcome, events: list[JSON]) -> Iterator[int]:
    """A Yatzy box filled (points > 0) right after the seat threw five fives."""
    last_dice: dict[int, list[int]] = {}
    for event in events:
        if "rolled" in event:
            last_dice[event["rolled"].get("seat", 0)] = list(event["rolled"].get("dice", []))
        elif "scored" in event:
            scored = event["scored"]
            seat = scored.get("seat", 0)
            if (
                scored.get("box") == "YATZY"
                and scored.get("points", 0) > 0
                and last_dice.get(seat) == [5] * 5
            ):
                yield seat


TROPHIES = (
    Trophy("yatzy_300", "300 in Yatzy", "Finish a Yatzy match with 300 points or more.", _three_hundred),
    Trophy("yatzy_of_fives", "Yatzy of fives", "Fill the Yatzy box with five fives.", _yatzy_of_fives),
)
