"""The Bozó score card (RULES.md, "Bozó"; the seed's "Tabela de pontuação").

Pure functions of five dice faces. The boca bonus depends on the turn (first
throw or not), so the engine passes that in; nothing else here knows about turns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

# Card order, as the seed's table lists it. The names are the proto's Box values.
BOXES: tuple[str, ...] = (
    "AS",
    "DUQUE",
    "TERNO",
    "QUADRA",
    "QUINA",
    "SENA",
    "FULL",
    "SEGUIDA",
    "QUADRADA",
    "GENERAL",
)

# Number boxes: only the dice of that face count, face * count.
NUMBER_BOXES: dict[str, int] = {"AS": 1, "DUQUE": 2, "TERNO": 3, "QUADRA": 4, "QUINA": 5, "SENA": 6}

# Combination boxes score a fixed value, and only these can be "de boca".
COMBINATION_POINTS: dict[str, int] = {"FULL": 20, "SEGUIDA": 30, "QUADRADA": 40, "GENERAL": 50}

BOCA_BONUS = 5

# 1-3-4-5-6 is not a Seguida: only these two exact sets are.
_SEGUIDAS = ((1, 2, 3, 4, 5), (2, 3, 4, 5, 6))


def base_points(box: str, dice: Sequence[int]) -> int:
    """What ``dice`` score in ``box`` without the boca bonus."""
    if box in NUMBER_BOXES:
        face = NUMBER_BOXES[box]
        return face * sum(1 for die in dice if die == face)
    counts = sorted(Counter(dice).values())
    if box == "FULL":
        # Three of one face and two of *another*: five equal dice are never a Full.
        matches = counts == [2, 3]
    elif box == "SEGUIDA":
        matches = tuple(sorted(dice)) in _SEGUIDAS
    elif box == "QUADRADA":
        matches = counts[-1] >= 4
    elif box == "GENERAL":
        matches = counts == [5]
    else:
        raise ValueError(f"unknown box {box!r}")
    return COMBINATION_POINTS[box] if matches else 0


def points(box: str, dice: Sequence[int], first_throw: bool) -> tuple[int, bool]:
    """Points for ``box`` at the end of a turn, and whether they are "de boca".

    De boca is +5 on Full, Seguida, Quadrada or General when the turn used only
    its first throw; never on a number box and never on a zero.
    """
    base = base_points(box, dice)
    boca = first_throw and box in COMBINATION_POINTS and base > 0
    return base + (BOCA_BONUS if boca else 0), boca


# The best card possible: 5 * each face, then every combination de boca.
MAX_TOTAL = sum(5 * face for face in NUMBER_BOXES.values()) + sum(
    value + BOCA_BONUS for value in COMBINATION_POINTS.values()
)
