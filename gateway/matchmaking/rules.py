"""Matchmaking's rules, pure (no I/O, no clock): given the waiting tickets
of one queue and the time, which tables to form (:func:`form_tables`).

- Fixed-size tables (Bozó duel 2, Bozó duplas 4, Dominó 4) form as soon as
  enough compatible players wait; parties take one team's seats (0 & 2 or
  1 & 3), solos fill the rest, in ranked queues balanced by rating.
- Modes whose tables vary in size (Dudo, Yatzy, Bozu Mekuri) form a table of
  6 at once, or after ``fill_wait_seconds`` the largest table there is (2 to
  6 players).
- Casual queues of games with CPU seats: a ticket still alone after
  ``cpu_wait_seconds`` is seated with CPUs (a 4-seat table where the size
  varies, as RULES.md's "a single person plays against 3 CPU seats", else
  the mode's size; a party fills its team) and every other waiting ticket
  that fits sits with it. Such a table is never ranked: a rating moves only
  between people. ``cpu_wait_seconds`` 0 turns this bot fill off.
- Ranked: each ticket accepts a rating gap of ``window_start`` plus
  ``window_step`` per matcher cycle waited, up to ``window_cap``; two tickets
  are compatible when the gap fits *both* windows, and every pair at a table
  must be compatible. The oldest ticket forms first (it anchors a table and
  picks the closest ratings).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from rodada.common.v1 import match_pb2

from gateway.settings import MatchmakingSettings

# Multi-player queues seat at least 2 and at most 6 players.
FLEXIBLE_SEATS = range(2, 7)
# A lone ticket seated with CPUs plays a table of this size where the mode
# lets the size vary (RULES.md, Bozu Mekuri: "a single person plays against
# 3 CPU seats"), or the mode's one size.
CPU_TABLE_SEATS = 4
# Fixed-size tables are found by a small search (a party needs a team's two
# seats); this caps its work per anchor ticket on pathological queues.
SEARCH_BUDGET = 5000
# Casual queues: an anchor looks for table-mates among this many waiting
# tickets first (in queue order), and among all only if none of those make a
# table. Far more than a table needs; it keeps a burst of thousands linear
# (every anchor scanning the whole queue made 5,000 tickets cost seconds).
CASUAL_CANDIDATES = 64

Seat = tuple[str, str] | None  # (ticket id, user id), or None for a CPU


@dataclass(frozen=True)
class Format:
    """The tables one queue forms."""

    sizes: tuple[int, ...]  # table sizes, ascending; one size = fixed tables
    teams: tuple[tuple[int, ...], ...] = ()  # each team's seats (team games)
    cpu_table: int = 0  # seats of the table a lone ticket gets with CPUs; 0 = never

    @property
    def smallest(self) -> int:
        return self.sizes[0]

    @property
    def largest(self) -> int:
        return self.sizes[-1]

    @property
    def parties(self) -> bool:
        """A party of two needs partners' seats to sit together."""
        return bool(self.teams)


@dataclass(frozen=True)
class Waiting:
    """A waiting ticket, as the rules see it."""

    ticket_id: str
    members: tuple[str, ...]  # user ids: one, or two for a party
    rating: float  # a party's: its members' mean
    enqueued_at: float

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class Formation:
    """A table to form: who sits in each seat."""

    seats: tuple[Seat, ...]

    @property
    def ticket_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(seat[0] for seat in self.seats if seat))

    @property
    def cpu_seats(self) -> tuple[int, ...]:
        return tuple(i for i, seat in enumerate(self.seats) if seat is None)


def queue_mode(game: match_pb2.GameInfo, options: Mapping[str, Any]) -> match_pb2.Mode:
    """The mode a queue (and its ratings) belongs to: the game's one queued
    mode, or the queued mode its options select (Bozó's ``mode``). Raises
    ValueError when the options select no queued mode or several."""
    queued = [m for m in game.modes if m.queued]
    fitting = [m for m in queued if _selected(m, options)]
    if len(fitting) != 1:
        choices = "; ".join(
            f"{m.name}: {json_format.MessageToDict(m.options) or 'no options'}" for m in queued
        )
        raise ValueError(f"{game.name} queues are per mode; options select exactly one of: {choices}")
    return fitting[0]


def _selected(mode: match_pb2.Mode, options: Mapping[str, Any]) -> bool:
    """Queues need the mode chosen: every option the mode is selected by set."""
    return all(options.get(k) == v for k, v in json_format.MessageToDict(mode.options).items())


def queue_format(game: match_pb2.GameInfo, mode: match_pb2.Mode) -> Format:
    """The tables of a queue, from the game's facts."""
    sizes = tuple(sorted(mode.seat_counts))
    if len(sizes) > 1:
        sizes = tuple(s for s in sizes if s in FLEXIBLE_SEATS)
    teams = tuple(tuple(team.seats) for team in mode.teams) if len(sizes) == 1 else ()
    cpu_table = (CPU_TABLE_SEATS if len(sizes) > 1 else sizes[0]) if game.cpu_seats else 0
    return Format(sizes, teams, cpu_table)


def cycles_waited(settings: MatchmakingSettings, enqueued_at: float, now: float) -> int:
    return max(0, int((now - enqueued_at) // settings.cycle_seconds))


def rating_window(settings: MatchmakingSettings, enqueued_at: float, now: float) -> float:
    """The rating gap a ranked ticket accepts now: it starts narrow and widens
    with every cycle waited, up to the cap."""
    widened = settings.window_start + settings.window_step * cycles_waited(settings, enqueued_at, now)
    return min(widened, settings.window_cap)


def estimate_wait(recent_waits: Sequence[float], waited: float) -> int | None:
    """Seconds still to wait: the median wait of the queue's recently matched
    tickets less what this one has waited; None before the queue has history."""
    if not recent_waits:
        return None
    return max(0, round(statistics.median(recent_waits) - waited))


def form_tables(
    waiting: Sequence[Waiting], fmt: Format, settings: MatchmakingSettings, now: float, ranked: bool
) -> list[Formation]:
    """The tables to form now from one queue's waiting tickets; every ticket
    is in at most one of them."""
    queue = sorted(waiting, key=lambda t: (t.enqueued_at, t.ticket_id))
    windows = {t.ticket_id: rating_window(settings, t.enqueued_at, now) for t in queue}

    def compatible(a: Waiting, b: Waiting) -> bool:
        if set(a.members) & set(b.members):
            return False  # never the same player twice at a table
        return not ranked or abs(a.rating - b.rating) <= min(windows[a.ticket_id], windows[b.ticket_id])

    taken: set[str] = set()
    passed: list[Waiting] = []  # anchors that formed nothing: still candidates for later ones
    formed: list[Formation] = []

    def candidates(index: int, limit: int | None) -> list[Waiting]:
        """Untaken tickets compatible with the anchor, in queue order."""
        anchor, found = queue[index], []
        later = (queue[j] for j in range(index + 1, len(queue)))
        for ticket in itertools.chain(passed, later):
            if ticket.ticket_id not in taken and compatible(anchor, ticket):
                found.append(ticket)
                if limit is not None and len(found) >= limit:
                    break
        return found

    for index, anchor in enumerate(queue):
        if anchor.ticket_id in taken:
            continue
        waited = now - anchor.enqueued_at
        if ranked:  # all of them: closest ratings first, then the longest waiting
            others = candidates(index, None)
            others.sort(key=lambda t: (abs(t.rating - anchor.rating), t.enqueued_at, t.ticket_id))
            group = _group(anchor, others, fmt, compatible, waited >= settings.fill_wait_seconds)
        else:
            others = candidates(index, CASUAL_CANDIDATES)
            group = _group(anchor, others, fmt, compatible, waited >= settings.fill_wait_seconds)
            if group is None and len(others) == CASUAL_CANDIDATES:
                others = candidates(index, None)
                group = _group(anchor, others, fmt, compatible, waited >= settings.fill_wait_seconds)
        if group is not None:
            formation = _seat(group, fmt, ranked)
        elif fmt.cpu_table and not ranked and settings.bot_fill and waited >= settings.cpu_wait_seconds:
            formation = _with_cpus(anchor, others, fmt, compatible)
        else:
            passed.append(anchor)
            continue
        taken.update(formation.ticket_ids)
        formed.append(formation)
    return formed


Compatible = Callable[[Waiting, Waiting], bool]


def _with_cpus(anchor: Waiting, others: list[Waiting], fmt: Format, compatible: Compatible) -> Formation:
    """The anchor's table with CPUs: every other waiting ticket that still
    fits sits too (three people waiting for a four-seat table play with one
    CPU, not each with three), the rest of the seats played by the computer.
    In team games a ticket sits within one team, the one with the most free
    seats, so people spread across teams rather than face a team of CPUs."""
    seats: list[Seat] = [None] * fmt.cpu_table
    free = [list(team) for team in fmt.teams] if fmt.teams else [list(range(fmt.cpu_table))]
    group: list[Waiting] = []
    for ticket in [anchor, *others]:
        if not all(compatible(ticket, g) for g in group):
            continue
        team = max(free, key=len)
        if len(team) < ticket.size:
            continue
        group.append(ticket)
        for user in ticket.members:
            seats[team.pop(0)] = (ticket.ticket_id, user)
    return Formation(tuple(seats))


def _group(
    anchor: Waiting, others: list[Waiting], fmt: Format, compatible: Compatible, waited_enough: bool
) -> list[Waiting] | None:
    """The anchor's table-mates, or None if no table forms now."""
    if len(fmt.sizes) == 1:
        return _fill([anchor], fmt.largest - anchor.size, others, 0, compatible, [SEARCH_BUDGET])
    # Flexible tables: the most compatible players there are, up to the
    # largest table; a full table at once, a smaller one after the wait.
    group, players = [anchor], anchor.size
    for other in others:
        if players + other.size <= fmt.largest and all(compatible(other, g) for g in group[1:]):
            group.append(other)
            players += other.size
    if players == fmt.largest or (players >= fmt.smallest and waited_enough):
        return group
    return None


def _fill(
    group: list[Waiting],
    need: int,
    others: list[Waiting],
    start: int,
    compatible: Compatible,
    budget: list[int],
) -> list[Waiting] | None:
    """Exactly ``need`` more players from ``others[start:]``, each compatible
    with the whole group (depth-first, preferred candidates first). A search
    rather than greedy: with seats left for one, a party must be skipped for
    a later solo."""
    if need == 0:
        return group
    for i in range(start, len(others)):
        budget[0] -= 1
        if budget[0] < 0:
            return None
        other = others[i]
        if other.size <= need and all(compatible(other, g) for g in group[1:]):
            found = _fill([*group, other], need - other.size, others, i + 1, compatible, budget)
            if found is not None:
                return found
    return None


def _seat(group: list[Waiting], fmt: Format, ranked: bool) -> Formation:
    """Seats for a group. Team games: each ticket sits within one team (a
    party's two players as partners); ranked tables take the split whose
    teams' mean ratings are closest, casual ones the first in queue order."""
    if not fmt.teams:
        return Formation(tuple((t.ticket_id, user) for t in group for user in t.members))
    best: tuple[float, tuple[int, ...]] | None = None
    for assignment in itertools.product(range(len(fmt.teams)), repeat=len(group)):
        load = [0] * len(fmt.teams)
        total = [0.0] * len(fmt.teams)
        for ticket, team in zip(group, assignment, strict=True):
            load[team] += ticket.size
            total[team] += ticket.rating * ticket.size
        if load != [len(seats) for seats in fmt.teams]:
            continue
        means = [t / n for t, n in zip(total, load, strict=True)]
        cost = max(means) - min(means) if ranked else 0.0
        if best is None or cost < best[0]:
            best = (cost, assignment)
    assert best is not None, "a full group always splits into teams"
    seats: list[Seat] = [None] * fmt.largest
    free = [iter(team_seats) for team_seats in fmt.teams]
    for ticket, team in zip(group, best[1], strict=True):
        for user in ticket.members:
            seats[next(free[team])] = (ticket.ticket_id, user)
    return Formation(tuple(seats))
