"""Abuse limits (429 with Retry-After over HTTP, RESOURCE_EXHAUSTED with
ErrorInfo metadata ``retry_after_seconds`` over gRPC, then recovery; refused
attempts change nothing), single-use refresh tokens, and rotating the
signing key with tools/rotate_keys.py without refusing live tokens. A stack
of its own, with tight limits."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.core.tokens import PUBLIC_KEY_FILE
from tests.integration.grpc_client import bearer, error_info, pack
from tests.integration.http_client import ApiRefused, register, seated_table
from tools.stack import Stack

WINDOW = 4  # seconds; the limits count in sliding windows of this length
ROOT = Path(__file__).resolve().parents[2]


async def fresh_window() -> None:
    """Wait a window's length, so a burst is counted alone (earlier requests
    of the same subject have left the sliding window)."""
    await asyncio.sleep(WINDOW + 0.05)


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(
        tmp_path_factory.mktemp("tight"),
        games=["yatzy"],
        env={
            "ACTION_LIMIT": f"5/{WINDOW}",
            "LOGIN_LIMIT": f"3/{WINDOW}",
            "AUTH_CLIENT_LIMIT": "100/60",
            "KEY_RELOAD_SECONDS": "0.5",
        },
    ) as stack:
        stack.gateway()
        yield stack


@pytest.fixture
async def http(tight: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=tight.gateway(), timeout=15) as client:
        yield client


@pytest.fixture
async def api(tight: Stack) -> AsyncIterator[platform_pb2_grpc.PlatformServiceStub]:
    async with grpc.aio.insecure_channel(tight.platform_grpc()) as channel:
        yield platform_pb2_grpc.PlatformServiceStub(channel)


def retry_after(error: grpc.aio.AioRpcError) -> float:
    """A gRPC rate-limit refusal, checked: its wait in seconds."""
    info = error_info(error)
    assert (error.code(), info.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited")
    seconds = float(info.metadata["retry_after_seconds"])
    assert 0 < seconds <= WINDOW
    return seconds


def http_retry_after(refused: httpx.Response) -> int:
    """An HTTP rate-limit refusal, checked: its Retry-After (whole seconds)."""
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
    seconds = int(refused.headers["retry-after"])
    assert 1 <= seconds <= WINDOW
    return seconds


async def test_login_attempts_are_limited_per_username_over_both_faces_and_recover(
    http: httpx.AsyncClient, api: platform_pb2_grpc.PlatformServiceStub
) -> None:
    ana = await register(http, "ana")
    credentials = {"username": ana.name, "password": "correct horse"}
    wrong = {"username": ana.name, "password": "wrong password"}
    await fresh_window()
    statuses = [(await http.post("/v1/auth/login", json=wrong)).status_code for _ in range(3)]
    assert statuses == [401, 401, 401]
    # The username is locked for the rest of the window, whichever face and
    # even with the right password; another username is not.
    waits: list[float] = [http_retry_after(await http.post("/v1/auth/login", json=credentials))]
    with pytest.raises(grpc.aio.AioRpcError) as limited:
        await api.LogIn(platform_pb2.LogInRequest(**credentials))
    waits.append(retry_after(limited.value))
    # The username counts in any case.
    with pytest.raises(grpc.aio.AioRpcError) as limited:
        await api.LogIn(platform_pb2.LogInRequest(username=ana.name.upper(), password="correct horse"))
    waits.append(retry_after(limited.value))
    bia = await register(http, "bia")
    other = await api.LogIn(platform_pb2.LogInRequest(username=bia.name, password="correct horse"))
    assert other.session.user.id == bia.user_id
    # Both faces tell the same end of the window (Retry-After in whole
    # seconds, rounded up; the gRPC wait exact, a moment later).
    assert waits[0] - 1.5 < waits[2] <= waits[1] <= waits[0]
    await asyncio.sleep(max(waits) + 0.1)
    recovered = await http.post("/v1/auth/login", json=credentials)
    assert recovered.status_code == 200 and recovered.json()["user"]["id"] == ana.user_id
    again = await api.LogIn(platform_pb2.LogInRequest(**credentials))
    assert again.session.user.id == ana.user_id


async def test_actions_are_limited_per_user_over_http_and_grpc_and_recover(
    http: httpx.AsyncClient, api: platform_pb2_grpc.PlatformServiceStub, tight: Stack
) -> None:
    ana = await register(http, "ana")
    bia = await register(http, "bia")
    table_id, snap = await seated_table([ana], "yatzy")
    bia_table, bia_snap = await seated_table([bia], "yatzy")
    await fresh_window()
    moves: list[dict[str, Any]] = [
        {"roll": {}},
        {"roll": {"keep": [0]}},
        {"roll": {"keep": [0]}},
        {"score": {"box": "CHANCE"}},
        {"roll": {}},
    ]
    for move in moves:
        snap = await ana.act(table_id, snap["version"], move)
    before = await ana.view(table_id)
    # Over HTTP: 429 with Retry-After.
    refused = await http.post(
        f"/v1/tables/{table_id}/actions",
        json={"expected_version": snap["version"], "action": {"roll": {"keep": [0]}}},
        headers=ana.headers,
    )
    http_retry_after(refused)
    # Over the platform's gRPC face and straight to the game service:
    # RESOURCE_EXHAUSTED, with the wait in the ErrorInfo.
    action = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=[0])))
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await api.Act(
            platform_pb2.ActRequest(table_id=table_id, expected_version=snap["version"], action=action),
            metadata=bearer(ana.token),
        )
    waits = [retry_after(failure.value)]
    async with grpc.aio.insecure_channel(tight.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        request = match_pb2.ActRequest(match_id=table_id, expected_version=snap["version"], action=action)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Act(request, metadata=bearer(ana.token))
        waits.append(retry_after(failure.value))
        # The limit is per user: bia still plays.
        await bia.act(bia_table, bia_snap["version"], {"roll": {}})
        # The refused attempts changed nothing.
        assert await ana.view(table_id) == before
        await asyncio.sleep(max(waits) + 0.1)
        after = await stub.Act(request, metadata=bearer(ana.token))
        assert after.snapshot.version == snap["version"] + 1
    recovered = await api.Act(
        platform_pb2.ActRequest(
            table_id=table_id,
            expected_version=after.snapshot.version,
            action=pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=[0, 1]))),
        ),
        metadata=bearer(ana.token),
    )
    assert recovered.match.version == snap["version"] + 2


async def test_refresh_tokens_work_once(
    http: httpx.AsyncClient, api: platform_pb2_grpc.PlatformServiceStub
) -> None:
    ana = await register(http, "ana")
    renewed = await http.post("/v1/auth/refresh", json={"refresh_token": ana.refresh_token})
    assert renewed.status_code == 200
    fresh = renewed.json()
    assert fresh["refresh_token"] != ana.refresh_token and fresh["token_type"] == "bearer"
    me = await http.get("/v1/me", headers={"authorization": f"Bearer {fresh['access_token']}"})
    assert me.json()["id"] == ana.user_id
    reused = await http.post("/v1/auth/refresh", json={"refresh_token": ana.refresh_token})
    assert reused.status_code == 401 and reused.json()["error"]["code"] == "refresh_token_used"
    # The same over gRPC: the new refresh token works once, the old one never.
    for token in (ana.refresh_token, fresh["refresh_token"]):
        if token == fresh["refresh_token"]:
            again = await api.Refresh(platform_pb2.RefreshRequest(refresh_token=token))
            assert again.session.user.id == ana.user_id
        with pytest.raises(grpc.aio.AioRpcError) as used:
            await api.Refresh(platform_pb2.RefreshRequest(refresh_token=token))
        assert used.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(used.value).reason == "refresh_token_used"
    # An access token is no refresh token, on either face.
    wrong = await http.post("/v1/auth/refresh", json={"refresh_token": ana.token})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthenticated"
    with pytest.raises(grpc.aio.AioRpcError) as not_refresh:
        await api.Refresh(platform_pb2.RefreshRequest(refresh_token=ana.token))
    assert not_refresh.value.code() == grpc.StatusCode.UNAUTHENTICATED


def rotate_keys(stack: Stack) -> str:
    """``python -m tools.rotate_keys`` as an operator runs it: the keys
    folder comes from the settings (RODADA_KEYS_DIR)."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.rotate_keys"],
        env=stack.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert "signing key is now" in done.stdout, done
    return done.stdout.split()[-1]


def kid(token: str) -> str:
    return token.split(".")[0]  # the JWT header: algorithm and key id


async def test_rotating_the_signing_key_keeps_live_tokens_valid(
    http: httpx.AsyncClient, tight: Stack
) -> None:
    old = await register(http, "old")
    table_id, snap = await seated_table([old], "yatzy")
    keys_dir = Path(tight.env["RODADA_KEYS_DIR"])
    first_key = (keys_dir / PUBLIC_KEY_FILE).read_bytes()
    rotate_keys(tight)
    # The tool rotated the stack's folder (the one the settings name): the
    # old public key is kept beside the new one.
    assert (keys_dir / "previous.pub.pem").read_bytes() == first_key
    assert (keys_dir / PUBLIC_KEY_FILE).read_bytes() != first_key
    tight.stop("gateway")
    tight.gateway()  # restarted: signs with the new key, accepts both
    await asyncio.sleep(1)  # the game service re-reads the keys folder
    new = await register(http, "new")
    assert kid(new.token) != kid(old.token)
    # The old token still plays (gateway and service, HTTP and gRPC), and so
    # does a new one.
    snap = await old.act(table_id, snap["version"], {"roll": {}})
    async with grpc.aio.insecure_channel(tight.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        me = await api.GetMe(platform_pb2.GetMeRequest(), metadata=bearer(old.token))
        assert me.user.id == old.user_id
        viewed = await api.GetView(platform_pb2.GetViewRequest(table_id=table_id), metadata=bearer(old.token))
        assert viewed.match.version == snap["version"]
    new_table, new_snap = await seated_table([new], "yatzy")
    await new.act(new_table, new_snap["version"], {"roll": {}})
    # Two rotations on, the old key is dropped: its tokens are refused by the
    # game service and by the gateway (which re-reads the folder too).
    rotate_keys(tight)
    rotate_keys(tight)
    await asyncio.sleep(1.5)
    async with grpc.aio.insecure_channel(tight.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.GetView(match_pb2.GetViewRequest(match_id=table_id), metadata=bearer(old.token))
        assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(ApiRefused) as refused:
        await old.view(table_id)
    assert (refused.value.status, refused.value.code) == (401, "unauthenticated")
    async with grpc.aio.insecure_channel(tight.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await api.GetMe(platform_pb2.GetMeRequest(), metadata=bearer(old.token))
        assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # Restarted on the newest key, the gateway signs tokens the game
    # service accepts: play goes on.
    tight.stop("gateway")
    tight.gateway()
    newest = await register(http, "newest")
    assert kid(newest.token) not in (kid(old.token), kid(new.token))
    newest_table, newest_snap = await seated_table([newest], "yatzy")
    await newest.act(newest_table, newest_snap["version"], {"roll": {}})
