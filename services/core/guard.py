"""The guard in front of every API call of a gRPC server (the game services
and the gateway's platform face): it authenticates the caller from the bearer
token where the method needs one, turns refusals into a gRPC status with an
ErrorInfo reason, answers an outage of Redis with UNAVAILABLE and a request
that does not decode with INVALID_ARGUMENT, and records the request metrics.
Health, reflection and the methods named open need no token.

Each method's handler is wrapped once, when it is registered
(:meth:`CallGuard.serving`), not on every call as a grpc.aio server
interceptor would: an interceptor costs a coroutine, a new handler and its
closures per call, which the profile showed on every move. The guard still
works as an interceptor (tests start servers that way), from the same
once-per-method cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextvars import ContextVar
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from redis.exceptions import ClusterDownError, OutOfMemoryError, ReadOnlyError, ResponseError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.core import logs, metrics
from services.core.errors import Refused, invalid, permission_denied, unauthenticated, unavailable
from services.core.tokens import BannedUsers, Identity, TokenError, TokenVerifier

CALLER: ContextVar[Identity | None] = ContextVar("caller", default=None)

_ALWAYS_OPEN = ("/grpc.health.", "/grpc.reflection.")
log = logging.getLogger("rodada.service")


class _Undecodable:
    """Stands for a request whose bytes did not parse as its message."""


def caller() -> Identity:
    """The authenticated identity of the current call."""
    identity = CALLER.get()
    if identity is None:
        raise unauthenticated("missing bearer token in 'authorization' metadata")
    return identity


def metadata_value(metadata: Any, name: str) -> str | None:
    for key, value in metadata or ():
        if key == name:
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def bearer(metadata: Any) -> str | None:
    text = metadata_value(metadata, "authorization")
    if text is None:
        return None
    scheme, _, token = text.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


# Redis answers that mean "not now" rather than "never": a replica not yet
# promoted (READONLY, MASTERDOWN), memory full (OOM), a restart loading its
# file (LOADING), a long script (BUSY), a cluster resharding or failing over.
_PASSING = (
    RedisConnectionError,  # LOADING (BusyLoadingError) included
    RedisTimeoutError,
    ReadOnlyError,
    OutOfMemoryError,
    ClusterDownError,  # MASTERDOWN (MasterDownError) included
    TryAgainError,
    OSError,
)
_PASSING_CODES = frozenset({"READONLY", "OOM", "LOADING", "MASTERDOWN", "BUSY", "CLUSTERDOWN", "TRYAGAIN"})


def storage_unavailable(error: BaseException) -> bool:
    """Is ``error`` Redis being unavailable for a while (worth a retry),
    rather than a bug? Errors raised inside a script keep their code at the
    start of the message, which redis-py does not always map to a class."""
    if isinstance(error, _PASSING):
        return True
    if isinstance(error, ResponseError):
        words = str(error).split(maxsplit=1)
        return bool(words) and words[0] in _PASSING_CODES
    return False


def as_refusal(error: BaseException) -> Refused:
    """What a client is told about ``error``: our refusals as they are, Redis
    unavailable (down, read-only, out of memory, loading…) as UNAVAILABLE
    with a retry hint, a bug as INTERNAL without its details (those go to
    our logs)."""
    if isinstance(error, Refused):
        return error
    if storage_unavailable(error):
        return unavailable("storage is unavailable; retry shortly")
    return Refused(grpc.StatusCode.INTERNAL, "internal", "internal error")


async def abort(context: grpc.aio.ServicerContext[Any, Any], refusal: Refused, domain: str) -> None:
    status = refusal.to_status(domain)
    await context.abort(status.code, status.details, status.trailing_metadata)


def _call_metadata(metadata: Any) -> tuple[str | None, str | None]:
    """The bearer token and the request id of a call's metadata, in one pass."""
    token = request_id = None
    for key, value in metadata or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else str(value)
            scheme, _, rest = text.partition(" ")
            token = rest.strip() if scheme.lower() == "bearer" and rest.strip() else None
        elif key == "x-request-id":
            request_id = value.decode() if isinstance(value, bytes) else str(value)
    return token, request_id


class CallGuard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """``service`` names the metrics' service label and the errors' domain
    (``rodada.<service>``); ``open_methods`` (full names) need no token."""

    def __init__(self, verifier: TokenVerifier, service: str, open_methods: Collection[str] = ()) -> None:
        self._verifier = verifier
        self._service = service
        self._domain = f"rodada.{service}"
        self._open = frozenset(open_methods)
        self._guarded: dict[str, grpc.RpcMethodHandler] = {}

    def serving(self, server: grpc.aio.Server) -> grpc.aio.Server:
        """``server`` as servicers register on it, each handler guarded once."""
        return _GuardedServer(server, self)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        return self.guard(details.method, await continuation(details))

    def guard(self, full_method: str, handler: grpc.RpcMethodHandler | None) -> grpc.RpcMethodHandler | None:
        """``handler`` of ``full_method`` (/package.Service/Method), guarded;
        built on the method's first call and kept."""
        if handler is None or full_method.startswith(_ALWAYS_OPEN):
            return handler
        guarded = self._guarded.get(full_method)
        if guarded is None:
            guarded = self._guarded[full_method] = self._wrap(full_method, handler)
        return guarded

    def _wrap(self, full_method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        method = full_method.rsplit("/", 1)[-1]
        needs_token = full_method not in self._open
        labels = (self._service, method)
        seconds = metrics.GRPC_SECONDS.labels(*labels)
        ok = metrics.GRPC_REQUESTS.labels(*labels, "OK")
        verifier = self._verifier
        verify = verifier.verify
        service, domain = self._service, self._domain

        def enter(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            token, request_id = _call_metadata(context.invocation_metadata())
            logs.REQUEST_ID.set(request_id)
            logs.GAME.set(service)
            if isinstance(request, _Undecodable):
                raise invalid("invalid_request", "the request's bytes do not decode as its message")
            identity = None
            if token is not None:
                try:
                    identity = verify(token)
                    logs.USER_ID.set(identity.user_id)
                except TokenError as exc:
                    # An open method needs no token, so it ignores one it
                    # cannot use: apps send theirs with every call, and an
                    # expired one must not keep them from Refresh.
                    if needs_token:
                        raise unauthenticated(str(exc)) from None
            elif needs_token:
                raise unauthenticated("missing bearer token in 'authorization' metadata")
            CALLER.set(identity)

        async def fail(context: grpc.aio.ServicerContext[Any, Any], error: BaseException) -> None:
            refusal = as_refusal(error)
            if refusal.code == grpc.StatusCode.INTERNAL:
                log.error("%s failed", full_method, exc_info=error)
            elif refusal is not error:
                log.warning("%s: %s", full_method, error)
            metrics.GRPC_REQUESTS.labels(*labels, refusal.code.name).inc()
            await abort(context, refusal, domain)

        deserialize = _tolerant(handler.request_deserializer)
        if handler.unary_unary:
            inner = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                started = time.perf_counter()
                try:
                    enter(request, context)
                    response = await inner(request, context)
                except Exception as error:
                    await fail(context, error)
                finally:
                    seconds.observe(time.perf_counter() - started)
                ok.inc()
                return response

            return grpc.unary_unary_rpc_method_handler(unary, deserialize, handler.response_serializer)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                try:
                    enter(request, context)
                    items = inner_stream(request, context)
                    identity = CALLER.get()
                    if identity is not None:  # a ban ends it, whichever replica hears of it
                        items = _until_banned(verifier.banned, identity.user_id, items)
                    async for item in items:
                        yield item
                except Exception as error:
                    await fail(context, error)
                    return
                ok.inc()

            return grpc.unary_stream_rpc_method_handler(stream, deserialize, handler.response_serializer)
        return handler


async def _until_banned(banned: BannedUsers, user_id: str, items: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """``items`` (a feed), ended PERMISSION_DENIED ``banned`` as soon as
    ``user_id`` is banned: a feed waits for its next item for as long as the
    match goes on, so the check at its start is not enough."""
    heard = asyncio.Event()
    unwatch = banned.watch(user_id, heard.set)
    ban = asyncio.ensure_future(heard.wait())
    step: asyncio.Future[Any] | None = None
    try:
        while True:
            step = asyncio.ensure_future(anext(items))
            await asyncio.wait({step, ban}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                raise permission_denied("banned", "this account is banned")
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield item
    finally:
        unwatch()
        ban.cancel()
        if step is not None and not step.done():
            # The client left or was banned mid-wait: stop the feed's own
            # step first, so that its generator can close (and release).
            step.cancel()
            with contextlib.suppress(BaseException):
                await step
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()


class _GuardedHandlers(grpc.GenericRpcHandler):  # type: ignore[misc]
    """A generic handler whose methods come out guarded."""

    def __init__(self, inner: grpc.GenericRpcHandler, guard: CallGuard) -> None:
        self._inner = inner
        self._guard = guard

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._guard.guard(details.method, self._inner.service(details))


class _GuardedServer:
    """What servicers register on: the server, with every handler guarded."""

    def __init__(self, server: grpc.aio.Server, guard: CallGuard) -> None:
        self._server = server
        self._guard = guard

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers([_GuardedHandlers(h, self._guard) for h in handlers])

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self._server.add_registered_method_handlers(
            service, {name: self._guard.guard(f"/{service}/{name}", h) for name, h in handlers.items()}
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


def _tolerant(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """A deserializer whose failure reaches the handler (as INVALID_ARGUMENT)
    instead of becoming grpc's UNKNOWN "Unexpected DecodeError"."""
    if deserialize is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except DecodeError:
            return _Undecodable()

    return parse
