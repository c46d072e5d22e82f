"""The replay: the seed's draws and the rules' public consequences, event by
event against the record.

Each game has a *shadow* (one module per game beside this one): the rules as
far as the draws and what follows from them go. It knows every hidden value,
since the seed gives them all; what the players chose it reads from the
record (a ``choice`` event: a bid, a play, which dice were kept, a notice
that a seat left). For every choice it returns the events the match must
have produced, the choice's own event first, with each event's audience;
the replay compares them, in order, with the events of the record the viewer
could see.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .generator import Generator
from .record import JSON, SPECTATOR, Difference, Event, Mismatch, Record, compare

# What reading a field of the wrong shape raises: a malformed record.
MALFORMED = (AttributeError, KeyError, IndexError, TypeError, ValueError)

# Notices that change the match: a seat left, was claimed against, expired.
DEPARTURES = {"LEFT": "left", "CLAIMED": "inactive", "EXPIRED": "inactive"}


@dataclass(frozen=True)
class Expected:
    kind: str
    data: JSON
    audience: tuple[int, ...] | None = None  # None: everyone, spectators included


class Shadow:
    """What every game's shadow offers the replay (see the module docstring)."""

    choices: frozenset[str] = frozenset()

    def __init__(self, record: Record, rng: Generator) -> None:
        self.record = record
        self.rng = rng
        self.over = False
        # What the seed decided that this record never showed, for the report.
        self.unshown: list[str] = []

    def start(self) -> list[Expected]:
        raise NotImplementedError

    def choose(self, event: Event) -> list[Expected]:
        raise NotImplementedError

    def notice(self, kind: str, data: JSON) -> list[Expected]:
        """A notice's consequences: by default a departure's (``depart``)."""
        why = DEPARTURES.get(kind)
        return [] if why is None else self.depart(int(data.get("seat", 0)), why)

    def depart(self, seat: int, why: str) -> list[Expected]:
        raise NotImplementedError

    def result(self) -> JSON:
        """The final event's Result, once over."""
        raise NotImplementedError

    def check_turn(self, event: Event, seat: int | None) -> None:
        """A choice is made by the seat to act."""
        found = int(event.data.get("seat", 0))
        if seat != found:
            raise Mismatch("seat", seat, found)


class NoReplay(Exception):
    """The record's game has no replay: its matches cannot be verified (not
    a difference: nothing was compared)."""

    def __init__(self, game: str, known: list[str]) -> None:
        super().__init__(
            f"no replay for {game!r}: its folder has no verify.py, so its matches cannot be verified"
            f" (games with a replay: {', '.join(known) or 'none'})"
        )
        self.game = game


def malformed(error: Exception) -> Mismatch:
    return Mismatch("format", "fields of the proto's types", f"{type(error).__name__}: {error}")


def ranks_of(values: list[int]) -> list[int]:
    """Competition ranks, highest first: equal values share a rank, the next skips."""
    return [1 + sum(1 for other in values if other > value) for value in values]


def end_reason(ended_by: str | None) -> str:
    """The Result's reason: what ended the match (match.proto) — a departure
    ("left", "inactive") that left nobody to play against, or None for a
    match played to its end (whoever left on the way)."""
    if ended_by == "left":
        return "END_REASON_FORFEIT"
    return "END_REASON_INACTIVITY" if ended_by == "inactive" else "END_REASON_COMPLETED"


@dataclass
class Report:
    game: str
    viewer: int
    match_id: str
    events: int  # match events in the record, all compared
    draws: int  # values drawn from the match generator
    blocks: int  # generator blocks read (the counter at the end)
    unshown: list[str] = field(default_factory=list)

    def text(self) -> str:
        who = "a spectator" if self.viewer == SPECTATOR else f"seat {self.viewer}"
        lines = [
            f"verified: {self.game} match {self.match_id or '?'} as {who}: {self.events} events, "
            f"{self.draws} draws ({self.blocks} generator blocks)"
        ]
        lines += [f"  not shown to this viewer, so not compared: {note}" for note in self.unshown]
        return "\n".join(lines)


def verify(record: Record, seed_hex: str | None, shadows: dict[str, type[Shadow]]) -> Report:
    """Replay ``record`` with the seed (``seed_hex``, else the one the record
    revealed); Difference at the first disagreement."""
    seed = _seed(record, seed_hex)
    rng = Generator(seed)
    if record.game not in shadows:
        raise NoReplay(record.game, sorted(shadows))
    shadow = shadows[record.game](record, rng)
    pending: deque[Expected] = deque(shadow.start())
    final: Event | None = None
    for event in record.events:
        try:
            if final is not None:
                raise Mismatch("id", f"no event after the final one ({final.id})", event.id)
            _step(shadow, pending, event, record.viewer)
            if event.final or (shadow.over and not _visible(pending, record.viewer)):
                _finish(shadow, pending, event, record)
                final = event
        except Mismatch as mismatch:
            raise Difference(event.where(), mismatch) from None
        except MALFORMED as error:
            raise Difference(event.where(), malformed(error)) from None
    if final is None:
        last = record.events[-1].where() if record.events else "the start"
        upcoming = _visible(pending, record.viewer)
        missing = upcoming[0].kind if upcoming else "the final event"
        raise Difference(f"after {last}", Mismatch("events", missing, "the end of the record"))
    return Report(
        game=record.game,
        viewer=record.viewer,
        match_id=str((record.finished or {}).get("match_id", "")),
        events=len(record.events),
        draws=rng.draws,
        blocks=rng.counter,
        unshown=shadow.unshown,
    )


def _seed(record: Record, seed_hex: str | None) -> bytes:
    published = record.seed_sha256
    candidates = [("the seed given", seed_hex)] if seed_hex else []
    if record.seed:
        candidates.append(("fairness.seed", record.seed))
    if not candidates:
        raise Difference(
            "record", Mismatch("fairness.seed", "the seed the finished match revealed (or --seed)", "none")
        )
    for name, text in candidates:
        try:
            seed = bytes.fromhex(text)
        except ValueError:
            seed = b""
        if len(seed) != 32:
            raise Difference("seed", Mismatch(name, "64 hexadecimal digits (32 bytes)", text))
        digest = hashlib.sha256(seed).hexdigest()
        if digest != published:
            raise Difference(
                "first snapshot",
                Mismatch("fairness.seed_sha256", f"SHA-256 of {name} = {digest}", published),
            )
    return bytes.fromhex(candidates[0][1])


def _visible(pending: deque[Expected], viewer: int) -> list[Expected]:
    """Drop the pending events the viewer cannot see; those left."""
    while pending and not _sees(pending[0], viewer):
        pending.popleft()
    return list(pending)


def _sees(expected: Expected, viewer: int) -> bool:
    return expected.audience is None or viewer in expected.audience


def _step(shadow: Shadow, pending: deque[Expected], event: Event, viewer: int) -> None:
    if event.is_notice:
        kind = event.kind.removeprefix("notice:")
        if kind in DEPARTURES and _visible(pending, viewer):
            raise Mismatch("event", pending[0].kind, event.kind)
        pending.extend(shadow.notice(kind, event.data))
        return
    if not _visible(pending, viewer):
        if event.kind not in shadow.choices:
            raise Mismatch("event", f"a move ({', '.join(sorted(shadow.choices))})", event.kind)
        pending.extend(shadow.choose(event))
        _visible(pending, viewer)
    expected = pending.popleft()
    if expected.kind != event.kind:
        raise Mismatch("event", expected.kind, event.kind)
    compare(list(expected.audience or ()), list(event.audience), "audience")
    compare(expected.data, event.data, "")


def _finish(shadow: Shadow, pending: deque[Expected], event: Event, record: Record) -> None:
    """The match's last event: final, nothing pending, the result right."""
    upcoming = _visible(pending, record.viewer)
    if upcoming:
        raise Mismatch("final", f"more events ({upcoming[0].kind}) before the end", event.final)
    if not shadow.over:
        raise Mismatch("final", False, event.final)
    if not event.final:
        raise Mismatch("final", True, event.final)
    expected: Any = shadow.result()
    compare(expected, event.result or {}, "result")
    if record.finished is not None:
        snapshot = record.finished.get("result") or {}
        try:
            compare(expected, snapshot, "result")
        except Mismatch as mismatch:
            raise Difference(f"snapshot of version {record.finished.get('version', 0)}", mismatch) from None
