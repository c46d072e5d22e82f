"""Trophies and tournaments (gateway/competitions/)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Response, WebSocket
from pydantic import BaseModel, Field
from rodada.platform.v1 import competitions_pb2

from gateway.competitions import trophies
from gateway.competitions.tournaments import FORMATS, STATUSES
from gateway.deps import CallerDep, JsonRoute, PlatformDep, message_json
from gateway.openapi import returns
from gateway.routes.feeds import serve_feed
from services.kit.errors import invalid

router = APIRouter(prefix="/v1", tags=["competitions"], route_class=JsonRoute)
_FORMATS = {name: number for number, name in FORMATS.items()}


class CreateTournament(BaseModel):
    name: str = Field(description="1-80 characters")
    game: str = Field(description="a game's name (GET /v1/games)")
    options: dict[str, Any] = Field(default_factory=dict, description="the game's Options for every table")
    format: str = Field(description="swiss or single_elimination")
    max_entrants: int = Field(description="entrants accepted at most, 2-256")
    starts_at: float = Field(default=0, description="Unix seconds; 0 = when an admin starts it")
    rounds: int = Field(default=0, description="Swiss rounds; 0 = ceil(log2(entrants))")
    table_size: int = Field(default=0, description="seats per table; 0 = the mode's sides, or 4")


class Register(BaseModel):
    team_code: str = Field(default="", description="partnership games: the code your partner received")


@router.get("/users/{user_id}/trophies", openapi_extra=returns(competitions_pb2.ListTrophiesResponse))
async def list_trophies(user_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A player's trophies, oldest first (each kind is won once)."""
    return message_json(await p.trophies.list(user_id))


@router.get("/trophies", openapi_extra=returns(competitions_pb2.ListTrophyKindsResponse))
async def list_trophy_kinds(caller: CallerDep) -> dict[str, Any]:
    """Every trophy there is to win."""
    return message_json(competitions_pb2.ListTrophyKindsResponse(kinds=[k.message() for k in trophies.KINDS]))


@router.post("/tournaments", status_code=201, openapi_extra=returns(competitions_pb2.Tournament))
async def create_tournament(body: CreateTournament, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Admin only: announce a tournament, open for registration."""
    if body.format not in _FORMATS:
        raise invalid("invalid_tournament", "format: swiss or single_elimination")
    request = competitions_pb2.CreateTournamentRequest(
        name=body.name,
        game=body.game,
        format=_FORMATS[body.format],
        max_entrants=body.max_entrants,
        starts_at=body.starts_at,
        rounds=body.rounds,
        table_size=body.table_size,
    )
    doc = await p.tournaments.create(caller.identity, request, body.options)
    return message_json(p.tournaments.message(doc))


@router.get("/leagues/{game}/{mode}", openapi_extra=returns(competitions_pb2.League))
async def league(game: str, mode: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A ranked mode's current season: standings per division, when it
    closes, and the moves that closed the previous one."""
    return message_json(await p.leagues.league(game, mode))


@router.get("/tournaments", openapi_extra=returns(competitions_pb2.ListTournamentsResponse))
async def list_tournaments(
    caller: CallerDep, p: PlatformDep, game: str = "", status: str = ""
) -> dict[str, Any]:
    """Tournaments, newest first; ``status``: registration, running,
    finished or cancelled."""
    if status and status not in STATUSES:
        raise invalid("invalid_status", f"status: {', '.join(STATUSES)}")
    docs = await p.tournaments.list(game, status)
    reply = competitions_pb2.ListTournamentsResponse(tournaments=[p.tournaments.message(d) for d in docs])
    return message_json(reply)


@router.get("/tournaments/{tournament_id}", openapi_extra=returns(competitions_pb2.Tournament))
async def get_tournament(tournament_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Entrants, every round's tables and results, and the standings."""
    doc, _ = await p.tournaments.load(tournament_id)
    return message_json(p.tournaments.message(doc))


@router.websocket("/tournaments/{tournament_id}/events")
async def follow_tournament(websocket: WebSocket, tournament_id: str) -> None:
    """Send the hello ``{"token"}``; receive ``{"tournament": ...}`` now and
    after every change, then ``{"end": {"reason": "tournament_over"}}``
    (close codes as the other feeds')."""

    async def body(socket: Any, p: Any) -> None:
        await socket.hello(p)
        updates = p.tournaments.follow(tournament_id)
        try:
            await socket.pump(
                updates,
                lambda doc: orjson.dumps({"tournament": message_json(p.tournaments.message(doc))}).decode(),
            )
        finally:
            await updates.aclose()
        await socket.finish("tournament_over")

    await serve_feed(websocket, body)


@router.post(
    "/tournaments/{tournament_id}/register",
    status_code=201,
    openapi_extra=returns(competitions_pb2.RegisterForTournamentResponse),
)
async def register(tournament_id: str, body: Register, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Register; in partnership games the first of a team gets a
    ``team_code`` for the partner."""
    return message_json(await p.tournaments.register_reply(caller.identity, tournament_id, body.team_code))


@router.post("/tournaments/{tournament_id}/withdraw", status_code=204)
async def withdraw(tournament_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Leave before the start (the whole team)."""
    await p.tournaments.withdraw(caller.identity, tournament_id)
    return Response(status_code=204)


@router.post("/tournaments/{tournament_id}/start", openapi_extra=returns(competitions_pb2.Tournament))
async def start(tournament_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Admin only: start now rather than at the start time."""
    return message_json(p.tournaments.message(await p.tournaments.start(tournament_id, caller.identity)))
