"""FastAPI dependencies and helpers every route module uses."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from google.protobuf import json_format
from google.protobuf.message import Message

from gateway.matches import Caller
from gateway.platform import Platform

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


def message_json(message: Message) -> dict[str, Any]:
    """A reply for HTTP clients: the message's proto3 JSON, field names as in
    the .proto, every field present (defaults included)."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"
