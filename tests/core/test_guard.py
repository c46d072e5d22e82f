"""The call guard in front of a game service (Nim, in this process): who may
call what, how a refusal is told (code, ErrorInfo reason and domain), that a
request which does not decode is INVALID_ARGUMENT, a bug INTERNAL without
its details, a Redis outage or stall UNAVAILABLE until Redis is back, and
that every call is counted."""

from __future__ import annotations

import base64
import json
import secrets
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest
from prometheus_client import REGISTRY
from redis.exceptions import RedisError
from rodada.common.v1 import match_pb2
from rodada.nim.v1 import nim_pb2

from services.core import keys
from services.core.store import RecordStore, connect
from services.core.tokens import Identity
from tests.games.nim.game import GAME as NIM
from tests.in_process import GameServer, Keys
from tests.integration.grpc_client import bearer, error_info, pack, raw_stream, raw_unary, refusal
from tests.integration.waiting import until
from tools.redis_server import RedisServer

SERVICE = "/rodada.common.v1.MatchService"
TAKE_ONE = pack(nim_pb2.Action(take=nim_pb2.Take(stones=1)))
STONES = 15  # the heap when the options leave it unset
GARBAGE = b"\xff\xff\xff\xff"  # a field tag with no end: no message decodes from it
ANA = Identity("ana", "ana", "user")


@pytest.fixture(scope="module")
def tokens() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
async def nim(store: RecordStore, tokens: Keys) -> AsyncIterator[GameServer]:
    async with GameServer(NIM, store, tokens) as server:
        yield server


async def new_match(nim: GameServer) -> str:
    match_id = secrets.token_hex(6)
    await nim.create(match_id, ["ana", "bia"])
    return match_id


async def refused(call: Awaitable[Any]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return raised.value


def requests_counted(method: str, code: str) -> float:
    labels = {"service": "nim", "method": method, "code": code}
    return REGISTRY.get_sample_value("rodada_grpc_requests_total", labels) or 0.0


def view(match_id: str) -> match_pb2.GetViewRequest:
    return match_pb2.GetViewRequest(match_id=match_id)


# -- who may call ----------------------------------------------------------------


@pytest.mark.parametrize("metadata", [(), (("authorization", "Basic YW5hOmFuYQ=="),), bearer("")])
async def test_a_call_without_a_bearer_token_is_unauthenticated(
    nim: GameServer, metadata: tuple[tuple[str, str], ...]
) -> None:
    match_id = await new_match(nim)
    error = await refused(nim.stub.GetView(view(match_id), metadata=metadata))
    assert refusal(error) == (grpc.StatusCode.UNAUTHENTICATED, "unauthenticated")
    assert "missing bearer token" in (error.details() or "")
    assert error_info(error).domain == "rodada.nim"


def _tampered(token: str) -> str:
    """The same token claiming another user, its signature unchanged."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


@pytest.mark.parametrize(
    ("forge", "why"),
    [
        (lambda keys: Keys().token("ana"), "unknown key"),  # signed by a key nobody trusts
        (lambda keys: _tampered(keys.token("ana")), "Signature verification failed"),
        (lambda keys: keys.token("ana", ttl=-60), "Signature has expired"),
        (lambda keys: keys.signer.issue(ANA, 3600, kind="refresh", jti="j"), "not an access"),
        (lambda keys: "not.a.jwt", "invalid token"),
    ],
    ids=["unknown-key", "tampered", "expired", "refresh-token", "malformed"],
)
async def test_a_forged_expired_or_wrong_kind_of_token_is_unauthenticated_with_its_reason(
    nim: GameServer, tokens: Keys, forge: Callable[[Keys], str], why: str
) -> None:
    match_id = await new_match(nim)
    token = forge(tokens)
    error = await refused(nim.stub.GetView(view(match_id), metadata=bearer(token)))
    assert refusal(error) == (grpc.StatusCode.UNAUTHENTICATED, "unauthenticated")
    assert why in (error.details() or "")


@pytest.mark.parametrize("token", [None, "expired", "not.a.jwt"])
async def test_an_open_method_needs_no_token_and_ignores_one_it_cannot_use(
    nim: GameServer, tokens: Keys, token: str | None
) -> None:
    """A client that sends its expired token with every call can still call
    an open method (on the platform face: Refresh, to get a new one)."""
    if token == "expired":
        token = tokens.token("ana", ttl=-60)
    metadata = () if token is None else bearer(token)
    reply = await nim.stub.Describe(match_pb2.DescribeRequest(), metadata=metadata)
    assert reply.game.name == "nim"


@pytest.mark.parametrize("method", ["CreateMatch", "FireDeadline"])
async def test_platform_methods_refuse_a_users_token(nim: GameServer, tokens: Keys, method: str) -> None:
    match_id = await new_match(nim)
    before = await nim.store.redis.hgetall(keys.match(match_id))
    request = (
        match_pb2.CreateMatchRequest(match_id=secrets.token_hex(6), seats=[match_pb2.Seat(user_id="ana")])
        if method == "CreateMatch"
        else match_pb2.FireDeadlineRequest(match_id=match_id, expected_version=1)
    )
    error = await refused(getattr(nim.stub, method)(request, metadata=tokens.auth("ana")))
    assert refusal(error) == (grpc.StatusCode.PERMISSION_DENIED, "platform_only")
    assert await nim.store.redis.hgetall(keys.match(match_id)) == before


# -- what a call may be ------------------------------------------------------------


@pytest.mark.parametrize("method", ["GetView", "Act", "CreateMatch"])
async def test_request_bytes_that_do_not_decode_are_an_invalid_argument(
    nim: GameServer, tokens: Keys, method: str
) -> None:
    error = await raw_unary(nim.channel, f"{SERVICE}/{method}", GARBAGE, tokens.platform())
    assert refusal(error) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_request")


async def test_a_stream_whose_request_does_not_decode_is_an_invalid_argument(
    nim: GameServer, tokens: Keys
) -> None:
    error = await raw_stream(nim.channel, f"{SERVICE}/Watch", GARBAGE, tokens.auth("ana"))
    assert refusal(error) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_request")


async def test_a_bug_is_internal_and_its_details_stay_in_the_logs(nim: GameServer, tokens: Keys) -> None:
    match_id = secrets.token_hex(6)
    await nim.store.redis.hset(keys.match(match_id), "doc", orjson.dumps({"game": "nim"}))  # no players
    error = await refused(nim.stub.GetView(view(match_id), metadata=tokens.auth("ana")))
    assert refusal(error) == (grpc.StatusCode.INTERNAL, "internal")
    assert error.details() == "internal error"


async def test_every_call_is_counted_by_method_and_code(nim: GameServer, tokens: Keys) -> None:
    match_id = await new_match(nim)
    ok, unauthenticated = requests_counted("GetView", "OK"), requests_counted("GetView", "UNAUTHENTICATED")
    await nim.stub.GetView(view(match_id), metadata=tokens.auth("ana"))
    await refused(nim.stub.GetView(view(match_id)))
    assert requests_counted("GetView", "OK") == ok + 1
    assert requests_counted("GetView", "UNAUTHENTICATED") == unauthenticated + 1


# -- Redis away --------------------------------------------------------------------


@pytest.fixture
async def own_redis(tmp_path: Path, tokens: Keys) -> AsyncIterator[tuple[RedisServer, GameServer]]:
    """A Redis (persistent: a restart keeps the matches) and a Nim service of
    this test's own, with a short command timeout."""
    server = RedisServer(tmp_path / "redis").start(persistent=True)
    redis = connect(server.url, timeout=1.0)
    try:
        async with GameServer(NIM, RecordStore(redis, keys.match, 3600, "SPUBLISH"), tokens) as nim:
            yield server, nim
    finally:
        server.stop()
        await redis.aclose()


async def assert_unavailable(nim: GameServer, tokens: Keys, match_id: str) -> None:
    ana = tokens.auth("ana")
    calls = [
        nim.stub.GetView(view(match_id), metadata=ana),
        nim.stub.Act(
            match_pb2.ActRequest(match_id=match_id, expected_version=1, action=TAKE_ONE), metadata=ana
        ),
        nim.create(secrets.token_hex(6), ["ana", "bia"]),
    ]
    for call in calls:
        error = await refused(call)
        assert refusal(error) == (grpc.StatusCode.UNAVAILABLE, "unavailable"), error
        assert float(error_info(error).metadata["retry_after_seconds"]) > 0
    watch = nim.stub.Watch(match_pb2.WatchRequest(match_id=match_id), metadata=ana)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await watch.read()
    assert refusal(raised.value) == (grpc.StatusCode.UNAVAILABLE, "unavailable")


async def assert_recovered(nim: GameServer, tokens: Keys, match_id: str) -> None:
    """Once Redis answers again (a restarted one answers LOADING while it
    reads its files: UNAVAILABLE too), the match is as it was and takes a
    move (the store's scripts are loaded again into a restarted Redis)."""

    async def answering() -> bool:
        try:
            return bool(await nim.store.redis.ping())
        except RedisError:
            return False

    await until(answering, timeout=30)
    seat = await nim.stub.GetView(view(match_id), metadata=tokens.auth("ana"))
    # The move refused UNAVAILABLE may still have landed once Redis caught up
    # with what it had been sent (a timeout cannot tell): at most once, as a
    # compare-and-set, and then the match shows it. Either way it plays on.
    version = seat.snapshot.version
    assert version in (1, 2)
    heap = nim_pb2.View()
    seat.snapshot.view.Unpack(heap)
    assert heap.heap == STONES - (version - 1)
    user = ["ana", "bia"][seat.snapshot.to_act[0]]
    request = match_pb2.ActRequest(match_id=match_id, expected_version=version, action=TAKE_ONE)
    moved = await nim.stub.Act(request, metadata=tokens.auth(user))
    assert moved.snapshot.version == version + 1


async def test_a_redis_that_is_down_is_unavailable_and_then_back(
    own_redis: tuple[RedisServer, GameServer], tokens: Keys
) -> None:
    server, nim = own_redis
    match_id = await new_match(nim)
    server.stop()
    await assert_unavailable(nim, tokens, match_id)
    server.start(persistent=True)  # the same port and files
    await assert_recovered(nim, tokens, match_id)


async def test_a_redis_that_stops_answering_is_unavailable_and_then_back(
    own_redis: tuple[RedisServer, GameServer], tokens: Keys
) -> None:
    server, nim = own_redis
    match_id = await new_match(nim)
    assert server.process is not None
    server.process.send_signal(signal.SIGSTOP)
    try:
        await assert_unavailable(nim, tokens, match_id)
    finally:
        server.process.send_signal(signal.SIGCONT)
    await assert_recovered(nim, tokens, match_id)
