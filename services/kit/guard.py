"""The server interceptor in front of every game API call: it authenticates
the caller from the bearer token, turns ServiceError into a gRPC status with
details, and records request metrics. Health and reflection stay open."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import grpc

from services.kit import logs, metrics
from services.kit.errors import ServiceError, unauthenticated
from services.kit.tokens import Identity, TokenError, TokenVerifier

CALLER: ContextVar[Identity] = ContextVar("caller")

_OPEN_PREFIXES = ("/grpc.health.", "/grpc.reflection.")
log = logging.getLogger("rodada.service")


def caller() -> Identity:
    """The authenticated identity of the current call."""
    return CALLER.get()


def _metadata(metadata: tuple[Any, ...] | None, name: str) -> str | None:
    for key, value in metadata or ():
        if key == name:
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def _bearer(metadata: tuple[Any, ...] | None) -> str | None:
    for key, value in metadata or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


class CallGuard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, verifier: TokenVerifier, service: str) -> None:
        self._verifier = verifier
        self._service = service
        self._domain = f"rodada.{service}"

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(_OPEN_PREFIXES):
            return handler
        method = details.method.rsplit("/", 1)[-1]
        token = _bearer(details.invocation_metadata)
        request_id = _metadata(details.invocation_metadata, "x-request-id")
        labels = (self._service, method)

        async def authenticate(context: grpc.aio.ServicerContext) -> None:
            logs.REQUEST_ID.set(request_id)
            logs.GAME.set(self._service)
            if token is None:
                raise unauthenticated("missing bearer token in 'authorization' metadata")
            try:
                identity = self._verifier.verify(token)
            except TokenError as exc:
                raise unauthenticated(str(exc)) from None
            CALLER.set(identity)
            logs.USER_ID.set(identity.user_id)

        async def fail(context: grpc.aio.ServicerContext, error: Exception) -> None:
            if not isinstance(error, ServiceError):
                # A bug: keep the details in our logs, never in the client's reply.
                log.error("%s failed", details.method, exc_info=error)
                error = ServiceError(grpc.StatusCode.INTERNAL, "internal", "internal error")
            status = error.to_status(self._domain)
            metrics.GRPC_REQUESTS.labels(*labels, error.code.name).inc()
            await context.abort(status.code, status.details, status.trailing_metadata)

        if handler.unary_unary:
            inner = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                started = time.perf_counter()
                try:
                    await authenticate(context)
                    response = await inner(request, context)
                except Exception as error:
                    await fail(context, error)
                finally:
                    metrics.GRPC_SECONDS.labels(*labels).observe(time.perf_counter() - started)
                metrics.GRPC_REQUESTS.labels(*labels, "OK").inc()
                return response

            return grpc.unary_unary_rpc_method_handler(
                unary, handler.request_deserializer, handler.response_serializer
            )
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                try:
                    await authenticate(context)
                    async for item in inner_stream(request, context):
                        yield item
                except Exception as error:
                    await fail(context, error)
                    return
                metrics.GRPC_REQUESTS.labels(*labels, "OK").inc()

            return grpc.unary_stream_rpc_method_handler(
                stream, handler.request_deserializer, handler.response_serializer
            )
        return handler
