"""Probes and metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

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
    """Ready to serve: Redis answers and the replica is not draining (else
    503, so load balancers send elsewhere; liveness is /livez)."""
    if p.draining:
        return JSONResponse({"status": "draining"}, status_code=503, headers={"Retry-After": "1"})
    try:
        await p.redis.ping()
    except Exception:
        return JSONResponse({"status": "redis unavailable"}, status_code=503, headers={"Retry-After": "1"})
    return {"status": "ok"}


@router.get("/metrics", include_in_schema=False)
async def prometheus() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
