"""Trophies: won once each, from finished matches (called by the results
consumer, gateway/results.py) and tournaments.

A result may be delivered twice (a replica dies before acknowledging it and
another claims it): each award is an HSETNX of the kind in the player's
trophy hash, so the second delivery finds it there and changes nothing, and
only the write that added it counts in the metric.

The platform's own trophies (a first win, a tournament podium) are here;
a game's are declared in its folder (``services/<game>/trophies.py``),
listed by its ``Describe`` and found by its service when a match ends: the
result carries them as [seat, trophy id] pairs, and they are awarded here
like the platform's. The gateway knows no game's trophies by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import orjson
from rodada.platform.v1 import competitions_pb2

from gateway import metrics
from gateway.games import Games
from services.core import keys
from services.core.store import RedisClient


@dataclass(frozen=True)
class Kind:
    id: str
    title: str
    description: str
    game: str = ""  # empty: any game

    def message(self) -> competitions_pb2.TrophyKind:
        return competitions_pb2.TrophyKind(
            id=self.id, title=self.title, description=self.description, game=self.game
        )


FIRST_WIN = Kind("first_win", "First win", "Win a match against at least one other player.")
PODIUM = Kind("tournament_podium", "Tournament podium", "Finish a tournament in the top three.")
PLATFORM_KINDS = (FIRST_WIN, PODIUM)


def from_result(result: dict[str, Any]) -> dict[int, set[Kind]]:
    """What the result alone proves, per seat: the platform's trophies."""
    won: dict[int, set[Kind]] = {}
    ranks = result["ranks"]
    for seat, rank in enumerate(ranks):
        if rank == 1 and any(other > 1 for other in ranks):
            won.setdefault(seat, set()).add(FIRST_WIN)
    return won


class Trophies:
    def __init__(self, redis: RedisClient, games: Games) -> None:
        self.redis = redis  # decoded replies
        self.games = games

    def kinds(self) -> list[Kind]:
        """Every trophy: the platform's, then each described game's."""
        return [
            *PLATFORM_KINDS,
            *(
                Kind(t.id, t.title, t.description, g.name)
                for g in self.games.described()
                for t in g.info.trophies
            ),
        ]

    async def on_result(self, game: str, match_id: str, result: dict[str, Any]) -> None:
        """Award what a finished match won; safe to repeat."""
        won = from_result(result)
        declared = {kind.id: kind for kind in self.kinds() if kind.game == game}
        for seat, kind_id in result.get("trophies", []):
            if kind_id in declared:
                won.setdefault(seat, set()).add(declared[kind_id])
        seats = result["seats"]
        for seat, kinds in won.items():
            if seats[seat]["cpu"] or not seats[seat]["user_id"]:
                continue
            for kind in kinds:
                await self.award(seats[seat]["user_id"], kind, result["finished_at"], match_id=match_id)

    async def award(
        self, user_id: str, kind: Kind, at: float, match_id: str = "", tournament_id: str = ""
    ) -> bool:
        """Award ``kind`` unless the player holds it; whether this call did."""
        entry = orjson.dumps({"awarded_at": at, "match_id": match_id, "tournament_id": tournament_id})
        added = bool(await self.redis.hsetnx(keys.trophies(user_id), kind.id, entry))
        if added:
            metrics.TROPHIES_AWARDED.labels(kind.id).inc()
        return added

    async def list(self, user_id: str) -> competitions_pb2.ListTrophiesResponse:
        stored = cast(dict[str, str], await self.redis.hgetall(keys.trophies(user_id)))
        by_id = {kind.id: kind for kind in self.kinds()}
        trophies = []
        for kind_id, raw in stored.items():
            kind = by_id.get(kind_id)
            if kind is None:
                continue  # a kind since retired, or of a game not described yet
            entry = orjson.loads(raw)
            trophies.append(
                competitions_pb2.Trophy(
                    kind=kind.message(),
                    awarded_at=entry["awarded_at"],
                    match_id=entry["match_id"],
                    tournament_id=entry["tournament_id"],
                )
            )
        trophies.sort(key=lambda t: (t.awarded_at, t.kind.id))
        return competitions_pb2.ListTrophiesResponse(trophies=trophies)
