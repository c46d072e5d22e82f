"""What every gateway entry point shares (HTTP routes, WebSocket feeds, the
matchmaker, the clocks): Redis, the token signer and verifier, accounts,
tables, the game clients, and the operations on matches built from them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf import any_pb2
from rodada.common.v1 import match_pb2

from gateway import metrics
from gateway.accounts import Accounts
from gateway.games import BadGameInput, GameClient, load_clients
from gateway.presence import Presence
from gateway.settings import GatewaySettings
from gateway.tables import OPEN, PLAYING, Tables, public_table
from services.kit import logs
from services.kit.errors import error_reason
from services.kit.limits import Limit, RateLimited, RateLimiter
from services.kit.store import connect
from services.kit.tokens import (
    Identity,
    TokenError,
    TokenSigner,
    TokenVerifier,
    load_or_create_signing_key,
    load_public_keys,
)

# Abuse limits ("<count>/<seconds>"): sign-ups and log-ins per client
# address, and log-in attempts per username (password guessing).
AUTH_PER_CLIENT = Limit.from_env("auth_client", "AUTH_CLIENT_LIMIT", "30/60")
LOGIN_PER_USERNAME = Limit.from_env("login_username", "LOGIN_LIMIT", "10/60")


KEY_RELOAD_SECONDS = float(os.environ.get("KEY_RELOAD_SECONDS", "30"))
PLAYING_CACHE_SIZE = 100_000


def refresh_key(jti: str) -> str:
    return f"refresh:{jti}"


T = TypeVar("T")
RPC_TIMEOUT_SECONDS = 10.0
WS_AUTH_TIMEOUT_SECONDS = 10.0
PLATFORM = Identity("platform:gateway", "gateway", "platform")

HTTP_STATUS = {
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.INVALID_ARGUMENT: 422,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class ApiError(Exception):
    """Any refusal, rendered as ``{"error": {"code", "message"}}``."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.retry_after = retry_after


@dataclass
class Caller:
    identity: Identity
    token: str

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """For calls to the game services: the caller's own token, and the
        request id so their logs can be joined with ours."""
        request_id = logs.REQUEST_ID.get()
        auth = ("authorization", f"Bearer {self.token}")
        return (auth, ("x-request-id", request_id)) if request_id else (auth,)


class Platform:
    """Everything the routes share, built once at start."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.redis = connect(settings.redis_url, settings.redis_cluster, decode=True)
        key = load_or_create_signing_key()
        self.signer = TokenSigner(key)
        # The signing key, and the previous one after a rotation.
        self.verifier = TokenVerifier([key.public_key(), *load_public_keys()])
        self.accounts = Accounts(self.redis)
        self.tables = Tables(self.redis, settings.invite_ttl)
        self.presence = Presence(self.redis)
        self.limiter = RateLimiter(self.redis)
        self._playing: dict[str, str] = {}  # started table -> its game
        self.games, self._channels = load_clients(settings.game_addresses)
        self._platform_token = ("", 0.0)

    def platform_metadata(self) -> tuple[tuple[str, str]]:
        token, expires = self._platform_token
        if time.time() > expires - 60:
            token = self.signer.issue(PLATFORM, 600)
            self._platform_token = (token, time.time() + 600)
        return (("authorization", f"Bearer {token}"),)

    def game(self, name: str) -> GameClient:
        client = self.games.get(name)
        if client is None:
            raise ApiError(404, "unknown_game", f"no game {name!r}; games: {', '.join(sorted(self.games))}")
        return client

    async def session(self, identity: Identity) -> dict[str, Any]:
        """A new access token and a single-use refresh token for ``identity``."""
        ttl = self.settings.access_token_ttl
        jti = secrets.token_urlsafe(16)
        await self.redis.set(refresh_key(jti), identity.user_id, ex=self.settings.refresh_token_ttl)
        return {
            "access_token": self.signer.issue(identity, ttl),
            "refresh_token": self.signer.issue(identity, self.settings.refresh_token_ttl, "refresh", jti),
            "token_type": "bearer",
            "expires_in": ttl,
            "user": {"id": identity.user_id, "name": identity.name, "role": identity.role},
        }

    async def limit(self, limit: Limit, subject: str) -> None:
        try:
            await self.limiter.hit(limit, subject)
        except RateLimited as limited:
            metrics.RATE_LIMITED.labels(limit.name).inc()
            raise ApiError(429, "rate_limited", str(limited), retry_after=limited.retry_after) from None

    async def register(self, username: str, password: str, client: str) -> dict[str, Any]:
        await self.limit(AUTH_PER_CLIENT, client)
        return await self.session(await self.accounts.register(username, password))

    async def login(self, username: str, password: str, client: str) -> dict[str, Any]:
        await self.limit(AUTH_PER_CLIENT, client)
        await self.limit(LOGIN_PER_USERNAME, username.lower())
        return await self.session(await self.accounts.login(username, password))

    async def guest(self, name: str | None, client: str) -> dict[str, Any]:
        await self.limit(AUTH_PER_CLIENT, client)
        return await self.session(await self.accounts.guest(name))

    async def refresh(self, refresh_token: str) -> dict[str, Any]:
        """Trade a refresh token for a new session. Each refresh token works
        once (rotation): a second use, or one after logout, is refused."""
        try:
            identity, jti = self.verifier.refresh_claims(refresh_token)
        except TokenError as exc:
            raise ApiError(401, "unauthenticated", str(exc)) from None
        if await self.redis.getdel(refresh_key(jti)) is None:
            raise ApiError(401, "refresh_token_used", "this refresh token was already used or revoked")
        return await self.session(identity)

    async def create_table(
        self, host: Identity, game_name: str, seats: int, options: dict[str, Any], cpu_seats: list[int]
    ) -> dict[str, Any]:
        """Open a table after checking it against the game's policy and options."""
        game = self.game(game_name)
        if seats not in game.policy.seat_counts:
            allowed = ", ".join(map(str, sorted(game.policy.seat_counts)))
            raise ApiError(422, "invalid_seats", f"{game_name} tables have {allowed} seats")
        try:
            game.pack("Options", options)
        except BadGameInput as exc:
            raise ApiError(422, "invalid_options", str(exc)) from None
        if cpu_seats and not game.policy.cpu_seats:
            raise ApiError(422, "invalid_cpu_seats", f"{game_name} has no CPU seats")
        teams = game.policy.teams.get(seats, ())
        return await self.tables.create(
            host, game_name, seats, options, teams, cpu_seats, game.policy.open_tables
        )

    async def sit(
        self, caller: Caller, table_id: str, seat: int | None
    ) -> tuple[dict[str, Any], match_pb2.Snapshot | None]:
        """Sit at an open table; whoever takes the last seat starts the match."""
        table = await self.tables.sit(caller.identity, table_id, seat)
        if None not in table["players"] and table["status"] == OPEN:
            return public_table(table), await self.start(table_id, None, caller)
        return public_table(table), None

    async def leave(self, caller: Caller, table_id: str) -> tuple[dict[str, Any], match_pb2.Snapshot | None]:
        """Before the start: free the seat. During the match: the game's policy."""
        table = await self.tables.get(table_id)
        if table["status"] != PLAYING:
            return public_table(await self.tables.leave_lobby(caller.identity, table_id)), None
        game = self.game(table["game"])
        request = match_pb2.LeaveRequest(match_id=table_id)
        return table, await rpc(
            game.stub.Leave(request, metadata=caller.metadata, timeout=RPC_TIMEOUT_SECONDS)
        )

    async def act(
        self, caller: Caller, table_id: str, expected_version: int, action: any_pb2.Any
    ) -> match_pb2.Snapshot:
        game = await self.playing(table_id)
        request = match_pb2.ActRequest(match_id=table_id, expected_version=expected_version, action=action)
        return await rpc(game.stub.Act(request, metadata=caller.metadata, timeout=RPC_TIMEOUT_SECONDS))

    async def start(self, table_id: str, host: Identity | None, caller: Caller) -> match_pb2.Snapshot:
        table = await self.tables.mark_started(host, table_id)
        game = self.game(table["game"])
        request = match_pb2.CreateMatchRequest(
            match_id=table_id,
            seats=[
                match_pb2.Seat(user_id=s.get("user_id", ""), display_name=s["name"], cpu=s.get("cpu", False))
                for s in table["players"]
            ],
            options=game.pack("Options", table["options"]),
        )
        try:
            await rpc(
                game.stub.CreateMatch(request, metadata=self.platform_metadata(), timeout=RPC_TIMEOUT_SECONDS)
            )
        except ApiError as error:
            if error.code != "match_exists":
                await self.tables.reopen(table_id)
                raise
        await self.tables.close(table)
        return await self.view(table_id, caller)

    async def view(self, table_id: str, caller: Caller) -> match_pb2.Snapshot:
        game = await self.playing(table_id)
        request = match_pb2.GetViewRequest(match_id=table_id)
        return await rpc(game.stub.GetView(request, metadata=caller.metadata, timeout=RPC_TIMEOUT_SECONDS))

    async def playing(self, table_id: str) -> GameClient:
        """The game client of a started table. A started table never changes
        game or goes back, so the answer is remembered: one Redis read less
        on every move."""
        game = self._playing.get(table_id)
        if game is None:
            table = await self.tables.get(table_id)
            if table["status"] != PLAYING:
                raise ApiError(409, "not_started", "the table has not started")
            game = table["game"]
            if len(self._playing) >= PLAYING_CACHE_SIZE:
                self._playing.clear()
            self._playing[table_id] = game
        return self.game(game)

    async def reload_keys(self) -> None:
        """Follow key rotations: accept what the keys folder (or JWT_PUBLIC_KEYS)
        holds, besides our own key, so that during a rollout old replicas
        accept the tokens new replicas sign."""
        own = self.signer.public_key
        while True:
            await asyncio.sleep(KEY_RELOAD_SECONDS)
            with contextlib.suppress(Exception):  # a half-written key file is read next time
                self.verifier.replace_keys([own, *load_public_keys()])

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(None)
        await self.redis.aclose()


def api_error(error: grpc.aio.AioRpcError) -> ApiError:
    """A game service's refusal as the gateway's: same code, HTTP status."""
    code = error_reason(error) or error.code().name.lower()
    return ApiError(HTTP_STATUS.get(error.code(), 502), code, error.details() or "")


async def rpc(call: Awaitable[T]) -> T:
    """Await a game-service call, turning its status into an ApiError."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise api_error(error) from None
