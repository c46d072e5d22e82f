"""Matchmaking: queues of tickets that a matcher on every gateway replica turns
into started tables, each exactly once.

A queue is one game, mode, set of table options (canonical proto JSON, so two
spellings of the same options are one queue) and casual or ranked. A ticket
holds one player, or two friends queued as a party (team games only: they sit
as partners). The module has two halves:

**The rules** (pure, no I/O, no clock: :func:`form_tables`). Given the waiting
tickets of one queue and the time, which tables to form:

- Fixed-size tables (Bozó duel 2, Bozó duplas 4, Dominó 4) form as soon as
  enough compatible players wait; parties take one team's seats (0 & 2 or
  1 & 3), solos fill the rest, in ranked queues balanced by rating.
- Dudo, Yatzy and Bozu Mekuri form a table of 6 at once, or after
  ``fill_wait_seconds`` the largest table there is (2 to 6 players). A Bozu
  Mekuri ticket still alone after ``cpu_wait_seconds`` is seated at a 4-seat
  table with 3 CPUs (as RULES.md's "a single person plays against 3 CPU
  seats"); such a table is never ranked, a rating moves only between people.
- Ranked: each ticket accepts a rating gap of ``window_start`` plus
  ``window_step`` per matcher cycle waited, up to ``window_cap``; two tickets
  are compatible when the gap fits *both* windows, and every pair at a table
  must be compatible. The oldest ticket forms first (it anchors a table and
  picks the closest ratings).

**The Redis side** (:class:`Matchmaking`). Keys (``<q>`` = a queue's 16-hex
hash; every key of one queue carries the ``{mm:<q>}`` hash tag, so each
script below touches a single Redis Cluster slot):

- ``{mm:<q>}:t:<ticket>`` hash: ``doc`` (JSON: queue, leader, party, created),
  ``members`` (JSON: user id, name, rating each), ``state`` (party_open,
  waiting, forming, matched, cancelled, dropped, failed), ``enqueued_at``,
  ``party_code``, ``table`` and ``seats`` once taken, ``reason``,
  ``closed_at``. Ticket ids are ``<q>`` + 16 random hex, so the id names
  its queue's slot. Closed tickets expire after an hour.
- ``{mm:<q>}:waiting`` zset: waiting ticket ids by enqueue time (the order).
- ``{mm:<q>}:alive`` zset: ``<ticket>|<user>`` per member of a live ticket,
  scored by the time its heartbeat runs out (creation + grace, then each
  refresh + heartbeat). In the queue's slot, unlike a TTL key per player, so
  the take below can check liveness atomically.
- ``{mm:<q>}:forming`` zset + ``{mm:<q>}:plans`` hash: tables taken but not yet
  started, by table id, scored by when their current owner's claim runs out;
  the plan (JSON) says everything needed to finish the formation.
- ``{mm:<q>}:waits`` list: the last waits of matched tickets (the estimate).
- ``{mm:<q>}:lease`` string: which replica works the queue this cycle.
- ``{mm}:queues`` zset (queue → last time seen non-empty) and ``{mm}:specs``
  hash (queue → game, mode, ranked, options): the queues matchers visit;
  idle ones are forgotten after 10 minutes.
- ``mm:player:<user>`` → the player's live ticket (one at a time).
- ``mm:party:<code>`` → the party ticket a friend may join (24 h).

**Exactly once.** Every replica's matcher visits every queue each cycle; a
``SET NX PX`` lease lets one of them work a queue at a time, which only saves
work. Correctness rests on the *take*: one Lua script that, for a planned
table, checks every chosen ticket is still waiting and every member's
heartbeat is alive, and only then removes them all from the queue and marks
them forming with the table id — all or nothing. A ticket leaves ``waiting``
only through the take, a cancel or a drop, each a script on the same keys, so
no ticket is taken twice, and a cancelled or dropped one is never taken. A
player holds at most one live ticket (``mm:player:<user>``, claimed before a
ticket enters a queue and released when it closes), so no player is in two
forming matches. After the take the table is created and started with
idempotent steps (``SET NX`` table, ``CreateMatch`` tolerating
``match_exists``, then the table marked started); if the replica dies midway
the plan's claim runs out and another replica finishes it with the same
table id. The *finish* script closes the plan once: tickets matched (or
failed), and only its caller counts the match.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import random
import secrets
import statistics
import time
from collections import defaultdict
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from google.protobuf import json_format
from rodada.common.v1 import match_pb2

from gateway import metrics
from gateway.games import POLICIES, BadGameInput
from gateway.platform import RPC_TIMEOUT_SECONDS, ApiError, Platform, rpc
from gateway.ratings import DEFAULT_RATING
from gateway.settings import MatchmakingSettings
from gateway.tables import OPEN, TableError
from services.kit.tasks import cancel_requested
from services.kit.tokens import Identity

log = logging.getLogger("rodada.gateway.matchmaking")

# -- the rules (pure) ------------------------------------------------------------

# The issue: multi-player queues seat at least 2 and at most 6 players.
FLEXIBLE_SEATS = range(2, 7)
# RULES.md, Bozu Mekuri: "a single person plays against 3 CPU seats".
CPU_TABLE_SEATS = 4
# Bozó's mode names the queue (its Options.mode lowercased) and fixes the
# table; solo training is played alone, never queued.
BOZO_MODE_SEATS = {"duel": 2, "duplas": 4}
# Fixed-size tables are found by a small search (a party needs a team's two
# seats); this caps its work per anchor ticket on pathological queues.
SEARCH_BUDGET = 5000

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


def queue_mode(game: str, options: Mapping[str, Any]) -> str:
    """The mode a queue (and its ratings) is named by: Bozó's Options.mode
    lowercased, "standard" for every other game. Raises ValueError for a
    mode that is not queued."""
    if game != "bozo":
        return "standard"
    mode = str(options.get("mode", "MODE_UNSPECIFIED")).lower()
    if mode not in BOZO_MODE_SEATS:
        raise ValueError(f"bozo queues need options.mode {' or '.join(m.upper() for m in BOZO_MODE_SEATS)}")
    return mode


def queue_format(game: str, mode: str) -> Format:
    """The tables of a queue, from the games' policy table."""
    policy = POLICIES[game]
    if game == "bozo":
        sizes: tuple[int, ...] = (BOZO_MODE_SEATS[mode],)
    else:
        sizes = tuple(s for s in sorted(policy.seat_counts) if s in FLEXIBLE_SEATS)
    teams = tuple(seats for _, seats in policy.teams.get(sizes[-1], ())) if len(sizes) == 1 else ()
    return Format(sizes, teams, CPU_TABLE_SEATS if policy.cpu_seats else 0)


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
    formed: list[Formation] = []
    for anchor in queue:
        if anchor.ticket_id in taken:
            continue
        others = [t for t in queue if t.ticket_id not in taken and t is not anchor and compatible(anchor, t)]
        if ranked:  # closest ratings first, then the longest waiting
            others.sort(key=lambda t: (abs(t.rating - anchor.rating), t.enqueued_at, t.ticket_id))
        waited = now - anchor.enqueued_at
        group = _group(anchor, others, fmt, compatible, waited >= settings.fill_wait_seconds)
        if group is not None:
            formation = _seat(group, fmt, ranked)
        elif fmt.cpu_table and anchor.size == 1 and waited >= settings.cpu_wait_seconds:
            seats: list[Seat] = [(anchor.ticket_id, anchor.members[0])]
            formation = Formation(tuple(seats + [None] * (fmt.cpu_table - 1)))
        else:
            continue
        taken.update(formation.ticket_ids)
        formed.append(formation)
    return formed


Compatible = Callable[[Waiting, Waiting], bool]


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


# -- the Redis side ---------------------------------------------------------------

PARTY_OPEN, WAITING, FORMING, MATCHED = "party_open", "waiting", "forming", "matched"
CANCELLED, DROPPED, FAILED = "cancelled", "dropped", "failed"
LIVE = frozenset({PARTY_OPEN, WAITING, FORMING})  # holds its players: no other ticket

CLOSED_TICKET_SECONDS = 3600  # a closed ticket can still be read this long
PARTY_CODE_SECONDS = 24 * 3600
QUEUE_IDLE_SECONDS = 600  # a queue seen empty this long is no longer visited
# A formation's owner has this long (well over a CreateMatch timeout) before
# another replica resumes it; after FORMING_GIVE_UP_SECONDS of failures to
# reach the game the tickets fail, so nobody waits on a dead service forever.
FORMING_CLAIM_SECONDS = 30.0
FORMING_GIVE_UP_SECONDS = 120.0
MAX_TICKETS_PER_CYCLE = 500  # the oldest this many per queue and cycle
BATCH = 500
RECENT_WAITS = 50
TICKET_ID_LENGTH = 32
# A player's lock expires this long after it is claimed unless the ticket it
# names goes live: a replica dying in between never blocks the player.
PLAYER_CLAIM_MS = 30_000

QUEUES_KEY, SPECS_KEY = "{mm}:queues", "{mm}:specs"


def _queue_key(queue_hash: str, name: str) -> str:
    return f"{{mm:{queue_hash}}}:{name}"


def ticket_key(ticket_id: str) -> str:
    return f"{{mm:{ticket_id[:16]}}}:t:{ticket_id}"


def player_key(user_id: str) -> str:
    return f"mm:player:{user_id}"


def party_key(code: str) -> str:
    return f"mm:party:{code}"


def rating_key(game: str, mode: str, user_id: str) -> str:
    """Where the ratings (the lead's gateway.ratings) keep a player's rating."""
    return f"rating:{game}:{mode}:{user_id}"


# KEYS: ticket, waiting, alive. ARGV: id, doc, members, state, now, alive until, party code, user.
_CREATE = """
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'members', ARGV[3], 'state', ARGV[4])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'party_code', ARGV[7]) end
if ARGV[4] == 'waiting' then
  redis.call('HSET', KEYS[1], 'enqueued_at', ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
end
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1] .. '|' .. ARGV[8])
return 1
"""

# The friend joins a party that still waits for one. KEYS: ticket, waiting,
# alive. ARGV: id, members, now, alive until, user.
_JOIN = """
if redis.call('HGET', KEYS[1], 'state') ~= 'party_open' then return 0 end
redis.call('HSET', KEYS[1], 'members', ARGV[2], 'state', 'waiting', 'enqueued_at', ARGV[3])
redis.call('HDEL', KEYS[1], 'party_code')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1] .. '|' .. ARGV[5])
return 1
"""

# The ticket with its queue position, refreshing the caller's heartbeat if
# asked (XX: only a live ticket's entry; GT: never shortened). KEYS: ticket,
# waiting, alive, waits. ARGV: id, user, alive until ('' = no refresh).
_STATUS = """
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return {} end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[3], 'XX', 'GT', ARGV[3], ARGV[1] .. '|' .. ARGV[2])
end
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
return {fields, rank or -1, redis.call('ZCARD', KEYS[2]), redis.call('LRANGE', KEYS[4], 0, -1)}
"""

# Cancel or drop a live ticket that no table has taken; a drop only if some
# member's heartbeat has really run out (a refresh may have come in since the
# matcher looked). Returns 'closed', 'alive', or the state it was in.
# KEYS: ticket, waiting, alive. ARGV: id, new state, now, keep ms, drop?, reason.
_CLOSE = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'waiting' and state ~= 'party_open' then return state or '' end
local members = cjson.decode(redis.call('HGET', KEYS[1], 'members'))
if ARGV[5] == '1' then
  local dead = false
  for _, m in ipairs(members) do
    local until_ = redis.call('ZSCORE', KEYS[3], ARGV[1] .. '|' .. m.user_id)
    if (not until_) or tonumber(until_) < tonumber(ARGV[3]) then dead = true end
  end
  if not dead then return 'alive' end
end
redis.call('ZREM', KEYS[2], ARGV[1])
for _, m in ipairs(members) do redis.call('ZREM', KEYS[3], ARGV[1] .. '|' .. m.user_id) end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'closed_at', ARGV[3], 'reason', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 'closed'
"""

# All or nothing: every ticket still waiting with every member alive, or
# nothing changes. KEYS: waiting, alive, forming, plans, ticket 1..n.
# ARGV: table id, plan, now, claim until, then (ticket id, seats) per ticket.
_TAKE = """
local now = tonumber(ARGV[3])
for k = 5, #KEYS do
  local id = ARGV[2 * k - 5]
  if redis.call('HGET', KEYS[k], 'state') ~= 'waiting' or not redis.call('ZSCORE', KEYS[1], id) then
    return 0
  end
  for _, m in ipairs(cjson.decode(redis.call('HGET', KEYS[k], 'members'))) do
    local until_ = redis.call('ZSCORE', KEYS[2], id .. '|' .. m.user_id)
    if (not until_) or tonumber(until_) < now then return 0 end
  end
end
for k = 5, #KEYS do
  local id = ARGV[2 * k - 5]
  redis.call('ZREM', KEYS[1], id)
  for _, m in ipairs(cjson.decode(redis.call('HGET', KEYS[k], 'members'))) do
    redis.call('ZREM', KEYS[2], id .. '|' .. m.user_id)
  end
  redis.call('HSET', KEYS[k], 'state', 'forming', 'table', ARGV[1], 'seats', ARGV[2 * k - 4])
end
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
return 1
"""

# Take over a formation whose owner's claim ran out. KEYS: forming, plans.
# ARGV: table id, now, claim until. Returns the plan, or nil.
_CLAIM = """
local until_ = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not until_) or tonumber(until_) >= tonumber(ARGV[2]) then return false end
local plan = redis.call('HGET', KEYS[2], ARGV[1])
if not plan then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return false
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return plan
"""

# Close a formation once. KEYS: forming, plans, waits, ticket 1..n.
# ARGV: table id, state, now, keep ms, reason, waits to keep, wait 1..m.
_FINISH = """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
for k = 4, #KEYS do
  redis.call('HSET', KEYS[k], 'state', ARGV[2], 'closed_at', ARGV[3], 'reason', ARGV[5])
  redis.call('PEXPIRE', KEYS[k], ARGV[4])
end
for i = 7, #ARGV do redis.call('LPUSH', KEYS[3], ARGV[i]) end
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[6]) - 1)
return 1
"""

# Compare and set: the player lock and the lease. ARGV: expected ('' =
# absent), new ('' = delete), expiry in ms (0 = none, which also clears one).
_SWAP = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1
"""

# KEYS: queues, specs. ARGV: queue hash, spec, now.
_REGISTER = """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], 'GT', ARGV[3], ARGV[1])
return 1
"""

# Forget queues idle since before ARGV[1]. KEYS: queues, specs.
_PRUNE = """
local idle = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
for _, q in ipairs(idle) do
  redis.call('ZREM', KEYS[1], q)
  redis.call('HDEL', KEYS[2], q)
end
return #idle
"""


@dataclass(frozen=True)
class Queue:
    game: str
    mode: str
    ranked: bool
    options_json: str  # canonical: proto JSON, keys sorted

    @property
    def options(self) -> dict[str, Any]:
        return cast(dict[str, Any], orjson.loads(self.options_json))

    @property
    def hash(self) -> str:
        kind = "ranked" if self.ranked else "casual"
        name = f"{self.game}:{self.mode}:{kind}:{self.options_json}"
        return hashlib.sha256(name.encode()).hexdigest()[:16]

    def key(self, name: str) -> str:
        return _queue_key(self.hash, name)

    def spec(self) -> dict[str, Any]:
        return {"game": self.game, "mode": self.mode, "ranked": self.ranked, "options": self.options_json}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Queue:
        return cls(spec["game"], spec["mode"], spec["ranked"], spec["options"])


@dataclass(frozen=True)
class Ticket:
    """A ticket as stored."""

    id: str
    queue: Queue
    leader: str
    party: bool
    created_at: float
    members: list[dict[str, Any]]  # user_id, name, rating
    state: str
    enqueued_at: float | None
    party_code: str | None
    table_id: str | None
    seats: dict[str, int]
    reason: str | None
    closed_at: float | None

    @classmethod
    def parse(cls, ticket_id: str, fields: Mapping[str, str]) -> Ticket:
        doc = orjson.loads(fields["doc"])
        return cls(
            id=ticket_id,
            queue=Queue.from_spec(doc["queue"]),
            leader=doc["leader"],
            party=doc["party"],
            created_at=doc["created_at"],
            members=orjson.loads(fields["members"]),
            state=fields["state"],
            enqueued_at=float(fields["enqueued_at"]) if "enqueued_at" in fields else None,
            party_code=fields.get("party_code"),
            table_id=fields.get("table"),
            seats=orjson.loads(fields["seats"]) if "seats" in fields else {},
            reason=fields.get("reason") or None,
            closed_at=float(fields["closed_at"]) if "closed_at" in fields else None,
        )

    def has_member(self, user_id: str) -> bool:
        return any(m["user_id"] == user_id for m in self.members)


@dataclass(frozen=True)
class Status:
    ticket: Ticket
    position: int | None  # 1-based, while waiting
    queue_length: int
    recent_waits: list[float]


class Matchmaking:
    """Tickets and the matcher, over the platform's Redis; one per replica."""

    def __init__(self, platform: Platform, settings: MatchmakingSettings) -> None:
        self.platform = platform
        self.redis = platform.redis
        self.settings = settings
        self._owner = secrets.token_hex(8)  # this replica, as a lease holder
        # The lease outlives a normal cycle's work; if a holder dies the
        # queue waits this long, and correctness never depends on it.
        self._lease_ms = int(max(2.0, 5 * settings.cycle_seconds) * 1000)
        self._reported: set[tuple[str, str]] = set()
        script = self.redis.register_script
        self._create, self._join, self._status = script(_CREATE), script(_JOIN), script(_STATUS)
        self._close, self._take, self._claim = script(_CLOSE), script(_TAKE), script(_CLAIM)
        self._finish, self._swap = script(_FINISH), script(_SWAP)
        self._register, self._prune = script(_REGISTER), script(_PRUNE)

    # -- tickets ------------------------------------------------------------------

    def queue(self, game_name: str, options: Any, ranked: bool) -> Queue:
        """The queue for a request; 404 unknown game, 422 options that do not
        parse or a mode that is not queued."""
        game = self.platform.game(game_name)
        try:
            packed = game.pack("Options", options)
        except BadGameInput as exc:
            raise ApiError(422, "invalid_options", str(exc)) from None
        message = game.messages.Options()
        packed.Unpack(message)
        canonical = json_format.MessageToDict(message, preserving_proto_field_name=True)
        try:
            mode = queue_mode(game.name, canonical)
        except ValueError as exc:
            raise ApiError(422, "invalid_mode", str(exc)) from None
        return Queue(game.name, mode, ranked, orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS).decode())

    async def create(
        self, user: Identity, game: str, options: Any, ranked: bool, party: bool
    ) -> dict[str, Any]:
        """Queue ``user``; with ``party`` the ticket waits (``party_open``)
        for a friend to join with its ``party_code`` before it enters the
        queue. Every refusal happens before anything is written."""
        queue = self.queue(game, options, ranked)
        if party and not queue_format(queue.game, queue.mode).parties:
            team_queues = "bozo (DUPLAS) and domino"
            raise ApiError(422, "party_not_allowed", f"parties sit as partners: only {team_queues} take them")
        _require_account(user, queue)
        rating = await self._rating(queue, user.user_id)
        ticket_id = queue.hash + secrets.token_hex(8)
        # Shielded: a request abandoned midway must not leave a live ticket
        # whose player lock was never confirmed (and so would expire).
        await asyncio.shield(self._enqueue(user, queue, ticket_id, rating, party))
        return await self.describe(ticket_id, user)

    async def _enqueue(
        self, user: Identity, queue: Queue, ticket_id: str, rating: float, party: bool
    ) -> None:
        """Claim the player, then write the ticket, then confirm the claim."""
        code = secrets.token_urlsafe(9) if party else ""
        await self._claim_player(user.user_id, ticket_id)
        created = False
        try:
            now = time.time()
            await self._register_queue(queue, now)
            if code:  # first, so that no party ticket exists without its code
                await self.redis.set(party_key(code), ticket_id, ex=PARTY_CODE_SECONDS)
            doc = {"queue": queue.spec(), "leader": user.user_id, "party": party, "created_at": now}
            member = {"user_id": user.user_id, "name": user.name, "rating": rating}
            await self._create(
                keys=[ticket_key(ticket_id), queue.key("waiting"), queue.key("alive")],
                args=[
                    ticket_id,
                    orjson.dumps(doc),
                    orjson.dumps([member]),
                    PARTY_OPEN if party else WAITING,
                    now,
                    now + self.settings.grace_seconds,
                    code,
                    user.user_id,
                ],
            )
            created = True
        finally:
            if not created:
                await self._release_players(ticket_id, [user.user_id])
        await self._hold_player(user.user_id, ticket_id)

    async def join_party(self, user: Identity, code: str) -> dict[str, Any]:
        """The friend joins the party ``code`` names: the ticket enters its
        queue with both players."""
        ticket_id = cast(str | None, await self.redis.get(party_key(code))) if code else None
        if ticket_id is None:
            raise ApiError(404, "party_not_found", "no such party code, or it has expired")
        ticket = await self._load(ticket_id)
        if ticket is not None and ticket.has_member(user.user_id):
            raise ApiError(409, "own_party", "you are already in this party")
        if ticket is None or ticket.state != PARTY_OPEN:
            raise ApiError(409, "party_closed", "this party is no longer waiting for a friend")
        _require_account(user, ticket.queue)
        rating = await self._rating(ticket.queue, user.user_id)
        await asyncio.shield(self._add_friend(user, ticket, rating))  # as in create()
        await self.redis.delete(party_key(code))
        return await self.describe(ticket_id, user)

    async def _add_friend(self, user: Identity, ticket: Ticket, rating: float) -> None:
        """Claim the friend, then add them to the party, then confirm the claim."""
        ticket_id = ticket.id
        await self._claim_player(user.user_id, ticket_id)
        joined = False
        try:
            now = time.time()
            queue = ticket.queue
            # Register again: the queue may have been forgotten while the
            # party waited outside it.
            await self._register_queue(queue, now)
            members = [*ticket.members, {"user_id": user.user_id, "name": user.name, "rating": rating}]
            joined = bool(
                await self._join(
                    keys=[ticket_key(ticket_id), queue.key("waiting"), queue.key("alive")],
                    args=[
                        ticket_id,
                        orjson.dumps(members),
                        now,
                        now + self.settings.grace_seconds,
                        user.user_id,
                    ],
                )
            )
        finally:
            if not joined:
                await self._release_players(ticket_id, [user.user_id])
        if not joined:  # the leader cancelled, or another friend was first
            raise ApiError(409, "party_closed", "this party is no longer waiting for a friend")
        await self._hold_player(user.user_id, ticket_id)

    async def describe(self, ticket_id: str, user: Identity) -> dict[str, Any]:
        """The ticket as its members see it; 404 unknown, 403 someone else's."""
        return _view(await self.status(ticket_id, user.user_id, refresh=False), user.user_id, time.time())

    async def cancel(self, ticket_id: str, user: Identity) -> None:
        """Leave the queue (for both players of a party). Cancelling a ticket
        already closed does nothing; one a table has taken is refused."""
        ticket = (await self.status(ticket_id, user.user_id, refresh=False)).ticket
        outcome = await self._close(
            keys=[ticket_key(ticket_id), ticket.queue.key("waiting"), ticket.queue.key("alive")],
            args=[ticket_id, CANCELLED, time.time(), CLOSED_TICKET_SECONDS * 1000, "0", "cancelled"],
        )
        if outcome == "closed":
            await self._after_close(ticket_id)
        elif outcome in (FORMING, MATCHED):
            raise ApiError(409, "already_matched", "a table has been formed for this ticket")

    async def follow(self, ticket_id: str, user: Identity) -> AsyncGenerator[dict[str, Any], None]:
        """Follow a ticket for one of its members, keeping it alive while
        iterated (any transport: the WebSocket now, a gRPC stream later).

        Yields ``{"queue": {state, position, queue_length,
        estimated_wait_seconds}}`` (or ``{state, party_code}`` while a party
        waits for its friend) whenever that changes, and finally
        ``{"matched": {"table_id", "seat"}}`` or ``{"closed": {"state",
        "reason"}}``. Raises ApiError (404, 403) before the first item. Stop
        iterating when the client goes away: the heartbeat stops with it and
        the ticket is dropped ``heartbeat_seconds`` later."""
        poll = min(0.5, self.settings.heartbeat_seconds / 4)
        last: dict[str, Any] | None = None
        while True:
            if cancel_requested():  # never refresh for a client that is gone
                raise asyncio.CancelledError
            status = await self.status(ticket_id, user.user_id, refresh=True)
            ticket = status.ticket
            if ticket.state == MATCHED:
                yield {"matched": {"table_id": ticket.table_id, "seat": ticket.seats.get(user.user_id)}}
                return
            if ticket.state not in LIVE:
                yield {"closed": {"state": ticket.state, "reason": ticket.reason}}
                return
            view = _view(status, user.user_id, time.time())
            update = {k: view[k] for k in _UPDATE_FIELDS if k in view}
            if update != last:
                yield {"queue": update}
                last = update
            await asyncio.sleep(poll)

    async def status(self, ticket_id: str, user_id: str, refresh: bool) -> Status:
        if len(ticket_id) != TICKET_ID_LENGTH or any(c not in "0123456789abcdef" for c in ticket_id):
            raise ApiError(404, "ticket_not_found", f"no ticket {ticket_id!r}")
        queue_hash = ticket_id[:16]
        alive_until = time.time() + self.settings.heartbeat_seconds if refresh else ""
        reply = await self._status(
            keys=[
                ticket_key(ticket_id),
                _queue_key(queue_hash, "waiting"),
                _queue_key(queue_hash, "alive"),
                _queue_key(queue_hash, "waits"),
            ],
            args=[ticket_id, user_id, alive_until],
        )
        if not reply:
            raise ApiError(404, "ticket_not_found", f"no ticket {ticket_id!r}")
        flat, rank, length, waits = reply
        ticket = Ticket.parse(ticket_id, dict(zip(flat[::2], flat[1::2], strict=True)))
        if not ticket.has_member(user_id):
            raise ApiError(403, "not_your_ticket", "this ticket is someone else's")
        position = int(rank) + 1 if int(rank) >= 0 else None
        return Status(ticket, position, int(length), [float(w) for w in waits])

    async def _load(self, ticket_id: str) -> Ticket | None:
        fields = cast(dict[str, str], await self.redis.hgetall(ticket_key(ticket_id)))
        return Ticket.parse(ticket_id, fields) if fields else None

    async def _rating(self, queue: Queue, user_id: str) -> float:
        if not queue.ranked:
            return DEFAULT_RATING
        raw = cast(str | None, await self.redis.hget(rating_key(queue.game, queue.mode, user_id), "rating"))
        return DEFAULT_RATING if raw is None else float(raw)

    async def _claim_player(self, user_id: str, ticket_id: str) -> None:
        """Make ``ticket_id`` the player's one live ticket, or 409. The claim
        expires unless :meth:`_hold_player` confirms it once the ticket is
        live. A confirmed lock whose ticket is no longer live (its closer died
        before releasing it) is taken over; one still expiring belongs to a
        ticket being created right now, and counts as live."""
        key = player_key(user_id)
        for _ in range(3):
            if await self._swap(keys=[key], args=["", ticket_id, PLAYER_CLAIM_MS]):
                return
            current = cast(str | None, await self.redis.get(key))
            # In this order: a lock confirmed (no expiry) when the expiry is
            # read names a ticket that was live by then, so the state read
            # after it can only show that ticket closed since. Reading the
            # state first could miss a ticket created just after that read.
            expiry = await self.redis.pttl(key)
            if current is None or expiry == -2:
                continue  # released meanwhile: claim again
            state = await self.redis.hget(ticket_key(current), "state")
            if expiry > 0 or state in LIVE:
                raise ApiError(409, "already_queued", f"you already have a live ticket: {current}")
            if await self._swap(keys=[key], args=[current, ticket_id, PLAYER_CLAIM_MS]):
                return
        raise ApiError(409, "busy", "your tickets are changing; try again")

    async def _hold_player(self, user_id: str, ticket_id: str) -> None:
        """The ticket is live: its lock lasts until the ticket closes."""
        await self._swap(keys=[player_key(user_id)], args=[ticket_id, ticket_id, 0])

    async def _register_queue(self, queue: Queue, now: float) -> None:
        """Make sure matchers visit the queue (before a ticket enters it)."""
        await self._register(keys=[QUEUES_KEY, SPECS_KEY], args=[queue.hash, orjson.dumps(queue.spec()), now])

    async def _release_players(self, ticket_id: str, user_ids: Sequence[str]) -> None:
        for user_id in user_ids:
            await self._swap(keys=[player_key(user_id)], args=[ticket_id, "", 0])

    async def _after_close(self, ticket_id: str) -> None:
        """Free the players of a ticket that was cancelled or dropped."""
        ticket = await self._load(ticket_id)
        if ticket is None:
            return
        await self._release_players(ticket_id, [m["user_id"] for m in ticket.members])
        if ticket.party_code:
            await self.redis.delete(party_key(ticket.party_code))

    # -- the matcher ------------------------------------------------------------------

    async def run(self) -> None:
        """Every replica runs this: cycle over every queue until cancelled."""
        while not cancel_requested():
            try:
                await self.cycle()
            except Exception:  # a Redis or service hiccup must not stop matchmaking
                if cancel_requested():
                    break
                log.exception("matchmaking cycle failed")
            # A little jitter so replicas do not contend for leases in lockstep.
            await asyncio.sleep(self.settings.cycle_seconds * random.uniform(0.9, 1.1))

    async def cycle(self) -> int:
        """One pass over every queue; returns how many tables this replica formed."""
        specs = cast(dict[str, str], await self.redis.hgetall(SPECS_KEY))
        queues = {queue_hash: Queue.from_spec(orjson.loads(spec)) for queue_hash, spec in specs.items()}
        results = await asyncio.gather(*(self._visit(q) for q in queues.values()), return_exceptions=True)
        lengths: dict[tuple[str, str], int] = defaultdict(int)
        formed = 0
        for queue, result in zip(queues.values(), results, strict=True):
            if isinstance(result, BaseException):
                log.error("matchmaking queue %s failed", queue.spec(), exc_info=result)
                continue
            length, tables = result
            lengths[queue.game, queue.mode] += length
            formed += tables
        for labels in self._reported | set(lengths):
            metrics.MATCHMAKING_QUEUE_LENGTH.labels(*labels).set(lengths.get(labels, 0))
        self._reported |= set(lengths)
        await self._prune(keys=[QUEUES_KEY, SPECS_KEY], args=[time.time() - QUEUE_IDLE_SECONDS])
        return formed

    async def _visit(self, queue: Queue) -> tuple[int, int]:
        """Work the queue if this replica gets its lease; measure it either
        way. Returns (tickets waiting, tables formed here)."""
        formed = 0
        lease = queue.key("lease")
        if await self.redis.set(lease, self._owner, nx=True, px=self._lease_ms):
            try:
                await self._drop_dead(queue, time.time())
                formed += await self._resume(queue, time.time())
                formed += await self._form(queue, time.time())
            finally:
                await self._swap(keys=[lease], args=[self._owner, "", 0])
        pipe = self.redis.pipeline(transaction=False)
        for name in ("waiting", "alive", "forming"):
            pipe.zcard(queue.key(name))
        waiting, alive, forming = await pipe.execute()
        if alive or forming:  # still in use: keep it visited (XX: unless pruned meanwhile)
            await self.redis.zadd(QUEUES_KEY, {queue.hash: time.time()}, xx=True, gt=True)
        return int(waiting), formed

    async def _drop_dead(self, queue: Queue, now: float) -> None:
        """Drop the live tickets whose connection is gone (heartbeat run out)."""
        expired: list[str] = await self.redis.zrangebyscore(  # type: ignore[assignment]
            queue.key("alive"), "-inf", now, start=0, num=BATCH
        )
        by_ticket: dict[str, list[str]] = defaultdict(list)
        for entry in expired:
            by_ticket[entry.split("|", 1)[0]].append(entry)
        for ticket_id, entries in by_ticket.items():
            outcome = await self._close(
                keys=[ticket_key(ticket_id), queue.key("waiting"), queue.key("alive")],
                args=[ticket_id, DROPPED, now, CLOSED_TICKET_SECONDS * 1000, "1", "connection_lost"],
            )
            if outcome == "closed":
                await self._after_close(ticket_id)
            elif outcome != "alive":  # the ticket is gone or closed: its entries are litter
                await self.redis.zrem(queue.key("alive"), *entries)

    async def _resume(self, queue: Queue, now: float) -> int:
        """Finish formations whose owner's claim ran out (it died or failed)."""
        stale: list[str] = await self.redis.zrangebyscore(  # type: ignore[assignment]
            queue.key("forming"), "-inf", now, start=0, num=BATCH
        )
        formed = 0
        for table_id in stale:
            plan = await self._claim(
                keys=[queue.key("forming"), queue.key("plans")],
                args=[table_id, now, now + FORMING_CLAIM_SECONDS],
            )
            if plan:
                formed += await self._complete(queue, orjson.loads(plan))
        return formed

    async def _form(self, queue: Queue, now: float) -> int:
        entries: list[tuple[str, float]] = await self.redis.zrange(  # type: ignore[assignment]
            queue.key("waiting"), 0, MAX_TICKETS_PER_CYCLE - 1, withscores=True
        )
        if not entries:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        for ticket_id, _ in entries:
            pipe.hget(ticket_key(ticket_id), "members")
        members_of: dict[str, list[dict[str, Any]]] = {}
        enqueued = dict(entries)
        waiting = []
        for (ticket_id, enqueued_at), raw in zip(entries, await pipe.execute(), strict=True):
            if raw is None:
                continue
            members_of[ticket_id] = orjson.loads(raw)
            members = members_of[ticket_id]
            rating = statistics.fmean(float(m["rating"]) for m in members)
            waiting.append(Waiting(ticket_id, tuple(m["user_id"] for m in members), rating, enqueued_at))
        fmt = queue_format(queue.game, queue.mode)
        taken = []
        for formation in form_tables(waiting, fmt, self.settings, now, queue.ranked):
            plan = _plan(queue, formation, members_of, enqueued, now)
            ticket_ids = list(plan["tickets"])
            pairs = [x for t in ticket_ids for x in (t, orjson.dumps(plan["tickets"][t]["seats"]))]
            if await self._take(
                keys=[
                    queue.key("waiting"),
                    queue.key("alive"),
                    queue.key("forming"),
                    queue.key("plans"),
                    *map(ticket_key, ticket_ids),
                ],
                args=[plan["table_id"], orjson.dumps(plan), now, now + FORMING_CLAIM_SECONDS, *pairs],
            ):
                taken.append(plan)
        # The tickets are ours now; start the tables side by side.
        return sum(await asyncio.gather(*(self._complete(queue, plan) for plan in taken)))

    async def _complete(self, queue: Queue, plan: dict[str, Any]) -> int:
        """Create and start a taken table, then close its formation. Returns 1
        if this call closed it as matched."""
        table_id = plan["table_id"]
        try:
            await self._create_and_start(queue, plan)
        except (ApiError, TableError) as error:
            # The game refusing the table (e.g. options its engine rejects) is
            # final; an unavailable game or a busy table record is not.
            code, retry = error.code, error.status >= 500 or error.code == "busy"
        except Exception:
            log.exception("starting table %s failed", table_id)
            code, retry = "internal", True
        else:
            return int(await self._finish_plan(queue, plan, MATCHED, ""))
        if retry and time.time() - plan["formed_at"] < FORMING_GIVE_UP_SECONDS:
            log.warning("table %s not started yet (%s); a matcher will retry", table_id, code)
            return 0
        log.error("table %s could not be started (%s); its tickets fail", table_id, code)
        await self._finish_plan(queue, plan, FAILED, code)
        return 0

    async def _create_and_start(self, queue: Queue, plan: dict[str, Any]) -> None:
        """Platform.start's steps, ordered so any replica can repeat them after
        a failure at any point: the table (SET NX), the match (``match_exists``
        is success), then the table marked started. Nobody can sit at or start
        a matchmade table, so the match may exist a moment before it is marked."""
        table_id, players = plan["table_id"], plan["players"]
        game = self.platform.game(queue.game)
        teams = POLICIES[queue.game].teams.get(len(players), ())
        extra = {"ranked": plan["ranked"], "mode": queue.mode, "matchmaking": True}
        table = await self.platform.tables.create_seated(
            table_id, queue.game, queue.options, players, teams, extra
        )
        request = match_pb2.CreateMatchRequest(
            match_id=table_id,
            seats=[
                match_pb2.Seat(user_id=p.get("user_id", ""), display_name=p["name"], cpu=p.get("cpu", False))
                for p in players
            ],
            options=game.pack("Options", queue.options),
        )
        try:
            await rpc(
                game.stub.CreateMatch(
                    request, metadata=self.platform.platform_metadata(), timeout=RPC_TIMEOUT_SECONDS
                )
            )
        except ApiError as error:
            if error.code != "match_exists":
                raise
        if table["status"] == OPEN:
            try:
                table = await self.platform.tables.mark_started(None, table_id)
            except TableError as error:
                if error.code != "table_started":
                    raise
            await self.platform.tables.close(table)

    async def _finish_plan(self, queue: Queue, plan: dict[str, Any], state: str, reason: str) -> bool:
        tickets: dict[str, dict[str, Any]] = plan["tickets"]
        now = time.time()
        waits = [now - t["enqueued_at"] for t in tickets.values()] if state == MATCHED else []
        finished = await self._finish(
            keys=[queue.key("forming"), queue.key("plans"), queue.key("waits"), *map(ticket_key, tickets)],
            args=[plan["table_id"], state, now, CLOSED_TICKET_SECONDS * 1000, reason, RECENT_WAITS, *waits],
        )
        if not finished:
            return False  # another replica closed it
        for ticket_id, ticket in tickets.items():
            await self._release_players(ticket_id, list(ticket["seats"]))
        if state == MATCHED:
            metrics.MATCHMAKING_MATCHES.labels(queue.game, queue.mode).inc()
            for wait in waits:
                metrics.MATCHMAKING_WAIT_SECONDS.labels(queue.game, queue.mode).observe(wait)
        return True


_UPDATE_FIELDS = ("state", "position", "queue_length", "estimated_wait_seconds", "party_code")


def _require_account(user: Identity, queue: Queue) -> None:
    # A rating needs a lasting identity: guests play casual.
    if queue.ranked and user.role != "user":
        raise ApiError(403, "account_required", "ranked queues are for registered accounts")


def _plan(
    queue: Queue,
    formation: Formation,
    members_of: Mapping[str, list[dict[str, Any]]],
    enqueued: Mapping[str, float],
    now: float,
) -> dict[str, Any]:
    """Everything needed to start a formed table, for whichever replica does."""
    names = {m["user_id"]: m["name"] for members in members_of.values() for m in members}
    players: list[dict[str, Any]] = []
    tickets: dict[str, dict[str, Any]] = {}
    for seat, who in enumerate(formation.seats):
        if who is None:
            players.append({"cpu": True, "name": f"CPU {seat}"})
            continue
        ticket_id, user_id = who
        players.append({"user_id": user_id, "name": names[user_id]})
        ticket = tickets.setdefault(ticket_id, {"enqueued_at": enqueued[ticket_id], "seats": {}})
        ticket["seats"][user_id] = seat
    return {
        "table_id": secrets.token_hex(8),
        "ranked": queue.ranked and not formation.cpu_seats,
        "formed_at": now,
        "players": players,
        "tickets": tickets,
    }


def _view(status: Status, viewer: str, now: float) -> dict[str, Any]:
    ticket = status.ticket
    view: dict[str, Any] = {
        "id": ticket.id,
        "game": ticket.queue.game,
        "mode": ticket.queue.mode,
        "ranked": ticket.queue.ranked,
        "options": ticket.queue.options,
        "state": ticket.state,
        "party": ticket.party,
        "members": [{"user_id": m["user_id"], "name": m["name"]} for m in ticket.members],
        "created_at": ticket.created_at,
        "enqueued_at": ticket.enqueued_at,
    }
    if ticket.state == PARTY_OPEN and viewer == ticket.leader:
        view["party_code"] = ticket.party_code
    if ticket.state == WAITING and ticket.enqueued_at is not None:
        waited = max(0.0, now - ticket.enqueued_at)
        view["position"] = status.position
        view["queue_length"] = status.queue_length
        view["waited_seconds"] = round(waited, 1)
        view["estimated_wait_seconds"] = estimate_wait(status.recent_waits, waited)
    if ticket.table_id:
        view["table_id"] = ticket.table_id
        view["seat"] = ticket.seats.get(viewer)
    if ticket.closed_at is not None:
        view["closed_at"] = ticket.closed_at
    if ticket.reason:
        view["reason"] = ticket.reason
    return view
