"""FastAPI dependencies every router uses: the platform and the caller."""

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gateway.platform import ApiError, Caller, Platform
from services.kit.tokens import TokenError

_bearer = HTTPBearer(auto_error=False)


# Dependencies are coroutines: FastAPI runs plain functions in a thread pool,
# which costs more than the work they do.


async def platform(request: Request) -> Platform:
    return request.app.state.platform  # type: ignore[no-any-return]


async def authenticated(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Caller:
    if credentials is None:
        raise ApiError(401, "unauthenticated", "missing 'Authorization: Bearer <token>'")
    try:
        verifier = request.app.state.platform.verifier
        return Caller(verifier.verify(credentials.credentials), credentials.credentials)
    except TokenError as exc:
        raise ApiError(401, "unauthenticated", str(exc)) from None


CallerDep = Annotated[Caller, Depends(authenticated)]
PlatformDep = Annotated[Platform, Depends(platform)]
