"""Matchmaking's queues: tickets that a matcher on every gateway replica turns
into started tables, each exactly once.

A queue is one game, mode, set of table options (canonical proto JSON, so two
spellings of the same options are one queue) and casual or ranked. A ticket
holds one player, or two friends queued as a party (team games only: they sit
as partners). Which tables to form is ``rules.py`` (pure); the scripts that
change a queue are ``scripts.py``; this module is the Redis side
(:class:`Matchmaking`). Keys (``<q>`` = a queue's 16-hex
hash; every key of one queue carries the ``{mm:<q>}`` hash tag, so each
script below touches a single Redis Cluster slot):

- ``{mm:<q>}:t:<ticket>`` hash: ``doc`` (JSON: queue, leader, party, created),
  ``members`` (JSON: user id, name, role, rating each), ``state`` (party_open,
  waiting, forming, matched, cancelled, dropped, failed), ``enqueued_at``,
  ``party_code``, ``table``, ``seats`` and ``cpu_seats`` (bot fill) once
  taken, ``reason``,
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
work. Correctness rests on the *take*: one Lua script that, for each planned
table of a batch, checks every chosen ticket is still waiting and every
member's heartbeat is alive, and only then removes them all from the queue
and marks them forming with the table id — all or nothing per table. A ticket leaves ``waiting``
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

**Telling the players.** Whoever closes a ticket publishes a notice that
wakes its followers on every replica (``notices.py``). A ticket taken while
its follower was gone — between connections, or whose socket dropped after
the take — stays taken: the record keeps its table and seat, which the
player reads with ``GET`` of the ticket or by following it again (a
follower of a closed ticket gets the final update at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import random
import secrets
import statistics
import time
from collections import defaultdict
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import grpc
import orjson

from gateway import metrics
from gateway.accounts import ROLES
from gateway.games import GameClient, Games, spelling_key
from gateway.matchmaking.notices import TicketNotices, matched_notice
from gateway.matchmaking.rules import (
    Format,
    Formation,
    Waiting,
    estimate_wait,
    form_tables,
    queue_format,
    queue_mode,
)
from gateway.matchmaking.scripts import (
    CLAIM,
    CLOSE,
    CREATE,
    FINISH,
    JOIN,
    PRUNE,
    REGISTER,
    STATUS,
    SWAP,
    TAKE,
)
from gateway.ratings import DEFAULT_RATING
from gateway.settings import MatchmakingSettings
from gateway.tables import Tables
from services.core import keys
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied
from services.core.pipelining import CoalescedScript
from services.core.store import RedisClient
from services.core.tasks import cancel_requested
from services.core.tokens import Identity

log = logging.getLogger("rodada.gateway.matchmaking")

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
# The oldest this many per queue and visit: a burst of thousands is formed in
# one visit, and a visit that formed tables is followed by another at once.
MAX_TICKETS_PER_CYCLE = 10_000
BATCH = 500
TAKE_BATCH = 100  # tables per take script: one round trip, a short Redis pause
STARTING_AT_ONCE = 64  # tables a replica creates and starts side by side
# A queue this replica registered this recently is not registered again for
# each ticket (a burst's round trip saved): registration keeps it visited for
# QUEUE_IDLE_SECONDS, far longer; short, so that a Redis that lost its data
# learns the queue again within seconds.
REGISTERED_SECONDS = 10.0
MIN_VISIT_GAP_SECONDS = 0.05  # between visits brought forward by tickets queued here
RECENT_WAITS = 50
QUEUES_REMEMBERED = 256  # spellings of queue options remembered (Matchmaking.queue)
TICKET_ID_LENGTH = 32
# A player's lock expires this long after it is claimed unless the ticket it
# names goes live: a replica dying in between never blocks the player.
PLAYER_CLAIM_MS = 30_000


@dataclass(frozen=True)
class Queue:
    game: str
    mode: str
    ranked: bool
    options_json: str  # canonical: proto JSON, keys sorted

    @property
    def options(self) -> dict[str, Any]:
        return cast(dict[str, Any], orjson.loads(self.options_json))

    @functools.cached_property
    def hash(self) -> str:  # every key of the queue names it: hashed once
        kind = "ranked" if self.ranked else "casual"
        name = f"{self.game}:{self.mode}:{kind}:{self.options_json}"
        return hashlib.sha256(name.encode()).hexdigest()[:16]

    def key(self, name: str) -> str:
        return keys.mm_queue(self.hash, name)

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
    members: list[dict[str, Any]]  # user_id, name, role, rating
    state: str
    enqueued_at: float | None
    party_code: str | None
    table_id: str | None
    seats: dict[str, int]
    cpu_seats: list[int]  # the table's seats the computer plays (bot fill)
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
            cpu_seats=orjson.loads(fields["cpu_seats"]) if "cpu_seats" in fields else [],
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

    def __init__(
        self, redis: RedisClient, games: Games, tables: Tables, settings: MatchmakingSettings
    ) -> None:
        self.redis = redis
        self.games = games
        self.tables = tables
        self.settings = settings
        self._owner = secrets.token_hex(8)  # this replica, as a lease holder
        # The lease outlives a normal cycle's work; if a holder dies the
        # queue waits this long, and correctness never depends on it.
        self._lease_ms = int(max(2.0, 5 * settings.cycle_seconds) * 1000)
        self._reported: set[tuple[str, str]] = set()
        script = self.redis.register_script
        # A ticket's own scripts (its player's lock, the ticket, its status)
        # run once or more per ticket, and a burst makes thousands at once:
        # those made in one turn of the event loop share a round trip
        # (services/core/pipelining.py), as the game services' commits do;
        # so do the finishes of the tables a burst starts side by side (their
        # matches' replies come in together). All of them in the client's
        # one batch: a turn of a burst runs some of each, in one pipeline.
        self._create, self._status = CoalescedScript(redis, CREATE), CoalescedScript(redis, STATUS)
        self._swap, self._finish = CoalescedScript(redis, SWAP), CoalescedScript(redis, FINISH)
        self._join, self._close, self._take = script(JOIN), script(CLOSE), script(TAKE)
        self._claim = script(CLAIM)
        self._register, self._prune = script(REGISTER), script(PRUNE)
        self.notices = TicketNotices(redis)
        # Set when a ticket enters a queue here: the matcher looks at once.
        self._enqueued = asyncio.Event()
        self._starting = asyncio.Semaphore(STARTING_AT_ONCE)
        self._registered: dict[str, float] = {}  # queue hash → when this replica registered it
        self._queues: dict[tuple[str, bool, bytes | None], tuple[Any, Queue]] = {}  # see queue()

    # -- tickets ------------------------------------------------------------------

    def queue(self, game_name: str, options: Any, ranked: bool) -> Queue:
        """The queue for a request; 404 unknown game, 422 options that do not
        parse or a mode that is not queued. Remembered per spelling of the
        options (a burst queues the same few thousands of times, and making
        them canonical is three proto round trips), for as long as the game's
        facts are the same object; refusals are not remembered."""
        game = self.games.get(game_name)
        spelling = spelling_key(options)
        key = (game_name, ranked, spelling)
        known = self._queues.get(key) if spelling is not None else None
        if known is not None and known[0] is game.info:
            return known[1]
        queue = self._canonical_queue(game, options, ranked)
        if spelling is not None:
            if len(self._queues) >= QUEUES_REMEMBERED:
                self._queues.clear()
            self._queues[key] = (game.info, queue)
        return queue

    def _canonical_queue(self, game: GameClient, options: Any, ranked: bool) -> Queue:
        canonical = game.options(game.pack("Options", options, "invalid_options"))
        try:
            mode = queue_mode(game.info, canonical)
        except ValueError as exc:
            raise invalid("invalid_mode", str(exc)) from None
        if ranked and not mode.rated:
            raise invalid("not_rated", f"{game.name} {mode.name} has no ranked play")
        if ranked:
            game.check_ranked(canonical)
        return Queue(
            game.name, mode.name, ranked, orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS).decode()
        )

    def format(self, queue: Queue) -> Format:
        info = self.games.get(queue.game).info
        return queue_format(info, self.games.get(queue.game).mode(queue.mode))

    async def create(
        self, user: Identity, game: str, options: Any, ranked: bool, party: bool
    ) -> dict[str, Any]:
        """Queue ``user``; with ``party`` the ticket waits (``party_open``)
        for a friend to join with its ``party_code`` before it enters the
        queue. Every refusal happens before anything is written."""
        queue = self.queue(game, options, ranked)
        if party and not self.format(queue).parties:
            raise invalid("party_not_allowed", "parties sit as partners: only team games take them")
        _require_account(user, queue)
        rating = await self._rating(queue, user.user_id)
        ticket_id = queue.hash + secrets.token_hex(8)
        # Shielded: a request abandoned midway must not leave a live ticket
        # whose player lock was never confirmed (and so would expire).
        status = await asyncio.shield(self._enqueue(user, queue, ticket_id, rating, party))
        return _view(status, user.user_id, time.time())

    async def _enqueue(
        self, user: Identity, queue: Queue, ticket_id: str, rating: float, party: bool
    ) -> Status:
        """Claim the player, then write the ticket, then confirm the claim;
        the ticket as written (the script answers as :meth:`status` would:
        the reply reads nothing more)."""
        code = secrets.token_urlsafe(9) if party else ""
        await self._claim_player(user.user_id, ticket_id)
        created = False
        try:
            now = time.time()
            await self._register_queue(queue, now)
            if code:  # first, so that no party ticket exists without its code
                await self.redis.set(keys.mm_party(code), ticket_id, ex=PARTY_CODE_SECONDS)
            doc = {"queue": queue.spec(), "leader": user.user_id, "party": party, "created_at": now}
            member = {"user_id": user.user_id, "name": user.name, "role": user.role, "rating": rating}
            reply = await self._create(
                keys=[
                    keys.mm_ticket(ticket_id),
                    queue.key("waiting"),
                    queue.key("alive"),
                    queue.key("waits"),
                ],
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
            if not party:
                self._enqueued.set()
        finally:
            if not created:
                await self._release_players(ticket_id, [user.user_id])
        await self._hold_player(user.user_id, ticket_id)
        return _status(ticket_id, reply)

    async def join_party(self, user: Identity, code: str) -> dict[str, Any]:
        """The friend joins the party ``code`` names: the ticket enters its
        queue with both players."""
        ticket_id = cast(str | None, await self.redis.get(keys.mm_party(code))) if code else None
        if ticket_id is None:
            raise not_found("party_not_found", "no such party code, or it has expired")
        ticket = await self._load(ticket_id)
        if ticket is not None and ticket.has_member(user.user_id):
            raise conflict("own_party", "you are already in this party")
        if ticket is None or ticket.state != PARTY_OPEN:
            raise conflict("party_closed", "this party is no longer waiting for a friend")
        _require_account(user, ticket.queue)
        rating = await self._rating(ticket.queue, user.user_id)
        await asyncio.shield(self._add_friend(user, ticket, rating))  # as in create()
        await self.redis.delete(keys.mm_party(code))
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
            members = [
                *ticket.members,
                {"user_id": user.user_id, "name": user.name, "role": user.role, "rating": rating},
            ]
            joined = bool(
                await self._join(
                    keys=[keys.mm_ticket(ticket_id), queue.key("waiting"), queue.key("alive")],
                    args=[
                        ticket_id,
                        orjson.dumps(members),
                        now,
                        now + self.settings.grace_seconds,
                        user.user_id,
                    ],
                )
            )
            self._enqueued.set()
        finally:
            if not joined:
                await self._release_players(ticket_id, [user.user_id])
        if not joined:  # the leader cancelled, or another friend was first
            raise conflict("party_closed", "this party is no longer waiting for a friend")
        await self._hold_player(user.user_id, ticket_id)

    async def describe(self, ticket_id: str, user: Identity) -> dict[str, Any]:
        """The ticket as its members see it; 404 unknown, 403 someone else's."""
        return _view(await self.status(ticket_id, user.user_id, refresh=False), user.user_id, time.time())

    async def cancel(self, ticket_id: str, user: Identity) -> None:
        """Leave the queue (for both players of a party). Cancelling a ticket
        already closed does nothing; one a table has taken is refused."""
        ticket = (await self.status(ticket_id, user.user_id, refresh=False)).ticket
        outcome = await self._close(
            keys=[keys.mm_ticket(ticket_id), ticket.queue.key("waiting"), ticket.queue.key("alive")],
            args=[ticket_id, CANCELLED, time.time(), CLOSED_TICKET_SECONDS * 1000, "0", "cancelled"],
        )
        if outcome == "closed":
            await self._after_close(ticket_id)
            await self.notices.publish([ticket_id])
        elif outcome in (FORMING, MATCHED):
            raise conflict("already_matched", "a table has been formed for this ticket")

    async def follow(self, ticket_id: str, user: Identity) -> AsyncGenerator[dict[str, Any], None]:
        """Follow a ticket for one of its members, keeping it alive while
        iterated (any transport: the WebSocket now, a gRPC stream later).

        Yields ``{"queue": {state, position, queue_length,
        estimated_wait_seconds}}`` (or ``{state, party_code}`` while a party
        waits for its friend) whenever that changes, and finally
        ``{"matched": {"table_id", "seat", "cpu_seats"}}`` (``cpu_seats``
        not empty when the table was filled with CPUs) or ``{"closed":
        {"state", "reason"}}``. Raises Refused (404, 403) before the first item. Stop
        iterating when the client goes away: the ticket is then dropped at
        once (a waiting ticket nobody follows must not be seated).

        Pushed, not polled: a notice (``notices.py``) wakes the follower
        when its ticket closes; otherwise it reads the ticket (refreshing
        its heartbeat, and for the queue position) every quarter heartbeat.
        A follower that comes after the match reads it from the record."""
        every = self.settings.heartbeat_seconds / 4
        last: dict[str, Any] | None = None
        settled = False
        wake = self.notices.watch(ticket_id)
        try:
            await self.notices.ready()
            while True:
                if cancel_requested():  # never refresh for a client that is gone
                    raise asyncio.CancelledError
                # The matched notice says all a member needs (the finish
                # script published it with the ticket's closing): no read.
                # Only once a read has shown the caller is a member.
                seated = self.notices.matched(ticket_id) if last is not None else None
                if seated is not None and user.user_id in seated["seats"]:
                    settled = True
                    yield {
                        "matched": {
                            "table_id": seated["table_id"],
                            "seat": seated["seats"][user.user_id],
                            "cpu_seats": seated["cpu_seats"],
                        }
                    }
                    return
                wake.clear()  # before the read: a notice after it wakes the wait below
                status = await self.status(ticket_id, user.user_id, refresh=True)
                ticket = status.ticket
                if ticket.state == MATCHED:
                    settled = True
                    seat = ticket.seats.get(user.user_id)
                    yield {
                        "matched": {"table_id": ticket.table_id, "seat": seat, "cpu_seats": ticket.cpu_seats}
                    }
                    return
                if ticket.state not in LIVE:
                    settled = True
                    yield {"closed": {"state": ticket.state, "reason": ticket.reason}}
                    return
                view = _view(status, user.user_id, time.time())
                update = {k: view[k] for k in _UPDATE_FIELDS if k in view}
                if update != last:
                    yield {"queue": update}
                    last = update
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), every * random.uniform(0.9, 1.0))
        finally:
            self.notices.unwatch(ticket_id, wake)
            if not settled:
                await asyncio.shield(self._abandon(ticket_id, user.user_id))

    async def _abandon(self, ticket_id: str, user_id: str) -> None:
        """The follower left: its heartbeat ends now, and the ticket is
        dropped unless another follower of that member refreshes first. A
        table already forming keeps it (the take checked the heartbeats)."""
        with contextlib.suppress(Exception):  # else the heartbeat runs out by itself
            queue_hash = ticket_id[:16]
            now = time.time()
            await self.redis.zadd(
                keys.mm_queue(queue_hash, "alive"), {f"{ticket_id}|{user_id}": now - 1}, xx=True
            )
            outcome = await self._close(
                keys=[
                    keys.mm_ticket(ticket_id),
                    keys.mm_queue(queue_hash, "waiting"),
                    keys.mm_queue(queue_hash, "alive"),
                ],
                args=[ticket_id, DROPPED, now, CLOSED_TICKET_SECONDS * 1000, "1", "connection_lost"],
            )
            if outcome == "closed":
                await self._after_close(ticket_id)
                await self.notices.publish([ticket_id])  # the member's other followers

    async def status(self, ticket_id: str, user_id: str, refresh: bool) -> Status:
        if len(ticket_id) != TICKET_ID_LENGTH or any(c not in "0123456789abcdef" for c in ticket_id):
            raise not_found("ticket_not_found", f"no ticket {ticket_id!r}")
        queue_hash = ticket_id[:16]
        alive_until = time.time() + self.settings.heartbeat_seconds if refresh else ""
        reply = await self._status(
            keys=[
                keys.mm_ticket(ticket_id),
                keys.mm_queue(queue_hash, "waiting"),
                keys.mm_queue(queue_hash, "alive"),
                keys.mm_queue(queue_hash, "waits"),
            ],
            args=[ticket_id, user_id, alive_until],
        )
        if not reply:
            raise not_found("ticket_not_found", f"no ticket {ticket_id!r}")
        status = _status(ticket_id, reply)
        if not status.ticket.has_member(user_id):
            raise permission_denied("not_your_ticket", "this ticket is someone else's")
        return status

    async def _load(self, ticket_id: str) -> Ticket | None:
        fields = cast(dict[str, str], await self.redis.hgetall(keys.mm_ticket(ticket_id)))
        return Ticket.parse(ticket_id, fields) if fields else None

    async def _rating(self, queue: Queue, user_id: str) -> float:
        if not queue.ranked:
            return DEFAULT_RATING
        raw = cast(str | None, await self.redis.hget(keys.rating(queue.game, queue.mode, user_id), "rating"))
        return DEFAULT_RATING if raw is None else float(raw)

    async def _claim_player(self, user_id: str, ticket_id: str) -> None:
        """Make ``ticket_id`` the player's one live ticket, or 409. The claim
        expires unless :meth:`_hold_player` confirms it once the ticket is
        live. A confirmed lock whose ticket is no longer live (its closer died
        before releasing it) is taken over; one still expiring belongs to a
        ticket being created right now, and counts as live."""
        key = keys.mm_player(user_id)
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
            state = await self.redis.hget(keys.mm_ticket(current), "state")
            if expiry > 0 or state in LIVE:
                raise conflict("already_queued", f"you already have a live ticket: {current}")
            if await self._swap(keys=[key], args=[current, ticket_id, PLAYER_CLAIM_MS]):
                return
        raise Refused(grpc.StatusCode.ABORTED, "busy", "your tickets are changing; try again")

    async def _hold_player(self, user_id: str, ticket_id: str) -> None:
        """The ticket is live: its lock lasts until the ticket closes."""
        await self._swap(keys=[keys.mm_player(user_id)], args=[ticket_id, ticket_id, 0])

    async def _register_queue(self, queue: Queue, now: float) -> None:
        """Make sure matchers visit the queue (before a ticket enters it)."""
        if now - self._registered.get(queue.hash, -REGISTERED_SECONDS) < REGISTERED_SECONDS:
            return
        await self._register(
            keys=[keys.MM_QUEUES, keys.MM_SPECS], args=[queue.hash, orjson.dumps(queue.spec()), now]
        )
        if len(self._registered) >= 1000:  # many option sets: forget the stale ones
            self._registered = {q: t for q, t in self._registered.items() if now - t < REGISTERED_SECONDS}
        self._registered[queue.hash] = now

    async def _release_players(self, ticket_id: str, user_ids: Sequence[str]) -> None:
        # At once: each lock is its own compare-and-delete, and together they
        # share a round trip.
        await asyncio.gather(
            *(self._swap(keys=[keys.mm_player(user_id)], args=[ticket_id, "", 0]) for user_id in user_ids)
        )

    async def _after_close(self, ticket_id: str) -> None:
        """Free the players of a ticket that was cancelled or dropped."""
        ticket = await self._load(ticket_id)
        if ticket is None:
            return
        await self._release_players(ticket_id, [m["user_id"] for m in ticket.members])
        if ticket.party_code:
            await self.redis.delete(keys.mm_party(ticket.party_code))

    # -- the matcher ------------------------------------------------------------------

    async def run(self) -> None:
        """Every replica runs this: cycle over every queue until cancelled.
        A cycle that formed tables is followed by another at once (a burst
        is worked as fast as tables start); otherwise the next comes after
        ``cycle_seconds``, or sooner when a ticket enters a queue here."""
        loop = asyncio.get_running_loop()
        try:
            while not cancel_requested():
                formed = 0
                started = loop.time()
                self._enqueued.clear()
                try:
                    formed = await self.cycle()
                except Exception:  # a Redis or service hiccup must not stop matchmaking
                    if cancel_requested():
                        break
                    log.exception("matchmaking cycle failed")
                if formed:
                    await asyncio.sleep(0)
                    continue
                # A little jitter so replicas do not contend for leases in lockstep.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._enqueued.wait(), self.settings.cycle_seconds * random.uniform(0.9, 1.1)
                    )
                    # Woken by a ticket: a visit of every queue per ticket queued is
                    # too many in a stream of them; the ones queued meanwhile wait here.
                    await asyncio.sleep(max(0.0, started + MIN_VISIT_GAP_SECONDS - loop.time()))
        finally:
            await self.notices.close()

    async def cycle(self) -> int:
        """One pass over every queue; returns how many tables this replica formed."""
        specs = cast(dict[str, str], await self.redis.hgetall(keys.MM_SPECS))
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
        await self._prune(keys=[keys.MM_QUEUES, keys.MM_SPECS], args=[time.time() - QUEUE_IDLE_SECONDS])
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
            await self.redis.zadd(keys.MM_QUEUES, {queue.hash: time.time()}, xx=True, gt=True)
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
                keys=[keys.mm_ticket(ticket_id), queue.key("waiting"), queue.key("alive")],
                args=[ticket_id, DROPPED, now, CLOSED_TICKET_SECONDS * 1000, "1", "connection_lost"],
            )
            if outcome == "closed":
                await self._after_close(ticket_id)
                await self.notices.publish([ticket_id])
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
            pipe.hget(keys.mm_ticket(ticket_id), "members")
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
        names = {m["user_id"]: m["name"] for members in members_of.values() for m in members}
        plans = [
            _plan(queue, formation, names, enqueued, now)
            for formation in form_tables(waiting, self.format(queue), self.settings, now, queue.ranked)
        ]
        # Taken a batch at a time; each batch's tables start while the next is taken.
        starting: list[asyncio.Task[int]] = []
        try:
            for first in range(0, len(plans), TAKE_BATCH):
                batch = plans[first : first + TAKE_BATCH]
                for plan, taken in zip(batch, await self._take_batch(queue, batch, now), strict=True):
                    if taken:
                        starting.append(asyncio.create_task(self._start_bounded(queue, plan)))
        finally:
            # Even if a later take failed: the tables taken are started (or
            # left for a matcher to resume once their claim runs out).
            outcomes = await asyncio.gather(*starting, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                log.error("starting a taken table failed; a matcher will resume it", exc_info=outcome)
        return sum(outcome for outcome in outcomes if isinstance(outcome, int))

    async def _take_batch(self, queue: Queue, plans: list[dict[str, Any]], now: float) -> list[bool]:
        """The take script over ``plans``: which tables it took."""
        ticket_keys: list[str] = []
        args: list[Any] = [now, now + FORMING_CLAIM_SECONDS]
        for plan in plans:
            tickets: dict[str, dict[str, Any]] = plan["tickets"]
            cpu_seats = [seat for seat, player in enumerate(plan["players"]) if player.get("cpu")]
            args += [plan["table_id"], orjson.dumps(plan), orjson.dumps(cpu_seats), len(tickets)]
            for ticket_id, ticket in tickets.items():
                ticket_keys.append(keys.mm_ticket(ticket_id))
                args += [4 + len(ticket_keys), ticket_id, orjson.dumps(ticket["seats"])]
        queue_keys = [queue.key(name) for name in ("waiting", "alive", "forming", "plans")]
        taken = await self._take(keys=[*queue_keys, *ticket_keys], args=args)
        return [bool(t) for t in taken]

    async def _start_bounded(self, queue: Queue, plan: dict[str, Any]) -> int:
        async with self._starting:
            return await self._complete(queue, plan)

    async def _complete(self, queue: Queue, plan: dict[str, Any]) -> int:
        """Create and start a taken table, then close its formation. Returns 1
        if this call closed it as matched."""
        table_id = plan["table_id"]
        try:
            await self._create_and_start(queue, plan)
        except Refused as error:
            # The game refusing the table (e.g. options its engine rejects) is
            # final; an unavailable game or a busy table record is not.
            code, retry = error.reason, error.http_status >= 500 or error.reason == "busy"
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
        """The formed table and its match, by steps any replica can repeat
        after a failure at any point (Tables.start_formed is idempotent).
        Nobody can sit at or start a matchmade table."""
        game = self.games.get(queue.game)
        await self.tables.start_formed(plan["table_id"], game, queue.options, plan["players"], plan["ranked"])

    async def _finish_plan(self, queue: Queue, plan: dict[str, Any], state: str, reason: str) -> bool:
        tickets: dict[str, dict[str, Any]] = plan["tickets"]
        now = time.time()
        waits = [now - t["enqueued_at"] for t in tickets.values()] if state == MATCHED else []
        finished = await self._finish(
            keys=[
                queue.key("forming"),
                queue.key("plans"),
                queue.key("waits"),
                *map(keys.mm_ticket, tickets),
            ],
            args=[
                plan["table_id"],
                state,
                now,
                CLOSED_TICKET_SECONDS * 1000,
                reason,
                RECENT_WAITS,
                keys.MM_NOTICES,
                notice(plan) if state == MATCHED else " ".join(tickets),
                *waits,
            ],
        )
        if not finished:
            return False  # another replica closed it
        await asyncio.gather(*(self._release_players(t, list(tickets[t]["seats"])) for t in tickets))
        if state == MATCHED:
            metrics.MATCHMAKING_MATCHES.labels(queue.game, queue.mode).inc()
            if any(player.get("cpu") for player in plan["players"]):
                metrics.MATCHMAKING_CPU_TABLES.labels(queue.game, queue.mode).inc()
            for wait in waits:
                metrics.MATCHMAKING_WAIT_SECONDS.labels(queue.game, queue.mode).observe(wait)
        return True


_UPDATE_FIELDS = ("state", "position", "queue_length", "estimated_wait_seconds", "party_code")


def _require_account(user: Identity, queue: Queue) -> None:
    # A rating needs a lasting identity: guests play casual.
    if queue.ranked and user.role not in ROLES:
        raise permission_denied("account_required", "ranked queues are for registered accounts")


def _plan(
    queue: Queue,
    formation: Formation,
    names: Mapping[str, str],
    enqueued: Mapping[str, float],
    now: float,
) -> dict[str, Any]:
    """Everything needed to start a formed table, for whichever replica does
    (``names``: user id → name, of every waiting member)."""
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


def notice(plan: dict[str, Any]) -> str:
    """The notice of a formation closed as matched: its tickets, each with
    the table, its members' seats and the CPU seats, as the take recorded
    them from this plan."""
    cpu_seats = [seat for seat, player in enumerate(plan["players"]) if player.get("cpu")]
    return matched_notice(
        {
            ticket_id: {"table_id": plan["table_id"], "seats": ticket["seats"], "cpu_seats": cpu_seats}
            for ticket_id, ticket in plan["tickets"].items()
        }
    )


def _status(ticket_id: str, reply: list[Any]) -> Status:
    """The STATUS (or CREATE) script's answer: the ticket's fields, its rank
    in the waiting set (-1: not waiting), the set's size, the recent waits."""
    flat, rank, length, waits = reply
    ticket = Ticket.parse(ticket_id, dict(zip(flat[::2], flat[1::2], strict=True)))
    position = int(rank) + 1 if int(rank) >= 0 else None
    return Status(ticket, position, int(length), [float(w) for w in waits])


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
        "members": [{"user_id": m["user_id"], "name": m["name"], "role": m["role"]} for m in ticket.members],
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
        view["cpu_seats"] = ticket.cpu_seats
    if ticket.closed_at is not None:
        view["closed_at"] = ticket.closed_at
    if ticket.reason:
        view["reason"] = ticket.reason
    return view
