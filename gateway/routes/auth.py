"""Accounts and sessions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from rodada.platform.v1 import platform_pb2

from gateway.deps import CallerDep, JsonRoute, PlatformDep, client_address, message_json
from gateway.openapi import returns
from gateway.sessions import user_message

router = APIRouter(prefix="/v1", tags=["auth"], route_class=JsonRoute)


class Credentials(BaseModel):
    username: str = Field(description="3-24 characters: letters, digits, _ . -")
    password: str = Field(description="8-128 characters")


class RefreshBody(BaseModel):
    refresh_token: str


class GuestBody(BaseModel):
    name: str | None = Field(default=None, description="display name; a generated one if omitted")


@router.post("/auth/register", status_code=201, openapi_extra=returns(platform_pb2.Session))
async def register(body: Credentials, request: Request, p: PlatformDep) -> dict[str, Any]:
    """Create an account and log in (a Session)."""
    return message_json(await p.sessions.register(body.username, body.password, client_address(request)))


@router.post("/auth/login", openapi_extra=returns(platform_pb2.Session))
async def login(body: Credentials, request: Request, p: PlatformDep) -> dict[str, Any]:
    """Log in; attempts are limited per username and per client (429)."""
    return message_json(await p.sessions.login(body.username, body.password, client_address(request)))


@router.post("/auth/guest", status_code=201, openapi_extra=returns(platform_pb2.Session))
async def guest(request: Request, p: PlatformDep, body: GuestBody | None = None) -> dict[str, Any]:
    """Play without signing up: a guest account and its tokens."""
    return message_json(await p.sessions.guest(body.name if body else None, client_address(request)))


@router.post("/auth/refresh", openapi_extra=returns(platform_pb2.Session))
async def refresh(body: RefreshBody, p: PlatformDep) -> dict[str, Any]:
    """A new session for a refresh token, which works only once."""
    return message_json(await p.sessions.refresh(body.refresh_token))


@router.get("/me", openapi_extra=returns(platform_pb2.User))
async def me(caller: CallerDep) -> dict[str, Any]:
    """The caller's account."""
    return message_json(user_message(caller.identity))
