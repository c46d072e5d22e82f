"""rodada.platform.v1.PlatformService: accounts, games, tables and invites,
play and the table's feed, matchmaking, ratings and histories."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

from rodada.platform.v1 import platform_pb2 as pb
from rodada.platform.v1 import platform_pb2_grpc

from gateway.api.face import Context, Servicer, caller, client_address, options
from gateway.feeds import feed_message
from gateway.matches import Caller
from gateway.matchmaking.messages import ticket_message, ticket_update
from gateway.paging import page
from gateway.sessions import user_message


class PlatformServicer(Servicer, platform_pb2_grpc.PlatformServiceServicer):
    # -- accounts --------------------------------------------------------------

    async def SignUp(self, request: pb.SignUpRequest, context: Context) -> pb.SignUpResponse:
        address = client_address(context)
        return pb.SignUpResponse(
            session=await self.p.sessions.register(request.username, request.password, address)
        )

    async def LogIn(self, request: pb.LogInRequest, context: Context) -> pb.LogInResponse:
        address = client_address(context)
        return pb.LogInResponse(
            session=await self.p.sessions.login(request.username, request.password, address)
        )

    async def LogInAsGuest(
        self, request: pb.LogInAsGuestRequest, context: Context
    ) -> pb.LogInAsGuestResponse:
        session = await self.p.sessions.guest(request.name or None, client_address(context))
        return pb.LogInAsGuestResponse(session=session)

    async def Refresh(self, request: pb.RefreshRequest, context: Context) -> pb.RefreshResponse:
        return pb.RefreshResponse(session=await self.p.sessions.refresh(request.refresh_token))

    async def GetMe(self, request: pb.GetMeRequest, context: Context) -> pb.GetMeResponse:
        return pb.GetMeResponse(user=user_message(caller(context).identity))

    async def ListGames(self, request: pb.ListGamesRequest, context: Context) -> pb.ListGamesResponse:
        games = pb.ListGamesResponse(games=[g.info for g in self.p.games.described()])
        for game in games.games:
            game.ClearField("descriptors")  # Describe's, for a game's service and codecs
        return games

    # -- tables ----------------------------------------------------------------

    async def CreateTable(self, request: pb.CreateTableRequest, context: Context) -> pb.CreateTableResponse:
        me = caller(context)
        game = self.p.games.get(request.game)
        chosen = options(self.p.games, request.game, request.options)
        table = await self.p.tables.create(me.identity, game, request.seats, chosen, list(request.cpu_seats))
        return pb.CreateTableResponse(table=self.p.tables.message(table, me.user_id))

    async def ListOpenTables(
        self, request: pb.ListOpenTablesRequest, context: Context
    ) -> pb.ListOpenTablesResponse:
        me = caller(context)
        _, size = page(0, request.page_size, default=20, maximum=100)
        game = self.p.games.get(request.game)
        tables, next_token = await self.p.tables.open_tables(game, size, request.page_token)
        return pb.ListOpenTablesResponse(
            tables=[self.p.tables.message(t, me.user_id) for t in tables], next_page_token=next_token
        )

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        me = caller(context)
        table, last_event_id = await self.p.tables.load(request.table_id)
        return pb.GetTableResponse(table=self.p.tables.message(table, me.user_id, last_event_id))

    async def JoinTable(self, request: pb.JoinTableRequest, context: Context) -> pb.JoinTableResponse:
        me = caller(context)
        table = await self.p.tables.join(me.identity, request.invite_code)
        return pb.JoinTableResponse(table=self.p.tables.message(table, me.user_id))

    async def SitAtTable(self, request: pb.SitAtTableRequest, context: Context) -> pb.SitAtTableResponse:
        me = caller(context)
        seat = request.seat if request.HasField("seat") else None
        table, snapshot = await self.p.play.sit(me, request.table_id, seat)
        return pb.SitAtTableResponse(table=self.p.tables.message(table, me.user_id), match=snapshot)

    async def CreateInvite(
        self, request: pb.CreateInviteRequest, context: Context
    ) -> pb.CreateInviteResponse:
        invite = await self.p.tables.invite(caller(context).identity, request.table_id, request.team or None)
        return pb.CreateInviteResponse(invite=pb.Invite(**invite))

    async def RevokeInvite(
        self, request: pb.RevokeInviteRequest, context: Context
    ) -> pb.RevokeInviteResponse:
        await self.p.tables.revoke(caller(context).identity, request.table_id, request.code)
        return pb.RevokeInviteResponse()

    async def ArrangeSeats(
        self, request: pb.ArrangeSeatsRequest, context: Context
    ) -> pb.ArrangeSeatsResponse:
        me = caller(context)
        table = await self.p.tables.arrange(me.identity, request.table_id, list(request.seats))
        return pb.ArrangeSeatsResponse(table=self.p.tables.message(table, me.user_id))

    async def StartTable(self, request: pb.StartTableRequest, context: Context) -> pb.StartTableResponse:
        return pb.StartTableResponse(match=await self.p.play.start(caller(context), request.table_id))

    async def LeaveTable(self, request: pb.LeaveTableRequest, context: Context) -> pb.LeaveTableResponse:
        me = caller(context)
        table, snapshot = await self.p.play.leave(me, request.table_id)
        reply = pb.LeaveTableResponse(match=snapshot)
        if table is not None:
            reply.table.CopyFrom(self.p.tables.message(table, me.user_id))
        return reply

    # -- play ------------------------------------------------------------------

    async def GetView(self, request: pb.GetViewRequest, context: Context) -> pb.GetViewResponse:
        return pb.GetViewResponse(match=await self.p.play.view(caller(context), request.table_id))

    async def Act(self, request: pb.ActRequest, context: Context) -> pb.ActResponse:
        me = caller(context)
        snapshot = await self.p.play.act(me, request.table_id, request.expected_version, request.action)
        return pb.ActResponse(match=snapshot)

    async def Ask(self, request: pb.AskRequest, context: Context) -> pb.AskResponse:
        reply = await self.p.play.ask(caller(context), request.table_id, request.question)
        return pb.AskResponse(version=reply.version, answer=reply.answer)

    async def GetPresence(self, request: pb.GetPresenceRequest, context: Context) -> pb.GetPresenceResponse:
        me = caller(context)
        return pb.GetPresenceResponse(connected=await self.p.play.presence(me.user_id, request.table_id))

    async def FollowTable(
        self, request: pb.FollowTableRequest, context: Context
    ) -> AsyncIterator[pb.FollowTableResponse]:
        items = self.p.feeds.follow(caller(context), request.table_id, request.after_event_id)
        try:
            async for item in items:
                yield pb.FollowTableResponse(**cast(Any, feed_message(item.message)))
        finally:
            await items.aclose()

    # -- matchmaking -----------------------------------------------------------

    async def CreateTicket(
        self, request: pb.CreateTicketRequest, context: Context
    ) -> pb.CreateTicketResponse:
        view = await self._queue(request, caller(context))
        return pb.CreateTicketResponse(ticket=ticket_message(view, self.p.games))

    async def JoinTicket(self, request: pb.JoinTicketRequest, context: Context) -> pb.JoinTicketResponse:
        view = await self.p.matchmaking.join_party(caller(context).identity, request.party_code)
        return pb.JoinTicketResponse(ticket=ticket_message(view, self.p.games))

    async def FindMatch(
        self, request: pb.FindMatchRequest, context: Context
    ) -> AsyncIterator[pb.FindMatchResponse]:
        me = caller(context)
        ticket = await self._queue(request, me)
        async for update in self._follow(ticket["id"], me):
            yield pb.FindMatchResponse(update=update)

    async def JoinParty(
        self, request: pb.JoinPartyRequest, context: Context
    ) -> AsyncIterator[pb.JoinPartyResponse]:
        me = caller(context)
        ticket = await self.p.matchmaking.join_party(me.identity, request.party_code)
        async for update in self._follow(ticket["id"], me):
            yield pb.JoinPartyResponse(update=update)

    async def FollowTicket(
        self, request: pb.FollowTicketRequest, context: Context
    ) -> AsyncIterator[pb.FollowTicketResponse]:
        async for update in self._follow(request.ticket_id, caller(context)):
            yield pb.FollowTicketResponse(update=update)

    async def GetTicket(self, request: pb.GetTicketRequest, context: Context) -> pb.GetTicketResponse:
        view = await self.p.matchmaking.describe(request.ticket_id, caller(context).identity)
        return pb.GetTicketResponse(ticket=ticket_message(view, self.p.games))

    async def CancelTicket(
        self, request: pb.CancelTicketRequest, context: Context
    ) -> pb.CancelTicketResponse:
        await self.p.matchmaking.cancel(request.ticket_id, caller(context).identity)
        return pb.CancelTicketResponse()

    async def _queue(
        self, request: pb.CreateTicketRequest | pb.FindMatchRequest, me: Caller
    ) -> dict[str, Any]:
        chosen = options(self.p.games, request.game, request.options)
        return await self.p.matchmaking.create(
            me.identity, request.game, chosen, request.ranked, request.party
        )

    async def _follow(self, ticket_id: str, me: Caller) -> AsyncIterator[pb.TicketUpdate]:
        updates = self.p.matchmaking.follow(ticket_id, me.identity)
        try:
            async for update in updates:
                yield ticket_update(ticket_id, update)
        finally:
            await updates.aclose()

    # -- standings -------------------------------------------------------------

    async def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: Context
    ) -> pb.GetLeaderboardResponse:
        caller(context)
        return await self.p.standings.leaderboard(request.game, request.mode, request.offset, request.limit)

    async def ListRatings(self, request: pb.ListRatingsRequest, context: Context) -> pb.ListRatingsResponse:
        caller(context)
        return await self.p.standings.ratings(request.user_id)

    async def GetRatingHistory(
        self, request: pb.GetRatingHistoryRequest, context: Context
    ) -> pb.GetRatingHistoryResponse:
        caller(context)
        return await self.p.standings.rating_history(
            request.user_id, request.game, request.mode, request.offset, request.limit
        )

    async def ListMatchHistory(
        self, request: pb.ListMatchHistoryRequest, context: Context
    ) -> pb.ListMatchHistoryResponse:
        caller(context)
        return await self.p.standings.matches(request.user_id, request.offset, request.limit)
