"""Abuse limits (429 / RESOURCE_EXHAUSTED, then recovery), single-use refresh
tokens, and rotating the signing key without refusing live tokens. A stack of
its own, with tight limits."""

from __future__ import annotations

import asyncio
import secrets
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.kit.errors import error_reason
from services.kit.tokens import rotate_signing_key
from tests.integration.grpc_client import bearer, pack
from tests.integration.http_client import ApiRefused, Player, seated_table
from tools.stack import Stack

WINDOW = 4  # seconds; the limits count in fixed windows aligned on multiples of it


async def fresh_window() -> None:
    """Wait for the start of the next window, so a burst is counted in one."""
    await asyncio.sleep(WINDOW - time.time() % WINDOW + 0.05)


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(
        tmp_path_factory.mktemp("tight"),
        env={
            "ACTION_LIMIT": f"5/{WINDOW}",
            "LOGIN_LIMIT": f"3/{WINDOW}",
            "AUTH_CLIENT_LIMIT": "100/60",
            "KEY_RELOAD_SECONDS": "0.5",
        },
    )
    stack.service("yatzy")
    stack.gateway()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
async def http(tight: Stack) -> Any:
    async with httpx.AsyncClient(base_url=tight.gateway(), timeout=15) as client:
        yield client


async def sign_up(http: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    username = f"ana{secrets.token_hex(4)}"
    response = await http.post("/v1/auth/register", json={"username": username, "password": "correct horse"})
    assert response.status_code == 201, response.text
    return username, response.json()


async def test_login_attempts_are_limited_per_username_and_recover(http: httpx.AsyncClient) -> None:
    username, _ = await sign_up(http)
    await fresh_window()
    statuses = [
        (
            await http.post("/v1/auth/login", json={"username": username, "password": "wrong password"})
        ).status_code
        for _ in range(3)
    ]
    assert statuses == [401, 401, 401]
    limited = await http.post("/v1/auth/login", json={"username": username, "password": "correct horse"})
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= WINDOW
    await asyncio.sleep(int(limited.headers["retry-after"]) + 0.1)
    recovered = await http.post("/v1/auth/login", json={"username": username, "password": "correct horse"})
    assert recovered.status_code == 200


async def test_actions_are_limited_per_user_over_http_and_grpc_and_recover(
    http: httpx.AsyncClient, tight: Stack
) -> None:
    _, session = await sign_up(http)
    ana = Player(http, session["access_token"], session["user"]["id"], "ana")
    table_id, snap = await seated_table([ana], "yatzy")
    await fresh_window()
    moves = [
        {"roll": {}},
        {"roll": {"keep": [0]}},
        {"roll": {"keep": [0]}},
        {"score": {"box": "CHANCE"}},
        {"roll": {}},
    ]
    for move in moves:
        snap = await ana.act(table_id, snap["version"], move)
    with pytest.raises(ApiRefused) as refused:
        await ana.act(table_id, snap["version"], {"roll": {"keep": [0]}})
    assert (refused.value.status, refused.value.code) == (429, "rate_limited")
    async with grpc.aio.insecure_channel(tight.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        request = match_pb2.ActRequest(
            match_id=table_id,
            expected_version=snap["version"],
            action=pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=[0]))),
        )
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.Act(request, metadata=bearer(ana.token))
        assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_reason(failure.value) == "rate_limited"
        await asyncio.sleep(WINDOW + 0.1)
        after = await stub.Act(request, metadata=bearer(ana.token))
        assert after.version == snap["version"] + 1  # the refused attempts changed nothing


async def test_refresh_tokens_work_once(http: httpx.AsyncClient) -> None:
    _, session = await sign_up(http)
    renewed = await http.post("/v1/auth/refresh", json={"refresh_token": session["refresh_token"]})
    assert renewed.status_code == 200
    fresh = renewed.json()
    assert fresh["refresh_token"] != session["refresh_token"]
    me = await http.get("/v1/me", headers={"authorization": f"Bearer {fresh['access_token']}"})
    assert me.json()["id"] == session["user"]["id"]
    reused = await http.post("/v1/auth/refresh", json={"refresh_token": session["refresh_token"]})
    assert reused.status_code == 401 and reused.json()["error"]["code"] == "refresh_token_used"
    # An access token is no refresh token.
    wrong = await http.post("/v1/auth/refresh", json={"refresh_token": session["access_token"]})
    assert wrong.status_code == 401


async def test_rotating_the_signing_key_keeps_live_tokens_valid(
    http: httpx.AsyncClient, tight: Stack
) -> None:
    _, old_session = await sign_up(http)
    old = Player(http, old_session["access_token"], old_session["user"]["id"], "old")
    table_id, snap = await seated_table([old], "yatzy")
    rotate_signing_key(Path(tight.env["RODADA_KEYS_DIR"]))
    gateway = tight.processes["gateway"]
    gateway.send_signal(signal.SIGTERM)
    await asyncio.to_thread(gateway.wait, 15)
    tight.gateway()  # restarted: signs with the new key, accepts both
    await asyncio.sleep(1)  # the game service re-reads the keys folder
    _, new_session = await sign_up(http)
    assert new_session["access_token"].split(".")[0] != old_session["access_token"].split(".")[0]  # new kid
    # The old token still plays (gateway and service), and so does a new one.
    snap = await old.act(table_id, snap["version"], {"roll": {}})
    new = Player(http, new_session["access_token"], new_session["user"]["id"], "new")
    new_table, new_snap = await seated_table([new], "yatzy")
    await new.act(new_table, new_snap["version"], {"roll": {}})
    # A token of a key nobody knows is refused.
    rotate_signing_key(Path(tight.env["RODADA_KEYS_DIR"]))
    rotate_signing_key(Path(tight.env["RODADA_KEYS_DIR"]))  # the old key is dropped now
    await asyncio.sleep(1)
    async with grpc.aio.insecure_channel(tight.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await stub.GetView(match_pb2.GetViewRequest(match_id=table_id), metadata=bearer(old.token))
        assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
