"""FastAPI dependencies and helpers every route module uses (replies as
proto3 JSON: ``message_json``, from gateway/protojson.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gateway.matches import Caller
from gateway.platform import Platform
from gateway.protojson import message_json

_bearer = HTTPBearer(auto_error=False)


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
