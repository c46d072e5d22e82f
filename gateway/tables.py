"""Tables: the lobby before a match. A host creates a table for a game, hands
out invites, players join, the host may arrange the seats (into teams, where
the game has them) and starts it, which creates the match (same id) in the
game service.

Invites are unguessable codes that expire. A table invite takes any free seat;
a team invite takes a free seat of one team and works only while that team
has one. The host can revoke either. Games whose tables are open (Dominó: "não
existe mesa privada") have no invites: their tables are listed, anyone may
sit in a free seat of their choice, and the table starts when it is full.
Seats given to the computer at creation (Bozu Mekuri) count as taken.

Keys: ``table:<id>`` the table as JSON, updated with WATCH/MULTI so two joins
of the last seat cannot both win; ``invite:<code>`` → ``{table, team}``, with
a TTL; ``open-tables:<game>`` the ids of a game's open tables still seating.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from redis.exceptions import WatchError

from services.kit.store import RedisClient
from services.kit.tokens import Identity

OPEN, PLAYING = "open", "playing"
_UPDATE_ATTEMPTS = 16
_HOST_ONLY = ("invite_code", "invites")

Teams = Sequence[tuple[str, tuple[int, ...]]]


class TableError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def table_key(table_id: str) -> str:
    return f"table:{table_id}"


def invite_key(code: str) -> str:
    return f"invite:{code}"


def public_table(table: dict[str, Any]) -> dict[str, Any]:
    """The table without its invites: only the host hands those out."""
    return {k: v for k, v in table.items() if k not in _HOST_ONLY}


def open_tables_key(game: str) -> str:
    return f"open-tables:{game}"


def _record(
    table_id: str,
    game: str,
    options: dict[str, Any],
    teams: Teams,
    players: Sequence[dict[str, Any] | None],
    host: str | None,
    open_table: bool,
) -> dict[str, Any]:
    """A new table as stored: the lobby's record until its match starts."""
    return {
        "id": table_id,
        "game": game,
        "seats": len(players),
        "options": options,
        "teams": [{"name": name, "seats": list(team_seats)} for name, team_seats in teams],
        "host": host,
        "players": list(players),
        "open": open_table,
        "status": OPEN,
        "invites": [],
        "created_at": time.time(),
    }


def _seated(table: dict[str, Any], user_id: str) -> int | None:
    for seat, player in enumerate(table["players"]):
        if player and player.get("user_id") == user_id:
            return seat
    return None


def _team_seats(table: dict[str, Any], team: str | None) -> list[int]:
    if team is None:
        return list(range(table["seats"]))
    for entry in table["teams"]:
        if entry["name"] == team:
            return list(entry["seats"])
    raise TableError(422, "unknown_team", f"teams here: {', '.join(t['name'] for t in table['teams'])}")


def _require_host(table: dict[str, Any], user: Identity) -> None:
    if table["host"] != user.user_id:
        raise TableError(403, "not_host", "only the host may do this")


def _require_open(table: dict[str, Any]) -> None:
    if table["status"] != OPEN:
        raise TableError(409, "table_started", "the table has already started")


class Tables:
    def __init__(self, redis: RedisClient, invite_ttl: int) -> None:
        self.redis = redis
        self.invite_ttl = invite_ttl

    async def create(
        self,
        host: Identity,
        game: str,
        seats: int,
        options: dict[str, Any],
        teams: Teams = (),
        cpu_seats: Sequence[int] = (),
        open_table: bool = False,
    ) -> dict[str, Any]:
        if (
            0 in cpu_seats
            or any(not 0 < s < seats for s in cpu_seats)
            or len(set(cpu_seats)) != len(cpu_seats)
        ):
            raise TableError(422, "invalid_cpu_seats", f"CPU seats are distinct seats from 1 to {seats - 1}")
        table_id = secrets.token_urlsafe(9).replace("-", "a").replace("_", "b")
        players: list[dict[str, Any] | None] = [None] * seats
        players[0] = {"user_id": host.user_id, "name": host.name}
        for seat in cpu_seats:
            players[seat] = {"cpu": True, "name": f"CPU {seat}"}
        table = _record(table_id, game, options, teams, players, host=host.user_id, open_table=open_table)
        await self.redis.set(table_key(table_id), orjson.dumps(table))
        if open_table:
            await self.redis.sadd(open_tables_key(game), table_id)
            return table
        invite = await self.invite(host, table_id, None)
        table = await self.get(table_id)
        table["invite_code"] = invite["code"]  # the table invite, for convenience
        return table

    async def open_tables(self, game: str) -> list[dict[str, Any]]:
        """A game's open tables that still have a free seat, oldest first."""
        ids: list[str] = sorted(await self.redis.smembers(open_tables_key(game)))  # type: ignore[arg-type]
        tables = []
        for table_id in ids:
            raw = await self.redis.get(table_key(table_id))
            if raw is None:
                await self.redis.srem(open_tables_key(game), table_id)
                continue
            table = orjson.loads(raw)
            if table["status"] == OPEN and None in table["players"]:
                tables.append(public_table(table))
        return sorted(tables, key=lambda t: t["created_at"])

    async def sit(self, user: Identity, table_id: str, seat: int | None) -> dict[str, Any]:
        """Take a free seat (the one asked for, or any) at an open table."""

        def take(table: dict[str, Any]) -> None:
            if not table["open"]:
                raise TableError(403, "invite_required", "this table seats players by invite")
            if _seated(table, user.user_id) is not None:
                return
            _require_open(table)
            if seat is not None and not 0 <= seat < table["seats"]:
                raise TableError(422, "invalid_seat", f"seats are 0 to {table['seats'] - 1}")
            free = [s for s in range(table["seats"]) if table["players"][s] is None]
            if seat is not None and seat not in free:
                raise TableError(409, "seat_taken", f"seat {seat} is taken")
            if not free:
                raise TableError(409, "table_full", "the table is full")
            table["players"][free[0] if seat is None else seat] = {"user_id": user.user_id, "name": user.name}

        return await self.update(table_id, take)

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

    # -- invites --------------------------------------------------------------

    async def invite(self, host: Identity, table_id: str, team: str | None) -> dict[str, Any]:
        """A new invite code: for any free seat, or for a seat of ``team``."""
        code = secrets.token_urlsafe(16)
        invite = {"code": code, "team": team, "expires_at": time.time() + self.invite_ttl}

        def add(table: dict[str, Any]) -> None:
            _require_host(table, host)
            _require_open(table)
            if table["open"]:
                raise TableError(409, "open_table", "open tables take no invites: anyone may sit")
            _team_seats(table, team)
            now = time.time()
            table["invites"] = [i for i in table["invites"] if i["expires_at"] > now] + [invite]

        await self.update(table_id, add)
        await self.redis.set(
            invite_key(code), orjson.dumps({"table": table_id, "team": team}), ex=self.invite_ttl
        )
        return invite

    async def revoke(self, host: Identity, table_id: str, code: str) -> None:
        def remove(table: dict[str, Any]) -> None:
            _require_host(table, host)
            if not any(i["code"] == code for i in table["invites"]):
                raise TableError(404, "invite_not_found", "no such invite at this table")
            table["invites"] = [i for i in table["invites"] if i["code"] != code]

        await self.update(table_id, remove)
        await self.redis.delete(invite_key(code))

    async def join(self, user: Identity, code: str) -> dict[str, Any]:
        raw = await self.redis.get(invite_key(code))
        if raw is None:
            raise TableError(404, "invite_not_found", "no such invite, or it has expired or was revoked")
        invite = orjson.loads(raw)

        def take_seat(table: dict[str, Any]) -> None:
            if _seated(table, user.user_id) is not None:
                return  # joining twice is harmless
            _require_open(table)
            free = [s for s in _team_seats(table, invite["team"]) if table["players"][s] is None]
            if not free:
                if invite["team"] is None:
                    raise TableError(409, "table_full", "the table is full")
                raise TableError(409, "team_full", f"team {invite['team']} has no free seat")
            table["players"][free[0]] = {"user_id": user.user_id, "name": user.name}

        return await self.update(invite["table"], take_seat)

    # -- seats ------------------------------------------------------------------

    async def arrange(self, host: Identity, table_id: str, order: list[str | None]) -> dict[str, Any]:
        """The host places the players: ``order[seat]`` is a seated user's id or
        None for a free seat; every player keeps exactly one seat."""

        def place(table: dict[str, Any]) -> None:
            _require_host(table, host)
            _require_open(table)
            if any(p and p.get("cpu") for p in table["players"]):
                raise TableError(409, "cpu_seats_fixed", "a table with CPU seats keeps its seats")
            by_id = {p["user_id"]: p for p in table["players"] if p}
            placed = [u for u in order if u is not None]
            if len(order) != table["seats"] or sorted(placed) != sorted(by_id):
                raise TableError(
                    422, "invalid_arrangement", "list every seated player once, null for free seats"
                )
            table["players"] = [by_id[u] if u is not None else None for u in order]

        return await self.update(table_id, place)

    async def leave_lobby(self, user: Identity, table_id: str) -> dict[str, Any]:
        def free_seat(table: dict[str, Any]) -> None:
            _require_open(table)
            seat = _seated(table, user.user_id)
            if seat is None:
                raise TableError(403, "not_seated", "you are not at this table")
            table["players"][seat] = None

        return await self.update(table_id, free_seat)

    # -- start ------------------------------------------------------------------

    async def mark_started(self, user: Identity | None, table_id: str) -> dict[str, Any]:
        """The host starts the table (``user``), or it starts by itself once
        full (``None``: open tables)."""

        def start(table: dict[str, Any]) -> None:
            if user is not None:
                _require_host(table, user)
            _require_open(table)
            if any(p is None for p in table["players"]):
                raise TableError(409, "seats_free", "every seat must be taken before the start")
            table["status"] = PLAYING

        return await self.update(table_id, start)

    async def reopen(self, table_id: str) -> None:
        """Undo a start whose match could not be created."""

        def reopen(table: dict[str, Any]) -> None:
            table["status"] = OPEN

        await self.update(table_id, reopen)

    async def close(self, table: dict[str, Any]) -> None:
        """A started table takes nobody else."""
        for invite in table["invites"]:
            await self.redis.delete(invite_key(invite["code"]))
        await self.redis.srem(open_tables_key(table["game"]), table["id"])

    # -- matchmaking ------------------------------------------------------------

    async def create_seated(
        self,
        table_id: str,
        game: str,
        options: dict[str, Any],
        players: list[dict[str, Any]],
        teams: Teams = (),
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A table formed with every seat already taken (the matchmaker): no
        host, no invites, nobody else may sit. ``extra`` adds fields to the
        record (``ranked``, ``mode``). Idempotent: if ``table_id`` exists the
        stored table is returned unchanged, so a retried formation creates
        its table once."""
        table = _record(table_id, game, options, teams, players, host=None, open_table=False) | (extra or {})
        if await self.redis.set(table_key(table_id), orjson.dumps(table), nx=True):
            return table
        return await self.get(table_id)
