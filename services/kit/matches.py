"""The one MatchService, for every game: it loads a match, runs the game's
rules through the kit's play (``game.py``), commits the new record with its
events in one atomic write, and answers with the caller's view. Everything
game-specific comes from the game's :class:`~services.kit.game.Game`."""

from __future__ import annotations

import asyncio
import copy
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import orjson
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.core import feeds, logs, metrics, strict
from services.core.errors import Refused, invalid, not_found, permission_denied, stale
from services.core.guard import CALLER, caller
from services.core.limits import Limit, RateLimited, RateLimiter
from services.core.store import RecordStore, StoredMatch, Track, VersionConflict
from services.kit import legal, play
from services.kit.engine import Context, Event, InvalidAction, Outcome, RulesError
from services.kit.game import Game, to_json
from services.kit.play import Happening, Notice, Table
from services.kit.rng import MatchRng, cpu_seed, new_seed, seed_digest

_MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_LEAVE_ATTEMPTS = 8
RNG_ALGORITHM = "hmac-sha256-ctr"
SPECTATOR = -1
# Matches this replica wrote last, kept with their record (about 2 KB each):
# the next move on one of them needs no read first (the commit's version and
# token check says whether the kept record is still the stored one).
_KEPT_MATCHES = 20_000


@dataclass(slots=True)
class _Kept:
    version: int
    token: str
    last_event_id: int
    record: bytes
    watched: bool  # the write had listeners: the next one builds snapshots for them

    def match(self, match_id: str) -> StoredMatch:
        return StoredMatch(match_id, self.version, self.last_event_id, orjson.loads(self.record), self.token)


@dataclass
class _Updated(StoredMatch):
    """A match as this replica just wrote it, with the snapshots built for
    its live message (every seat's and the spectators'): the reply to the
    writer is one of them, built once per version for both."""

    snapshots: list[match_pb2.Snapshot] = field(default_factory=list)

    def snapshot(self, game: Game, seat: int | None) -> match_pb2.Snapshot:
        if self.snapshots:
            return self.snapshots[len(self.snapshots) - 1 if seat is None else seat]
        return snapshot(game, self, seat)


def _rules_error(game: str, error: RulesError) -> Refused:
    metrics.REFUSED.labels(game, error.code).inc()
    code = (
        grpc.StatusCode.INVALID_ARGUMENT
        if isinstance(error, InvalidAction)
        else grpc.StatusCode.FAILED_PRECONDITION
    )
    return Refused(code, error.code, error.message)


def _seat_of(doc: dict[str, Any], user_id: str | None) -> int | None:
    for index, player in enumerate(doc["players"]):
        if not player["cpu"] and player["user_id"] == user_id:
            return index
    return None


def _caller_id() -> str | None:
    identity = CALLER.get()
    return None if identity is None else identity.user_id


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(
        self,
        game: Game,
        store: RecordStore,
        hub: feeds.FeedHub,
        action_limit: Limit,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.game = game
        self.store = store
        self.hub = hub
        self.limiter = RateLimiter(store.redis)
        self.action_limit = action_limit
        self.clock = clock
        self._info = game.info()
        self._event = game.messages.Event
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    # -- RPCs -------------------------------------------------------------

    async def Describe(
        self, request: match_pb2.DescribeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.DescribeResponse:
        return match_pb2.DescribeResponse(game=self._info)

    async def CreateMatch(
        self, request: match_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.CreateMatchResponse:
        if not caller().is_platform:
            raise permission_denied("platform_only", "only the platform creates matches")
        match_id = request.match_id or secrets.token_urlsafe(12)
        if not _MATCH_ID.match(match_id):
            raise invalid("invalid_match_id", "match_id must be 1-64 characters of [A-Za-z0-9_-]")
        players = [
            {"user_id": s.user_id, "display_name": s.display_name, "cpu": s.cpu, "guest": s.guest}
            for s in request.seats
        ]
        humans = [p["user_id"] for p in players if not p["cpu"]]
        if any(not user for user in humans) or len(set(humans)) != len(humans):
            raise invalid("invalid_seats", "every human seat needs a distinct user_id")
        options = self._unpack(request.options, self.game.messages.Options, "invalid_options")
        seed = new_seed()
        rng, cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
        now = self.clock()
        try:
            table, happened = play.start(
                self.game,
                len(players),
                options,
                Context(rng, now, now),
                [i for i, p in enumerate(players) if p["cpu"]],
                cpu_rng,
            )
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        doc = {
            "game": self.game.name,
            "players": players,
            "options": to_json(options),
            **table.doc_fields(),
            "seed": seed.hex(),
            "seed_sha256": seed_digest(seed),
            "rng": rng.counter,
            "cpu_rng": cpu_rng.counter,
            "created_at": now,
            "last_action_at": now,
        }
        try:
            created = await self._commit(StoredMatch(match_id, 0, 0, doc), doc, table, happened, now)
        except VersionConflict:
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS, "match_exists", "a match with this id exists"
            ) from None
        metrics.MATCHES_STARTED.labels(self.game.name).inc()
        return match_pb2.CreateMatchResponse(snapshot=created.snapshot(self.game, None))

    async def GetView(
        self, request: match_pb2.GetViewRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.GetViewResponse:
        match = await self._load(request.match_id)
        return match_pb2.GetViewResponse(
            snapshot=snapshot(self.game, match, _seat_of(match.doc, _caller_id()))
        )

    async def Act(
        self, request: match_pb2.ActRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.ActResponse:
        if not request.HasField("action"):
            raise invalid("malformed_action", "action is required")
        action = self._unpack(request.action, self.game.messages.Action, "malformed_action")
        # gather below runs _load in a task of its own, whose log context
        # does not flow back here: set the match id first.
        logs.MATCH_ID.set(request.match_id)
        kept = self._kept.get(request.match_id)
        if kept is not None and kept.version == request.expected_version:
            await self._limit()
            match = kept.match(request.match_id)
        else:
            # The limit's counter and the match are read together, in one
            # round trip (the client's one batch, services/core/pipelining.py).
            _, match = await asyncio.gather(self._limit(), self._load(request.match_id))
        seat = self._seated(match)
        if request.expected_version != match.version:
            raise stale(match.version)
        kind = action.WhichOneof("action") or "none"

        def move(t: Table, ctx: Context, cpu: MatchRng) -> list[Happening]:
            return play.act(self.game, t, seat, action, ctx, cpu)

        try:
            updated = await self._step(match, move, kind)
        except (VersionConflict, Refused) as problem:
            if kept is None:
                if isinstance(problem, VersionConflict):
                    raise stale(problem.current_version) from None
                raise
            # The kept record may not be the stored one (a record changed
            # under the same version, as after a failover): the answer must
            # be the stored record's. Read it; play on it if it differs.
            self._kept.pop(request.match_id, None)
            fresh = await self._load(request.match_id)
            if fresh.version != request.expected_version:
                raise stale(fresh.version) from None
            if fresh.token == match.token and isinstance(problem, Refused):
                raise
            try:
                updated = await self._step(fresh, move, kind)
            except VersionConflict as again:
                raise stale(again.current_version) from None
        return match_pb2.ActResponse(snapshot=updated.snapshot(self.game, seat))

    async def _limit(self) -> None:
        try:
            await self.limiter.hit(self.action_limit, caller().user_id)
        except RateLimited as limited:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited", str(limited), limited.retry_after
            ) from None

    async def Leave(
        self, request: match_pb2.LeaveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.LeaveResponse:
        for _ in range(_LEAVE_ATTEMPTS):
            match = await self._load(request.match_id)
            seat = self._seated(match)
            if request.expected_version and request.expected_version != match.version:
                raise stale(match.version)

            def leave(t: Table, ctx: Context, cpu: MatchRng, seat: int = seat) -> list[Happening]:
                return play.leave(self.game, t, seat, ctx, cpu)

            try:
                updated = await self._step(match, leave, "leave")
            except VersionConflict as conflict:
                if request.expected_version:
                    raise stale(conflict.current_version) from None
                continue  # someone moved meanwhile: leaving still applies, on the new state
            return match_pb2.LeaveResponse(snapshot=updated.snapshot(self.game, seat))
        raise Refused(grpc.StatusCode.ABORTED, "busy", "the match is too busy; try again")

    async def Ask(
        self, request: match_pb2.AskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.AskResponse:
        answer_cls = getattr(self.game.messages, "Answer", None)
        if self.game.ask is None or answer_cls is None:
            raise Refused(
                grpc.StatusCode.UNIMPLEMENTED, "no_questions", f"{self.game.title} answers no questions"
            )
        question = self._unpack(request.question, self.game.messages.Question, "invalid_question")
        match = await self._load(request.match_id)
        try:
            reply = self.game.ask(match.doc["state"], _seat_of(match.doc, _caller_id()), question)
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        return match_pb2.AskResponse(version=match.version, answer=packed(answer_cls, reply))

    async def Watch(
        self, request: match_pb2.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[match_pb2.WatchResponse]:
        match = await self._load(request.match_id)
        if request.after_event_id > match.last_event_id:
            raise invalid(
                "invalid_event_id", f"after_event_id is past the last event ({match.last_event_id})"
            )
        seat = _seat_of(match.doc, _caller_id())
        viewer = feeds.Viewer(user_id=_caller_id(), seat=seat)

        async def current() -> match_pb2.Snapshot:
            return snapshot(self.game, await self._load(request.match_id), seat)

        gauge = metrics.WATCHERS.labels(self.game.name)
        gauge.inc()
        try:
            async for item in self.hub.follow(request.match_id, request.after_event_id, viewer, current):
                if isinstance(item.message, match_pb2.MatchEvent):
                    if item.message.WhichOneof("body") not in ("table", "chat"):  # the gateway's
                        yield match_pb2.WatchResponse(event=item.message)
                elif isinstance(item.message, match_pb2.Snapshot):
                    yield match_pb2.WatchResponse(snapshot=item.message)
        finally:
            gauge.dec()

    async def FireDeadline(
        self, request: match_pb2.FireDeadlineRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.FireDeadlineResponse:
        if not caller().is_platform:
            raise permission_denied("platform_only", "only the platform fires deadlines")
        match = await self._load(request.match_id)
        moved = match_pb2.FireDeadlineResponse(outcome=match_pb2.DEADLINE_OUTCOME_MOVED)
        if match.version != request.expected_version:
            return moved
        table = Table.from_doc(copy.deepcopy(match.doc))  # a trial run: what is due, if anything
        outcome, happened = play.fire_deadline(self.game, table, Context(MatchRng(bytes(32)), self.clock()))
        if outcome == "DEADLINE_OUTCOME_MOVED":
            return moved
        if outcome == "DEADLINE_OUTCOME_NOTIFIED":
            await self._notify(match, happened, once=f"deadline:{match.version}")
        else:
            try:
                await self._step(
                    match, lambda t, ctx, cpu: play.fire_deadline(self.game, t, ctx, cpu)[1], "deadline"
                )
            except (VersionConflict, Refused):
                return moved  # a move made in time won the race
        return match_pb2.FireDeadlineResponse(outcome=match_pb2.DeadlineOutcome.Value(outcome))

    # -- helpers ----------------------------------------------------------

    def _unpack(self, packed_message: any_pb2.Any, message_cls: type[Message], reason: str) -> Message:
        message = message_cls()
        try:
            if packed_message.ByteSize() and not packed_message.Unpack(message):
                raise invalid(reason, f"expected a {message.DESCRIPTOR.full_name}")
            strict.check(message)  # what the gateway's faces refuse, refused here too
        except DecodeError:  # the Any names the message, but its bytes are not one
            raise invalid(reason, f"not a {message.DESCRIPTOR.full_name}: its bytes do not decode") from None
        except strict.Invalid as exc:
            raise invalid(reason, f"not a {message.DESCRIPTOR.full_name}: {exc}") from None
        return message

    async def _load(self, match_id: str) -> StoredMatch:
        logs.MATCH_ID.set(match_id)
        if not _MATCH_ID.match(match_id):
            raise invalid("invalid_match_id", "match_id must be 1-64 characters of [A-Za-z0-9_-]")
        match = await self.store.load(match_id)
        if match is None or match.doc["game"] != self.game.name:
            raise not_found("match_not_found", f"no {self.game.name} match {match_id!r}")
        return match

    def _seated(self, match: StoredMatch) -> int:
        seat = _seat_of(match.doc, caller().user_id)
        if seat is None:
            raise permission_denied("not_seated", "you have no seat in this match")
        return seat

    async def _step(
        self,
        match: StoredMatch,
        step: Callable[[Table, Context, MatchRng], list[Happening]],
        kind: str,
    ) -> _Updated:
        """Run one step of play against ``match`` and commit it at its
        version; VersionConflict if someone wrote first."""
        doc = match.doc
        seed = bytes.fromhex(doc["seed"])
        rng, cpu_rng = MatchRng(seed, doc["rng"]), MatchRng(cpu_seed(seed), doc["cpu_rng"])
        now = self.clock()
        table = Table.from_doc(doc)
        try:
            happened = step(table, Context(rng, now, table.idle_since), cpu_rng)
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        new_doc = {
            **doc,
            **table.doc_fields(),
            "rng": rng.counter,
            "cpu_rng": cpu_rng.counter,
            "last_action_at": now,
        }
        updated = await self._commit(match, new_doc, table, happened, now)
        metrics.ACTIONS.labels(self.game.name, kind).inc()
        return updated

    async def _commit(
        self, match: StoredMatch, doc: dict[str, Any], table: Table, happened: Sequence[Happening], now: float
    ) -> _Updated:
        """Write ``doc`` at ``match``'s version with the events, the next
        deadline or the result, and publish them (with every audience's
        snapshot while the match is watched)."""
        outcome = play.outcome(self.game, table)
        version = match.version + 1
        events = encode(self._event, happened, version, now, outcome)
        updated = _Updated(match.match_id, version, match.last_event_id + len(events), doc)
        kept = self._kept.get(match.match_id)
        watched = kept.watched if kept is not None else True  # unknown: build the snapshots
        if watched:
            updated.snapshots = self._audience_snapshots(updated)
        live = match_pb2.LiveUpdate(events=events, snapshots=updated.snapshots).SerializeToString()
        if outcome is None:
            track = Track(self.game.name, due=play.deadline_at(self.game, table))
        else:
            result = _result(doc, outcome)
            if self.game.trophies:
                result["trophies"] = await self._trophies(match, happened, outcome)
            track = Track(self.game.name, result=result)
        written = await self.store.commit(
            match.match_id,
            match.version,
            doc,
            [e.SerializeToString() for e in events],
            live,
            expected_token=match.token,
            over=outcome is not None,
            track=track,
        )
        if written.last_event_id != updated.last_event_id:  # notices were appended meanwhile
            updated.last_event_id = written.last_event_id
            for built in updated.snapshots:
                built.last_event_id = written.last_event_id
        updated.token = written.token
        self._keep(
            match.match_id,
            _Kept(written.version, written.token, written.last_event_id, written.doc, written.listeners > 0),
        )
        if written.listeners and not watched:
            await self._publish_snapshots(updated, written.last_event_id + 1)
        if outcome is not None:
            metrics.MATCHES_FINISHED.labels(self.game.name, _reason_label(outcome)).inc()
        return updated

    async def _trophies(
        self, match: StoredMatch, happened: Sequence[Happening], outcome: Outcome
    ) -> list[list[Any]]:
        """The game's trophies the finished match won, as [seat, trophy id]
        pairs for the results stream (the platform awards them): read from
        the match's whole history of game events, once, as it ends."""
        history: list[Any] = []
        after = 0
        while after < match.last_event_id:
            stored = await self.store.read_events(match.match_id, after)
            if not stored:
                break
            after = stored[-1][0]
            for _, data in stored:
                wrapped = match_pb2.MatchEvent.FromString(data)
                event = self._event()
                if wrapped.WhichOneof("body") == "event" and wrapped.event.Unpack(event):
                    history.append(to_json(event))
        history += [{item.kind: _without_none(item.data)} for item in happened if isinstance(item, Event)]
        return [
            [seat, trophy.id]
            for trophy in self.game.trophies
            for seat in sorted(set(trophy.won(outcome, history)))
        ]

    async def _notify(self, match: StoredMatch, happened: Sequence[Happening], once: str) -> None:
        """Append notices to the history without a new version, once."""
        events = encode(self._event, happened, match.version, self.clock(), None)
        live = match_pb2.LiveUpdate(events=events).SerializeToString()
        await self.store.append(match.match_id, [e.SerializeToString() for e in events], live, once)

    async def _publish_snapshots(self, match: StoredMatch, next_event_id: int) -> None:
        """Someone started watching since the last write: send the snapshots
        the live message went without."""
        live = match_pb2.LiveUpdate(snapshots=self._audience_snapshots(match)).SerializeToString()
        await self.hub.publish(match.match_id, next_event_id, live)

    def _audience_snapshots(self, match: StoredMatch) -> list[match_pb2.Snapshot]:
        """Every seat's snapshot, then the spectators' (``_Updated.snapshot``
        picks the writer's from them)."""
        return snapshots(self.game, match, (*range(len(match.doc["players"])), None))

    def _keep(self, match_id: str, kept: _Kept) -> None:
        self._kept[match_id] = kept
        self._kept.move_to_end(match_id)
        if len(self._kept) > _KEPT_MATCHES:
            self._kept.popitem(last=False)


def snapshot(game: Game, match: StoredMatch, seat: int | None) -> match_pb2.Snapshot:
    """The match as ``seat`` (None: a spectator) may see it."""
    return snapshots(game, match, (seat,))[0]


def snapshots(game: Game, match: StoredMatch, audiences: Sequence[int | None]) -> list[match_pb2.Snapshot]:
    """The match as each of ``audiences`` (seats, None: a spectator) may see
    it. What every audience sees is built once, and each audience's snapshot
    is a copy of it (in C) with its own seat, view (unless the game's view
    is public) and legal actions: a watched match's live message carries one
    per seat and the spectators', every move, and building each from the
    record redid all the rest."""
    doc = match.doc
    table = Table.from_doc(doc)
    state = table.state
    cpu = table.cpu
    outcome = play.outcome(game, table)
    due = play.deadline_at(game, table)
    shared = match_pb2.Snapshot(
        match_id=match.match_id,
        game=game.name,
        version=match.version,
        last_event_id=match.last_event_id,
        # seat: the audience's own, below
        seats=[
            match_pb2.Seat(**player, cpu_controlled=index in cpu)
            for index, player in enumerate(doc["players"])
        ],
        to_act=[] if outcome else game.to_act(state),
        status=match_pb2.MATCH_STATUS_FINISHED if outcome else match_pb2.MATCH_STATUS_ACTIVE,
        result=result_message(outcome) if outcome else None,
        fairness=match_pb2.Fairness(
            seed_sha256=doc["seed_sha256"], seed=doc["seed"] if outcome else "", algorithm=RNG_ALGORITHM
        ),
        # A game that hides nothing shows every audience the same view (the
        # first one's); any other, each audience its own, below.
        view=packed(game.messages.View, game.view(state, audiences[0])) if game.public_view else None,
        last_action_at=doc["last_action_at"],
        scores=game.scores(state) if game.scores else [],
        idle_since=0.0 if outcome else table.idle_since,
        deadline_at=due or 0.0,
        mode=table.mode,
        # legal: the audience's own, below
    )
    built = []
    for seat in audiences:
        own = match_pb2.Snapshot()
        own.CopyFrom(shared)
        own.seat = SPECTATOR if seat is None else seat
        if not game.public_view:
            own.view.CopyFrom(packed(game.messages.View, game.view(state, seat)))
        own.legal.CopyFrom(
            legal.message(
                game, legal.legal_actions(game, table, seat) if seat is not None and not outcome else []
            )
        )
        built.append(own)
    return built


def _result(doc: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
    """A finished match as the results stream carries it (ratings, histories)."""
    return {
        "seats": doc["players"],
        "options": doc["options"],
        "mode": doc["mode"],
        "ranks": outcome.ranks,
        "scores": outcome.scores,
        "reason": _reason_label(outcome),
        "forfeited": outcome.forfeited,
        "finished_at": doc["last_action_at"],
    }


def _reason_label(outcome: Outcome) -> str:
    """completed, forfeit or inactivity: metrics labels and the results record."""
    return outcome.reason.removeprefix("END_REASON_").lower()


def encode(
    event_cls: type[Message],
    happened: Sequence[Happening],
    version: int,
    now: float,
    outcome: Outcome | None,
) -> list[match_pb2.MatchEvent]:
    """What happened as MatchEvents (ids left 0: the store numbers them); the
    last one of a finishing write is final and carries the result."""
    events = []
    for item in happened:
        if isinstance(item, Notice):
            notice = match_pb2.Notice(
                kind=match_pb2.NoticeKind.Value(f"NOTICE_KIND_{item.kind}"),
                seat=item.seat,
                since=item.since or 0.0,
            )
            if item.by is not None:
                notice.by = item.by
            events.append(
                match_pb2.MatchEvent(version=version, audience=item.audience or (), at=now, notice=notice)
            )
        else:
            events.append(
                match_pb2.MatchEvent(
                    version=version,
                    audience=item.audience or (),
                    at=now,
                    event=packed(event_cls, {item.kind: item.data}),
                )
            )
    if outcome is not None and events:
        events[-1].final = True
        events[-1].result.CopyFrom(result_message(outcome))
    return events


def _without_none(data: Any) -> Any:
    """``data`` as ``to_json`` would give it back (a game's dict may hold
    None for a field it leaves unset; JSON of the message leaves it out)."""
    if isinstance(data, dict):
        return {key: _without_none(value) for key, value in data.items() if value is not None}
    if isinstance(data, list):
        return [_without_none(value) for value in data]
    return data


def packed(message_cls: type[Message], data: dict[str, Any]) -> any_pb2.Any:
    """A game's dict as the game's message, packed. The message's own
    constructor (in C) takes nested dicts and enum names and is about ten
    times faster than json_format.ParseDict, which matters on every reply;
    the conformance suite checks every game's dicts with ParseDict, strictly.
    A None in a dict (at any depth) is a field left unset, to the
    constructor as to ParseDict: no copy of the dict without them is made."""
    result = any_pb2.Any()
    result.Pack(message_cls(**data))
    return result


def result_message(outcome: Outcome) -> match_pb2.Result:
    return match_pb2.Result(
        ranks=outcome.ranks,
        scores=outcome.scores,
        reason=match_pb2.EndReason.Value(outcome.reason),
        forfeited=outcome.forfeited,
    )


__all__ = ["Event", "MatchServicer", "encode", "packed", "result_message", "snapshot", "snapshots"]
