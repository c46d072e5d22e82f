"""The generic MatchService: loads a match, runs the game's engine, commits the
new state with its events in one atomic write, and answers with the caller's
view. Everything game-specific comes from a :class:`Game`."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.kit import logs, metrics
from services.kit.engine import JSON, Context, Engine, Event, InvalidAction, Result, RulesError
from services.kit.errors import ServiceError, invalid, not_found, permission_denied
from services.kit.guard import caller
from services.kit.limits import Limit, RateLimited, RateLimiter
from services.kit.rng import MatchRng, new_seed, seed_digest
from services.kit.store import MatchStore, StoredEvent, StoredMatch, VersionConflict, encode_event

_MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_LEAVE_ATTEMPTS = 8
WATCH_BLOCK_MS = 5_000
RNG_ALGORITHM = "hmac-sha256-ctr"


INACTIVITY_SECONDS = 120.0  # RULES.md: a seat to act may be claimed against or removed after 120 s


def inactivity_deadline(state: JSON) -> float | None:
    return INACTIVITY_SECONDS


@dataclass(frozen=True)
class Game:
    """A game as the kit sees it: its engine, its generated proto module
    (which must define Options, Action, View and Event), and ``deadline``:
    how long after the last action the seat to act may be timed out, from
    the state (None: never), which schedules the platform's clocks."""

    engine: Engine
    messages: ModuleType
    deadline: Callable[[JSON], float | None] = inactivity_deadline

    @property
    def name(self) -> str:
        return self.engine.name


def to_dict(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _unpack(packed: any_pb2.Any, message_cls: type[Message], what: str) -> dict[str, Any]:
    message = message_cls()
    if not packed.Unpack(message):
        raise invalid(f"invalid_{what}", f"{what} must be a {message.DESCRIPTOR.full_name}")
    return to_dict(message)


def _rules_error(game: str, error: RulesError) -> ServiceError:
    metrics.REFUSED.labels(game, error.code).inc()
    code = (
        grpc.StatusCode.INVALID_ARGUMENT
        if isinstance(error, InvalidAction)
        else grpc.StatusCode.FAILED_PRECONDITION
    )
    return ServiceError(code, error.code, error.message)


def _seat_of(doc: dict[str, Any], user_id: str) -> int | None:
    for index, seat in enumerate(doc["seats"]):
        if not seat["cpu"] and seat["user_id"] == user_id:
            return index
    return None


# Actions per user, whatever the match (ACTION_LIMIT, "<count>/<seconds>").
ACTION_LIMIT = Limit.from_env("actions", "ACTION_LIMIT", "60/10")


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, game: Game, store: MatchStore, clock: Callable[[], float] = time.time) -> None:
        self.limiter = RateLimiter(store.redis)
        self.game = game
        self.engine = game.engine
        self.store = store
        self.clock = clock
        self._options = game.messages.Options
        self._action = game.messages.Action
        self._view = game.messages.View
        self._event = game.messages.Event

    # -- RPCs -------------------------------------------------------------

    async def CreateMatch(
        self, request: match_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.Snapshot:
        if not caller().is_platform:
            raise permission_denied("platform_only", "only the platform creates matches")
        match_id = request.match_id or secrets.token_urlsafe(12)
        if not _MATCH_ID.match(match_id):
            raise invalid("invalid_match_id", "match_id must be 1-64 characters of [A-Za-z0-9_-]")
        seats = [{"user_id": s.user_id, "display_name": s.display_name, "cpu": s.cpu} for s in request.seats]
        humans = [s["user_id"] for s in seats if not s["cpu"]]
        if any(not user for user in humans) or len(set(humans)) != len(humans):
            raise invalid("invalid_seats", "every human seat needs a distinct user_id")
        options = _unpack(request.options, self._options, "options") if request.HasField("options") else {}
        seed = new_seed()
        rng = MatchRng(seed)
        now = self.clock()
        try:
            state, events = self.engine.new_match(
                len(seats), options, Context(rng, now, now), [i for i, s in enumerate(seats) if s["cpu"]]
            )
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        doc = {
            "game": self.game.name,
            "seats": seats,
            "options": options,
            "state": state,
            "seed": seed.hex(),
            "seed_sha256": seed_digest(seed),
            "rng": rng.counter,
            "created_at": now,
            "last_action_at": now,
        }
        try:
            version, last_event = await self.store.commit(
                match_id, 0, doc, self._encode(events, 1, now, state)
            )
        except VersionConflict:
            raise ServiceError(
                grpc.StatusCode.ALREADY_EXISTS, "match_exists", "a match with this id exists"
            ) from None
        metrics.MATCHES_STARTED.labels(self.game.name).inc()
        created = StoredMatch(match_id, version, last_event, doc)
        await self._track(created)
        return self._snapshot(created, None)

    async def GetView(
        self, request: match_pb2.GetViewRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.Snapshot:
        match = await self._load(request.match_id)
        return self._snapshot(match, _seat_of(match.doc, caller().user_id))

    async def Act(
        self, request: match_pb2.ActRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.Snapshot:
        if not request.HasField("action"):
            raise invalid("invalid_action", "action is required")
        action = _unpack(request.action, self._action, "action")
        if len(action) != 1:
            raise invalid("invalid_action", "the action must set exactly one kind")
        # The limit's counter and the match are read together: one round trip of
        # latency, not two. (gather runs _load in a task of its own, whose log
        # context does not flow back here: set the match id first.)
        logs.MATCH_ID.set(request.match_id)
        try:
            _, match = await asyncio.gather(
                self.limiter.hit(ACTION_LIMIT, caller().user_id), self._load(request.match_id)
            )
        except RateLimited as limited:
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited", str(limited)) from None
        seat = self._seated(match)
        if request.expected_version != match.version:
            raise _stale(match.version)
        kind = next(iter(action))
        updated = await self._apply(
            match, lambda state, ctx: self.engine.apply(state, seat, action, ctx), kind
        )
        return self._snapshot(updated, seat)

    async def Leave(
        self, request: match_pb2.LeaveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.Snapshot:
        for _ in range(_LEAVE_ATTEMPTS):
            match = await self._load(request.match_id)
            seat = self._seated(match)
            if request.expected_version and request.expected_version != match.version:
                raise _stale(match.version)

            def leave(state: JSON, ctx: Context, seat: int = seat) -> tuple[JSON, list[Event]]:
                return self.engine.leave(state, seat, ctx)

            try:
                updated = await self._apply(match, leave, "leave")
            except VersionConflict as conflict:
                if request.expected_version:
                    raise _stale(conflict.current_version) from None
                continue  # someone moved meanwhile: leaving still applies, on the new state
            return self._snapshot(updated, seat)
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "the match is too busy; try again")

    async def Ask(
        self, request: match_pb2.AskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> match_pb2.AskReply:
        ask = getattr(self.engine, "ask", None)
        answer_cls = getattr(self.game.messages, "Answer", None)
        if ask is None or answer_cls is None:
            raise ServiceError(
                grpc.StatusCode.UNIMPLEMENTED, "no_questions", f"{self.game.name} answers no questions"
            )
        question = _unpack(request.question, self.game.messages.Question, "question")
        match = await self._load(request.match_id)
        try:
            reply = ask(match.doc["state"], _seat_of(match.doc, caller().user_id), question)
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        return match_pb2.AskReply(version=match.version, answer=_packed(answer_cls, reply))

    async def Watch(
        self, request: match_pb2.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[match_pb2.MatchEvent]:
        match = await self._load(request.match_id)
        seat = _seat_of(match.doc, caller().user_id)
        after = request.after_event_id
        if after > match.last_event_id:
            raise invalid(
                "invalid_event_id", f"after_event_id is past the last event ({match.last_event_id})"
            )
        if self.engine.result(match.doc["state"]) is not None and after == match.last_event_id:
            return
        gauge = metrics.WATCHERS.labels(self.game.name)
        gauge.inc()
        try:
            while True:
                for event in await self.store.read_events(match.match_id, after, WATCH_BLOCK_MS):
                    after = event.id
                    if event.visible_to(seat):
                        yield self._event_message(event)
                    if event.final:
                        return
        finally:
            gauge.dec()

    # -- helpers ----------------------------------------------------------

    async def _load(self, match_id: str) -> StoredMatch:
        logs.MATCH_ID.set(match_id)
        if not _MATCH_ID.match(match_id):
            raise invalid("invalid_match_id", "match_id must be 1-64 characters of [A-Za-z0-9_-]")
        match = await self.store.load(match_id)
        if match is None or match.doc["game"] != self.game.name:
            raise not_found(f"no {self.game.name} match {match_id!r}")
        return match

    def _seated(self, match: StoredMatch) -> int:
        seat = _seat_of(match.doc, caller().user_id)
        if seat is None:
            raise permission_denied("not_seated", "you have no seat in this match")
        return seat

    async def _apply(
        self,
        match: StoredMatch,
        step: Callable[[dict[str, Any], Context], tuple[dict[str, Any], list[Event]]],
        kind: str,
    ) -> StoredMatch:
        """Run one engine step against ``match`` and commit it at its version.
        Raises ABORTED (via VersionConflict → stale) if someone wrote first."""
        doc = match.doc
        if self.engine.result(doc["state"]) is not None:
            raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, "game_over", "the match is over")
        rng = MatchRng(bytes.fromhex(doc["seed"]), doc["rng"])
        now = self.clock()
        try:
            state, events = step(doc["state"], Context(rng, now, doc["last_action_at"]))
        except RulesError as error:
            raise _rules_error(self.game.name, error) from None
        new_doc = {**doc, "state": state, "rng": rng.counter, "last_action_at": now}
        version = match.version + 1
        try:
            version, last_event = await self.store.commit(
                match.match_id, match.version, new_doc, self._encode(events, version, now, state)
            )
        except VersionConflict as conflict:
            if kind == "leave":
                raise
            raise _stale(conflict.current_version) from None
        metrics.ACTIONS.labels(self.game.name, kind).inc()
        updated = StoredMatch(match.match_id, version, last_event, new_doc)
        await self._track(updated)
        return updated

    def _encode(
        self, events: Sequence[Event], version: int, now: float, state: dict[str, Any]
    ) -> list[bytes]:
        # Every engine's tests parse its events into its proto; checking again
        # here would double the hot path's conversion work.
        final = self.engine.result(state) is not None
        last = len(events) - 1
        return [
            encode_event(version, e.kind, e.data, e.audience, now, final and i == last)
            for i, e in enumerate(events)
        ]

    async def _track(self, match: StoredMatch) -> None:
        doc = match.doc
        result = self.engine.result(doc["state"])
        if result is None:
            seconds = self.game.deadline(doc["state"])
            due = None if seconds is None else doc["last_action_at"] + seconds
            await self.store.track(self.game.name, match.match_id, match.version, due, None)
            return
        metrics.MATCHES_FINISHED.labels(self.game.name, result.reason).inc()
        record = {
            "seats": doc["seats"],
            "options": doc["options"],
            "ranks": result.ranks,
            "scores": result.scores,
            "reason": result.reason,
            "forfeited": result.forfeited,
            "finished_at": doc["last_action_at"],
        }
        await self.store.track(self.game.name, match.match_id, match.version, None, record)

    def _snapshot(self, match: StoredMatch, seat: int | None) -> match_pb2.Snapshot:
        doc = match.doc
        state = doc["state"]
        result = self.engine.result(state)
        packed = _packed(self._view, self.engine.view(state, seat))
        return match_pb2.Snapshot(
            match_id=match.match_id,
            game=self.game.name,
            version=match.version,
            last_event_id=match.last_event_id,
            seat=-1 if seat is None else seat,
            seats=[match_pb2.Seat(**s) for s in doc["seats"]],
            to_act=self.engine.to_act(state),
            status=match_pb2.FINISHED if result else match_pb2.ACTIVE,
            result=_result_message(result) if result else None,
            fairness=match_pb2.Fairness(
                seed_sha256=doc["seed_sha256"], seed=doc["seed"] if result else "", algorithm=RNG_ALGORITHM
            ),
            view=packed,
            last_action_at=doc["last_action_at"],
        )

    def _event_message(self, event: StoredEvent) -> match_pb2.MatchEvent:
        packed = _packed(self._event, {event.kind: event.data})
        return match_pb2.MatchEvent(
            id=event.id, version=event.version, audience=event.audience or (), event=packed, at=event.at
        )


def _without_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: _without_none(value) for key, value in data.items() if value is not None}
    if isinstance(data, list):
        return [_without_none(value) for value in data]
    return data


def _packed(message_cls: type[Message], data: dict[str, Any]) -> any_pb2.Any:
    """An engine's dict as the game's message, packed. The message's own
    constructor (in C) takes nested dicts and enum names and is about ten
    times faster than json_format.ParseDict, which matters on every reply;
    the engines' tests check that their dicts fit with ParseDict, strictly."""
    packed = any_pb2.Any()
    packed.Pack(message_cls(**_without_none(data)))
    return packed


def _stale(current: int) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ABORTED, "stale_version", f"the match is at version {current}; reload and act again"
    )


def _result_message(result: Result) -> match_pb2.Result:
    return match_pb2.Result(
        ranks=result.ranks, scores=result.scores, reason=result.reason, forfeited=result.forfeited
    )
