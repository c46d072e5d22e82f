"""A random generator that returns chosen values, for engine tests of exact cases."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from services.kit.engine import Context
from services.kit.rng import MatchRng


class RiggedRng:
    """Returns the queued values from randint/randbelow, then fails loudly.

    ``dice(6, 6, 3)`` queues faces for ``randint(1, 6)``; ``shuffle`` is the
    identity so a test can lay out a deck or a deal in the order it wants.
    """

    def __init__(self, values: Iterable[int] = ()) -> None:
        self.queue: deque[int] = deque(values)

    def push(self, *values: int) -> None:
        self.queue.extend(values)

    def randint(self, low: int, high: int) -> int:
        if not self.queue:
            raise AssertionError("RiggedRng ran out of values")
        value = self.queue.popleft()
        if not low <= value <= high:
            raise AssertionError(f"rigged value {value} outside [{low}, {high}]")
        return value

    def randbelow(self, n: int) -> int:
        return self.randint(0, n - 1)

    def shuffle(self, items: list[Any]) -> None:
        return None


def ctx(rng: Any = None, now: float = 1_000.0, idle_since: float | None = None) -> Context:
    """A Context for tests; a seeded MatchRng unless a rng is given."""
    return Context(
        rng=rng if rng is not None else MatchRng(bytes(32)),
        now=now,
        idle_since=now if idle_since is None else idle_since,
    )
