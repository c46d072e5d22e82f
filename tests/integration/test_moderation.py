"""Moderation on a stack with two gateway replicas, on both faces: an admin
(made by the CLI) grants the moderator role; a report is filed once, taken
and resolved; a mute refuses chat until it ends; a removed message is gone
from the history and from the table's replay; a ban refuses sign-in and
tokens and ends the user's open feeds on every replica; every action is in
the audit log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import grpc
import httpx
import pytest
import websockets
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.platform.v1 import moderation_pb2, moderation_pb2_grpc, social_pb2, social_pb2_grpc

from services.core.errors import error_reason
from tests.integration.grpc_client import bearer
from tests.integration.http_client import ApiRefused, register
from tests.integration.social_client import next_chat
from tools.stack import Stack

PLAYERS = "CHAT_CHANNEL_TABLE_PLAYERS"


@pytest.fixture(scope="module")
def mod_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("moderation"), games=["yatzy"]) as stack:
        stack.gateway(0)
        stack.gateway(1)
        yield stack


@pytest.fixture
async def replicas(mod_stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=mod_stack.gateway(0), timeout=15) as one,
        httpx.AsyncClient(base_url=mod_stack.gateway(1), timeout=15) as two,
    ):
        yield one, two


async def refused(call: object) -> tuple[int, str]:
    try:
        await call  # type: ignore[misc]
    except ApiRefused as refusal:
        return refusal.status, str(refusal.code)
    raise AssertionError("accepted")


def grant_admin(stack: Stack, username: str) -> None:
    env = {**os.environ, "REDIS_URL": stack.redis_url}
    done = subprocess.run(
        [sys.executable, "-m", "tools.admin", "grant", username], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


async def test_report_take_resolve_mute_remove_ban_and_the_audit_log(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], mod_stack: Stack
) -> None:
    one, two = replicas
    adm, mo, ana, bia = [await register(one, n) for n in ("adm", "mo", "ana", "bia")]
    grant_admin(mod_stack, adm.name)
    assert await refused(ana.call("PUT", f"/v1/moderation/moderators/{mo.user_id}")) == (403, "admins_only")
    await adm.call("PUT", f"/v1/moderation/moderators/{mo.user_id}")  # counts at once: no new log-in
    assert await refused(ana.call("GET", "/v1/moderation/reports")) == (403, "moderators_only")

    table = await ana.create_table("yatzy", 2)
    table_id = table["id"]
    await bia.join(table["invite_code"])
    chat = f"/v1/tables/{table_id}/chat"
    rude = await bia.call("POST", chat, {"text": "rude words"})
    report = {"channel": PLAYERS, "table_id": table_id, "message_id": rude["id"], "reason": "rude"}

    # One report per reporter and message.
    await ana.call("POST", "/v1/social/reports", report)
    assert await refused(ana.call("POST", "/v1/social/reports", report)) == (409, "already_reported")

    # The queue: listed, taken by one moderator, resolved by that one only.
    listed = await mo.call("GET", "/v1/moderation/reports")
    (filed,) = [r for r in listed["reports"] if r["message_id"] == rude["id"]]
    assert (filed["status"], filed["reporter_id"], filed["sender_id"], filed["text"]) == (
        "REPORT_STATUS_OPEN",
        ana.user_id,
        bia.user_id,
        "rude words",
    )
    taken = await mo.call("POST", f"/v1/moderation/reports/{filed['id']}/take")
    assert (taken["status"], taken["taken_by"]) == ("REPORT_STATUS_TAKEN", mo.user_id)
    assert await refused(adm.call("POST", f"/v1/moderation/reports/{filed['id']}/take")) == (
        409,
        "report_taken",
    )
    resolve = f"/v1/moderation/reports/{filed['id']}/resolve"
    assert await refused(adm.call("POST", resolve, {"resolution": "x"})) == (409, "report_not_taken")

    # Mute: chat refused with how long, until it ends; others chat on.
    muted = await mo.call(
        "POST", f"/v1/moderation/users/{bia.user_id}/mute", {"seconds": 2, "reason": "rude"}
    )
    assert muted["until"] > 0
    response = await two.post(chat, json={"text": "again"}, headers=bia.headers)
    assert response.status_code == 403 and response.json()["error"]["code"] == "muted"
    assert 1 <= int(response.headers["retry-after"]) <= 2
    await ana.call("POST", chat, {"text": "ok"})
    await asyncio.sleep(2.2)
    later = await bia.call("POST", chat, {"text": "sorry"})

    # Remove: gone from the history and from the replay of the table's feed.
    body = {"channel": PLAYERS, "table_id": table_id, "message_id": rude["id"], "reason": "rude"}
    await mo.call("POST", "/v1/moderation/messages/remove", body)
    history = await ana.call("GET", chat)
    assert [m["text"] for m in history["messages"]] == ["ok", "sorry"]
    async with ana.feed(mod_stack.gateway(1), table_id, after_event_id=1) as replay:  # the history
        assert (await next_chat(replay))[0]["text"] == "ok"  # the removed one came first: gone
    assert await refused(mo.call("POST", "/v1/moderation/messages/remove", body)) == (
        404,
        "message_not_found",
    )
    await mo.call("POST", resolve, {"resolution": "muted, message removed"})

    # Ban: Bia's feeds on both replicas and on a game service reached
    # directly end, her tokens and sign-in are refused.
    solo = await ana.create_table("yatzy", 1)
    await ana.start(solo["id"])  # a match's id is its table's
    direct_channel = grpc.aio.insecure_channel(f"127.0.0.1:{mod_stack.grpc_ports['yatzy']}")
    watching = match_pb2_grpc.MatchServiceStub(direct_channel).Watch(
        match_pb2.WatchRequest(match_id=solo["id"]), metadata=bearer(bia.token)
    )
    while not (item := await asyncio.wait_for(watching.read(), 10)).HasField("snapshot"):
        pass  # the history first, then the snapshot: she watches Ana's match
    assert item.snapshot.match_id == solo["id"] and item.snapshot.seat == -1
    ws = await websockets.connect(
        mod_stack.gateway(1).replace("http", "ws", 1) + f"/v1/tables/{table_id}/events"
    )
    await ws.send(json.dumps({"token": bia.token}))
    await ws.recv()  # the table: the feed is open
    async with grpc.aio.insecure_channel(mod_stack.platform_grpc(0)) as channel:
        social = social_pb2_grpc.SocialServiceStub(channel)
        stream = social.FollowSocial(social_pb2.FollowSocialRequest(), metadata=bearer(bia.token))
        await asyncio.sleep(0.5)  # the stream is open
        await mo.call("POST", f"/v1/moderation/users/{bia.user_id}/ban", {"reason": "again"})
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            async for _ in stream:
                pass
        assert (
            ended.value.code() == grpc.StatusCode.PERMISSION_DENIED and error_reason(ended.value) == "banned"
        )
    # The game service heard the ban on its own, and ended her Watch though
    # Ana's match goes on (nothing else would end it).
    with pytest.raises(grpc.aio.AioRpcError) as watch_ended:
        while True:
            await asyncio.wait_for(watching.read(), 10)
    assert watch_ended.value.code() == grpc.StatusCode.PERMISSION_DENIED, watch_ended.value
    assert error_reason(watch_ended.value) == "banned"
    await direct_channel.close()
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if "error" in frame:
            break
    assert frame["error"]["code"] == "banned"
    with pytest.raises(websockets.ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 10)
    assert ws.close_code == 4403
    for client in (one, two):
        assert (await client.get("/v1/me", headers=bia.headers)).status_code == 401
    login = await one.post("/v1/auth/login", json={"username": bia.name, "password": "correct horse"})
    assert login.status_code == 403 and login.json()["error"]["code"] == "banned"
    refresh = await two.post("/v1/auth/refresh", json={"refresh_token": bia.refresh_token})
    assert refresh.status_code == 401
    # A game service reached directly (as a mobile app may) refuses her
    # token too; it heard the ban on its own (it was not told by a gateway).
    async with grpc.aio.insecure_channel(f"127.0.0.1:{mod_stack.grpc_ports['yatzy']}") as channel:
        yatzy = match_pb2_grpc.MatchServiceStub(channel)
        view = match_pb2.GetViewRequest(match_id=table_id)
        with pytest.raises(grpc.aio.AioRpcError) as direct:
            await yatzy.GetView(view, metadata=bearer(bia.token))
        assert direct.value.code() == grpc.StatusCode.UNAUTHENTICATED, direct.value
        with pytest.raises(grpc.aio.AioRpcError) as allowed:  # Ana's token is fine: no match yet
            await yatzy.GetView(view, metadata=bearer(ana.token))
        assert error_reason(allowed.value) == "match_not_found"
    assert await refused(mo.call("POST", f"/v1/moderation/users/{adm.user_id}/ban", {})) == (
        409,
        "staff_user",
    )

    # The audit log, newest first, over gRPC too.
    async with grpc.aio.insecure_channel(mod_stack.platform_grpc(1)) as channel:
        moderation = moderation_pb2_grpc.ModerationServiceStub(channel)
        log = await moderation.ListAuditLog(moderation_pb2.ListAuditLogRequest(), metadata=bearer(mo.token))
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await moderation.ListAuditLog(moderation_pb2.ListAuditLogRequest(), metadata=bearer(ana.token))
        assert error_reason(denied.value) == "moderators_only"
    actions = [(e.action, e.moderator_id) for e in log.entries]
    assert actions[:6] == [
        ("ban", mo.user_id),
        ("resolve_report", mo.user_id),
        ("remove_message", mo.user_id),
        ("mute", mo.user_id),
        ("take_report", mo.user_id),
        ("grant_moderator", adm.user_id),
    ]
    assert later["text"] == "sorry"
