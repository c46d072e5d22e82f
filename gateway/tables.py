"""Tables: the lobby before a match. A host creates a table for a game, shares
its invite code, players join, and the host starts it, which creates the match
(same id) in the game service.

Keys: ``table:<id>`` the table as JSON, updated with WATCH/MULTI so two joins
of the last seat cannot both win; ``invite:<code>`` → table id, expiring.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson
from redis.exceptions import WatchError

from services.kit.store import RedisClient
from services.kit.tokens import Identity

OPEN, PLAYING = "open", "playing"
_UPDATE_ATTEMPTS = 16


class TableError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def table_key(table_id: str) -> str:
    return f"table:{table_id}"


def invite_key(code: str) -> str:
    return f"invite:{code}"


def public_table(table: dict[str, Any]) -> dict[str, Any]:
    """The table as any seated player or invitee may see it (no invite code:
    only the host hands those out)."""
    return {k: v for k, v in table.items() if k != "invite_code"}


class Tables:
    def __init__(self, redis: RedisClient, invite_ttl: int) -> None:
        self.redis = redis
        self.invite_ttl = invite_ttl

    async def create(self, host: Identity, game: str, seats: int, options: dict[str, Any]) -> dict[str, Any]:
        table_id = secrets.token_urlsafe(9).replace("-", "a").replace("_", "b")
        code = secrets.token_urlsafe(16)
        table = {
            "id": table_id,
            "game": game,
            "seats": seats,
            "options": options,
            "host": host.user_id,
            "players": [{"user_id": host.user_id, "name": host.name}] + [None] * (seats - 1),
            "status": OPEN,
            "invite_code": code,
            "created_at": time.time(),
        }
        await self.redis.set(table_key(table_id), orjson.dumps(table))
        await self.redis.set(invite_key(code), table_id, ex=self.invite_ttl)
        return table

    async def get(self, table_id: str) -> dict[str, Any]:
        raw = await self.redis.get(table_key(table_id))
        if raw is None:
            raise TableError(404, "table_not_found", f"no table {table_id!r}")
        table: dict[str, Any] = orjson.loads(raw)
        return table

    async def update(self, table_id: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Apply ``change`` (which may raise TableError) atomically."""
        key = table_key(table_id)
        for _ in range(_UPDATE_ATTEMPTS):
            async with self.redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        raise TableError(404, "table_not_found", f"no table {table_id!r}")
                    table: dict[str, Any] = orjson.loads(raw)
                    change(table)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.set(key, orjson.dumps(table))
                    await pipe.execute()
                    return table
                except WatchError:
                    continue
        raise TableError(409, "busy", "the table is busy; try again")

    async def join(self, user: Identity, code: str) -> dict[str, Any]:
        table_id = await self.redis.get(invite_key(code))
        if table_id is None:
            raise TableError(404, "invite_not_found", "no such invite, or it has expired")

        def take_seat(table: dict[str, Any]) -> None:
            players = table["players"]
            if any(p and p["user_id"] == user.user_id for p in players):
                return  # joining twice is harmless
            if table["status"] != OPEN:
                raise TableError(409, "table_started", "the table has already started")
            free = [i for i, p in enumerate(players) if p is None]
            if not free:
                raise TableError(409, "table_full", "the table is full")
            players[free[0]] = {"user_id": user.user_id, "name": user.name}

        return await self.update(str(table_id), take_seat)

    async def leave_lobby(self, user: Identity, table_id: str) -> dict[str, Any]:
        def free_seat(table: dict[str, Any]) -> None:
            if table["status"] != OPEN:
                raise TableError(409, "table_started", "the match has started")
            for i, p in enumerate(table["players"]):
                if p and p["user_id"] == user.user_id:
                    table["players"][i] = None
                    return
            raise TableError(403, "not_seated", "you are not at this table")

        return await self.update(table_id, free_seat)

    async def mark_started(self, user: Identity, table_id: str) -> dict[str, Any]:
        def start(table: dict[str, Any]) -> None:
            if table["host"] != user.user_id:
                raise TableError(403, "not_host", "only the host starts the table")
            if table["status"] != OPEN:
                raise TableError(409, "table_started", "the table has already started")
            if any(p is None for p in table["players"]):
                raise TableError(409, "seats_free", "every seat must be taken before the start")
            table["status"] = PLAYING

        return await self.update(table_id, start)

    async def reopen(self, table_id: str) -> None:
        """Undo a start whose match could not be created."""

        def reopen(table: dict[str, Any]) -> None:
            table["status"] = OPEN

        await self.update(table_id, reopen)

    async def close_invite(self, table: dict[str, Any]) -> None:
        await self.redis.delete(invite_key(table["invite_code"]))
