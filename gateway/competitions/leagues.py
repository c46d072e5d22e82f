"""Leagues: seasons of each ranked game and mode, with divisions.

Every ranked result (the results consumer calls ``on_result``) scores each
player's placement points (gateway/competitions/rules.py) in the current
season; a player's first ranked result puts them in the lowest division.
When a season's time is up, the periodic check of any replica closes it:
the best of each division go up, the worst go down (``rules.season_moves``)
and the next season begins, empty.

Exactly once, whatever the replicas do: a result is counted by one script
that adds ``<match>:<player>`` to the season's recorded set and scores only
if it was new (a result delivered twice counts once), and only while the
season it was computed for is still current. A season closes by one script
that checks the season's number and its version (every result bumps it), so
moves computed from standings a late result has since changed are refused
and computed again.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, cast

import orjson
from rodada.platform.v1 import competitions_pb2

from gateway import metrics
from gateway.accounts import Accounts
from gateway.competitions import rules
from gateway.games import Games
from services.core import keys
from services.core.errors import not_found
from services.core.store import RedisClient

# KEYS: season. ARGV: now, season length.
_BEGIN = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'number', 1, 'started_at', ARGV[1], 'ends_at', ARGV[1] + ARGV[2], 'version', 0,
           'last_moves', '[]')
return 1
"""

# KEYS: season, divisions, points, played, recorded. ARGV: season number,
# recorded member, player, points, lowest division.
_RECORD = """
if redis.call('HGET', KEYS[1], 'number') ~= ARGV[1] then return -1 end
if redis.call('SADD', KEYS[5], ARGV[2]) == 0 then return 0 end
redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[5])
redis.call('ZINCRBY', KEYS[3], ARGV[4], ARGV[3])
redis.call('HINCRBY', KEYS[4], ARGV[3], 1)
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1
"""

# KEYS: season, divisions. ARGV: season number, version, now, length, moves
# (JSON), then player, division pairs.
_CLOSE = """
if redis.call('HGET', KEYS[1], 'number') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'version') ~= ARGV[2] then
  return 0
end
for i = 6, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'number', tonumber(ARGV[1]) + 1, 'started_at', ARGV[3],
           'ends_at', ARGV[3] + ARGV[4], 'version', 0, 'last_moves', ARGV[5])
return 1
"""


class Leagues:
    def __init__(
        self, redis: RedisClient, games: Games, season_seconds: float, divisions: int, moves: int
    ) -> None:
        self.redis = redis
        self.games = games
        self.season_seconds = season_seconds
        self.divisions = divisions
        self.moves = moves
        self.accounts = Accounts(redis)
        self._begin = redis.register_script(_BEGIN)
        self._record = redis.register_script(_RECORD)
        self._close = redis.register_script(_CLOSE)

    def _rated(self, game: str, mode: str) -> None:
        client = self.games.get(game)
        if not any(m.name == mode and m.rated for m in client.info.modes):
            rated = [m.name for m in client.info.modes if m.rated]
            raise not_found("unknown_league", f"{game} leagues: {', '.join(rated)}")

    async def _season(self, game: str, mode: str) -> dict[str, str]:
        """The current season, the first one begun if there is none yet (and
        known to the season check from then on)."""
        await self._begin(keys=[keys.league_season(game, mode)], args=[time.time(), self.season_seconds])
        await self.redis.sadd(keys.LEAGUES, f"{game}:{mode}")  # every time: a crash between is harmless
        return cast(dict[str, str], await self.redis.hgetall(keys.league_season(game, mode)))

    async def on_result(self, game: str, match_id: str, result: dict[str, Any]) -> None:
        """Score a ranked match in the current season (once)."""
        table = await self.redis.hget(keys.table(match_id), "doc")
        if not (table and orjson.loads(table).get("ranked")):
            return
        mode = result["mode"]
        seats = result["seats"]
        points = rules.placement_points(result["ranks"])
        for seat, player in enumerate(seats):
            if player["cpu"] or not player["user_id"]:
                continue
            while True:
                season = int((await self._season(game, mode))["number"])
                done = await self._record(
                    keys=[
                        keys.league_season(game, mode),
                        keys.league_divisions(game, mode),
                        keys.league_points(game, mode, season),
                        keys.league_played(game, mode, season),
                        keys.league_recorded(game, mode, season),
                    ],
                    args=[
                        season,
                        f"{match_id}:{player['user_id']}",
                        player["user_id"],
                        points[seat],
                        self.divisions,
                    ],
                )
                if done != -1:
                    break  # else the season closed meanwhile: count it in the new one

    async def _standings(
        self, game: str, mode: str, season: int
    ) -> tuple[dict[int, list[tuple[str, float, int]]], dict[str, int]]:
        """Per division, (player, points, played) best first; and every
        player's division."""
        scored = cast(
            list[tuple[str, float]],
            await self.redis.zrange(keys.league_points(game, mode, season), 0, -1, withscores=True),
        )
        played = cast(dict[str, str], await self.redis.hgetall(keys.league_played(game, mode, season)))
        divisions = cast(dict[str, str], await self.redis.hgetall(keys.league_divisions(game, mode)))
        by_division: dict[int, list[tuple[str, float, int]]] = defaultdict(list)
        for user, points in scored:
            by_division[int(divisions.get(user, self.divisions))].append(
                (user, points, int(played.get(user, 0)))
            )
        for ranked in by_division.values():
            ranked.sort(key=lambda row: (-row[1], row[2], row[0]))
        return by_division, {user: int(d) for user, d in divisions.items()}

    async def close_due(self, game: str, mode: str) -> bool:
        """Close the season if its time is up; whether this call closed it."""
        season = await self._season(game, mode)
        if time.time() < float(season["ends_at"]):
            return False
        number = int(season["number"])
        standings, divisions = await self._standings(game, mode, number)
        moved = rules.season_moves(
            {d: [row[0] for row in rows] for d, rows in standings.items()}, self.divisions, self.moves
        )
        moves: list[dict[str, Any]] = [
            {"user_id": u, "from_division": divisions.get(u, self.divisions), "to_division": d}
            for u, d in sorted(moved.items())
        ]
        closed = await self._close(
            keys=[keys.league_season(game, mode), keys.league_divisions(game, mode)],
            args=[
                number,
                season["version"],
                time.time(),
                self.season_seconds,
                orjson.dumps(moves),
                *(x for pair in sorted(moved.items()) for x in pair),
            ],
        )
        if closed:
            metrics.LEAGUE_SEASONS.labels(game, mode).inc()
            metrics.LEAGUE_MOVES.labels(game, mode, "up").inc(
                sum(m["to_division"] < m["from_division"] for m in moves)
            )
            metrics.LEAGUE_MOVES.labels(game, mode, "down").inc(
                sum(m["to_division"] > m["from_division"] for m in moves)
            )
        return bool(closed)

    async def check(self) -> None:
        for league in cast(set[str], await self.redis.smembers(keys.LEAGUES)):
            game, _, mode = league.partition(":")
            await self.close_due(game, mode)

    async def league(self, game: str, mode: str) -> competitions_pb2.League:
        self._rated(game, mode)
        season = await self._season(game, mode)
        number = int(season["number"])
        standings, _ = await self._standings(game, mode, number)
        message = competitions_pb2.League(
            game=game,
            mode=mode,
            season=number,
            started_at=float(season["started_at"]),
            ends_at=float(season["ends_at"]),
            division_count=self.divisions,
            last_moves=[competitions_pb2.SeasonMove(**m) for m in orjson.loads(season["last_moves"])],
        )
        for division in range(1, self.divisions + 1):
            rows = standings.get(division, [])
            message.divisions.append(
                competitions_pb2.Division(
                    number=division,
                    standings=[
                        competitions_pb2.LeagueStanding(
                            place=place,
                            user_id=user,
                            name=await self.accounts.name(user) or "",
                            points=points,
                            played=played,
                        )
                        for place, (user, points, played) in enumerate(rows, 1)
                    ],
                )
            )
        return message
