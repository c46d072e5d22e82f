"""Ratings, leaderboards and histories, read for both faces (written by
``results.py``)."""

from __future__ import annotations

from typing import cast

import orjson
from google.protobuf import json_format
from rodada.platform.v1 import platform_pb2

from gateway import paging
from gateway.games import Games
from gateway.results import rating_message
from services.core import keys
from services.core.errors import not_found
from services.core.store import RedisClient

DEFAULT_PAGE = 20
MAX_PAGE = 100


def page(offset: int, limit: int) -> tuple[int, int]:
    return paging.page(offset, limit, default=DEFAULT_PAGE, maximum=MAX_PAGE)


class Standings:
    def __init__(self, redis: RedisClient, games: Games) -> None:
        self.redis = redis
        self.games = games

    def _rated(self, game: str, mode: str) -> None:
        client = self.games.get(game)
        if not any(m.name == mode and m.rated for m in client.info.modes):
            rated = [m.name for m in client.info.modes if m.rated]
            raise not_found("unknown_leaderboard", f"{game} leaderboards: {', '.join(rated)}")

    async def leaderboard(
        self, game: str, mode: str, offset: int, limit: int
    ) -> platform_pb2.GetLeaderboardResponse:
        """Ranked players of a game and mode, best first (provisional ratings flagged)."""
        self._rated(game, mode)
        offset, limit = page(offset, limit)
        key = keys.leaderboard(game, mode)
        rows = cast(
            list[tuple[str, float]],
            await self.redis.zrevrange(key, offset, offset + limit - 1, withscores=True),
        )
        reply = platform_pb2.GetLeaderboardResponse(
            game=game, mode=mode, total=int(await self.redis.zcard(key)), offset=offset
        )
        for position, (user_id, _) in enumerate(rows, start=offset + 1):
            stored = cast(dict[str, str], await self.redis.hgetall(keys.rating(game, mode, user_id)))
            name = cast(str | None, await self.redis.hget(keys.user(user_id), "name"))
            reply.entries.add(
                position=position, user_id=user_id, name=name or "", rating=rating_message(stored)
            )
        return reply

    async def ratings(self, user_id: str) -> platform_pb2.ListRatingsResponse:
        """A player's rating in every game and mode they have played ranked."""
        reply = platform_pb2.ListRatingsResponse(user_id=user_id)
        for game in self.games.described():
            for mode in game.info.modes:
                if not mode.rated:
                    continue
                stored = cast(
                    dict[str, str], await self.redis.hgetall(keys.rating(game.name, mode.name, user_id))
                )
                if stored:
                    reply.ratings.add(game=game.name, mode=mode.name, rating=rating_message(stored))
        return reply

    async def rating_history(
        self, user_id: str, game: str, mode: str, offset: int, limit: int
    ) -> platform_pb2.GetRatingHistoryResponse:
        self._rated(game, mode)
        offset, limit = page(offset, limit)
        rows = await self.redis.lrange(keys.rating_history(game, mode, user_id), offset, offset + limit - 1)
        reply = platform_pb2.GetRatingHistoryResponse(user_id=user_id, game=game, mode=mode)
        for row in rows:
            json_format.ParseDict(orjson.loads(row), reply.history.add())
        return reply

    async def matches(self, user_id: str, offset: int, limit: int) -> platform_pb2.ListMatchHistoryResponse:
        """A player's finished matches, newest first."""
        offset, limit = page(offset, limit)
        rows = await self.redis.lrange(keys.match_history(user_id), offset, offset + limit - 1)
        reply = platform_pb2.ListMatchHistoryResponse(user_id=user_id)
        for row in rows:
            json_format.ParseDict(orjson.loads(row), reply.matches.add())
        return reply
