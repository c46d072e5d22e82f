"""The HTTP + WebSocket face of matchmaking (the logic is gateway/matchmaking.py).

A player queues with ``POST /v1/matchmaking/tickets`` and follows the ticket
on ``WS /v1/matchmaking/tickets/{id}/events``: the open WebSocket is what
keeps the ticket in the queue. Two friends queue as a party: the leader asks
for ``party: true`` and passes the returned ``party_code`` to the friend, who
joins with ``POST /v1/matchmaking/parties/join``; the ticket enters the queue
with both, and both follow it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, WebSocket
from pydantic import BaseModel, Field

from gateway import ws
from gateway.deps import CallerDep
from gateway.matchmaking import Matchmaking
from gateway.platform import ApiError

router = APIRouter(prefix="/v1/matchmaking", tags=["matchmaking"])


def matchmaking(request: Request) -> Matchmaking:
    return request.app.state.matchmaking  # type: ignore[no-any-return]


MatchmakingDep = Annotated[Matchmaking, Depends(matchmaking)]


class NewTicket(BaseModel):
    game: str = Field(description="bozo, dudo, bozu_mekuri, domino or yatzy")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="the game's Options, proto JSON form; the queue is per options "
        '(Bozó: "mode" DUEL or DUPLAS is required)',
    )
    ranked: bool = Field(default=False, description="a ranked queue (registered accounts only)")
    party: bool = Field(
        default=False,
        description="queue with a friend as partners (Bozó duplas, Dominó): the reply carries the "
        "party_code the friend joins with",
    )


class JoinParty(BaseModel):
    party_code: str


@router.post("/tickets", status_code=201)
async def create_ticket(body: NewTicket, caller: CallerDep, mm: MatchmakingDep) -> dict[str, Any]:
    """Queue for a game. One live ticket per player (409 ``already_queued``).
    Follow the ticket on its WebSocket within the grace period, or it is
    dropped."""
    return await mm.create(caller.identity, body.game, body.options, body.ranked, body.party)


@router.post("/parties/join")
async def join_party(body: JoinParty, caller: CallerDep, mm: MatchmakingDep) -> dict[str, Any]:
    """Join a friend's party: the shared ticket enters the queue."""
    return await mm.join_party(caller.identity, body.party_code)


@router.get("/tickets/{ticket_id}")
async def get_ticket(ticket_id: str, caller: CallerDep, mm: MatchmakingDep) -> dict[str, Any]:
    """The ticket: its state, queue position and estimated wait while waiting,
    the table and the caller's seat once matched."""
    return await mm.describe(ticket_id, caller.identity)


@router.delete("/tickets/{ticket_id}", status_code=204)
async def cancel_ticket(ticket_id: str, caller: CallerDep, mm: MatchmakingDep) -> Response:
    """Leave the queue (a party's ticket, for both). 409 ``already_matched``
    once a table has taken it; a ticket already closed stays as it is."""
    await mm.cancel(ticket_id, caller.identity)
    return Response(status_code=204)


@router.websocket("/tickets/{ticket_id}/events")
async def ticket_events(websocket: WebSocket, ticket_id: str) -> None:
    """Follow a ticket, which keeps it alive. After connecting, send
    ``{"token": "<access token>"}``; the server then sends ``{"queue":
    {state, position, queue_length, estimated_wait_seconds}}`` whenever that
    changes, and finally ``{"matched": {"table_id", "seat"}}`` or ``{"closed":
    {"state", "reason"}}`` before closing. A bad hello gets an error and close
    code 4401; an unknown or someone else's ticket 4404 / 4403."""
    async with ws.connection(websocket):
        await _follow(websocket, ticket_id, websocket.app.state.matchmaking)


async def _follow(websocket: WebSocket, ticket_id: str, mm: Matchmaking) -> None:
    greeted = await ws.hello(websocket, mm.platform.verifier)
    if greeted is None:
        return
    identity = greeted[0].identity
    updates = mm.follow(ticket_id, identity)
    closed = asyncio.create_task(ws.wait_closed(websocket))
    pending: asyncio.Task[dict[str, Any]] | None = None
    try:
        while True:
            # Race each update against the client leaving: follow() keeps the
            # ticket alive for as long as it is iterated, so it must stop
            # as soon as nobody listens.
            pending = asyncio.ensure_future(anext(updates))
            await asyncio.wait({pending, closed}, return_when=asyncio.FIRST_COMPLETED)
            if closed.done():
                return
            try:
                message = pending.result()
            except StopAsyncIteration:
                await websocket.close()
                return
            except ApiError as error:
                await websocket.send_json({"error": {"code": error.code, "message": error.message}})
                await websocket.close(code=4000 + error.status)
                return
            await websocket.send_json(message)
    finally:
        closed.cancel()
        if pending is not None and not pending.done():
            # follow() stops at its next step even if the cancellation is
            # lost inside a Redis call (see matchmaking._cancel_requested);
            # whatever it was doing then is of no interest any more.
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pending
        await updates.aclose()
