"""Playing at a table, for both faces (HTTP routes and the gRPC face): the
same calls, rules and errors whichever way a client comes."""

from __future__ import annotations

from google.protobuf import any_pb2
from rodada.common.v1 import match_pb2

from gateway.competitions.tournaments import ACTED_TTL_SECONDS, TABLE_PREFIX
from gateway.feeds import Connections
from gateway.games import GameClient, Games
from gateway.matches import Caller, MatchClient
from gateway.tables import PLAYING, Record, Tables
from services.core import keys
from services.core.errors import conflict, not_found

PLAYING_CACHE_SIZE = 100_000


class Play:
    def __init__(self, tables: Tables, games: Games, matches: MatchClient, connections: Connections) -> None:
        self.tables = tables
        self.games = games
        self.matches = matches
        self.connections = connections
        self._playing: dict[str, str] = {}  # started table -> its game

    async def game_of(self, table_id: str) -> GameClient:
        """The game of a started table. A started table never changes game
        or goes back, so the answer is remembered: one Redis read less on
        every move."""
        name = self._playing.get(table_id)
        if name is None:
            table = await self.tables.get(table_id)
            if table["status"] != PLAYING:
                raise conflict("not_started", "the table has not started")
            name = table["game"]
            if len(self._playing) >= PLAYING_CACHE_SIZE:
                self._playing.clear()
            self._playing[table_id] = name
        return self.games.get(name)

    async def view(self, caller: Caller, table_id: str) -> match_pb2.Snapshot:
        return await self.matches.view(await self.game_of(table_id), table_id, caller)

    async def act(
        self, caller: Caller, table_id: str, version: int, action: any_pb2.Any
    ) -> match_pb2.Snapshot:
        """Play one action, the game's Action packed (the game service checks
        it). At a tournament's table the player is then marked present: who
        never acted forfeits at the round's deadline."""
        snapshot = await self.matches.act(await self.game_of(table_id), table_id, caller, version, action)
        if table_id.startswith(TABLE_PREFIX):
            key = keys.board_acted(table_id)
            async with self.tables.redis.pipeline(transaction=False) as pipe:
                pipe.sadd(key, caller.user_id)
                pipe.expire(key, ACTED_TTL_SECONDS)
                await pipe.execute()
        return snapshot

    async def ask(self, caller: Caller, table_id: str, question: any_pb2.Any) -> match_pb2.AskResponse:
        return await self.matches.ask(await self.game_of(table_id), table_id, caller, question)

    async def start(self, caller: Caller, table_id: str) -> match_pb2.Snapshot:
        await self.tables.start(table_id, caller.identity)
        return await self.view(caller, table_id)

    async def sit(
        self, caller: Caller, table_id: str, seat: int | None
    ) -> tuple[Record, match_pb2.Snapshot | None]:
        """Sit at an open table; whoever takes the last seat starts the match."""
        table = await self.tables.sit(caller.identity, table_id, seat)
        if None in table["players"] or table["status"] != "open":
            return table, None
        await self.tables.start(table_id, None)
        return await self.tables.get(table_id), await self.view(caller, table_id)

    async def leave(self, caller: Caller, table_id: str) -> tuple[Record | None, match_pb2.Snapshot | None]:
        """Before the start: free the seat. During the match: the game's policy."""
        table = await self.tables.get(table_id)
        if table["status"] != PLAYING:
            return await self.tables.leave_lobby(caller.identity, table_id), None
        game = self.games.get(table["game"])
        return None, await self.matches.leave(game, table_id, caller)

    async def presence(self, viewer: str, table_id: str) -> list[str]:
        """Which seated players have the table's feed open. An open table's
        presence is anyone's to see; a private table's only its seated
        players', and to anyone else it does not exist (the same refusal as
        for no table, so an outsider learns nothing by trying ids)."""
        table = await self.tables.get(table_id)
        users = [p["user_id"] for p in table["players"] if p and p.get("user_id")]
        if not table["open"] and viewer not in users:
            raise not_found("table_not_found", f"no table {table_id!r}")
        return await self.connections.connected(table_id, users)
