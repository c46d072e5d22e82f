"""Log-in sessions: signing tokens, checking them, and trading credentials or
a refresh token for a session. Abuse limits apply per client address and per
username. Refresh tokens work once (rotation): each refresh hands out a new
one and forgets the old."""

from __future__ import annotations

import secrets
import time

import grpc
from rodada.platform.v1 import platform_pb2

from gateway import metrics
from gateway.accounts import Accounts, is_guest
from gateway.matches import Caller
from gateway.settings import GatewaySettings
from services.core import keys
from services.core.errors import Refused, permission_denied, unauthenticated
from services.core.limits import Limit, RateLimited, RateLimiter
from services.core.server import public_keys, reload_keys
from services.core.store import RedisClient
from services.core.tokens import (
    Identity,
    TokenError,
    TokenSigner,
    TokenVerifier,
    load_or_create_signing_key,
)

PLATFORM = Identity("platform:gateway", "gateway", "platform")
_PLATFORM_TOKEN_SECONDS = 600


class Sessions:
    def __init__(self, redis: RedisClient, settings: GatewaySettings) -> None:
        self.redis = redis
        self.settings = settings
        key = load_or_create_signing_key(settings.rodada_keys_dir, settings.jwt_private_key)
        self.signer = TokenSigner(key)
        # The signing key, and the previous one after a rotation.
        self.verifier = TokenVerifier([key.public_key(), *public_keys(settings)])
        self.accounts = Accounts(redis)
        self.limiter = RateLimiter(redis)
        self._platform_token = ("", 0.0)

    def platform_token(self) -> str:
        """The gateway's own token, for calls only the platform may make."""
        token, expires = self._platform_token
        if time.time() > expires - 60:
            token = self.signer.issue(PLATFORM, _PLATFORM_TOKEN_SECONDS)
            self._platform_token = (token, time.time() + _PLATFORM_TOKEN_SECONDS)
        return token

    def caller(self, token: str | None) -> Caller:
        if not token:
            raise unauthenticated("missing 'Authorization: Bearer <token>'")
        try:
            return Caller(self.verifier.verify(token), token)
        except TokenError as exc:
            raise unauthenticated(str(exc)) from None

    async def limit(self, limit: Limit, subject: str, bucket: bool = False) -> None:
        """Count one request of ``subject`` against ``limit`` (a sliding
        window; with ``bucket``, a token bucket); refuse it past the limit."""
        try:
            if bucket:
                await self.limiter.take(limit, subject)
            else:
                await self.limiter.hit(limit, subject)
        except RateLimited as limited:
            metrics.RATE_LIMITED.labels(limit.name).inc()
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "rate_limited",
                str(limited),
                retry_after=limited.retry_after,
            ) from None

    async def session(self, identity: Identity) -> platform_pb2.Session:
        """A new access token and a single-use refresh token for ``identity``."""
        ttl = self.settings.access_token_ttl_seconds
        refresh_ttl = self.settings.refresh_token_ttl_seconds
        jti = secrets.token_urlsafe(16)
        await self.redis.set(keys.refresh_token(jti), identity.user_id, ex=refresh_ttl)
        return platform_pb2.Session(
            access_token=self.signer.issue(identity, ttl),
            refresh_token=self.signer.issue(identity, refresh_ttl, "refresh", jti),
            token_type="bearer",
            expires_in=ttl,
            user=user_message(identity),
        )

    async def register(self, username: str, password: str, client: str) -> platform_pb2.Session:
        await self.limit(self.settings.auth_per_client, client)
        return await self.session(await self.accounts.register(username, password))

    async def login(self, username: str, password: str, client: str) -> platform_pb2.Session:
        await self.limit(self.settings.auth_per_client, client)
        await self.limit(self.settings.login_per_username, username.lower())
        identity = await self.accounts.login(username, password)
        if identity.user_id in self.verifier.banned:
            raise permission_denied("banned", "this account is banned")
        return await self.session(identity)

    async def guest(self, name: str | None, client: str) -> platform_pb2.Session:
        await self.limit(self.settings.auth_per_client, client)
        return await self.session(await self.accounts.guest(name))

    async def refresh(self, refresh_token: str) -> platform_pb2.Session:
        try:
            identity, jti = self.verifier.refresh_claims(refresh_token)
        except TokenError as exc:
            raise unauthenticated(str(exc)) from None
        if await self.redis.getdel(keys.refresh_token(jti)) is None:
            raise unauthenticated("this refresh token was already used or revoked", "refresh_token_used")
        return await self.session(identity)

    async def reload_keys(self) -> None:
        """Follow key rotations: accept what the keys folder (or
        JWT_PUBLIC_KEYS) holds, besides our own key, so that during a
        rollout old replicas accept the tokens new replicas sign."""
        await reload_keys(self.verifier, self.settings, [self.signer.public_key])


def user_message(identity: Identity) -> platform_pb2.User:
    return platform_pb2.User(
        id=identity.user_id, name=identity.name, role=identity.role, guest=is_guest(identity.user_id)
    )
