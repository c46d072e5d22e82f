"""Finished matches: match history, forfeits, and ratings for ranked tables.

Game services append every finished match to the ``results`` stream. Every
gateway replica reads it in one consumer group, so each result goes to one
replica; ``rated:<match>`` (SET NX) makes a redelivery after a crash harmless.

Keys: ``rating:<game>:<mode>:<user>`` hash (rating, deviation, volatility,
games); ``leaderboard:<game>:<mode>`` sorted set by rating;
``rating-history:<game>:<mode>:<user>`` and ``matches:<user>`` lists, newest
first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from typing import Any

import orjson
from redis.exceptions import ResponseError

from gateway import metrics
from gateway.platform import Platform
from gateway.ratings import Rating, update_placings, update_teams
from services.kit.store import RESULTS_STREAM
from services.kit.tasks import cancel_requested

log = logging.getLogger("rodada.gateway.results")
GROUP = "ratings"
HISTORY_LENGTH = 200


def rating_key(game: str, mode: str, user_id: str) -> str:
    return f"rating:{game}:{mode}:{user_id}"


def leaderboard_key(game: str, mode: str) -> str:
    return f"leaderboard:{game}:{mode}"


def rating_history_key(game: str, mode: str, user_id: str) -> str:
    return f"rating-history:{game}:{mode}:{user_id}"


def matches_key(user_id: str) -> str:
    return f"matches:{user_id}"


def mode_of(game: str, options: dict[str, Any], seats: int) -> str:
    """Ratings are kept per game and mode: Bozó's duel and duplas differ."""
    if game == "bozo":
        return {1: "solo", 2: "duel", 4: "duplas"}.get(seats, str(options.get("mode", "")).lower())
    return "standard"


async def load_rating(platform: Platform, game: str, mode: str, user_id: str) -> Rating:
    stored = await platform.redis.hgetall(rating_key(game, mode, user_id))
    if not stored:
        return Rating()
    return Rating(float(stored["rating"]), float(stored["deviation"]), float(stored["volatility"]))


async def run_results(platform: Platform) -> None:
    """Consume finished matches forever."""
    consumer = f"{socket.gethostname()}-{os.getpid()}"
    with contextlib.suppress(ResponseError):  # the group exists: another replica made it
        await platform.redis.xgroup_create(RESULTS_STREAM, GROUP, id="0", mkstream=True)
    while not cancel_requested():
        try:
            # Our own pending entries first (a restart), then new ones.
            for start in ("0", ">"):
                reply: list[tuple[str, list[tuple[str, dict[str, str]]]]] = await platform.redis.xreadgroup(  # type: ignore[assignment]
                    GROUP, consumer, {RESULTS_STREAM: start}, count=50, block=2000 if start == ">" else None
                )
                for _, entries in reply or []:
                    for entry_id, fields in entries:
                        await record(
                            platform, fields["game"], fields["match"], orjson.loads(fields["result"])
                        )
                        await platform.redis.xack(RESULTS_STREAM, GROUP, entry_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("recording results failed")
            await asyncio.sleep(1)


async def record(platform: Platform, game: str, match_id: str, result: dict[str, Any]) -> None:
    """Record one finished match, once."""
    if not await platform.redis.set(f"rated:{match_id}", 1, nx=True, ex=30 * 24 * 3600):
        return
    seats = result["seats"]
    humans = [i for i, seat in enumerate(seats) if not seat["cpu"]]
    table = await platform.redis.get(f"table:{match_id}")
    ranked = bool(table and orjson.loads(table).get("ranked"))
    mode = mode_of(game, result["options"], len(seats))
    if result["reason"] in ("forfeit", "inactivity"):
        metrics.FORFEITS.labels(game, result["reason"]).inc()
    changes: dict[int, tuple[Rating, Rating]] = {}
    if ranked and len(humans) >= 2:
        changes = await rate(platform, game, mode, seats, humans, result["ranks"])
    for seat in humans:
        user = seats[seat]["user_id"]
        entry: dict[str, Any] = {
            "match": match_id,
            "game": game,
            "mode": mode,
            "ranked": ranked,
            "seat": seat,
            "rank": result["ranks"][seat],
            "ranks": result["ranks"],
            "scores": result["scores"],
            "reason": result["reason"],
            "players": [s["display_name"] for s in seats],
            "finished_at": result["finished_at"],
        }
        if seat in changes:
            before, after = changes[seat]
            entry["rating"] = {"before": round(before.rating, 1), "after": round(after.rating, 1)}
        pipe = platform.redis.pipeline(transaction=False)
        pipe.lpush(matches_key(user), orjson.dumps(entry))
        pipe.ltrim(matches_key(user), 0, HISTORY_LENGTH - 1)
        await pipe.execute()


async def rate(
    platform: Platform, game: str, mode: str, seats: list[dict[str, Any]], humans: list[int], ranks: list[int]
) -> dict[int, tuple[Rating, Rating]]:
    """Glicko-2 for the humans of a ranked match: teams of two as composites
    (Bozó duplas, Dominó), otherwise pairwise from the placings."""
    before = {s: await load_rating(platform, game, mode, seats[s]["user_id"]) for s in humans}
    teams = platform.game(game).policy.teams.get(len(seats), ())
    after: dict[int, Rating] = {}
    if teams and len(teams) == 2 and len(humans) == len(seats):
        (_, first), (_, second) = teams
        side_a, side_b = [before[s] for s in first], [before[s] for s in second]
        a_rank, b_rank = ranks[first[0]], ranks[second[0]]
        score_a = 0.5 if a_rank == b_rank else float(a_rank < b_rank)
        new_a, new_b = update_teams(side_a, side_b, score_a)
        after = dict(zip(first, new_a, strict=True)) | dict(zip(second, new_b, strict=True))
    else:
        updated = update_placings([before[s] for s in humans], [ranks[s] for s in humans])
        after = dict(zip(humans, updated, strict=True))
    now = time.time()
    for seat, rating in after.items():
        user = seats[seat]["user_id"]
        games = int(await platform.redis.hincrby(rating_key(game, mode, user), "games", 1))
        pipe = platform.redis.pipeline(transaction=False)
        pipe.hset(
            rating_key(game, mode, user),
            mapping={"rating": rating.rating, "deviation": rating.deviation, "volatility": rating.volatility},
        )
        pipe.zadd(leaderboard_key(game, mode), {user: rating.rating})
        change = {
            "rating": rating.rating,
            "deviation": rating.deviation,
            "before": before[seat].rating,
            "games": games,
            "at": now,
        }
        pipe.lpush(rating_history_key(game, mode, user), orjson.dumps(change))
        pipe.ltrim(rating_history_key(game, mode, user), 0, HISTORY_LENGTH - 1)
        await pipe.execute()
    return {seat: (before[seat], after[seat]) for seat in after}
