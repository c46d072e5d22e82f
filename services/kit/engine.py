"""The vocabulary of a game's rules: what a move gets and what it gives back.

A game's rules are pure: no I/O, no clock, no global random. A move gets the
match state (a plain JSON-serialisable dict the game created), the acting
seat, the move's proto message and a :class:`Context` with the match's random
generator and the time. It changes the state in place and returns the events
it produced, or raises :class:`RulesError`. The state belongs to the kit: it
decodes a fresh one for every call and throws it away if the move is refused,
so a move may change the state before it finds a reason to refuse.

The view of a seat is the only way state leaves a game; its dict is the JSON
form of the game's proto ``View`` message, so it may only hold what that seat
is allowed to see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

JSON = dict[str, Any]
State = dict[str, Any]


class RulesError(Exception):
    """An action refused by the rules.

    ``code`` is stable and machine readable (snake_case, e.g. ``not_your_turn``);
    ``message`` is for people. Neither may contain hidden information.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class InvalidAction(RulesError):
    """An action or option that is malformed for this game (a die index out of
    range, an unknown box), as opposed to a well-formed move the rules refuse
    now."""


class Rng(Protocol):
    """The match's deterministic random generator (see ``services.kit.rng``)."""

    def randbelow(self, n: int) -> int: ...

    def randint(self, low: int, high: int) -> int: ...

    def shuffle(self, items: list[Any]) -> None: ...


@dataclass(frozen=True)
class Context:
    """What a move may know about the world outside the state."""

    rng: Rng
    now: float  # seconds since the epoch, read by the service, not the game
    # Since when the seat to act has been idle: it got the turn or last acted.
    idle_since: float = 0.0


@dataclass(frozen=True)
class Event:
    """Something that happened, and who may see it.

    ``kind`` is the name of a field of the game's proto ``Event`` oneof and
    ``data`` its JSON form. ``audience`` lists the seats that may see the event;
    ``None`` means everyone, spectators included.
    """

    kind: str
    data: JSON = field(default_factory=dict)
    audience: tuple[int, ...] | None = None


class EndReason(StrEnum):
    """Why a match ended: the common proto's EndReason, by value name."""

    COMPLETED = "END_REASON_COMPLETED"
    FORFEIT = "END_REASON_FORFEIT"
    INACTIVITY = "END_REASON_INACTIVITY"


class Departure(StrEnum):
    """Why a seat leaves play before the end: it left, or it was removed
    (claimed against, or expired) for inactivity."""

    LEFT = "left"
    INACTIVE = "inactive"

    @property
    def end_reason(self) -> EndReason:
        return EndReason.FORFEIT if self is Departure.LEFT else EndReason.INACTIVITY


@dataclass(frozen=True)
class Outcome:
    """How a finished match ended (the common proto's ``Result``).

    ``ranks[s]`` is seat s's place, 1 = first; equal results share a rank
    (two seats tied first both have rank 1, the next has rank 3). In team
    games places count sides, not seats: partners share their side's place.
    ``scores`` is per seat (partners repeat their team's score) or empty when
    the game has no score. ``forfeited`` lists the seats that left or were
    removed, in that order.
    """

    ranks: list[int]
    scores: list[int] = field(default_factory=list)
    reason: EndReason = EndReason.COMPLETED
    forfeited: list[int] = field(default_factory=list)


def competition_ranks(values: list[int], higher_is_better: bool = True) -> list[int]:
    """Standard competition ranking: equal values share a rank and the next
    rank skips (10, 8, 8, 5 → 1, 2, 2, 4)."""
    sign = 1 if higher_is_better else -1
    return [1 + sum(1 for other in values if sign * other > sign * value) for value in values]
