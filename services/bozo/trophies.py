"""Bozó's trophies (the platform awards them; services/kit/game.py ``Trophy``)."""

from __future__ import annotations

from collections.abc import Iterator

from services.kit.engine import JSON, Outcome
from services.kit.game import Trophy


def _general(outcome: Outcome, events: list[JSON]) -> Iterator[int]:
    """The General box filled with points (a crossed-out General is 0)."""
    for event in events:
        scored = event.get("scored")
        if scored and scored.get("box") == "GENERAL" and scored.get("points", 0) > 0:
            yield scored.get("seat", 0)


TROPHIES = (Trophy("bozo_general", "General", "Score a General in Bozó.", _general),)
