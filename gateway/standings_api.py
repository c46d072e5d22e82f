"""Leaderboards, ratings and match history over HTTP."""

from __future__ import annotations

from typing import Annotated, Any, cast

import orjson
from fastapi import APIRouter, Query

from gateway.deps import CallerDep, PlatformDep
from gateway.platform import ApiError
from gateway.ratings import Rating
from gateway.results import leaderboard_key, matches_key, rating_history_key, rating_key

router = APIRouter(tags=["ratings"])

MODES = {
    "bozo": ("duel", "duplas"),
    "dudo": ("standard",),
    "bozu_mekuri": ("standard",),
    "domino": ("standard",),
    "yatzy": ("standard",),
}
Page = Annotated[int, Query(ge=1, le=100)]
Offset = Annotated[int, Query(ge=0)]


def _check(game: str, mode: str) -> None:
    if mode not in MODES.get(game, ()):
        raise ApiError(404, "unknown_leaderboard", f"leaderboards: {MODES}")


def _rating_json(stored: dict[str, str]) -> dict[str, Any]:
    rating = Rating(float(stored["rating"]), float(stored["deviation"]), float(stored["volatility"]))
    return {
        "rating": round(rating.rating, 1),
        "deviation": round(rating.deviation, 1),
        "provisional": rating.provisional,
        "games": int(stored.get("games", 0)),
    }


@router.get("/v1/leaderboards/{game}/{mode}")
async def leaderboard(
    game: str, mode: str, caller: CallerDep, p: PlatformDep, offset: Offset = 0, limit: Page = 20
) -> dict[str, Any]:
    """Ranked players of a game and mode, best first (provisional ratings flagged)."""
    _check(game, mode)
    key = leaderboard_key(game, mode)
    # The gateway's Redis client decodes replies: str, not bytes.
    rows = cast(
        list[tuple[str, float]], await p.redis.zrevrange(key, offset, offset + limit - 1, withscores=True)
    )
    entries = []
    for position, (user_id, _) in enumerate(rows, start=offset + 1):
        stored = cast(dict[str, str], await p.redis.hgetall(rating_key(game, mode, user_id)))
        name = await p.redis.hget(f"user:{user_id}", "name")
        entries.append({"position": position, "user_id": user_id, "name": name, **_rating_json(stored)})
    return {
        "game": game,
        "mode": mode,
        "total": await p.redis.zcard(key),
        "offset": offset,
        "entries": entries,
    }


@router.get("/v1/users/{user_id}/ratings")
async def ratings(user_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A player's rating in every game and mode they have played ranked."""
    found = []
    for game, modes in MODES.items():
        for mode in modes:
            stored = cast(dict[str, str], await p.redis.hgetall(rating_key(game, mode, user_id)))
            if stored:
                found.append({"game": game, "mode": mode, **_rating_json(stored)})
    return {"user_id": user_id, "ratings": found}


@router.get("/v1/users/{user_id}/ratings/{game}/{mode}/history")
async def rating_history(
    user_id: str,
    game: str,
    mode: str,
    caller: CallerDep,
    p: PlatformDep,
    offset: Offset = 0,
    limit: Page = 20,
) -> dict[str, Any]:
    _check(game, mode)
    rows = await p.redis.lrange(rating_history_key(game, mode, user_id), offset, offset + limit - 1)
    return {"user_id": user_id, "game": game, "mode": mode, "history": [orjson.loads(r) for r in rows]}


@router.get("/v1/users/{user_id}/matches")
async def match_history(
    user_id: str, caller: CallerDep, p: PlatformDep, offset: Offset = 0, limit: Page = 20
) -> dict[str, Any]:
    """A player's finished matches, newest first."""
    rows = await p.redis.lrange(matches_key(user_id), offset, offset + limit - 1)
    return {"user_id": user_id, "matches": [orjson.loads(r) for r in rows]}
