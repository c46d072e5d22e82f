"""The platform's gRPC face (rodada.platform.v1.PlatformService) for mobile
apps, served by the gateway process beside its HTTP API, on the same
Platform: the same operations, limits and error codes as the HTTP routes
(the parity test holds them to it). The kit's call guard in front gives it
the game services' metrics, error model and treatment of undecodable
requests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias, cast

import grpc
from google.protobuf import json_format
from grpc_health.v1 import health
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from gateway.competitions import grpc_face as competitions
from gateway.feeds import feed_message
from gateway.matches import Caller
from gateway.matchmaking.queues import ticket_message, ticket_update
from gateway.platform import Platform
from gateway.sessions import user_message
from gateway.social import grpc_face as social_face
from services.kit.guard import CallGuard, bearer
from services.kit.server import start_grpc

SERVICE = platform_pb2.DESCRIPTOR.services_by_name["PlatformService"].full_name
OPEN_METHODS = {f"/{SERVICE}/{name}" for name in ("SignUp", "LogIn", "LogInAsGuest", "Refresh", "ListGames")}

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class PlatformServicer(platform_pb2_grpc.PlatformServiceServicer):
    def __init__(self, platform: Platform) -> None:
        self.p = platform

    def _caller(self, context: Context) -> Caller:
        return self.p.sessions.caller(bearer(context.invocation_metadata()))

    def _options(self, game: str, request: Any) -> dict[str, Any]:
        """A request's packed Options as the JSON dict tables and queues keep."""
        if not request.HasField("options"):
            return {}
        message = self.p.games.get(game).unpack("Options", request.options, "invalid_options")
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    # -- accounts --------------------------------------------------------------

    async def SignUp(
        self, request: platform_pb2.SignUpRequest, context: Context
    ) -> platform_pb2.SignUpResponse:
        session = await self.p.sessions.register(request.username, request.password, context.peer())
        return platform_pb2.SignUpResponse(session=session)

    async def LogIn(self, request: platform_pb2.LogInRequest, context: Context) -> platform_pb2.LogInResponse:
        session = await self.p.sessions.login(request.username, request.password, context.peer())
        return platform_pb2.LogInResponse(session=session)

    async def LogInAsGuest(
        self, request: platform_pb2.LogInAsGuestRequest, context: Context
    ) -> platform_pb2.LogInAsGuestResponse:
        session = await self.p.sessions.guest(request.name or None, context.peer())
        return platform_pb2.LogInAsGuestResponse(session=session)

    async def Refresh(
        self, request: platform_pb2.RefreshRequest, context: Context
    ) -> platform_pb2.RefreshResponse:
        return platform_pb2.RefreshResponse(session=await self.p.sessions.refresh(request.refresh_token))

    async def GetMe(self, request: platform_pb2.GetMeRequest, context: Context) -> platform_pb2.GetMeResponse:
        return platform_pb2.GetMeResponse(user=user_message(self._caller(context).identity))

    async def ListGames(
        self, request: platform_pb2.ListGamesRequest, context: Context
    ) -> platform_pb2.ListGamesResponse:
        return platform_pb2.ListGamesResponse(games=[g.info for g in self.p.games.described()])

    # -- tables --------------------------------------------------------------

    async def CreateTable(
        self, request: platform_pb2.CreateTableRequest, context: Context
    ) -> platform_pb2.CreateTableResponse:
        caller = self._caller(context)
        game = self.p.games.get(request.game)
        options = self._options(request.game, request)
        table = await self.p.tables.create(
            caller.identity, game, request.seats, options, list(request.cpu_seats)
        )
        return platform_pb2.CreateTableResponse(table=self.p.tables.message(table, caller.user_id))

    async def ListOpenTables(
        self, request: platform_pb2.ListOpenTablesRequest, context: Context
    ) -> platform_pb2.ListOpenTablesResponse:
        caller = self._caller(context)
        tables = await self.p.tables.open_tables(self.p.games.get(request.game))
        return platform_pb2.ListOpenTablesResponse(
            tables=[self.p.tables.message(t, caller.user_id) for t in tables]
        )

    async def GetTable(
        self, request: platform_pb2.GetTableRequest, context: Context
    ) -> platform_pb2.GetTableResponse:
        caller = self._caller(context)
        table, last_event_id = await self.p.tables.load(request.table_id)
        return platform_pb2.GetTableResponse(
            table=self.p.tables.message(table, caller.user_id, last_event_id)
        )

    async def JoinTable(
        self, request: platform_pb2.JoinTableRequest, context: Context
    ) -> platform_pb2.JoinTableResponse:
        caller = self._caller(context)
        table = await self.p.tables.join(caller.identity, request.invite_code)
        return platform_pb2.JoinTableResponse(table=self.p.tables.message(table, caller.user_id))

    async def SitAtTable(
        self, request: platform_pb2.SitAtTableRequest, context: Context
    ) -> platform_pb2.SitAtTableResponse:
        caller = self._caller(context)
        seat = request.seat if request.HasField("seat") else None
        table, snapshot = await self.p.play.sit(caller, request.table_id, seat)
        return platform_pb2.SitAtTableResponse(
            table=self.p.tables.message(table, caller.user_id), match=snapshot
        )

    async def CreateInvite(
        self, request: platform_pb2.CreateInviteRequest, context: Context
    ) -> platform_pb2.CreateInviteResponse:
        caller = self._caller(context)
        invite = await self.p.tables.invite(caller.identity, request.table_id, request.team or None)
        return platform_pb2.CreateInviteResponse(invite=platform_pb2.Invite(**invite))

    async def RevokeInvite(
        self, request: platform_pb2.RevokeInviteRequest, context: Context
    ) -> platform_pb2.RevokeInviteResponse:
        await self.p.tables.revoke(self._caller(context).identity, request.table_id, request.code)
        return platform_pb2.RevokeInviteResponse()

    async def ArrangeSeats(
        self, request: platform_pb2.ArrangeSeatsRequest, context: Context
    ) -> platform_pb2.ArrangeSeatsResponse:
        caller = self._caller(context)
        table = await self.p.tables.arrange(caller.identity, request.table_id, list(request.seats))
        return platform_pb2.ArrangeSeatsResponse(table=self.p.tables.message(table, caller.user_id))

    async def StartTable(
        self, request: platform_pb2.StartTableRequest, context: Context
    ) -> platform_pb2.StartTableResponse:
        return platform_pb2.StartTableResponse(
            match=await self.p.play.start(self._caller(context), request.table_id)
        )

    async def LeaveTable(
        self, request: platform_pb2.LeaveTableRequest, context: Context
    ) -> platform_pb2.LeaveTableResponse:
        caller = self._caller(context)
        table, snapshot = await self.p.play.leave(caller, request.table_id)
        reply = platform_pb2.LeaveTableResponse(match=snapshot)
        if table is not None:
            reply.table.CopyFrom(self.p.tables.message(table, caller.user_id))
        return reply

    # -- play ----------------------------------------------------------------

    async def GetView(
        self, request: platform_pb2.GetViewRequest, context: Context
    ) -> platform_pb2.GetViewResponse:
        return platform_pb2.GetViewResponse(
            match=await self.p.play.view(self._caller(context), request.table_id)
        )

    async def Act(self, request: platform_pb2.ActRequest, context: Context) -> platform_pb2.ActResponse:
        caller = self._caller(context)
        snapshot = await self.p.play.act(caller, request.table_id, request.expected_version, request.action)
        return platform_pb2.ActResponse(match=snapshot)

    async def Ask(self, request: platform_pb2.AskRequest, context: Context) -> platform_pb2.AskResponse:
        reply = await self.p.play.ask(self._caller(context), request.table_id, request.question)
        return platform_pb2.AskResponse(version=reply.version, answer=reply.answer)

    async def GetPresence(
        self, request: platform_pb2.GetPresenceRequest, context: Context
    ) -> platform_pb2.GetPresenceResponse:
        self._caller(context)
        return platform_pb2.GetPresenceResponse(connected=await self.p.play.presence(request.table_id))

    async def FollowTable(
        self, request: platform_pb2.FollowTableRequest, context: Context
    ) -> AsyncIterator[platform_pb2.FollowTableResponse]:
        items = self.p.feeds.follow(self._caller(context), request.table_id, request.after_event_id)
        try:
            async for item in items:
                yield platform_pb2.FollowTableResponse(**cast(Any, feed_message(item.message)))
        finally:
            await items.aclose()

    # -- matchmaking ---------------------------------------------------------

    async def _follow_ticket(
        self, ticket_id: str, caller: Caller
    ) -> AsyncIterator[platform_pb2.TicketUpdate]:
        updates = self.p.matchmaking.follow(ticket_id, caller.identity)
        try:
            async for update in updates:
                yield ticket_update(ticket_id, update)
        finally:
            await updates.aclose()

    async def FindMatch(
        self, request: platform_pb2.FindMatchRequest, context: Context
    ) -> AsyncIterator[platform_pb2.FindMatchResponse]:
        caller = self._caller(context)
        options = self._options(request.game, request)
        ticket = await self.p.matchmaking.create(
            caller.identity, request.game, options, request.ranked, request.party
        )
        async for update in self._follow_ticket(ticket["id"], caller):
            yield platform_pb2.FindMatchResponse(update=update)

    async def JoinParty(
        self, request: platform_pb2.JoinPartyRequest, context: Context
    ) -> AsyncIterator[platform_pb2.JoinPartyResponse]:
        caller = self._caller(context)
        ticket = await self.p.matchmaking.join_party(caller.identity, request.party_code)
        async for update in self._follow_ticket(ticket["id"], caller):
            yield platform_pb2.JoinPartyResponse(update=update)

    async def FollowTicket(
        self, request: platform_pb2.FollowTicketRequest, context: Context
    ) -> AsyncIterator[platform_pb2.FollowTicketResponse]:
        async for update in self._follow_ticket(request.ticket_id, self._caller(context)):
            yield platform_pb2.FollowTicketResponse(update=update)

    async def GetTicket(
        self, request: platform_pb2.GetTicketRequest, context: Context
    ) -> platform_pb2.GetTicketResponse:
        view = await self.p.matchmaking.describe(request.ticket_id, self._caller(context).identity)
        return platform_pb2.GetTicketResponse(ticket=ticket_message(view, self.p.games))

    async def CancelTicket(
        self, request: platform_pb2.CancelTicketRequest, context: Context
    ) -> platform_pb2.CancelTicketResponse:
        await self.p.matchmaking.cancel(request.ticket_id, self._caller(context).identity)
        return platform_pb2.CancelTicketResponse()

    # -- standings -----------------------------------------------------------

    async def GetLeaderboard(
        self, request: platform_pb2.GetLeaderboardRequest, context: Context
    ) -> platform_pb2.GetLeaderboardResponse:
        self._caller(context)
        return await self.p.standings.leaderboard(request.game, request.mode, request.offset, request.limit)

    async def ListRatings(
        self, request: platform_pb2.ListRatingsRequest, context: Context
    ) -> platform_pb2.ListRatingsResponse:
        self._caller(context)
        return await self.p.standings.ratings(request.user_id)

    async def GetRatingHistory(
        self, request: platform_pb2.GetRatingHistoryRequest, context: Context
    ) -> platform_pb2.GetRatingHistoryResponse:
        self._caller(context)
        return await self.p.standings.rating_history(
            request.user_id, request.game, request.mode, request.offset, request.limit
        )

    async def ListMatchHistory(
        self, request: platform_pb2.ListMatchHistoryRequest, context: Context
    ) -> platform_pb2.ListMatchHistoryResponse:
        self._caller(context)
        return await self.p.standings.matches(request.user_id, request.offset, request.limit)


async def start(platform: Platform, address: str) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """Serve the face; the caller turns its health NOT_SERVING when the
    replica drains, and stops it (after draining the feeds)."""
    guard = CallGuard(platform.sessions.verifier, "platform", open_methods=OPEN_METHODS)

    def register(server: grpc.aio.Server) -> list[str]:
        platform_pb2_grpc.add_PlatformServiceServicer_to_server(PlatformServicer(platform), server)
        return [SERVICE, social_face.add_to_server(platform, server), competitions.register(platform, server)]

    return await start_grpc(address, guard, register)
