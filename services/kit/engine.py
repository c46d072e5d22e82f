"""The contract every rules engine implements.

An engine is pure: no I/O, no clock, no global random. The service hands it the
match state (a plain JSON-serialisable dict it created), the acting seat, the
action (the JSON form of the game's proto ``Action`` message, field names as in
the .proto) and a :class:`Context` with the match's random generator and the
time. It returns the new state and the events the action produced, or raises
:class:`RulesError`, in which case nothing changes.

The view of a seat is the only way state leaves an engine; its dict is the JSON
form of the game's proto ``View`` message, so it may only hold what that seat is
allowed to see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

JSON = dict[str, Any]


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
    """An action that is malformed for this game (a die index out of range, an
    unknown box), as opposed to a well-formed move the rules refuse now."""


class Rng(Protocol):
    """The match's deterministic random generator (see ``services.kit.rng``)."""

    def randbelow(self, n: int) -> int: ...

    def randint(self, low: int, high: int) -> int: ...

    def shuffle(self, items: list[Any]) -> None: ...


@dataclass(frozen=True)
class Context:
    """What an engine may know about the world outside the state."""

    rng: Rng
    now: float  # seconds since the epoch, read by the service, not the engine
    last_action_at: float  # when the match last accepted an action (or was created)


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


@dataclass(frozen=True)
class Result:
    """How a finished match ended.

    ``ranks[s]`` is seat s's place, 1 = first; equal results share a rank
    (two seats tied first both have rank 1, the next has rank 3). In team
    games places count sides, not seats: partners share their side's place,
    so in a two-side match the losers are 2. ``scores``
    is per seat (partners repeat their team's score) or empty when the game
    has no score. ``reason`` is ``completed``, ``forfeit`` (a leave conceded
    or put a seat out) or ``inactivity`` (a claim). ``forfeited`` lists the
    seats that left or were removed, in that order.
    """

    ranks: list[int]
    scores: list[int] = field(default_factory=list)
    reason: str = "completed"
    forfeited: list[int] = field(default_factory=list)


class Engine(Protocol):
    """A game's rules. Implementations are stateless singletons."""

    name: str  # the game's id, e.g. "yatzy"
    min_seats: int
    max_seats: int

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        """Start a match; raise RulesError for a bad seat count or options."""
        ...

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        """Apply one action of ``seat``; must not mutate ``state``."""
        ...

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        """The seat leaves or forfeits, with the game's leaving policy."""
        ...

    def view(self, state: JSON, seat: int | None) -> JSON:
        """What ``seat`` (or a spectator, for None) may see."""
        ...

    def to_act(self, state: JSON) -> list[int]:
        """Seats the game is waiting for (empty once over)."""
        ...

    def result(self, state: JSON) -> Result | None:
        """The result once the match is over, else None."""
        ...


class Answers(Protocol):
    """An engine that also answers questions about a match (the proto's
    ``Question`` → ``Answer``) from what ``seat`` may see, changing nothing."""

    def ask(self, state: JSON, seat: int | None, question: JSON) -> JSON: ...
