"""Matchmaking.queue with Bozó served in this process: two spellings of the
same options are one queue, each spelling is made canonical once (and again
when the game's facts are new), and a refusal is never remembered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from gateway.games import Games
from gateway.matchmaking.queues import Matchmaking
from gateway.settings import MatchmakingSettings
from services.bozo.game import GAME as BOZO
from services.core.errors import Refused
from services.core.store import RecordStore
from tests.in_process import GameServer, Keys


@pytest.fixture(scope="module")
async def games(store: RecordStore) -> AsyncIterator[Games]:
    server = GameServer(BOZO, store, Keys())
    await server.start()
    games = Games({"bozo": server.address})
    await games.start(wait_seconds=10)
    try:
        yield games
    finally:
        await games.close()
        await server.__aexit__()


async def test_a_queue_is_made_canonical_once_per_spelling(games: Games, store: RecordStore) -> None:
    mm = Matchmaking(store.redis, games, cast(Any, None), MatchmakingSettings())
    made: list[Any] = []
    canonical = mm._canonical_queue

    def counted(*args: Any) -> Any:
        made.append(args[1])
        return canonical(*args)

    mm._canonical_queue = counted  # type: ignore[method-assign]
    duel = mm.queue("bozo", {"mode": "DUEL"}, False)
    assert mm.queue("bozo", {"mode": "DUEL"}, False) is duel
    spelled_out = mm.queue("bozo", {"advice": False, "mode": "DUEL"}, False)
    assert spelled_out == duel and spelled_out is not duel  # another spelling, the same queue
    assert mm.queue("bozo", {"mode": "DUEL"}, True) != duel  # ranked is its own queue
    assert len(made) == 3
    for _ in range(2):  # refused each time, never remembered
        with pytest.raises(Refused):
            mm.queue("bozo", {"mode": "NO_SUCH_MODE"}, False)
    assert len(made) == 5
    bozo = games.get("bozo")
    renewed = type(bozo.info)()
    renewed.CopyFrom(bozo.info)
    bozo.info = renewed  # the game's facts fetched again: made again
    assert mm.queue("bozo", {"mode": "DUEL"}, False) == duel and len(made) == 6
