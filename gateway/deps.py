"""FastAPI dependencies and helpers every route module uses (replies as
proto3 JSON: ``message_json``, from gateway/protojson.py)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

import orjson
from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gateway.matches import Caller
from gateway.platform import Platform
from gateway.protojson import message_json

_bearer = HTTPBearer(auto_error=False)


class _StrictJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json


class JsonRoute(APIRoute):
    """Request bodies decoded by orjson, which refuses what no reply or
    message could carry: a lone surrogate (``"\\ud800"``) passes the
    standard json module and then failed deep inside protobuf as a 500.
    orjson's error is a ``json.JSONDecodeError``, so FastAPI answers it as
    any malformed body: 422 ``invalid_request``. Every router whose routes
    take a JSON body uses it (tests/integration/test_request_bodies.py)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def decoded(request: Request) -> Response:
            return await handler(_StrictJsonRequest(request.scope, request.receive))

        return decoded


# Dependencies are coroutines: FastAPI runs plain functions in a thread pool,
# which costs more than the work they do.


async def platform(request: Request) -> Platform:
    return request.app.state.platform  # type: ignore[no-any-return]


async def authenticated(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Caller:
    sessions = request.app.state.platform.sessions
    return sessions.caller(credentials.credentials if credentials else None)  # type: ignore[no-any-return]


CallerDep = Annotated[Caller, Depends(authenticated)]
PlatformDep = Annotated[Platform, Depends(platform)]


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


__all__ = ["CallerDep", "PlatformDep", "client_address", "message_json"]
