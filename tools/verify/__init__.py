"""A stand-alone verifier of a finished match's fairness (docs/fairness.md).

It reads a match's public record — the items a table's feed delivered, to a
seat or a spectator — replays every draw of the match generator from the
seed the match revealed, and every public consequence of those draws, and
answers "verified" or the first difference. It imports nothing of the
platform (only the standard library and its own modules), so it can be
copied out of the repository and run on its own: ``python -m verify``.
"""

from __future__ import annotations

from .bozo import Bozo
from .bozu_mekuri import BozuMekuri
from .domino import Domino
from .dudo import Dudo
from .record import Difference, Record, load, parse
from .replay import MALFORMED, Report, Shadow, malformed, verify
from .yatzy import Yatzy

SHADOWS: dict[str, type[Shadow]] = {
    "bozo": Bozo,
    "bozu_mekuri": BozuMekuri,
    "domino": Domino,
    "dudo": Dudo,
    "yatzy": Yatzy,
}


def verify_text(text: str, seed: str | None = None) -> Report:
    """Verify a record given as text (a JSON array of feed items, or one item
    per line); Difference at the first disagreement."""
    try:
        return verify(parse(load(text)), seed, SHADOWS)
    except MALFORMED as error:  # a field of the wrong shape outside any one event
        raise Difference("record", malformed(error)) from None


__all__ = ["Difference", "Record", "Report", "verify_text"]
