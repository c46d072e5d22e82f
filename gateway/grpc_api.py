"""The platform's gRPC face (rodada.platform.v1.PlatformService) for mobile
apps, served by the gateway process beside its HTTP API, on the same
Platform: the same accounts, tables, limits and error codes."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from gateway.accounts import AccountError
from gateway.matchmaking import Matchmaking
from gateway.platform import ApiError, Caller, Platform, api_error
from gateway.tables import TableError, public_table
from services.kit.errors import ServiceError
from services.kit.tokens import TokenError

T = TypeVar("T")
log = logging.getLogger("rodada.gateway.grpc")
DOMAIN = "rodada.platform"
SERVICE = platform_pb2.DESCRIPTOR.services_by_name["PlatformService"].full_name

_STATUS = {
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.FAILED_PRECONDITION,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}
_SPECIAL = {"stale_version": grpc.StatusCode.ABORTED, "username_taken": grpc.StatusCode.ALREADY_EXISTS}


async def _fail(context: grpc.aio.ServicerContext[Any, Any], error: Exception) -> None:
    if isinstance(error, ApiError | AccountError | TableError):
        code = _SPECIAL.get(error.code) or _STATUS.get(error.status, grpc.StatusCode.UNKNOWN)
        failure = ServiceError(code, error.code, error.message)
    else:
        log.error("platform call failed", exc_info=error)
        failure = ServiceError(grpc.StatusCode.INTERNAL, "internal", "internal error")
    status = failure.to_status(DOMAIN)
    await context.abort(status.code, status.details, status.trailing_metadata)


def _caller(platform: Platform, context: grpc.aio.ServicerContext[Any, Any]) -> Caller:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and str(value).lower().startswith("bearer "):
            token = str(value)[7:].strip()
            try:
                return Caller(platform.verifier.verify(token), token)
            except TokenError as exc:
                raise ApiError(401, "unauthenticated", str(exc)) from None
    raise ApiError(401, "unauthenticated", "missing bearer token in 'authorization' metadata")


def _session(data: dict[str, Any]) -> platform_pb2.Session:
    return json_format.ParseDict(data, platform_pb2.Session(), ignore_unknown_fields=True)


def _table(table: dict[str, Any]) -> platform_pb2.Table:
    return platform_pb2.Table(
        id=table["id"],
        game=table["game"],
        seats=table["seats"],
        players=[
            platform_pb2.TablePlayer(user_id=p.get("user_id", ""), name=p["name"], cpu=p.get("cpu", False))
            if p
            else platform_pb2.TablePlayer()
            for p in table["players"]
        ],
        status=table["status"],
        invite_code=table.get("invite_code", ""),
        host=table["host"],
        open=table.get("open", False),
        teams=[platform_pb2.Team(name=t["name"], seats=t["seats"]) for t in table.get("teams", [])],
    )


def guarded(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Every refusal becomes a gRPC status with its ErrorInfo reason."""

    @functools.wraps(method)
    async def call(self: PlatformServicer, request: Any, context: Any) -> T:
        try:
            return await method(self, request, context)
        except Exception as error:
            await _fail(context, error)
            raise  # abort() has raised already

    return call


class PlatformServicer(platform_pb2_grpc.PlatformServiceServicer):
    def __init__(self, platform: Platform, matchmaking: Matchmaking) -> None:
        self.p = platform
        self.matchmaking = matchmaking

    @guarded
    async def SignUp(self, request: platform_pb2.Credentials, context: Any) -> platform_pb2.Session:
        return _session(await self.p.register(request.username, request.password, context.peer()))

    @guarded
    async def LogIn(self, request: platform_pb2.Credentials, context: Any) -> platform_pb2.Session:
        return _session(await self.p.login(request.username, request.password, context.peer()))

    @guarded
    async def LogInAsGuest(self, request: platform_pb2.GuestRequest, context: Any) -> platform_pb2.Session:
        return _session(await self.p.guest(request.name or None, context.peer()))

    @guarded
    async def Refresh(self, request: platform_pb2.RefreshRequest, context: Any) -> platform_pb2.Session:
        return _session(await self.p.refresh(request.refresh_token))

    @guarded
    async def CreateTable(self, request: platform_pb2.CreateTableRequest, context: Any) -> platform_pb2.Table:
        caller = _caller(self.p, context)
        options = self._options(request)
        table = await self.p.create_table(
            caller.identity, request.game, request.seats, options, list(request.cpu_seats)
        )
        return _table(table)

    @guarded
    async def JoinTable(self, request: platform_pb2.JoinTableRequest, context: Any) -> platform_pb2.Table:
        caller = _caller(self.p, context)
        table = await self.p.tables.join(caller.identity, request.invite_code)
        return _table(public_table(table))

    @guarded
    async def SitAtTable(self, request: platform_pb2.SitRequest, context: Any) -> platform_pb2.Table:
        caller = _caller(self.p, context)
        seat = request.seat if request.HasField("seat") else None
        table, _ = await self.p.sit(caller, request.table_id, seat)
        return _table(table)

    @guarded
    async def GetTable(self, request: platform_pb2.TableRequest, context: Any) -> platform_pb2.Table:
        caller = _caller(self.p, context)
        table = await self.p.tables.get(request.table_id)
        return _table(table if table["host"] == caller.identity.user_id else public_table(table))

    @guarded
    async def StartTable(self, request: platform_pb2.TableRequest, context: Any) -> match_pb2.Snapshot:
        caller = _caller(self.p, context)
        return await self.p.start(request.table_id, caller.identity, caller)

    @guarded
    async def LeaveTable(self, request: platform_pb2.TableRequest, context: Any) -> platform_pb2.LeaveReply:
        caller = _caller(self.p, context)
        table, snapshot = await self.p.leave(caller, request.table_id)
        if snapshot is not None:
            return platform_pb2.LeaveReply(match=snapshot)
        return platform_pb2.LeaveReply(table=_table(table))

    @guarded
    async def GetView(self, request: platform_pb2.TableRequest, context: Any) -> match_pb2.Snapshot:
        return await self.p.view(request.table_id, _caller(self.p, context))

    @guarded
    async def Act(self, request: platform_pb2.ActRequest, context: Any) -> match_pb2.Snapshot:
        caller = _caller(self.p, context)
        return await self.p.act(caller, request.table_id, request.expected_version, request.action)

    async def Follow(
        self, request: platform_pb2.FollowRequest, context: Any
    ) -> AsyncIterator[match_pb2.MatchEvent]:
        try:
            caller = _caller(self.p, context)
            game = await self.p.playing(request.table_id)
            watch = match_pb2.WatchRequest(match_id=request.table_id, after_event_id=request.after_event_id)
            stream = game.stub.Watch(watch, metadata=caller.metadata)
            try:
                async for event in stream:
                    yield event
            except grpc.aio.AioRpcError as error:
                raise api_error(error) from None
            finally:
                stream.cancel()
        except Exception as error:
            await _fail(context, error)

    async def FindMatch(
        self, request: platform_pb2.FindMatchRequest, context: Any
    ) -> AsyncIterator[platform_pb2.TicketUpdate]:
        try:
            caller = _caller(self.p, context)
            options = self._options(request)
            ticket = await self.matchmaking.create(
                caller.identity, request.game, options, request.ranked, request.party
            )
            async for update in self._follow(ticket["id"], caller):
                yield update
        except Exception as error:
            await _fail(context, error)

    async def JoinParty(
        self, request: platform_pb2.JoinPartyRequest, context: Any
    ) -> AsyncIterator[platform_pb2.TicketUpdate]:
        try:
            caller = _caller(self.p, context)
            ticket = await self.matchmaking.join_party(caller.identity, request.party_code)
            async for update in self._follow(ticket["id"], caller):
                yield update
        except Exception as error:
            await _fail(context, error)

    def _options(
        self, request: platform_pb2.CreateTableRequest | platform_pb2.FindMatchRequest
    ) -> dict[str, Any]:
        """The game's packed Options as the JSON dict tables and queues keep."""
        if not request.HasField("options"):
            return {}
        message = self.p.game(request.game).messages.Options()
        if not request.options.Unpack(message):
            raise ApiError(422, "invalid_options", f"options must be a {message.DESCRIPTOR.full_name}")
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    async def _follow(self, ticket_id: str, caller: Caller) -> AsyncIterator[platform_pb2.TicketUpdate]:
        async for update in self.matchmaking.follow(ticket_id, caller.identity):
            message = platform_pb2.TicketUpdate(ticket_id=ticket_id)
            json_format.ParseDict(update, message, ignore_unknown_fields=True)
            yield message


async def start_server(platform: Platform, matchmaking: Matchmaking, host: str, port: int) -> grpc.aio.Server:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    platform_pb2_grpc.add_PlatformServiceServicer_to_server(PlatformServicer(platform, matchmaking), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    server.add_insecure_port(f"{host}:{port}")
    await server.start()
    for name in ("", SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server
