"""What Yatzy and Bozó share: five dice, three throws a turn, and which dice
a throw may keep."""

from __future__ import annotations

from .record import Event, Mismatch

DICE = 5
THROWS = 3


def kept(event: Event, throws: int) -> list[int]:
    """The dice a throw keeps, ascending, after ``throws`` throws this turn:
    the first throws all five, a re-throw at least one, and a turn has three."""
    keep = sorted(event.data.get("kept", []))
    if throws >= THROWS:
        raise Mismatch("throw_number", f"at most {THROWS} throws a turn", throws + 1)
    if len(set(keep)) != len(keep) or any(type(i) is not int or not 0 <= i < DICE for i in keep):
        raise Mismatch("kept", "distinct die positions 0 to 4", keep)
    if (throws == 0 and keep) or len(keep) == DICE:
        raise Mismatch("kept", "nothing on a turn's first throw, at most 4 dice after", keep)
    return keep
