"""Redis going away, as it does in production: killed with SIGKILL under the
shipped persistence (append-only file, ``appendfsync everysec``), then back
from its file; stopped cleanly and back. While it is gone every face says
so plainly and changes nothing — 503 with Retry-After over HTTP, UNAVAILABLE
over gRPC (the gateway's face and each game service), readiness failing and
liveness not — and once it is back every acknowledged action is there, play
goes on, and a feed held through the outage carries the next event.
What survives what is written down in docs/durability.md."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.core.errors import error_reason
from services.core.feeds import HEALTH_SECONDS
from tests.integration.grpc_client import bearer, pack
from tests.integration.http_client import ApiRefused, Player, register, seated_table
from tests.integration.waiting import until
from tools.redis_server import RedisServer
from tools.stack import Stack

# The shipped setting (deploy/k8s/components/redis-in-cluster/redis.yaml).
PERSISTENCE = ("--appendfsync", "everysec")
ROLL = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))


@pytest.fixture(scope="module")
def redis_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("outage-redis")


@pytest.fixture(scope="module")
def redis(redis_dir: Path) -> Iterator[RedisServer]:
    server = RedisServer(redis_dir, extra=PERSISTENCE).start(persistent=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def outage_stack(tmp_path_factory: pytest.TempPathFactory, redis: RedisServer) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("outage"), redis_url=redis.url, games=["yatzy"]) as stack:
        stack.gateway()
        yield stack


def restart(redis: RedisServer) -> None:
    """A new redis-server on the same port and directory: it loads the
    append-only file."""
    assert redis.process is not None and redis.process.poll() is not None
    redis.start(persistent=True)


async def refused_over_http(call: Any) -> ApiRefused:
    try:
        await call
    except ApiRefused as refused:
        return refused
    raise AssertionError("answered while Redis was down")


async def assert_unavailable_everywhere(
    stack: Stack, http: httpx.AsyncClient, ana: Player, table_id: str, version: int
) -> None:
    health = await http.get("/healthz")
    assert health.status_code == 503 and int(health.headers["retry-after"]) >= 1
    assert (await http.get("/livez")).status_code == 200  # liveness does not restart a healthy process
    roll = {"roll": {}}
    for call in (
        ana.act(table_id, version, roll),
        ana.view(table_id),
        ana.create_table("yatzy", 1),
    ):
        refused = await refused_over_http(call)
        assert refused.status == 503 and refused.code == "unavailable", refused
    response = await http.post(
        f"/v1/tables/{table_id}/actions",
        json={"expected_version": version, "action": roll},
        headers=ana.headers,
    )
    assert response.status_code == 503 and int(response.headers["retry-after"]) >= 1
    login = await http.post("/v1/auth/login", json={"username": ana.name, "password": "correct horse"})
    assert login.status_code == 503 and login.json()["error"]["code"] == "unavailable"

    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as face:
            await api.GetView(platform_pb2.GetViewRequest(table_id=table_id), metadata=bearer(ana.token))
        assert face.value.code() == grpc.StatusCode.UNAVAILABLE and error_reason(face.value) == "unavailable"
    async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:
        game = match_pb2_grpc.MatchServiceStub(channel)
        for rpc, request in (
            (game.GetView, match_pb2.GetViewRequest(match_id=table_id)),
            (game.Act, match_pb2.ActRequest(match_id=table_id, expected_version=version, action=ROLL)),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as direct:
                await rpc(request, metadata=bearer(ana.token))
            assert direct.value.code() == grpc.StatusCode.UNAVAILABLE, direct.value
            assert error_reason(direct.value) == "unavailable"


async def back(http: httpx.AsyncClient) -> None:
    async def ready() -> bool:
        return (await http.get("/healthz")).status_code == 200

    await until(ready, timeout=20, every=0.2)


@pytest.mark.parametrize("how", ["sigkill", "clean_restart"])
async def test_redis_going_away_loses_nothing_acknowledged(
    outage_stack: Stack, redis: RedisServer, how: str
) -> None:
    async with httpx.AsyncClient(base_url=outage_stack.gateway(), timeout=15) as http:
        ana, bia = await register(http, "ana"), await register(http, "bia")
        table_id, snap = await seated_table([ana, bia], "yatzy")
        snap = await ana.act(table_id, snap["version"], {"roll": {}})
        snap = await ana.act(table_id, snap["version"], {"roll": {"keep": [0, 1]}})
        acknowledged = await ana.view(table_id)  # the last thing Redis confirmed
        assert acknowledged["version"] == snap["version"]

        async with bia.feed(outage_stack.gateway(), table_id) as feed:
            await feed.snapshot_at(acknowledged["version"])
            assert redis.process is not None
            if how == "sigkill":
                redis.process.send_signal(signal.SIGKILL)
                redis.process.wait()
            else:
                redis.stop()
            await assert_unavailable_everywhere(outage_stack, http, ana, table_id, acknowledged["version"])
            restart(redis)
            await back(http)

            # Everything acknowledged is there, to the byte of the view.
            after = await ana.view(table_id)
            assert after == acknowledged
            # Refusals changed nothing, and play goes on from that version.
            preview = after["view"]["preview"]
            scored = await ana.act(table_id, after["version"], {"score": {"box": preview[0]["box"]}})
            assert scored["version"] == acknowledged["version"] + 1
            # The feed held through the outage carries the next event and snapshot
            # (waiting past the hub's own recovery of a silent subscription: a
            # ping after HEALTH_SECONDS, a reconnect after as long again).
            pushed = await feed.snapshot_at(scored["version"], timeout=2 * HEALTH_SECONDS + 10)
            assert pushed["version"] == scored["version"] and pushed["to_act"] == [1]
            ids = [item["event"]["id"] for item in feed.items if "event" in item]
            assert ids == sorted(set(ids)), "an event twice or out of order across the outage"
            new = range(acknowledged["last_event_id"] + 1, scored["last_event_id"] + 1)
            assert new and set(new) <= set(ids), "the write after the outage is missing from the feed"

        # A new account made before the outage can still log in (accounts survive too).
        login = await http.post("/v1/auth/login", json={"username": ana.name, "password": "correct horse"})
        assert login.status_code == 200
