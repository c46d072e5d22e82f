"""The operations defects of issue 25, each against the real processes: a
private table's presence is its players' only; the gateway's metrics are on
a port of their own, not on the API port; a gateway that knows no game is
not ready; and Redis answering "not now" (read-only replica, out of memory)
is UNAVAILABLE with a retry hint on both faces, not an internal error."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import grpc
import httpx
import pytest
from redis.asyncio import Redis
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.core.errors import error_reason
from tests.integration.grpc_client import bearer
from tests.integration.http_client import ApiRefused, Player, register
from tools.redis_server import RedisServer
from tools.stack import Stack


async def refusal(call: object) -> ApiRefused:
    try:
        await call  # type: ignore[misc]
    except ApiRefused as refused:
        return refused
    raise AssertionError("answered")


# -- presence ------------------------------------------------------------------------


async def test_a_private_tables_presence_is_for_its_players_only(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        ana, bia, eve = [await register(http, n) for n in ("ana", "bia", "eve")]
        table = await ana.create_table("yatzy", 2)  # invites only: private
        await bia.join(table["invite_code"])
        path = f"/v1/tables/{table['id']}/presence"
        for player in (ana, bia):
            assert (await player.call("GET", path)) == {"connected": []}
        # An outsider is told what a missing table tells: nothing to find.
        hidden = await refusal(eve.call("GET", path))
        missing = await refusal(eve.call("GET", "/v1/tables/no-such-table/presence"))
        assert (hidden.status, hidden.code) == (missing.status, missing.code) == (404, "table_not_found")
        async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
            api = platform_pb2_grpc.PlatformServiceStub(channel)
            request = platform_pb2.GetPresenceRequest(table_id=table["id"])
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.GetPresence(request, metadata=bearer(eve.token))
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND
            assert error_reason(refused.value) == "table_not_found"
            assert not (await api.GetPresence(request, metadata=bearer(bia.token))).connected

        # An open table (Dominó: anyone may sit) is anyone's to look at.
        listed = await ana.create_table("domino", 4)
        assert (await eve.call("GET", f"/v1/tables/{listed['id']}/presence")) == {"connected": []}


# -- metrics -------------------------------------------------------------------------


async def test_the_gateways_metrics_are_on_their_own_port_only(stack: Stack) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        api = await http.get(stack.gateway() + "/metrics")
        assert api.status_code == 404, "the metrics must not be public on the API port"
        metrics = await http.get(stack.gateway_metrics_url())
        assert metrics.status_code == 200 and "rodada_http_requests_total" in metrics.text
        assert "rodada_build_info" in metrics.text


# -- readiness without games -----------------------------------------------------------


@pytest.fixture(scope="module")
def gameless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A gateway started without GAMES."""
    with Stack(tmp_path_factory.mktemp("gameless"), games=[]) as stack:
        assert stack.env["GAMES"] == ""
        stack.gateway()
        yield stack


async def test_a_gateway_that_knows_no_game_is_not_ready(gameless: Stack) -> None:
    async with httpx.AsyncClient(base_url=gameless.gateway(), timeout=10) as http:
        health = await http.get("/healthz")
        assert health.status_code == 503 and health.headers["retry-after"] == "1"
        assert health.json() == {"status": "no game known"}
        assert (await http.get("/livez")).status_code == 200  # alive: not to be restarted for it


# -- Redis refusing writes ------------------------------------------------------------


@pytest.fixture(scope="module")
def yatzy_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("refusing"), games=["yatzy"]) as stack:
        stack.gateway()
        yield stack


@pytest.fixture
async def redis(yatzy_only: Stack) -> AsyncIterator[Redis]:
    client = Redis.from_url(yatzy_only.redis_url)
    try:
        yield client
    finally:
        await client.config_set("maxmemory", 0)
        await client.execute_command("REPLICAOF", "NO", "ONE")
        await client.aclose()


async def assert_unavailable(stack: Stack, ana: Player) -> None:
    """Opening a table (a write) is 503 with Retry-After over HTTP and
    UNAVAILABLE over gRPC, with the same reason."""
    response = await ana.http.post("/v1/tables", json={"game": "yatzy", "seats": 1}, headers=ana.headers)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable"
    assert int(response.headers["retry-after"]) >= 1
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await api.CreateTable(
                platform_pb2.CreateTableRequest(game="yatzy", seats=1), metadata=bearer(ana.token)
            )
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_reason(refused.value) == "unavailable"


async def test_redis_out_of_memory_is_unavailable_not_internal(yatzy_only: Stack, redis: Redis) -> None:
    async with httpx.AsyncClient(base_url=yatzy_only.gateway(), timeout=15) as http:
        ana = await register(http, "oom")
        await redis.config_set("maxmemory-policy", "noeviction")
        await redis.config_set("maxmemory", 1)  # every write: "OOM command not allowed"
        await assert_unavailable(yatzy_only, ana)
        await redis.config_set("maxmemory", 0)
        assert (await ana.create_table("yatzy", 1))["status"] == "open"  # and back


async def test_a_read_only_redis_is_unavailable_not_internal(
    yatzy_only: Stack, redis: Redis, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The stack's Redis made a replica (as after a failover, before the
    clients follow): every write answers READONLY."""
    primary = RedisServer(tmp_path_factory.mktemp("primary")).start()
    try:
        async with httpx.AsyncClient(base_url=yatzy_only.gateway(), timeout=15) as http:
            ana = await register(http, "readonly")
            await redis.execute_command("REPLICAOF", "127.0.0.1", str(primary.port))
            await assert_unavailable(yatzy_only, ana)
    finally:
        primary.stop()
