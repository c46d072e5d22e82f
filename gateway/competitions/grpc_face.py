"""CompetitionService on the gateway's gRPC face (beside PlatformService, same
guard, same Platform): the operations of gateway/routes/competitions.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
from google.protobuf import json_format
from rodada.platform.v1 import competitions_pb2, competitions_pb2_grpc

from gateway.competitions import trophies
from gateway.competitions.tournaments import STATUSES
from gateway.matches import Caller
from gateway.platform import Platform
from services.kit.guard import bearer

SERVICE = competitions_pb2.DESCRIPTOR.services_by_name["CompetitionService"].full_name
_STATUS_NAMES = {number: name for name, number in STATUSES.items()}
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class CompetitionServicer(competitions_pb2_grpc.CompetitionServiceServicer):
    def __init__(self, platform: Platform) -> None:
        self.p = platform

    def _caller(self, context: Context) -> Caller:
        return self.p.sessions.caller(bearer(context.invocation_metadata()))

    async def ListTrophies(
        self, request: competitions_pb2.ListTrophiesRequest, context: Context
    ) -> competitions_pb2.ListTrophiesResponse:
        self._caller(context)
        return await self.p.trophies.list(request.user_id)

    async def ListTrophyKinds(
        self, request: competitions_pb2.ListTrophyKindsRequest, context: Context
    ) -> competitions_pb2.ListTrophyKindsResponse:
        self._caller(context)
        return competitions_pb2.ListTrophyKindsResponse(kinds=[k.message() for k in trophies.KINDS])

    async def CreateTournament(
        self, request: competitions_pb2.CreateTournamentRequest, context: Context
    ) -> competitions_pb2.CreateTournamentResponse:
        caller = self._caller(context)
        options: dict[str, Any] = {}
        if request.HasField("options"):
            message = self.p.games.get(request.game).unpack("Options", request.options, "invalid_options")
            options = json_format.MessageToDict(message, preserving_proto_field_name=True)
        doc = await self.p.tournaments.create(caller.identity, request, options)
        return competitions_pb2.CreateTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def ListTournaments(
        self, request: competitions_pb2.ListTournamentsRequest, context: Context
    ) -> competitions_pb2.ListTournamentsResponse:
        self._caller(context)
        docs = await self.p.tournaments.list(request.game, _STATUS_NAMES.get(request.status, ""))
        return competitions_pb2.ListTournamentsResponse(
            tournaments=[self.p.tournaments.message(d) for d in docs]
        )

    async def GetTournament(
        self, request: competitions_pb2.GetTournamentRequest, context: Context
    ) -> competitions_pb2.GetTournamentResponse:
        self._caller(context)
        doc, _ = await self.p.tournaments.load(request.tournament_id)
        return competitions_pb2.GetTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def FollowTournament(
        self, request: competitions_pb2.FollowTournamentRequest, context: Context
    ) -> AsyncIterator[competitions_pb2.FollowTournamentResponse]:
        self._caller(context)
        updates = self.p.tournaments.follow(request.tournament_id)
        try:
            async for doc in updates:
                yield competitions_pb2.FollowTournamentResponse(tournament=self.p.tournaments.message(doc))
        finally:
            await updates.aclose()

    async def RegisterForTournament(
        self, request: competitions_pb2.RegisterForTournamentRequest, context: Context
    ) -> competitions_pb2.RegisterForTournamentResponse:
        caller = self._caller(context)
        return await self.p.tournaments.register_reply(
            caller.identity, request.tournament_id, request.team_code
        )

    async def WithdrawFromTournament(
        self, request: competitions_pb2.WithdrawFromTournamentRequest, context: Context
    ) -> competitions_pb2.WithdrawFromTournamentResponse:
        await self.p.tournaments.withdraw(self._caller(context).identity, request.tournament_id)
        return competitions_pb2.WithdrawFromTournamentResponse()

    async def StartTournament(
        self, request: competitions_pb2.StartTournamentRequest, context: Context
    ) -> competitions_pb2.StartTournamentResponse:
        doc = await self.p.tournaments.start(request.tournament_id, self._caller(context).identity)
        return competitions_pb2.StartTournamentResponse(tournament=self.p.tournaments.message(doc))

    async def GetLeague(
        self, request: competitions_pb2.GetLeagueRequest, context: Context
    ) -> competitions_pb2.GetLeagueResponse:
        self._caller(context)
        return competitions_pb2.GetLeagueResponse(
            league=await self.p.leagues.league(request.game, request.mode)
        )


def register(platform: Platform, server: grpc.aio.Server) -> str:
    competitions_pb2_grpc.add_CompetitionServiceServicer_to_server(CompetitionServicer(platform), server)
    return SERVICE
