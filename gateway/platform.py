"""What every gateway entry point shares — the HTTP routes, the gRPC face,
the feeds, the matcher, the clocks, the results consumer — built once at
start-up from the settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from gateway.clocks import Clocks
from gateway.competitions.leagues import Leagues
from gateway.competitions.schedules import Schedules
from gateway.competitions.tournaments import Tournaments
from gateway.competitions.trophies import Trophies
from gateway.feeds import Connections, Feeds
from gateway.games import Games
from gateway.matches import MatchClient
from gateway.matchmaking.queues import Matchmaking
from gateway.moderation.moderation import Moderation
from gateway.play import Play
from gateway.results import Results
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings, MatchmakingSettings
from gateway.social.social import Social
from gateway.standings import Standings
from gateway.tables import Tables
from services.core import keys
from services.core.bans import Bans
from services.core.feeds import FeedHub
from services.core.store import RecordStore, connect, publish_command
from services.core.tasks import every

# How long the gateway waits at start for the games to describe themselves
# before it serves anyway (games still unknown answer 503 until they do).
DESCRIBE_WAIT_SECONDS = 10.0


class Platform:
    def __init__(self, settings: GatewaySettings, matchmaking: MatchmakingSettings | None = None) -> None:
        self.settings = settings
        pool = {"timeout": settings.redis_timeout_seconds, "max_connections": settings.redis_max_connections}
        self.redis = connect(settings.redis_url, settings.redis_cluster, decode=True, **pool)  # type: ignore[arg-type]
        # The match store and the feeds deal in bytes (serialized protos).
        self.raw = connect(settings.redis_url, settings.redis_cluster, **pool)  # type: ignore[arg-type]
        self.games = Games(settings.game_addresses)
        self.sessions = Sessions(self.redis, settings)
        self.matches = MatchClient(self.sessions.platform_token, settings.rpc_timeout_seconds)
        self.store = RecordStore(self.raw, keys.table, settings.table_ttl_seconds)
        self.hub = FeedHub(self.raw, self.store)
        self.tables = Tables(
            self.store,
            self.games,
            self.matches,
            settings.invite_ttl_seconds,
            settings.open_tables_per_user,
            settings.table_ttl_seconds,
        )
        self.connections = Connections(self.raw, settings.max_feeds_per_user)
        self.feeds = Feeds(self.hub, self.store, self.tables, self.games, self.matches, self.connections)
        self.social = Social(
            self.redis, self.raw, self.store, self.tables, self.sessions, self.connections, settings
        )
        self.feeds.chat_sight = self.social.sight
        self.bans = Bans(self.redis)
        self.sessions.verifier.banned = self.bans
        self.moderation = Moderation(self.redis, self.raw, self.bans)
        self.social.chat.moderation = self.moderation
        self.play = Play(self.tables, self.games, self.matches, self.connections)
        self.results = Results(self.redis, self.games)
        self.standings = Standings(self.redis, self.games)
        self.trophies = Trophies(self.redis, self.games)
        self.tournaments = Tournaments(
            self.redis, self.games, self.tables, self.results, self.trophies, self.social.feeds
        )
        self.schedules = Schedules(self.redis, self.tournaments)
        self.leagues = Leagues(
            self.redis,
            self.games,
            settings.league_season_seconds,
            settings.league_divisions,
            settings.league_moves,
        )
        self.results.hooks += [self.trophies.on_result, self.tournaments.on_result, self.leagues.on_result]
        self.clocks = Clocks(self.redis, self.games, self.matches, settings.clock_lease_seconds)
        self.matchmaking = Matchmaking(
            self.redis, self.games, self.tables, matchmaking or MatchmakingSettings()
        )
        self.draining = False
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self.store.publish = await publish_command(self.raw, self.settings.redis_cluster)
        await self.social.start(self.store.publish)
        await self.bans.start()
        await self.games.start(DESCRIBE_WAIT_SECONDS)
        loops: list[Coroutine[Any, Any, None]] = [
            self.matchmaking.run(),
            every(self.settings.clock_cycle_seconds, self.clocks.fire_due, "the clock cycle"),
            self.results.run(),
            every(self.settings.competitions_check_seconds, self.tournaments.check, "the tournament check"),
            every(self.settings.competitions_check_seconds, self.schedules.check, "the schedules check"),
            every(self.settings.competitions_check_seconds, self.leagues.check, "the league check"),
            self.sessions.reload_keys(),
            self.connections.keep_alive(),
        ]
        self._tasks = [asyncio.create_task(loop) for loop in loops]

    async def drain(self) -> None:
        """Stop taking new work: readiness fails, feeds are told to resume
        elsewhere."""
        self.draining = True
        await self.hub.close()
        await self.social.close()

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task  # the matcher releases the lease it holds
        await self.hub.close()
        await self.social.close()
        await self.bans.close()
        await self.games.close()
        await self.redis.aclose()
        await self.raw.aclose()
