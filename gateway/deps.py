"""FastAPI dependencies of the routes written by hand (gateway/routes/: what
is not an RPC; the API's operations are gateway/api/)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from gateway.platform import Platform

# Dependencies are coroutines: FastAPI runs plain functions in a thread pool,
# which costs more than the work they do.


async def platform(request: Request) -> Platform:
    return request.app.state.platform  # type: ignore[no-any-return]


PlatformDep = Annotated[Platform, Depends(platform)]
