"""The connection to the gateway's gRPC face and the session on it: logging
in (account or guest), the bearer token on every call, refreshing it before
it expires (and once more if the server says it has), and a new channel
whenever the old one was closed, so a dropped connection costs a retry and
nothing else."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from rodada.platform.v1 import platform_pb2 as p
from rodada.platform.v1.platform_pb2_grpc import PlatformServiceStub
from rodada.platform.v1.social_pb2_grpc import SocialServiceStub

if TYPE_CHECKING:  # the stubs' asyncio flavour exists in their type stubs only
    from rodada.platform.v1.platform_pb2_grpc import PlatformServiceAsyncStub as Api
    from rodada.platform.v1.social_pb2_grpc import SocialServiceAsyncStub as Social

Request = TypeVar("Request", bound=Message)
Reply = TypeVar("Reply", bound=Message)

# Refresh when this share of the token's life is left: early enough that a
# call in flight never carries an expired token.
REFRESH_AT = 0.2
# The servers accept a client ping every 10 s or more; a dead connection is
# noticed within about half a minute.
CHANNEL_OPTIONS = [("grpc.keepalive_time_ms", 20_000), ("grpc.keepalive_timeout_ms", 10_000)]


@dataclass
class Refusal(Exception):
    """A failed call: its status and the stable `reason` of its ErrorInfo."""

    code: grpc.StatusCode
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}" if self.message != self.reason else self.reason

    @classmethod
    def of(cls, error: grpc.aio.AioRpcError) -> Refusal:
        reason = error.code().name.lower()
        status = rpc_status.from_call(error)
        for detail in status.details if status else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reason = info.reason
                break
        return cls(error.code(), reason, error.details() or reason)


def pack(message: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


M = TypeVar("M", bound=Message)


def unpack(packed: any_pb2.Any, message_cls: type[M]) -> M:
    message = message_cls()
    if not packed.Unpack(message):
        raise ValueError(f"expected {message_cls.DESCRIPTOR.full_name}, got {packed.type_url}")
    return message


class Connection:
    """One player's connection. Calls go through ``call`` and ``stream``,
    which add the token and turn failures into ``Refusal``."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.session: p.Session | None = None
        self.refreshes = 0
        self._expires_at = 0.0
        self._refreshing = asyncio.Lock()
        self._channel: grpc.aio.Channel | None = None
        self._api: Api | None = None
        self._social: Social | None = None

    @property
    def channel(self) -> grpc.aio.Channel:
        """The open channel; a new one if the last was closed."""
        if self._channel is None or self._channel.get_state() is grpc.ChannelConnectivity.SHUTDOWN:
            self._channel = grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
            self._api = cast("Api", PlatformServiceStub(self._channel))  # grpc ships no types
            self._social = cast("Social", SocialServiceStub(self._channel))
        return self._channel

    @property
    def api(self) -> Api:
        self.channel  # noqa: B018 (opens a new channel if the last was closed)
        assert self._api is not None
        return self._api

    @property
    def social(self) -> Social:
        """Friends and chat (the same channel)."""
        self.channel  # noqa: B018 (opens a new channel if the last was closed)
        assert self._social is not None
        return self._social

    @property
    def closed(self) -> bool:
        return self._channel is not None and (self._channel.get_state() is grpc.ChannelConnectivity.SHUTDOWN)

    @property
    def user(self) -> p.User:
        assert self.session is not None, "not logged in"
        return self.session.user

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()

    # -- the session -----------------------------------------------------------

    async def sign_up(self, username: str, password: str) -> p.User:
        reply: p.SignUpResponse = await self.call(
            self.api.SignUp, p.SignUpRequest(username=username, password=password)
        )
        return self._start(reply.session)

    async def log_in(self, username: str, password: str) -> p.User:
        reply: p.LogInResponse = await self.call(
            self.api.LogIn, p.LogInRequest(username=username, password=password)
        )
        return self._start(reply.session)

    async def log_in_as_guest(self, name: str) -> p.User:
        reply: p.LogInAsGuestResponse = await self.call(
            self.api.LogInAsGuest, p.LogInAsGuestRequest(name=name)
        )
        return self._start(reply.session)

    def _start(self, session: p.Session) -> p.User:
        self.session = session
        self._expires_at = time.monotonic() + session.expires_in
        return session.user

    async def refresh(self, stale: str | None = None) -> None:
        """A new session for the refresh token (each works once, so one
        refresh at a time). ``stale``: the access token a call was refused
        with; nothing to do if another call has replaced it already."""
        async with self._refreshing:
            assert self.session is not None
            if stale is not None and self.session.access_token != stale:
                return
            if stale is None and not self._expiring():
                return
            request = p.RefreshRequest(refresh_token=self.session.refresh_token)
            try:
                reply = await self.api.Refresh(request)
            except grpc.aio.AioRpcError as error:
                raise Refusal.of(error) from error
            self._start(reply.session)
            self.refreshes += 1

    def _expiring(self) -> bool:
        assert self.session is not None
        return time.monotonic() > self._expires_at - REFRESH_AT * self.session.expires_in

    async def _metadata(self) -> tuple[tuple[str, str], ...]:
        if self.session is None:
            return ()
        if self._expiring():
            await self.refresh()
        return (("authorization", f"Bearer {self.session.access_token}"),)

    def _stale(self, refusal: Refusal, token: tuple[tuple[str, str], ...]) -> str | None:
        """The token a call was refused for, if refreshing may help."""
        if refusal.reason != "unauthenticated" or not token or self.session is None:
            return None
        return token[0][1].removeprefix("Bearer ")

    # -- calls -----------------------------------------------------------------

    async def call(self, method: grpc.aio.UnaryUnaryMultiCallable[Request, Reply], request: Request) -> Reply:
        """A unary call, e.g. ``call(conn.api.Act, request)`` (``conn.api``
        taken at the call: a closed channel is replaced there)."""
        for attempt in (1, 2):
            metadata = await self._metadata()
            try:
                reply: Reply = await method(request, metadata=metadata, timeout=15)
                return reply
            except grpc.aio.AioRpcError as error:
                refusal = Refusal.of(error)
                stale = self._stale(refusal, metadata)
                if attempt == 2 or stale is None:
                    raise refusal from error
                await self.refresh(stale)
        raise AssertionError("unreachable")

    async def stream(
        self, method: grpc.aio.UnaryStreamMultiCallable[Request, Reply], request: Request
    ) -> AsyncIterator[Reply]:
        """A server stream; refused at the start for a stale token, it is
        opened again once with a fresh one."""
        for attempt in (1, 2):
            metadata = await self._metadata()
            received = False
            try:
                async for reply in method(request, metadata=metadata):
                    received = True
                    yield reply
                return
            except grpc.aio.AioRpcError as error:
                refusal = Refusal.of(error)
                stale = self._stale(refusal, metadata)
                if attempt == 2 or received or stale is None:
                    raise refusal from error
                await self.refresh(stale)
