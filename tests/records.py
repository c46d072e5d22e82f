"""Matches played at random through the kit and recorded as a table's feed
delivers them, for the fairness verifier's tests.

The service's own parts make the record: the kit's play with the match
generator and the CPU stream (as ``services/kit/matches.py`` runs them), the
service's encoding of what happened and its snapshots, and the gateway's
rendering of feed items. Each viewer's record holds the events that viewer
may see and its snapshot after every version, like a feed opened before the
start.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rodada.common.v1 import match_pb2

from gateway.sockets import render
from services.core.store import StoredMatch
from services.kit import play
from services.kit.engine import Context
from services.kit.game import CLAIMABLE, CPU_PLAYS, NOBODY, OPPONENTS, Game
from services.kit.matches import encode, snapshot
from services.kit.play import Happening
from services.kit.rng import MatchRng, cpu_seed, seed_digest

SPECTATOR = -1
START = 1_000.0
CLAIM_AFTER = 121.0  # past the 120 s of inactivity a claim needs


@dataclass
class Recorded:
    """One finished match: its events (ids from 1), the stored record after
    each version, and the generator's counter at the end."""

    game: Game
    seed: bytes
    players: list[dict[str, Any]]
    events: list[match_pb2.MatchEvent] = field(default_factory=list)
    versions: list[StoredMatch] = field(default_factory=list)
    counter: int = 0

    def feed(self, viewer: int) -> list[dict[str, Any]]:
        """What ``viewer``'s feed delivered (a seat, or SPECTATOR), as JSON items."""
        seat = None if viewer == SPECTATOR else viewer
        items: list[dict[str, Any]] = []
        by_version: dict[int, list[match_pb2.MatchEvent]] = {}
        for event in self.events:
            by_version.setdefault(event.version, []).append(event)
        for stored in self.versions:
            for event in by_version.get(stored.version, []):
                if not event.audience or viewer in event.audience:
                    items.append(json.loads(render(event)))
            items.append(json.loads(render(snapshot(self.game, stored, seat))))
        items.append({"end": {"reason": "finished"}})
        return items

    def viewers(self) -> list[int]:
        return [*range(len(self.players)), SPECTATOR]


class Player:
    """Random play of a match through the kit, committing like the service."""

    def __init__(
        self, game: Game, seats: int, options: dict[str, Any], rnd: random.Random, cpu_seats: Sequence[int]
    ) -> None:
        self.game = game
        self.rnd = rnd
        seed = rnd.randbytes(32)
        self.rng, self.cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
        self.now = START
        players = [
            {"user_id": "" if s in cpu_seats else f"u{s}", "display_name": f"p{s}", "cpu": s in cpu_seats}
            for s in range(seats)
        ]
        self.record = Recorded(game, seed, players)
        self.table, happened = play.start(
            game, seats, options, Context(self.rng, self.now, self.now), cpu_seats, self.cpu_rng
        )
        self._commit(happened)

    def _ctx(self) -> Context:
        return Context(self.rng, self.now, self.table.idle_since)

    def _commit(self, happened: list[Happening]) -> None:
        version = len(self.record.versions) + 1
        outcome = play.outcome(self.game, self.table)
        self._number(encode(self.game.messages.Event, happened, version, self.now, outcome))
        doc = {
            "players": self.record.players,
            **json.loads(json.dumps(self.table.doc_fields())),
            "seed": self.record.seed.hex(),
            "seed_sha256": seed_digest(self.record.seed),
            "last_action_at": self.now,
        }
        self.record.versions.append(StoredMatch("m1", version, len(self.record.events), doc))

    def _number(self, events: list[match_pb2.MatchEvent]) -> None:
        for event in events:
            event.id = len(self.record.events) + 1
            self.record.events.append(event)

    def _humans_in_play(self) -> list[int]:
        return [
            s
            for s in range(self.table.seats)
            if s not in self.table.cpu and self.game.in_play(self.table.state, s)
        ]

    def play(self, departures: float) -> Recorded:
        """Until the end: mostly legal moves of the seat to act; now and then
        (``departures``) a seat leaves, a claim, or a deadline comes."""
        game, table = self.game, self.table
        while play.outcome(game, table) is None:
            assert len(self.record.versions) < 5_000, "the match does not end"
            self.now += 1.0
            roll = self.rnd.random()
            if roll < departures and self._leave():
                continue
            if roll < 2 * departures and self._claim():
                continue
            if roll < 3 * departures and self._deadline():
                continue
            if roll < 4 * departures and table.left:
                seat = self.rnd.choice(table.left)
                self._commit(play.act(game, table, seat, {"take_over": {}}, self._ctx(), self.cpu_rng))
                continue
            (seat, *_) = game.to_act(table.state)
            assert game.legal is not None
            action = self.rnd.choice(game.legal(table.state, seat))
            self._commit(play.act(game, table, seat, action, self._ctx(), self.cpu_rng))
        self.record.counter = self.rng.counter
        return self.record

    def _leave(self) -> bool:
        humans = self._humans_in_play()
        if not humans:
            return False
        seat = self.rnd.choice(humans)
        self._commit(play.leave(self.game, self.table, seat, self._ctx(), self.cpu_rng))
        return True

    def _claim(self) -> bool:
        game, table = self.game, self.table
        if game.claims == NOBODY:
            return False
        idle = game.to_act(table.state)[0]
        claimers = [
            s
            for s in self._humans_in_play()
            if s != idle
            and (game.claims != OPPONENTS or game.side(table.mode, s) != game.side(table.mode, idle))
        ]
        if not claimers:
            return False
        self.now = max(self.now, table.idle_since + CLAIM_AFTER)
        seat = self.rnd.choice(claimers)
        self._commit(play.act(game, table, seat, {"claim_inactivity": {}}, self._ctx(), self.cpu_rng))
        return True

    def _deadline(self) -> bool:
        """The turn clock runs out: a notice only (claimable modes, appended at
        the same version, as the service does), or the mode's policy."""
        due = play.deadline_at(self.game, self.table)
        if due is None:
            return False
        self.now = max(self.now, due + 1.0)
        if self.game.mode(self.table.mode).deadline == CLAIMABLE:
            _, notices = play.fire_deadline(self.game, self.table, self._ctx(), self.cpu_rng)
            version = len(self.record.versions)
            self._number(encode(self.game.messages.Event, notices, version, self.now, None))
            return True
        _, happened = play.fire_deadline(self.game, self.table, self._ctx(), self.cpu_rng)
        self._commit(happened)
        return True


def random_match(
    game: Game,
    seats: int,
    options: dict[str, Any] | None = None,
    *,
    rnd: random.Random,
    cpu_seats: Sequence[int] = (),
    departures: float = 0.0,
) -> Recorded:
    """A finished match of ``game`` played at random; departures (leaving,
    claims, deadlines, taking a seat back) happen with that chance per step."""
    if game.leaving == CPU_PLAYS and departures:
        departures = min(departures, 0.02)  # a leaver's seat is played by the CPU: keep people in
    return Player(game, seats, options or {}, rnd, cpu_seats).play(departures)
