"""Probes. (The metrics are on a port of their own: gateway/__main__.py.)"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gateway.deps import PlatformDep

router = APIRouter(tags=["ops"])


@router.get("/livez")
async def livez() -> dict[str, str]:
    """The process answers (no Redis check: for liveness probes)."""
    return {"status": "ok"}


_STATUS = {"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}


@router.get(
    "/healthz",
    response_model=None,
    responses={
        200: {"content": {"application/json": {"schema": _STATUS}}},
        503: {"description": "Not ready", "content": {"application/json": {"schema": _STATUS}}},
    },
)
async def healthz(p: PlatformDep) -> dict[str, str] | JSONResponse:
    """Ready to serve: the replica is not draining, knows at least one game
    (a gateway without GAMES, or before any game described itself, would
    refuse every table), and Redis answers; else 503, so load balancers send
    elsewhere (liveness is /livez)."""
    if p.draining:
        return JSONResponse({"status": "draining"}, status_code=503, headers={"Retry-After": "1"})
    if not p.games.described():
        return JSONResponse({"status": "no game known"}, status_code=503, headers={"Retry-After": "1"})
    try:
        await p.redis.ping()
    except Exception:
        return JSONResponse({"status": "redis unavailable"}, status_code=503, headers={"Retry-After": "1"})
    return {"status": "ok"}
