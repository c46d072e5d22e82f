"""Matchmaking over HTTP (the logic is gateway/matchmaking/).

A player queues with ``POST /v1/matchmaking/tickets`` and follows the ticket
on ``WS /v1/matchmaking/tickets/{id}/events``: the open WebSocket is what
keeps the ticket in the queue. Two friends queue as a party: the leader asks
for ``party: true`` and passes the returned ``party_code`` to the friend, who
joins with ``POST /v1/matchmaking/parties/join``; the ticket enters the queue
with both, and both follow it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field
from rodada.platform.v1 import platform_pb2

from gateway.deps import CallerDep, JsonRoute, PlatformDep, message_json
from gateway.matchmaking.queues import ticket_message
from gateway.openapi import returns

router = APIRouter(prefix="/v1/matchmaking", tags=["matchmaking"], route_class=JsonRoute)


class NewTicket(BaseModel):
    game: str = Field(description="a game's name (GET /v1/games)")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="the game's Options, proto JSON form; the queue is per options "
        "(a game with several queued modes needs the options that select one, e.g. Bozó's mode)",
    )
    ranked: bool = Field(default=False, description="a ranked queue (registered accounts only)")
    party: bool = Field(
        default=False,
        description="queue with a friend as partners (team games): the reply carries the party_code "
        "the friend joins with",
    )


class JoinParty(BaseModel):
    party_code: str


@router.post("/tickets", status_code=201, openapi_extra=returns(platform_pb2.Ticket))
async def create_ticket(body: NewTicket, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Queue for a game. One live ticket per player (409 ``already_queued``).
    Follow the ticket on its WebSocket within the grace period, or it is
    dropped."""
    view = await p.matchmaking.create(caller.identity, body.game, body.options, body.ranked, body.party)
    return message_json(ticket_message(view, p.games))


@router.post("/parties/join", openapi_extra=returns(platform_pb2.Ticket))
async def join_party(body: JoinParty, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Join a friend's party: the shared ticket enters the queue."""
    return message_json(
        ticket_message(await p.matchmaking.join_party(caller.identity, body.party_code), p.games)
    )


@router.get("/tickets/{ticket_id}", openapi_extra=returns(platform_pb2.Ticket))
async def get_ticket(ticket_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """The ticket: its state, queue position and estimated wait while waiting,
    the table and the caller's seat once matched."""
    return message_json(ticket_message(await p.matchmaking.describe(ticket_id, caller.identity), p.games))


@router.delete("/tickets/{ticket_id}", status_code=204)
async def cancel_ticket(ticket_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Leave the queue (a party's ticket, for both). 409 ``already_matched``
    once a table has taken it; a ticket already closed stays as it is."""
    await p.matchmaking.cancel(ticket_id, caller.identity)
    return Response(status_code=204)
