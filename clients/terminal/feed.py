"""Streams that outlive a dropped connection: a table's feed, resumed from
the last event id received (the server then sends what was missed, and
nothing twice), and a matchmaking ticket, followed again by its id (the
open stream is the ticket's heartbeat, so it must come back within the
server's grace period)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2 as p

from clients.terminal.connection import Connection, Refusal

T = TypeVar("T")

# What a broken connection looks like: the server went away or drains
# (UNAVAILABLE), the channel was closed under the call (CANCELLED), or
# nothing came back in time.
LOST = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED}
MAX_BACKOFF_SECONDS = 5.0


@dataclass
class Lost:
    """The stream broke and is being opened again (``attempt`` 1, 2, …)."""

    reason: str
    attempt: int


async def resuming(conn: Connection, open_stream: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T | Lost]:
    """The items of ``open_stream()``, opened again after each loss, with
    backoff; a ``Lost`` marks each break. Ends when a stream ends."""
    attempt = 0
    while True:
        try:
            async for item in open_stream():
                attempt = 0
                yield item
            return
        except Refusal as refusal:
            if refusal.code not in LOST:
                raise
            reason = str(refusal)
        except asyncio.CancelledError:
            # grpc.aio cancels the calls of a channel being closed; only
            # that is a lost connection, a cancelled task stays cancelled.
            task = asyncio.current_task()
            if not conn.closed or (task is not None and task.cancelling()):
                raise
            reason = "connection closed"
        attempt += 1
        yield Lost(reason, attempt)
        await asyncio.sleep(min(0.2 * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS))


class TableFeed:
    """One seat's feed of a table (``FollowTable``): events, then the state
    to draw from, then each new event and snapshot, until the match ends."""

    def __init__(self, conn: Connection, table_id: str) -> None:
        self.conn = conn
        self.table_id = table_id
        self.last_event_id = 0
        self.events: list[match_pb2.MatchEvent] = []  # every event received, in order

    def _open(self) -> AsyncIterator[p.FollowTableResponse]:
        request = p.FollowTableRequest(table_id=self.table_id, after_event_id=self.last_event_id)
        return self.conn.stream(self.conn.api.FollowTable, request)

    async def items(self) -> AsyncIterator[p.FollowTableResponse | Lost]:
        async for item in resuming(self.conn, self._open):
            if isinstance(item, p.FollowTableResponse) and item.WhichOneof("item") == "event":
                if item.event.id <= self.last_event_id:
                    continue  # already had it: a resume never shows an event twice
                self.last_event_id = item.event.id
                self.events.append(item.event)
            yield item


async def ticket_updates(
    conn: Connection, request: p.FindMatchRequest
) -> AsyncIterator[p.TicketUpdate | Lost]:
    """A matchmaking ticket's updates, from queueing to ``matched`` or
    ``closed``; after a loss the same ticket is followed again."""
    ticket_id = ""

    async def open_stream() -> AsyncIterator[p.TicketUpdate]:
        followed: p.FollowTicketResponse
        found: p.FindMatchResponse
        if ticket_id:
            follow = p.FollowTicketRequest(ticket_id=ticket_id)
            async for followed in conn.stream(conn.api.FollowTicket, follow):
                yield followed.update
        else:
            async for found in conn.stream(conn.api.FindMatch, request):
                yield found.update

    async for update in resuming(conn, open_stream):
        if isinstance(update, p.TicketUpdate):
            ticket_id = update.ticket_id
        yield update
