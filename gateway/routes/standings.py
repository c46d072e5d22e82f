"""Ratings, leaderboards and histories."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from rodada.platform.v1 import platform_pb2

from gateway.deps import CallerDep, PlatformDep, message_json
from gateway.openapi import returns
from gateway.standings import DEFAULT_PAGE, MAX_PAGE

router = APIRouter(prefix="/v1", tags=["ratings"])

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Offset = Annotated[int, Query(ge=0)]


@router.get("/leaderboards/{game}/{mode}", openapi_extra=returns(platform_pb2.GetLeaderboardResponse))
async def leaderboard(
    game: str, mode: str, caller: CallerDep, p: PlatformDep, offset: Offset = 0, limit: Limit = DEFAULT_PAGE
) -> dict[str, Any]:
    """Ranked players of a game and mode, best first (provisional ratings flagged)."""
    return message_json(await p.standings.leaderboard(game, mode, offset, limit))


@router.get("/users/{user_id}/ratings", openapi_extra=returns(platform_pb2.ListRatingsResponse))
async def ratings(user_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A player's rating in every game and mode they have played ranked."""
    return message_json(await p.standings.ratings(user_id))


@router.get(
    "/users/{user_id}/ratings/{game}/{mode}/history",
    openapi_extra=returns(platform_pb2.GetRatingHistoryResponse),
)
async def rating_history(
    user_id: str,
    game: str,
    mode: str,
    caller: CallerDep,
    p: PlatformDep,
    offset: Offset = 0,
    limit: Limit = DEFAULT_PAGE,
) -> dict[str, Any]:
    """A player's rating changes in one game and mode, newest first."""
    return message_json(await p.standings.rating_history(user_id, game, mode, offset, limit))


@router.get("/users/{user_id}/matches", openapi_extra=returns(platform_pb2.ListMatchHistoryResponse))
async def match_history(
    user_id: str, caller: CallerDep, p: PlatformDep, offset: Offset = 0, limit: Limit = DEFAULT_PAGE
) -> dict[str, Any]:
    """A player's finished matches, newest first."""
    return message_json(await p.standings.matches(user_id, offset, limit))
