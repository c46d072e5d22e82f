"""rodada.platform.v1.CompetitionService: trophies, tournaments and leagues
(gateway/competitions/)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from rodada.platform.v1 import competitions_pb2 as pb
from rodada.platform.v1 import competitions_pb2_grpc

from gateway.api.face import Context, Servicer, caller, options
from gateway.competitions.tournaments import STATUSES

_STATUS_NAMES = {number: name for name, number in STATUSES.items()}


class CompetitionServicer(Servicer, competitions_pb2_grpc.CompetitionServiceServicer):
    async def ListTrophies(
        self, request: pb.ListTrophiesRequest, context: Context
    ) -> pb.ListTrophiesResponse:
        caller(context)
        return await self.p.trophies.list(request.user_id)

    async def ListTrophyKinds(
        self, request: pb.ListTrophyKindsRequest, context: Context
    ) -> pb.ListTrophyKindsResponse:
        caller(context)
        return pb.ListTrophyKindsResponse(kinds=[k.message() for k in self.p.trophies.kinds()])

    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: Context
    ) -> pb.CreateTournamentResponse:
        me = caller(context)
        chosen = options(self.p.games, request.game, request.options)
        doc = await self.p.tournaments.create(me.identity, request, chosen)
        return pb.CreateTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: Context
    ) -> pb.ListTournamentsResponse:
        caller(context)
        docs = await self.p.tournaments.list(request.game, _STATUS_NAMES.get(request.status, ""))
        return pb.ListTournamentsResponse(tournaments=[self.p.tournaments.message(d) for d in docs])

    async def GetTournament(
        self, request: pb.GetTournamentRequest, context: Context
    ) -> pb.GetTournamentResponse:
        caller(context)
        doc, _ = await self.p.tournaments.load(request.tournament_id)
        return pb.GetTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def FollowTournament(
        self, request: pb.FollowTournamentRequest, context: Context
    ) -> AsyncIterator[pb.FollowTournamentResponse]:
        caller(context)
        updates = self.p.tournaments.follow(request.tournament_id)
        try:
            async for doc in updates:
                yield pb.FollowTournamentResponse(tournament=self.p.tournaments.message(doc))
        finally:
            await updates.aclose()

    async def RegisterForTournament(
        self, request: pb.RegisterForTournamentRequest, context: Context
    ) -> pb.RegisterForTournamentResponse:
        me = caller(context)
        return await self.p.tournaments.register_reply(me.identity, request.tournament_id, request.team_code)

    async def WithdrawFromTournament(
        self, request: pb.WithdrawFromTournamentRequest, context: Context
    ) -> pb.WithdrawFromTournamentResponse:
        await self.p.tournaments.withdraw(caller(context).identity, request.tournament_id)
        return pb.WithdrawFromTournamentResponse()

    async def StartTournament(
        self, request: pb.StartTournamentRequest, context: Context
    ) -> pb.StartTournamentResponse:
        doc = await self.p.tournaments.start(request.tournament_id, caller(context).identity)
        return pb.StartTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def CancelTournament(
        self, request: pb.CancelTournamentRequest, context: Context
    ) -> pb.CancelTournamentResponse:
        doc = await self.p.tournaments.cancel(caller(context).identity, request.tournament_id)
        return pb.CancelTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def RemoveEntrant(
        self, request: pb.RemoveEntrantRequest, context: Context
    ) -> pb.RemoveEntrantResponse:
        me = caller(context).identity
        doc = await self.p.tournaments.remove_entrant(me, request.tournament_id, request.entrant_id)
        return pb.RemoveEntrantResponse(tournament=self.p.tournaments.message(doc))

    async def EditTournament(
        self, request: pb.EditTournamentRequest, context: Context
    ) -> pb.EditTournamentResponse:
        doc = await self.p.tournaments.edit(caller(context).identity, request)
        return pb.EditTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def CreateTournamentSchedule(
        self, request: pb.CreateTournamentScheduleRequest, context: Context
    ) -> pb.CreateTournamentScheduleResponse:
        me = caller(context)
        chosen = options(self.p.games, request.game, request.options)
        schedule = await self.p.schedules.create(me.identity, request, chosen)
        return pb.CreateTournamentScheduleResponse(schedule=self.p.schedules.message(schedule))

    async def ListTournamentSchedules(
        self, request: pb.ListTournamentSchedulesRequest, context: Context
    ) -> pb.ListTournamentSchedulesResponse:
        schedules = await self.p.schedules.listing(caller(context).identity)
        return pb.ListTournamentSchedulesResponse(schedules=[self.p.schedules.message(s) for s in schedules])

    async def DeleteTournamentSchedule(
        self, request: pb.DeleteTournamentScheduleRequest, context: Context
    ) -> pb.DeleteTournamentScheduleResponse:
        await self.p.schedules.delete(caller(context).identity, request.schedule_id)
        return pb.DeleteTournamentScheduleResponse()

    async def GetLeague(self, request: pb.GetLeagueRequest, context: Context) -> pb.GetLeagueResponse:
        caller(context)
        return pb.GetLeagueResponse(league=await self.p.leagues.league(request.game, request.mode))
