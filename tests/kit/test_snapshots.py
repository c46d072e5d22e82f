"""A watched match's snapshots, one per seat and the spectators', share what
every audience sees (built once per version) and differ only in the seat,
the view and the legal actions: each must be, byte for byte, the snapshot
built for that audience alone from the record, in every game, at every
version of random matches (departures, claims, deadlines, CPU seats and the
finish included)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rodada.common.v1 import match_pb2

from services.core.store import StoredMatch
from services.kit import legal, play
from services.kit.game import Game, discover
from services.kit.matches import RNG_ALGORITHM, SPECTATOR, packed, result_message, snapshot, snapshots
from services.kit.play import Table
from tests.records import random_match

GAMES = discover()
MATCHES_EACH = 2


Config = tuple[str, int, dict[str, Any], tuple[int, ...]]  # game, seats, options, CPU seats


def _configs() -> list[Config]:
    """Every game's every mode, at its smallest and largest table, with a
    CPU seat where the game has them and the table has room for a person."""
    configs: list[Config] = []
    for name, game in GAMES.items():
        for mode in game.modes:
            for seats in sorted({min(mode.seats), max(mode.seats)}):
                cpu_seats = (seats - 1,) if game.cpu_seats and seats > 1 else ()
                configs.append((name, seats, dict(mode.options), cpu_seats))
    return configs


def alone(game: Game, match: StoredMatch, seat: int | None) -> match_pb2.Snapshot:
    """The snapshot for one audience, built from the record in one go, as
    the service built each audience's before they shared one base. A field
    added to Snapshot is added here too."""
    doc = match.doc
    table = Table.from_doc(doc)
    state = table.state
    outcome = play.outcome(game, table)
    due = play.deadline_at(game, table)
    return match_pb2.Snapshot(
        match_id=match.match_id,
        game=game.name,
        version=match.version,
        last_event_id=match.last_event_id,
        seat=SPECTATOR if seat is None else seat,
        seats=[
            match_pb2.Seat(**player, cpu_controlled=index in table.cpu)
            for index, player in enumerate(doc["players"])
        ],
        to_act=[] if outcome else game.to_act(state),
        status=match_pb2.MATCH_STATUS_FINISHED if outcome else match_pb2.MATCH_STATUS_ACTIVE,
        result=result_message(outcome) if outcome else None,
        fairness=match_pb2.Fairness(
            seed_sha256=doc["seed_sha256"], seed=doc["seed"] if outcome else "", algorithm=RNG_ALGORITHM
        ),
        view=packed(game.messages.View, game.view(state, seat)),
        last_action_at=doc["last_action_at"],
        scores=game.scores(state) if game.scores else [],
        idle_since=0.0 if outcome else table.idle_since,
        deadline_at=due or 0.0,
        mode=table.mode,
        legal=legal.message(
            game, legal.legal_actions(game, table, seat) if seat is not None and not outcome else []
        ),
    )


@pytest.mark.parametrize(("name", "seats", "options", "cpu_seats"), _configs())
def test_every_audiences_snapshot_is_the_one_built_for_it_alone(
    name: str, seats: int, options: dict[str, Any], cpu_seats: tuple[int, ...]
) -> None:
    game = GAMES[name]
    rnd = random.Random(f"{name}-{seats}-{sorted(options.items())}")
    audiences = (*range(seats), None)  # as the service lists them
    for _ in range(MATCHES_EACH):
        record = random_match(game, seats, options, rnd=rnd, cpu_seats=cpu_seats, departures=0.04)
        for stored in record.versions:
            expected = [alone(game, stored, seat).SerializeToString() for seat in audiences]
            shared = [built.SerializeToString() for built in snapshots(game, stored, audiences)]
            assert shared == expected, f"version {stored.version}"
            single = [snapshot(game, stored, seat).SerializeToString() for seat in audiences]
            assert single == expected, f"version {stored.version}"
