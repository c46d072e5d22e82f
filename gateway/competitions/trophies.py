"""Trophies: won once each, from finished matches (called by the results
consumer, gateway/results.py) and tournaments.

A result may be delivered twice (a replica dies before acknowledging it and
another claims it): each award is an HSETNX of the kind in the player's
trophy hash, so the second delivery finds it there and changes nothing, and
only the write that added it counts in the metric.

What a match proves is read from its result (ranks, scores) and, for the
trophies a moment of play wins (a General, a batida), from the match's
event history, unpacked with the game's own Event message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import orjson
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import competitions_pb2

from gateway import metrics
from gateway.competitions import keys as ckeys
from gateway.games import Games
from services.kit import keys
from services.kit.store import RedisClient


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
YATZY_300 = Kind("yatzy_300", "300 in Yatzy", "Finish a Yatzy match with 300 points or more.", "yatzy")
YATZY_OF_FIVES = Kind("yatzy_of_fives", "Yatzy of fives", "Fill the Yatzy box with five fives.", "yatzy")
BOZO_GENERAL = Kind("bozo_general", "General", "Score a General in Bozó.", "bozo")
DOMINO_BATIDA = Kind("domino_batida", "Batida", "Go out (bater) in a round of Dominó.", "domino")
PODIUM = Kind("tournament_podium", "Tournament podium", "Finish a tournament in the top three.")
KINDS = (FIRST_WIN, YATZY_300, YATZY_OF_FIVES, BOZO_GENERAL, DOMINO_BATIDA, PODIUM)
BY_ID = {kind.id: kind for kind in KINDS}

# The games' Event messages, read by field name (the gateway imports no game code).
Detector = Callable[[Any, Iterable[Any]], dict[int, set[Kind]]]


def _yatzy_moments(messages: Any, events: Iterable[Any]) -> dict[int, set[Kind]]:
    """A Yatzy box filled (points > 0) right after the seat threw five fives."""
    won: dict[int, set[Kind]] = {}
    last_dice: dict[int, list[int]] = {}
    for event in events:
        which = event.WhichOneof("event")
        if which == "rolled":
            last_dice[event.rolled.seat] = list(event.rolled.dice)
        elif which == "scored":
            scored = event.scored
            name = messages.Box.Name(scored.box)
            if name == "YATZY" and scored.points > 0 and last_dice.get(scored.seat) == [5] * 5:
                won.setdefault(scored.seat, set()).add(YATZY_OF_FIVES)
    return won


def _bozo_moments(messages: Any, events: Iterable[Any]) -> dict[int, set[Kind]]:
    """The General box filled with points (a crossed-out General is 0)."""
    won: dict[int, set[Kind]] = {}
    for event in events:
        if event.WhichOneof("event") == "scored":
            scored = event.scored
            if messages.Box.Name(scored.box) == "GENERAL" and scored.points > 0:
                won.setdefault(scored.seat, set()).add(BOZO_GENERAL)
    return won


def _domino_moments(messages: Any, events: Iterable[Any]) -> dict[int, set[Kind]]:
    """A round ended by a batida: the seat that went out."""
    won: dict[int, set[Kind]] = {}
    for event in events:
        if event.WhichOneof("event") == "round_ended":
            summary = event.round_ended
            if messages.RoundEndKind.Name(summary.kind) == "BATIDA":
                won.setdefault(summary.seat, set()).add(DOMINO_BATIDA)
    return won


MOMENTS: dict[str, Detector] = {
    "yatzy": _yatzy_moments,
    "bozo": _bozo_moments,
    "domino": _domino_moments,
}


def from_result(game: str, result: dict[str, Any]) -> dict[int, set[Kind]]:
    """What the result alone proves, per seat."""
    won: dict[int, set[Kind]] = {}
    ranks = result["ranks"]
    for seat, rank in enumerate(ranks):
        if rank == 1 and any(other > 1 for other in ranks):
            won.setdefault(seat, set()).add(FIRST_WIN)
        if game == "yatzy" and result["scores"] and result["scores"][seat] >= 300:
            won.setdefault(seat, set()).add(YATZY_300)
    return won


class Trophies:
    def __init__(self, redis: RedisClient, raw: RedisClient, games: Games) -> None:
        self.redis = redis  # decoded replies
        self.raw = raw  # bytes: the event history
        self.games = games

    async def on_result(self, game: str, match_id: str, result: dict[str, Any]) -> None:
        """Award what a finished match won; safe to repeat."""
        won = from_result(game, result)
        detector = MOMENTS.get(game)
        if detector is not None:
            messages = self.games.get(game).messages
            for seat, kinds in detector(messages, await self._events(game, match_id)).items():
                won.setdefault(seat, set()).update(kinds)
        seats = result["seats"]
        for seat, kinds in won.items():
            if seats[seat]["cpu"] or not seats[seat]["user_id"]:
                continue
            for kind in kinds:
                await self.award(seats[seat]["user_id"], kind, result["finished_at"], match_id=match_id)

    async def _events(self, game: str, match_id: str) -> list[Message]:
        event_cls = self.games.get(game).messages.Event
        entries: Any = await self.raw.xrange(keys.events(match_id))
        events = []
        for _, fields in entries:
            wrapped = match_pb2.MatchEvent.FromString(fields[b"d"])
            if wrapped.WhichOneof("body") == "event":
                event = event_cls()
                if wrapped.event.Unpack(event):
                    events.append(event)
        return events

    async def award(
        self, user_id: str, kind: Kind, at: float, match_id: str = "", tournament_id: str = ""
    ) -> bool:
        """Award ``kind`` unless the player holds it; whether this call did."""
        entry = orjson.dumps({"awarded_at": at, "match_id": match_id, "tournament_id": tournament_id})
        added = bool(await self.redis.hsetnx(ckeys.trophies(user_id), kind.id, entry))
        if added:
            metrics.TROPHIES_AWARDED.labels(kind.id).inc()
        return added

    async def list(self, user_id: str) -> competitions_pb2.ListTrophiesResponse:
        stored = cast(dict[str, str], await self.redis.hgetall(ckeys.trophies(user_id)))
        trophies = []
        for kind_id, raw in stored.items():
            kind = BY_ID.get(kind_id)
            if kind is None:
                continue  # a kind since retired
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
