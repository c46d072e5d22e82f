"""The one client of the game services' MatchService, used by everything in
the gateway that touches a match: the HTTP routes, the gRPC face, the
feeds, the clocks and matchmaking. A game's refusal comes back as the same
:class:`Refused` (same gRPC code, same reason), so it survives every hop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.protobuf import any_pb2
from grpc.aio import Metadata
from rodada.common.v1 import match_pb2

from gateway.games import GameClient
from services.core import logs
from services.core.errors import Refused
from services.core.tokens import Identity

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated user and the token they came with (forwarded to the
    game services, which derive the caller's seat from it)."""

    identity: Identity
    token: str

    @property
    def user_id(self) -> str:
        return self.identity.user_id

    @property
    def metadata(self) -> Metadata:
        return _metadata(self.token)


def _metadata(token: str) -> Metadata:
    """The token, and the request id so the services' logs join ours. As
    grpc.aio's own Metadata: a tuple is checked against ``typing.Sequence``
    and converted on every call (2 µs of a move's)."""
    request_id = logs.REQUEST_ID.get()
    auth = ("authorization", f"Bearer {token}")
    return Metadata(auth, ("x-request-id", request_id)) if request_id else Metadata(auth)


async def call(rpc: Awaitable[T]) -> T:
    try:
        return await rpc
    except grpc.aio.AioRpcError as error:
        raise Refused.from_rpc_error(error) from None


class MatchClient:
    def __init__(self, platform_token: Callable[[], str], timeout: float) -> None:
        self._platform_token = platform_token
        self.timeout = timeout

    def platform_metadata(self) -> Metadata:
        return _metadata(self._platform_token())

    async def create(
        self, game: GameClient, match_id: str, players: list[match_pb2.Seat], options: any_pb2.Any
    ) -> None:
        """Create the match; idempotent (a match that exists already is the
        one a previous attempt created), so any replica may retry a start."""
        request = match_pb2.CreateMatchRequest(match_id=match_id, seats=players, options=options)
        try:
            await call(
                game.stub.CreateMatch(request, metadata=self.platform_metadata(), timeout=self.timeout)
            )
        except Refused as refusal:
            if refusal.reason != "match_exists":
                raise

    async def view(self, game: GameClient, match_id: str, caller: Caller | None) -> match_pb2.Snapshot:
        metadata = caller.metadata if caller else self.platform_metadata()
        request = match_pb2.GetViewRequest(match_id=match_id)
        reply: match_pb2.GetViewResponse = await call(
            game.stub.GetView(request, metadata=metadata, timeout=self.timeout)
        )
        return reply.snapshot

    async def act(
        self, game: GameClient, match_id: str, caller: Caller, expected_version: int, action: any_pb2.Any
    ) -> match_pb2.Snapshot:
        request = match_pb2.ActRequest(match_id=match_id, expected_version=expected_version, action=action)
        reply: match_pb2.ActResponse = await call(
            game.stub.Act(request, metadata=caller.metadata, timeout=self.timeout)
        )
        return reply.snapshot

    async def leave(self, game: GameClient, match_id: str, caller: Caller) -> match_pb2.Snapshot:
        request = match_pb2.LeaveRequest(match_id=match_id)
        reply: match_pb2.LeaveResponse = await call(
            game.stub.Leave(request, metadata=caller.metadata, timeout=self.timeout)
        )
        return reply.snapshot

    async def ask(
        self, game: GameClient, match_id: str, caller: Caller, question: any_pb2.Any
    ) -> match_pb2.AskResponse:
        request = match_pb2.AskRequest(match_id=match_id, question=question)
        return await call(game.stub.Ask(request, metadata=caller.metadata, timeout=self.timeout))

    async def fire_deadline(self, game: GameClient, match_id: str, version: int) -> str:
        request = match_pb2.FireDeadlineRequest(match_id=match_id, expected_version=version)
        reply = await call(
            game.stub.FireDeadline(request, metadata=self.platform_metadata(), timeout=self.timeout)
        )
        return match_pb2.DeadlineOutcome.Name(reply.outcome)
