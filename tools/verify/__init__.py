"""A stand-alone verifier of a finished match's fairness (docs/fairness.md).

It reads a match's public record — the items a table's feed delivered, to a
seat or a spectator — replays every draw of the match generator from the
seed the match revealed, and every public consequence of those draws, and
answers "verified" or the first difference. It imports nothing of the
platform (only the standard library and its own modules), so it can be
copied out of the repository and run on its own (``python -m tools.verify``
from the folder holding the copy's ``tools/verify/``).

Each game's replay lives in the game's folder (``services/<game>/verify.py``)
and is found there (:func:`shadows`); a copy taken out of the repository
carries them in ``tools/verify/games/<game>.py``. A game with none is
answered clearly ("no replay"), not verified.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .record import Difference, Record, load, parse
from .replay import MALFORMED, NoReplay, Report, Shadow, malformed, verify

HERE = Path(__file__).resolve().parent
# The repository this verifier sits in (tools/verify/): its game folders.
REPOSITORY = HERE.parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def shadows() -> dict[str, type[Shadow]]:
    """Each game's replay, by game: the ``verify.py`` of the game's folder
    (``<package>/<game>/verify.py`` for each package of GAME_PACKAGES,
    ``services`` by default), or, in a copy of the verifier taken out of the
    repository, ``games/<game>.py`` beside it. Each defines ``SHADOW``."""
    places = sorted((HERE / "games").glob("*.py"))
    for package in os.environ.get("GAME_PACKAGES", "services").split(","):
        if package.strip():
            places += sorted((REPOSITORY / package.strip().replace(".", "/")).glob("*/verify.py"))
    found: dict[str, type[Shadow]] = {}
    for path in places:
        game = path.stem if path.parent.name == "games" else path.parent.name
        if game not in found:
            found[game] = _load(path, f"{__name__}.games.{game}").SHADOW
    return found


def verify_text(text: str, seed: str | None = None) -> Report:
    """Verify a record given as text (a JSON array of feed items, or one item
    per line); Difference at the first disagreement."""
    try:
        return verify(parse(load(text)), seed, shadows())
    except MALFORMED as error:  # a field of the wrong shape outside any one event
        raise Difference("record", malformed(error)) from None


__all__ = ["Difference", "NoReplay", "Record", "Report", "shadows", "verify_text"]
