"""Tables: the lobby before a match, and the match's table after. A host
creates a table for a game, hands out invites, players join, the host may
arrange the seats (into teams, where the game has them) and starts it, which
creates the match (same id) in the game service.

Invites are unguessable codes that expire. A table invite takes any free seat;
a team invite takes a free seat of one team and works only while that team
has one. The host can revoke either. Games whose tables are open (Dominó: "não
existe mesa privada") have no invites: their tables are listed, anyone may
sit in a free seat of their choice, and the table starts when it is full.
Seats given to the computer at creation count as taken.

A table is its own record (``keys.table(id)``; its match, same id, is the
game service's) and every change is an event of the same history as the
match's (a ``TableChange``), written with the store's compare-and-set
(services/core/store.py): so a table's feed runs from its creation to its
match's end on one sequence of event ids, and two joins of the last seat
cannot both win.
Invites (``invite:<code>``, with a TTL) and the open-table lists
(``open-tables:<game>``) are separate keys.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import grpc
import orjson
from google.protobuf import any_pb2, json_format
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2

from gateway.accounts import is_guest
from gateway.games import GameClient, Games
from gateway.matches import MatchClient
from services.core import keys
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied
from services.core.store import RecordStore, VersionConflict
from services.core.tokens import Identity

OPEN, PLAYING = "open", "playing"
_UPDATE_ATTEMPTS = 16
Record = dict[str, Any]


@dataclass(frozen=True)
class Change:
    """One change to record: its kind (TableChangeKind without the prefix),
    the seat it concerns, and for invites the invite (then host only)."""

    kind: str
    seat: int | None = None
    invite: dict[str, Any] | None = None


def _seated(table: Record, user_id: str) -> int | None:
    for seat, player in enumerate(table["players"]):
        if player and player.get("user_id") == user_id:
            return seat
    return None


def _team_seats(table: Record, team: str | None) -> list[int]:
    if not team:
        return list(range(table["seats"]))
    for entry in table["teams"]:
        if entry["name"] == team:
            return list(entry["seats"])
    names = ", ".join(t["name"] for t in table["teams"]) or "none"
    raise invalid("unknown_team", f"teams here: {names}")


def _require_host(table: Record, user: Identity) -> None:
    if table["host"] != user.user_id:
        raise permission_denied("not_host", "only the host may do this")


def _require_open(table: Record) -> None:
    if table["status"] != OPEN:
        raise conflict("table_started", "the table has already started")


def _free(table: Record, seats: Sequence[int]) -> list[int]:
    return [s for s in seats if table["players"][s] is None]


class Tables:
    def __init__(
        self,
        store: RecordStore,
        games: Games,
        matches: MatchClient,
        invite_ttl: int,
        open_per_user: int = 0,
        table_ttl: int = 24 * 3600,
    ) -> None:
        self.store = store
        self.redis = store.redis
        self.games = games
        self.matches = matches
        self.invite_ttl = invite_ttl
        self.open_per_user = open_per_user  # tables a user may have open at once; 0 = any number
        self.table_ttl = table_ttl

    # -- reading ----------------------------------------------------------------

    async def load(self, table_id: str) -> tuple[Record, int]:
        """The table and its history's last event id."""
        stored = await self.store.load(table_id) if _plausible(table_id) else None
        if stored is None:
            raise not_found("table_not_found", f"no table {table_id!r}")
        return stored.doc, stored.last_event_id

    async def get(self, table_id: str) -> Record:
        return (await self.load(table_id))[0]

    def message(self, table: Record, viewer: str | None, last_event_id: int = 0) -> platform_pb2.Table:
        """The table as ``viewer`` may see it: only the host sees invites."""
        host = viewer is not None and viewer == table["host"]
        game = self.games.get(table["game"])
        message = platform_pb2.Table(
            id=table["id"],
            game=table["game"],
            seats=table["seats"],
            players=[
                platform_pb2.TablePlayer(
                    user_id=p.get("user_id", ""),
                    name=p["name"],
                    cpu=p.get("cpu", False),
                    guest=is_guest(p.get("user_id", "")),
                )
                if p
                else platform_pb2.TablePlayer()
                for p in table["players"]
            ],
            status=table["status"],
            host=table["host"] or "",
            open=table["open"],
            teams=[match_pb2.Team(name=t["name"], seats=t["seats"]) for t in table["teams"]],
            options=game.pack("Options", table["options"], "invalid_options"),
            mode=table["mode"],
            ranked=table.get("ranked", False),
            created_at=table["created_at"],
            last_event_id=last_event_id,
        )
        if host:
            now = time.time()
            live = [i for i in table["invites"] if i["expires_at"] > now]
            message.invites.extend(platform_pb2.Invite(**i) for i in live)
            if live:
                message.invite_code = next((i["code"] for i in live if not i["team"]), "")
        return message

    async def open_tables(
        self, game: GameClient, page_size: int = 20, page_token: str = ""
    ) -> tuple[list[Record], str]:
        """One page of a game's open tables that still have a free seat,
        oldest first, and the next page's token ("" after the last). The
        token is the last table's (creation time, id): the list's own order,
        so tables starting or going away between pages shift nothing. Tables
        gone (expired) or abandoned (nobody sits at them any more) are
        dropped from the list as they are met."""
        key = keys.open_tables(game.name)
        after = _page_token(page_token)
        low = repr(after[0]) if after else "-inf"
        tables: list[Record] = []
        dropped: list[str] = []
        last: tuple[float, str] | None = None
        read = 0
        while len(tables) < page_size:
            batch = cast(
                list[tuple[bytes | str, float]],
                await self.redis.zrangebyscore(key, low, "+inf", start=read, num=page_size, withscores=True),
            )
            if not batch:
                break
            read += len(batch)
            for raw_id, score in batch:
                table_id = raw_id.decode() if isinstance(raw_id, bytes) else raw_id
                if after and (score, table_id) <= after:
                    continue  # the previous page's last, or ties before it
                if len(tables) == page_size:
                    break
                last = (score, table_id)
                stored = await self.store.load(table_id)
                if stored is None or not any(p and p.get("user_id") for p in stored.doc["players"]):
                    dropped.append(table_id)
                elif stored.doc["status"] == OPEN and None in stored.doc["players"]:
                    tables.append(stored.doc)
        if dropped:
            await self.redis.zrem(key, *dropped)
        more = len(tables) == page_size and last is not None
        return tables, f"{last[0]!r}:{last[1]}" if more and last else ""

    # -- writing -----------------------------------------------------------------

    async def _commit(self, table: Record, version: int, token: str, changes: Sequence[Change]) -> None:
        await self._commit_events(table, version, token, [self._event(table, change) for change in changes])

    async def _commit_events(
        self, table: Record, version: int, token: str, events: Sequence[match_pb2.MatchEvent]
    ) -> None:
        live = match_pb2.LiveUpdate(events=events).SerializeToString()
        await self.store.commit(
            table["id"], version, table, [e.SerializeToString() for e in events], live, expected_token=token
        )

    def _event(self, table: Record, change: Change) -> match_pb2.MatchEvent:
        host_only = change.invite is not None
        body = platform_pb2.TableChange(
            kind=platform_pb2.TableChangeKind.Value(f"TABLE_CHANGE_KIND_{change.kind}"),
            table=self.message(table, table["host"] if host_only else None),
        )
        if change.seat is not None:
            body.seat = change.seat
        if change.invite is not None:
            body.invite.CopyFrom(platform_pb2.Invite(**change.invite))
        packed = any_pb2.Any()
        packed.Pack(body)
        return match_pb2.MatchEvent(at=time.time(), table=packed, host_only=host_only)

    async def update(self, table_id: str, change: Callable[[Record], list[Change]]) -> Record:
        """Apply ``change`` (which may raise Refused, or return no change)
        with compare-and-set, recording what changed."""
        for _ in range(_UPDATE_ATTEMPTS):
            stored = await self.store.load(table_id) if _plausible(table_id) else None
            if stored is None:
                raise not_found("table_not_found", f"no table {table_id!r}")
            table = stored.doc
            changes = change(table)
            if not changes:
                return table
            try:
                await self._commit(table, stored.version, stored.token, changes)
            except VersionConflict:
                continue
            return table
        raise Refused(grpc.StatusCode.ABORTED, "busy", "the table is busy; try again")

    async def create(
        self, host: Identity, game: GameClient, seats: int, options: dict[str, Any], cpu_seats: list[int]
    ) -> Record:
        """Open a table after checking it against the game's facts."""
        game.pack("Options", options, "invalid_options")
        mode = game.mode_for(seats, options)
        if cpu_seats and not game.info.cpu_seats:
            raise invalid("invalid_cpu_seats", f"{game.info.title} has no CPU seats")
        if any(not 0 < s < seats for s in cpu_seats) or len(set(cpu_seats)) != len(cpu_seats):
            raise invalid("invalid_cpu_seats", f"CPU seats are distinct seats from 1 to {seats - 1}")
        players: list[dict[str, Any] | None] = [None] * seats
        players[0] = {"user_id": host.user_id, "name": host.name}
        for seat in cpu_seats:
            players[seat] = {"cpu": True, "name": f"CPU {seat}"}
        table = _record(_new_id(), game, mode, options, players, host.user_id, game.info.open_tables)
        await self._reserve(host, table)
        changes = [Change("OPENED")]
        if not table["open"]:
            invite = self._new_invite(None)
            table["invites"].append(invite)
            changes.append(Change("INVITE_CREATED", invite=invite))
            await self._store_invite(table["id"], invite)
        await self._commit(table, 0, "", changes)
        if table["open"]:
            await self.redis.zadd(keys.open_tables(game.name), {table["id"]: table["created_at"]})
        return table

    async def _reserve(self, host: Identity, table: Record) -> None:
        """Count ``table`` among the tables ``host`` has open, refusing it past
        the cap. The list is cleaned as it is read (tables started, expired
        or left by the host leave it: a table nobody sits at is not listed
        either); the new table is added before the count, so replicas
        creating at once can refuse but never exceed."""
        if not self.open_per_user:
            return
        key = keys.hosting(host.user_id)
        listed = cast(list[bytes | str], await self.redis.zrange(key, 0, -1))
        for raw_id in listed:
            table_id = raw_id.decode() if isinstance(raw_id, bytes) else raw_id
            stored = await self.store.load(table_id)
            if stored is None or stored.doc["status"] != OPEN or _seated(stored.doc, host.user_id) is None:
                await self.redis.zrem(key, table_id)
        pipe = self.redis.pipeline(transaction=True)  # one key
        pipe.zadd(key, {table["id"]: table["created_at"]})
        pipe.zcard(key)
        pipe.expire(key, self.table_ttl)
        _, count, _ = await pipe.execute()
        if count > self.open_per_user:
            await self.redis.zrem(key, table["id"])
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_tables",
                f"you have {self.open_per_user} tables open already: start or leave one first",
            )

    async def start_formed(
        self,
        table_id: str,
        game: GameClient,
        options: dict[str, Any],
        players: list[dict[str, Any]],
        ranked: bool,
    ) -> Record:
        """A table formed with every seat already taken (the matchmaker's, a
        tournament board's): no host, no invites, nobody else may sit. It is
        born started in one write (its history says OPENED, then STARTED, as
        an opening and a :meth:`start` would), so a burst of formations spends
        no load and second compare-and-set per table, and there are no
        invites or open-table entry to clear. Idempotent: if ``table_id``
        exists (a retried formation, after an outage or a lost reply, or one
        the game refused, which opened it again) the stored table is started
        as :meth:`start` would, the players given here ignored."""
        table = _formed(table_id, game, options, players, ranked)
        opened = self._event(table, Change("OPENED"))
        table["status"] = PLAYING
        started = self._event(table, Change("STARTED"))
        try:
            await self._commit_events(table, 0, "", [opened, started])
        except VersionConflict:
            return await self.start(table_id, None)
        await self._create_match(table)
        return table

    def _new_invite(self, team: str | None) -> dict[str, Any]:
        return {
            "code": secrets.token_urlsafe(16),
            "team": team or "",
            "expires_at": time.time() + self.invite_ttl,
        }

    async def _store_invite(self, table_id: str, invite: dict[str, Any]) -> None:
        value = orjson.dumps({"table": table_id, "team": invite["team"]})
        await self.redis.set(keys.invite(invite["code"]), value, ex=self.invite_ttl)

    async def invite(self, host: Identity, table_id: str, team: str | None) -> dict[str, Any]:
        """A new invite code: for any free seat, or for a seat of ``team``
        (refused while that team has no free seat)."""
        invite = self._new_invite(team)

        def add(table: Record) -> list[Change]:
            _require_host(table, host)
            _require_open(table)
            if table["open"]:
                raise conflict("open_table", "open tables take no invites: anyone may sit")
            if not _free(table, _team_seats(table, team)):
                raise conflict("team_full" if team else "table_full", "no free seat for this invite")
            now = time.time()
            table["invites"] = [i for i in table["invites"] if i["expires_at"] > now] + [invite]
            return [Change("INVITE_CREATED", invite=invite)]

        await self.update(table_id, add)
        await self._store_invite(table_id, invite)
        return invite

    async def revoke(self, host: Identity, table_id: str, code: str) -> None:
        def remove(table: Record) -> list[Change]:
            _require_host(table, host)
            invite = next((i for i in table["invites"] if i["code"] == code), None)
            if invite is None:
                raise not_found("invite_not_found", "no such invite at this table")
            table["invites"] = [i for i in table["invites"] if i["code"] != code]
            return [Change("INVITE_REVOKED", invite=invite)]

        await self.update(table_id, remove)
        await self.redis.delete(keys.invite(code))

    async def join(self, user: Identity, code: str) -> Record:
        raw = await self.redis.get(keys.invite(code)) if code else None
        if raw is None:
            raise not_found("invite_not_found", "no such invite, or it has expired or was revoked")
        invite = orjson.loads(raw)

        def take_seat(table: Record) -> list[Change]:
            if _seated(table, user.user_id) is not None:
                return []  # joining twice is harmless
            _require_open(table)
            free = _free(table, _team_seats(table, invite["team"]))
            if not free:
                if not invite["team"]:
                    raise conflict("table_full", "the table is full")
                raise conflict("team_full", f"team {invite['team']} has no free seat")
            table["players"][free[0]] = {"user_id": user.user_id, "name": user.name}
            return [Change("JOINED", seat=free[0])]

        return await self.update(invite["table"], take_seat)

    async def sit(self, user: Identity, table_id: str, seat: int | None) -> Record:
        """Take a free seat (the one asked for, or any) at an open table."""

        def take(table: Record) -> list[Change]:
            if not table["open"]:
                raise permission_denied("invite_required", "this table seats players by invite")
            if _seated(table, user.user_id) is not None:
                return []
            _require_open(table)
            if seat is not None and not 0 <= seat < table["seats"]:
                raise invalid("invalid_seat", f"seats are 0 to {table['seats'] - 1}")
            free = _free(table, range(table["seats"]))
            if seat is not None and seat not in free:
                raise conflict("seat_taken", f"seat {seat} is taken")
            if not free:
                raise conflict("table_full", "the table is full")
            chosen = free[0] if seat is None else seat
            table["players"][chosen] = {"user_id": user.user_id, "name": user.name}
            return [Change("JOINED", seat=chosen)]

        return await self.update(table_id, take)

    async def arrange(self, host: Identity, table_id: str, order: list[str | None]) -> Record:
        """The host places the players: ``order[seat]`` is a seated user's id or
        None/"" for a free seat; every player keeps exactly one seat."""

        def place(table: Record) -> list[Change]:
            _require_host(table, host)
            _require_open(table)
            if any(p and p.get("cpu") for p in table["players"]):
                raise conflict("cpu_seats_fixed", "a table with CPU seats keeps its seats")
            by_id = {p["user_id"]: p for p in table["players"] if p}
            placed = [u for u in order if u]
            if len(order) != table["seats"] or sorted(placed) != sorted(by_id):
                raise invalid("invalid_arrangement", "list every seated player once, null for free seats")
            table["players"] = [by_id[u] if u else None for u in order]
            return [Change("ARRANGED")]

        return await self.update(table_id, place)

    async def leave_lobby(self, user: Identity, table_id: str) -> Record:
        def free_seat(table: Record) -> list[Change]:
            _require_open(table)
            seat = _seated(table, user.user_id)
            if seat is None:
                raise permission_denied("not_seated", "you are not at this table")
            table["players"][seat] = None
            return [Change("LEFT", seat=seat)]

        return await self.update(table_id, free_seat)

    # -- the start -------------------------------------------------------------------

    async def start(self, table_id: str, host: Identity | None) -> Record:
        """Start a full table: the host (``host``), an open table when its last
        seat is taken, or the matchmaker (``None``). Every step can be
        repeated, by any replica and by the host: the table is marked started (compare-and-set),
        the match created (``match_exists`` is success), the invites closed.
        If the game refuses the match, the table opens again."""

        def mark(table: Record) -> list[Change]:
            if host is not None:
                _require_host(table, host)
            if table["status"] == PLAYING:
                # A retried start (the host's after an outage or a lost reply,
                # or the matchmaker's) finishes what was begun: starting is
                # idempotent, the reply the same match.
                return []
            if any(p is None for p in table["players"]):
                raise conflict("seats_free", "every seat must be taken before the start")
            table["status"] = PLAYING
            return [Change("STARTED")]

        table = await self.update(table_id, mark)
        await self._create_match(table)
        for invite in table["invites"]:
            await self.redis.delete(keys.invite(invite["code"]))
        await self.redis.zrem(keys.open_tables(table["game"]), table_id)
        return table

    async def _create_match(self, table: Record) -> None:
        """The started table's match (``match_exists`` is success); if the
        game refuses it, the table opens again."""
        table_id = table["id"]
        game = self.games.get(table["game"])
        players = [
            match_pb2.Seat(
                user_id=p.get("user_id", ""),
                display_name=p["name"],
                cpu=p.get("cpu", False),
                guest=is_guest(p.get("user_id", "")),
            )
            for p in table["players"]
        ]
        try:
            await self.matches.create(
                game, table_id, players, game.pack("Options", table["options"], "invalid_options")
            )
        except Refused as refusal:
            if refusal.http_status < 500:  # the game's final word, not an outage

                def reopen(record: Record) -> list[Change]:
                    record["status"] = OPEN
                    return [Change("REOPENED")]

                await self.update(table_id, reopen)
            raise


def _formed(
    table_id: str, game: GameClient, options: dict[str, Any], players: list[dict[str, Any]], ranked: bool
) -> Record:
    """A new table formed with every seat taken: no host, not open; a ranked
    one only with options a ranking allows."""
    mode = game.mode_for(len(players), options)
    if ranked:
        game.check_ranked(options)
    return _record(table_id, game, mode, options, list(players), None, False) | {"ranked": ranked}


def _record(
    table_id: str,
    game: GameClient,
    mode: match_pb2.Mode,
    options: dict[str, Any],
    players: list[dict[str, Any] | None],
    host: str | None,
    open_table: bool,
) -> Record:
    """A new table as stored."""
    teams = mode.teams if len(players) == max(mode.seat_counts) else []
    return {
        "id": table_id,
        "game": game.name,
        "mode": mode.name,
        "seats": len(players),
        "options": options,
        "teams": [json_format.MessageToDict(t) for t in teams],
        "host": host,
        "players": players,
        "open": open_table,
        "status": OPEN,
        "invites": [],
        "created_at": time.time(),
    }


def _new_id() -> str:
    return secrets.token_urlsafe(9).replace("-", "a").replace("_", "b")


def _page_token(token: str) -> tuple[float, str] | None:
    """A ListOpenTables page token: ``<creation time>:<table id>``."""
    if not token:
        return None
    score, _, table_id = token.partition(":")
    try:
        at = float(score)
    except ValueError:
        at = math.nan
    if math.isnan(at) or math.isinf(at) or not _plausible(table_id):
        raise invalid("invalid_page_token", "page_token: a next_page_token from this listing")
    return at, table_id


def _plausible(table_id: str) -> bool:
    return 0 < len(table_id) <= 64 and table_id.replace("-", "").replace("_", "").isalnum()
