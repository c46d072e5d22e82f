"""Dominó's trophies (the platform awards them; services/kit/game.py ``Trophy``)."""

from __future__ import annotations

from collections.abc import Iterator

from services.kit.engine import JSON, Outcome
from services.kit.game import Trophy


def _batida(outcome: Outcome, events: list[JSON]) -> Iterator[int]:
    """A round ended by a batida: the seat that went out."""
    for event in events:
        summary = event.get("round_ended")
        if summary and summary.get("kind") == "BATIDA":
            yield summary.get("seat", 0)


TROPHIES = (Trophy("domino_batida", "Batida", "Go out (bater) in a round of Dominó.", _batida),)
