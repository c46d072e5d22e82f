"""Finished matches: match histories, forfeits, and ratings for ranked tables.

The write that finishes a match appends it to its group's results stream
(keys.py), in the same script. Every gateway replica reads every group's
stream in one consumer group, so each result goes to one replica at a time;
entries a replica took and never acknowledged (it died) are claimed by
another after ``RECLAIM_IDLE_MS``.

Recording is safe to repeat at any point: the rating changes are computed
once and stored (``rating-plan:<match>``, SET NX) before anything is
applied; each player's part (rating, rating history, match history) is one
script on that player's keys that does nothing if the match is already in
the player's record; the leaderboard entry is a plain set. Only then is the
result marked recorded and acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import orjson
from google.protobuf import json_format
from redis.exceptions import ResponseError
from rodada.platform.v1 import platform_pb2

from gateway import metrics
from gateway.games import Games
from gateway.ratings import Rating, update_placings, update_teams
from services.core import keys
from services.core.store import RedisClient
from services.core.tasks import cancel_requested

log = logging.getLogger("rodada.gateway.results")
GROUP = "ratings"
HISTORY_LENGTH = 200
PLAN_SECONDS = 30 * 24 * 3600
RECLAIM_IDLE_MS = 60_000
# How often a replica also sweeps for a dead replica's entries (claimable
# only after RECLAIM_IDLE_MS anyway) and its own left pending by a failure;
# in between it reads new entries only: one command a stream, not three
# (every 0.5 s, 64 streams: 4-5 % of a busy gateway's CPU went to the
# three, py-spy).
SWEEP_SECONDS = 10.0
# What else a finished match drives (trophies, tournaments): called with the
# game, the match id and the result, before the result is marked recorded, so
# each must be safe to repeat.
Hook = Callable[[str, str, dict[str, Any]], Awaitable[None]]

# KEYS: recorded, rating, rating history, match history. ARGV: match, now,
# history length, match entry, then (if rated) rating fields and the change.
_RECORD = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1001)
redis.call('LPUSH', KEYS[4], ARGV[4])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[3]) - 1)
if #ARGV > 4 then
  redis.call('HSET', KEYS[2], 'rating', ARGV[5], 'deviation', ARGV[6], 'volatility', ARGV[7])
  redis.call('HINCRBY', KEYS[2], 'games', 1)
  redis.call('LPUSH', KEYS[3], ARGV[8])
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
end
return 1
"""


def rating_message(stored: dict[str, str]) -> platform_pb2.Rating:
    rating = Rating(float(stored["rating"]), float(stored["deviation"]), float(stored["volatility"]))
    return _rating(rating, int(stored.get("games", 0)))


def _rating(rating: Rating, games: int) -> platform_pb2.Rating:
    return platform_pb2.Rating(
        rating=rating.rating,
        deviation=rating.deviation,
        volatility=rating.volatility,
        provisional=rating.provisional,
        games=games,
    )


class Results:
    def __init__(self, redis: RedisClient, games: Games) -> None:
        self.redis = redis
        self.games = games
        self._record = redis.register_script(_RECORD)
        self.hooks: list[Hook] = []

    async def load_rating(self, game: str, mode: str, user_id: str) -> tuple[Rating, int]:
        stored = cast(dict[str, str], await self.redis.hgetall(keys.rating(game, mode, user_id)))
        if not stored:
            return Rating(), 0
        rating = Rating(float(stored["rating"]), float(stored["deviation"]), float(stored["volatility"]))
        return rating, int(stored.get("games", 0))

    async def run(self, poll_seconds: float = 0.5) -> None:
        """Consume finished matches forever, every group's stream in turn."""
        consumer = f"{socket.gethostname()}-{os.getpid()}"
        streams = [keys.results(group) for group in range(keys.GROUPS)]
        for stream in streams:
            with contextlib.suppress(ResponseError):  # the group exists: another replica made it
                await self.redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
        loop = asyncio.get_running_loop()
        sweep_at = loop.time()  # the first pass sweeps
        while not cancel_requested():
            try:
                sweep = loop.time() >= sweep_at
                if sweep:
                    sweep_at = loop.time() + SWEEP_SECONDS
                if not await self._consume(streams, consumer, sweep):
                    await asyncio.sleep(poll_seconds)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("recording results failed")
                sweep_at = loop.time()  # what was taken and not recorded is ours, pending: at once
                await asyncio.sleep(1)

    async def _consume(self, streams: list[str], consumer: str, sweep: bool) -> int:
        """Every stream's work in one round trip, without blocking: with
        ``sweep``, a dead replica's entries never acknowledged and ours
        pending, then new ones. How many entries there were."""
        pipe = self.redis.pipeline(transaction=False)
        for stream in streams:
            if sweep:
                pipe.xautoclaim(stream, GROUP, consumer, RECLAIM_IDLE_MS, start_id="0-0", count=50)
                pipe.xreadgroup(GROUP, consumer, {stream: "0"}, count=50)
            pipe.xreadgroup(GROUP, consumer, {stream: ">"}, count=50)
        replies = await pipe.execute()
        per = 3 if sweep else 1
        found = 0
        for index, stream in enumerate(streams):
            reads = replies[per * index : per * index + per]
            claimed = reads.pop(0)[1] if sweep else []
            # An entry claimed is ours pending too: read twice, handled once.
            entries = dict([*claimed, *(e for reply in reads for _, got in reply or [] for e in got)])
            await self._handle(stream, list(entries.items()))
            found += len(entries)
        return found

    async def _handle(self, stream: str, entries: list[Any]) -> None:
        for entry_id, fields in entries:
            if not fields:
                continue  # trimmed from the stream meanwhile
            await self.record(fields["game"], fields["match"], orjson.loads(fields["result"]))
            await self.redis.xack(stream, GROUP, entry_id)

    async def record(self, game: str, match_id: str, result: dict[str, Any]) -> None:
        """Record one finished match, once, whatever happens midway."""
        if await self.redis.exists(keys.rated(match_id)):
            return
        seats = result["seats"]
        humans = [i for i, seat in enumerate(seats) if not seat["cpu"]]
        table = await self.redis.hget(keys.table(match_id), "doc")
        # A rating moves only between people: a table with a CPU seat is
        # never rated, whatever its record says (bot fill never marks one
        # ranked; this keeps it so if some path ever did).
        ranked = bool(table and orjson.loads(table).get("ranked")) and len(humans) == len(seats)
        mode = result["mode"]
        plan = await self._plan(game, mode, match_id, seats, humans, result["ranks"]) if ranked else {}
        now = time.time()
        for seat in humans:
            user = seats[seat]["user_id"]
            entry = platform_pb2.MatchRecord(
                match_id=match_id,
                game=game,
                mode=mode,
                seat=seat,
                rank=result["ranks"][seat],
                reason=result["reason"],
                forfeited=seat in result["forfeited"],
                ranked=ranked,
                finished_at=result["finished_at"],
                players=[
                    platform_pb2.TablePlayer(
                        user_id=s["user_id"],
                        name=s["display_name"],
                        cpu=s["cpu"],
                        guest=s.get("guest", False),
                    )
                    for s in seats
                ],
            )
            if result["scores"]:
                entry.score = result["scores"][seat]
            args: list[Any] = [match_id, now, HISTORY_LENGTH, _json(entry)]
            change = plan.get(str(seat))
            if change:
                after = change["after"]
                history = platform_pb2.RatingChange(
                    match_id=match_id,
                    at=result["finished_at"],
                    before=_rating(Rating(**change["before"]), change["games"]),
                    after=_rating(Rating(**after), change["games"] + 1),
                )
                args += [after["rating"], after["deviation"], after["volatility"], _json(history)]
            await self._record(
                keys=[
                    keys.recorded(user),
                    keys.rating(game, mode, user),
                    keys.rating_history(game, mode, user),
                    keys.match_history(user),
                ],
                args=args,
            )
            if change:
                await self.redis.zadd(keys.leaderboard(game, mode), {user: change["after"]["rating"]})
        if result["reason"] in ("forfeit", "inactivity"):
            metrics.FORFEITS.labels(game, result["reason"]).inc()
        for hook in self.hooks:
            await hook(game, match_id, result)
        await self.redis.set(keys.rated(match_id), 1, ex=PLAN_SECONDS)

    async def _plan(
        self,
        game: str,
        mode: str,
        match_id: str,
        seats: list[dict[str, Any]],
        humans: list[int],
        ranks: list[int],
    ) -> dict[str, Any]:
        """The rating changes of a ranked match, computed once: a repeated
        recording applies the same changes, never new ones from ratings
        already changed."""
        stored = await self.redis.get(keys.rating_plan(match_id))
        if stored is None and len(humans) >= 2:
            before = {s: await self.load_rating(game, mode, seats[s]["user_id"]) for s in humans}
            after = self._rate(game, mode, len(seats), humans, ranks, {s: r for s, (r, _) in before.items()})
            plan = {
                str(s): {"before": vars(before[s][0]), "after": vars(after[s]), "games": before[s][1]}
                for s in after
            }
            await self.redis.set(keys.rating_plan(match_id), orjson.dumps(plan), nx=True, ex=PLAN_SECONDS)
            stored = await self.redis.get(keys.rating_plan(match_id))
        return cast(dict[str, Any], orjson.loads(stored)) if stored else {}

    def _rate(
        self,
        game: str,
        mode: str,
        table_size: int,
        humans: list[int],
        ranks: list[int],
        before: dict[int, Rating],
    ) -> dict[int, Rating]:
        """Glicko-2 for the humans of a ranked match: teams of two as
        composites (the game's two teams), otherwise pairwise from the placings."""
        teams = [tuple(t.seats) for t in self.games.get(game).mode(mode).teams]
        if len(teams) == 2 and len(humans) == table_size:
            first, second = teams
            side_a, side_b = [before[s] for s in first], [before[s] for s in second]
            a_rank, b_rank = ranks[first[0]], ranks[second[0]]
            score_a = 0.5 if a_rank == b_rank else float(a_rank < b_rank)
            new_a, new_b = update_teams(side_a, side_b, score_a)
            return dict(zip(first, new_a, strict=True)) | dict(zip(second, new_b, strict=True))
        updated = update_placings([before[s] for s in humans], [ranks[s] for s in humans])
        return dict(zip(humans, updated, strict=True))


def _json(message: Any) -> bytes:
    return orjson.dumps(json_format.MessageToDict(message, preserving_proto_field_name=True))
