"""Playing a started table."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2

from gateway.deps import CallerDep, JsonRoute, PlatformDep, message_json
from gateway.openapi import returns

router = APIRouter(prefix="/v1/tables/{table_id}", tags=["play"], route_class=JsonRoute)


class ActBody(BaseModel):
    expected_version: int = Field(
        ge=0, lt=2**32, description="the version of the view the action was decided on"
    )
    action: dict[str, Any] = Field(
        description='the game\'s Action, proto JSON form, e.g. {"roll": {"keep": [0]}}'
    )


class AskBody(BaseModel):
    question: dict[str, Any] = Field(description="the game's Question, proto JSON form")


@router.get("/view", openapi_extra=returns(match_pb2.Snapshot))
async def view_match(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """The match as the caller may see it (a spectator sees the public view)."""
    return message_json(await p.play.view(caller, table_id))


@router.post("/actions", openapi_extra=returns(match_pb2.Snapshot))
async def act(table_id: str, body: ActBody, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Play one action against the version you saw; a stale version gets 409 ``stale_version``."""
    return message_json(await p.play.act(caller, table_id, body.expected_version, body.action))


@router.post("/ask", openapi_extra=returns(match_pb2.AskResponse))
async def ask(table_id: str, body: AskBody, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Ask the game a question that changes nothing (Dudo: the odds of a bid
    in assisted mode). Returns ``{version, answer}``."""
    return message_json(await p.play.ask(caller, table_id, body.question))


@router.get("/presence", openapi_extra=returns(platform_pb2.GetPresenceResponse))
async def presence(table_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Which seated players have a feed open on this table, on any replica."""
    return message_json(platform_pb2.GetPresenceResponse(connected=await p.play.presence(table_id)))
