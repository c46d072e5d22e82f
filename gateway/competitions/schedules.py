"""Recurring tournaments: schedules set by admins (e.g. a daily Swiss per
game), each tournament announced by whichever replica's periodic check sees
it due first, and only once.

A schedule is one field of the hash ``tournament:schedules`` (id → JSON: the
tournament's settings, ``first_at``, ``every_seconds``,
``announce_seconds``). Its k-th tournament starts at ``first_at + k ×
every_seconds`` and has the id ``<schedule>n<k>``, derived, so the replicas
that all find it due create the same record and only the first write counts
(``Tournaments.create`` with that id writes only if the record is absent).
The tournament is announced ``announce_seconds`` before its start; one whose
announcement time passed while no replica ran is announced late as long as
its start is still ahead, else skipped.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from typing import Any, cast

import orjson
from google.protobuf import json_format
from rodada.platform.v1 import competitions_pb2

from gateway.competitions.tournaments import Tournaments, require_admin
from services.core import keys
from services.core.errors import Refused, invalid, not_found
from services.core.store import RedisClient
from services.core.tokens import Identity

log = logging.getLogger("rodada.gateway.schedules")

Doc = dict[str, Any]
EVERY_SECONDS = (3600, 30 * 86_400)
DEFAULT_ANNOUNCE_SECONDS = 3600
MIN_ANNOUNCE_SECONDS = 60
MAX_SCHEDULES = 100


def occurrence(schedule: Doc, now: float) -> int:
    """The first tournament of the schedule starting after ``now``."""
    if now < schedule["first_at"]:
        return 0
    elapsed: float = now - schedule["first_at"]
    every: int = schedule["every_seconds"]
    return math.floor(elapsed / every) + 1


def starts_at(schedule: Doc, k: int) -> float:
    return float(schedule["first_at"] + k * schedule["every_seconds"])


def _template(schedule: Doc) -> competitions_pb2.CreateTournamentRequest:
    return json_format.ParseDict(schedule["tournament"], competitions_pb2.CreateTournamentRequest())


class Schedules:
    def __init__(self, redis: RedisClient, tournaments: Tournaments) -> None:
        self.redis = redis
        self.tournaments = tournaments

    async def create(
        self,
        admin: Identity,
        request: competitions_pb2.CreateTournamentScheduleRequest,
        options: dict[str, Any],
    ) -> Doc:
        require_admin(admin)
        every = request.every_seconds
        if not EVERY_SECONDS[0] <= every <= EVERY_SECONDS[1]:
            raise invalid("invalid_schedule", f"every_seconds: {EVERY_SECONDS[0]}-{EVERY_SECONDS[1]}")
        announce = request.announce_seconds or min(DEFAULT_ANNOUNCE_SECONDS, every)
        if not MIN_ANNOUNCE_SECONDS <= announce <= every:
            raise invalid("invalid_schedule", f"announce_seconds: {MIN_ANNOUNCE_SECONDS} up to every_seconds")
        if request.first_at <= time.time():
            raise invalid("invalid_schedule", "first_at: in the future")
        if await self.redis.hlen(keys.TOURNAMENT_SCHEDULES) >= MAX_SCHEDULES:
            raise invalid("invalid_schedule", f"at most {MAX_SCHEDULES} schedules")
        template = competitions_pb2.CreateTournamentRequest(
            name=request.name,
            game=request.game,
            format=request.format,
            max_entrants=request.max_entrants,
            rounds=request.rounds,
            table_size=request.table_size,
            round_seconds=request.round_seconds,
        )
        # Checked as a tournament would be now: a schedule that could only
        # make refused tournaments is refused itself.
        self.tournaments.draft(admin, template, options)
        schedule: Doc = {
            "id": secrets.token_hex(4),
            "tournament": json_format.MessageToDict(template, preserving_proto_field_name=True),
            "options": options,
            "first_at": request.first_at,
            "every_seconds": every,
            "announce_seconds": announce,
            "created_by": admin.user_id,
            "created_at": time.time(),
        }
        await self.redis.hset(keys.TOURNAMENT_SCHEDULES, schedule["id"], orjson.dumps(schedule))
        return schedule

    async def listing(self, admin: Identity) -> list[Doc]:
        require_admin(admin)
        return await self._all()

    async def _all(self) -> list[Doc]:
        stored = cast(dict[str, str], await self.redis.hgetall(keys.TOURNAMENT_SCHEDULES))
        return sorted((orjson.loads(v) for v in stored.values()), key=lambda s: (s["created_at"], s["id"]))

    async def delete(self, admin: Identity, schedule_id: str) -> None:
        require_admin(admin)
        if not await self.redis.hdel(keys.TOURNAMENT_SCHEDULES, schedule_id):
            raise not_found("schedule_not_found", f"no schedule {schedule_id!r}")

    async def check(self) -> None:
        """Announce every schedule's next tournament once it is due."""
        now = time.time()
        for schedule in await self._all():
            k = occurrence(schedule, now)
            if now < starts_at(schedule, k) - schedule["announce_seconds"]:
                continue
            request = _template(schedule)
            request.starts_at = starts_at(schedule, k)
            creator = Identity(user_id=schedule["created_by"], name="", role="admin")
            try:
                await self.tournaments.create(
                    creator, request, schedule["options"], tournament_id=f"{schedule['id']}n{k}"
                )
            except Refused as refusal:
                # A game gone or its options changed since: the schedule waits.
                log.warning("schedule %s: %s", schedule["id"], refusal)

    def message(self, schedule: Doc) -> competitions_pb2.TournamentSchedule:
        template = _template(schedule)
        game = self.tournaments.games.get(template.game)
        template.options.CopyFrom(game.pack("Options", schedule["options"], "invalid_options"))
        return competitions_pb2.TournamentSchedule(
            id=schedule["id"],
            tournament=template,
            first_at=schedule["first_at"],
            every_seconds=schedule["every_seconds"],
            announce_seconds=schedule["announce_seconds"],
            next_at=starts_at(schedule, occurrence(schedule, time.time())),
            created_by=schedule["created_by"],
        )
