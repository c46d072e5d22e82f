"""Games, tables and invites: the lobby."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2

from gateway.deps import CallerDep, JsonRoute, PlatformDep, message_json
from gateway.openapi import returns

router = APIRouter(prefix="/v1", tags=["tables"], route_class=JsonRoute)


class CreateTable(BaseModel):
    game: str = Field(description="a game's name (GET /v1/games)")
    seats: int = Field(description="number of seats, the host's included")
    options: dict[str, Any] = Field(default_factory=dict, description="the game's Options, proto JSON form")
    cpu_seats: list[int] = Field(default_factory=list, description="seats the computer plays (never 0)")


class Sit(BaseModel):
    seat: int | None = Field(default=None, description="the seat wanted; null = any free seat")


class JoinTable(BaseModel):
    invite_code: str


class NewInvite(BaseModel):
    team: str | None = Field(
        default=None, description="a team's name for a team invite; null = any free seat"
    )


class Arrangement(BaseModel):
    seats: list[str | None] = Field(description="per seat, the id of a seated player or null for a free seat")


@router.get("/games", tags=["games"], openapi_extra=returns(platform_pb2.ListGamesResponse))
async def list_games(p: PlatformDep) -> dict[str, Any]:
    """Every game, with its facts as the game declares them (seats, modes,
    teams, CPU seats, open tables, leaving and inactivity policies)."""
    return message_json(platform_pb2.ListGamesResponse(games=[g.info for g in p.games.described()]))


@router.post("/tables", status_code=201, openapi_extra=returns(platform_pb2.Table))
async def create_table(body: CreateTable, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Open a table; the host takes seat 0 and receives the table invite."""
    game = p.games.get(body.game)
    table = await p.tables.create(caller.identity, game, body.seats, body.options, body.cpu_seats)
    return message_json(p.tables.message(table, caller.user_id))


@router.get("/tables", openapi_extra=returns(platform_pb2.ListOpenTablesResponse))
async def list_open_tables(game: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A game's open tables with a free seat, oldest first (games without
    private tables: Dominó)."""
    tables = await p.tables.open_tables(p.games.get(game))
    return message_json(
        platform_pb2.ListOpenTablesResponse(tables=[p.tables.message(t, caller.user_id) for t in tables])
    )


@router.get("/tables/{table_id}", openapi_extra=returns(platform_pb2.Table))
async def get_table(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """The table as the caller may see it (the host also sees its invites)."""
    table, last_event_id = await p.tables.load(table_id)
    return message_json(p.tables.message(table, caller.user_id, last_event_id))


@router.post("/tables/join", openapi_extra=returns(platform_pb2.Table))
async def join_table(body: JoinTable, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Take a free seat with an invite code."""
    table = await p.tables.join(caller.identity, body.invite_code)
    return message_json(p.tables.message(table, caller.user_id))


@router.post("/tables/{table_id}/sit", openapi_extra=returns(platform_pb2.SitAtTableResponse))
async def sit(table_id: str, body: Sit, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Sit at an open table, in the seat asked for or any free one; the
    player who takes the last seat starts the match."""
    table, snapshot = await p.play.sit(caller, table_id, body.seat)
    reply = platform_pb2.SitAtTableResponse(table=p.tables.message(table, caller.user_id), match=snapshot)
    return message_json(reply)


@router.post("/tables/{table_id}/invites", status_code=201, openapi_extra=returns(platform_pb2.Invite))
async def invite(table_id: str, body: NewInvite, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Host only: a new invite for any free seat, or (``team``) for a free
    seat of that team, valid while the team has one."""
    return message_json(platform_pb2.Invite(**await p.tables.invite(caller.identity, table_id, body.team)))


@router.delete("/tables/{table_id}/invites/{code}", status_code=204)
async def revoke_invite(table_id: str, code: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Host only: revoke an invite."""
    await p.tables.revoke(caller.identity, table_id, code)
    return Response(status_code=204)


@router.put("/tables/{table_id}/seats", openapi_extra=returns(platform_pb2.Table))
async def arrange_seats(
    table_id: str, body: Arrangement, caller: CallerDep, p: PlatformDep
) -> dict[str, Any]:
    """Host only, before the start: place the seated players (into teams)."""
    table = await p.tables.arrange(caller.identity, table_id, body.seats)
    return message_json(p.tables.message(table, caller.user_id))


@router.post("/tables/{table_id}/start", openapi_extra=returns(match_pb2.Snapshot))
async def start_table(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """The host starts a full table: the match is created in the game
    service. Returns the host's first snapshot."""
    return message_json(await p.play.start(caller, table_id))


@router.post("/tables/{table_id}/leave", openapi_extra=returns(platform_pb2.LeaveTableResponse))
async def leave(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Before the start: free your seat (``table``). During the match: the
    game's leaving policy (``match``, your snapshot after leaving)."""
    table, snapshot = await p.play.leave(caller, table_id)
    reply = platform_pb2.LeaveTableResponse(match=snapshot)
    if table is not None:
        reply.table.CopyFrom(p.tables.message(table, caller.user_id))
    return message_json(reply)
