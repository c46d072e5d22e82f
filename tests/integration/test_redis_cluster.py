"""The platform against a real 3-master Redis Cluster (REDIS_CLUSTER=1): the
Yatzy service and the gateway as subprocesses, a solo game over gRPC and one
over HTTP (then its WebSocket feed), and a match's keys in one slot (the
``{m:ID}`` hash tag)."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
import websockets
from redis.cluster import RedisCluster as ClusterClient
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.kit.store import events_key, match_key
from services.kit.tokens import Identity
from tests.integration.grpc_client import bearer, pack, unpack
from tests.integration.http_client import Player, register
from tools.redis_cluster import RedisCluster
from tools.stack import Stack

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def cluster_stack(cluster: RedisCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("cluster-stack"), redis_url=cluster.url, cluster=True)
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def client(cluster: RedisCluster) -> Iterator[ClusterClient]:
    client = ClusterClient.from_url(cluster.url)
    try:
        yield client
    finally:
        client.close()


def keep_most_common(dice: list[int]) -> list[int]:
    face, _ = Counter(dice).most_common(1)[0]
    return [i for i, d in enumerate(dice) if d == face]


def assert_match_in_one_slot(client: ClusterClient, cluster: RedisCluster, match_id: str) -> None:
    keys = [match_key(match_id), events_key(match_id)]
    slots = {client.keyslot(key) for key in keys}
    assert len(slots) == 1, slots
    # Both keys really are stored, on the one node that owns that slot.
    holders = {}
    for node in client.get_nodes():
        found = client.execute_command("KEYS", f"{match_key(match_id)}*", target_nodes=node)
        if found:
            holders[node.port] = sorted(k.decode() for k in found)
    assert list(holders.values()) == [sorted(keys)], holders
    assert len(client.get_nodes()) == len(cluster.ports) == 3
    assert client.type(keys[0]) == b"hash" and client.type(keys[1]) == b"stream"


async def test_solo_yatzy_over_grpc_on_a_cluster(
    cluster_stack: Stack, cluster: RedisCluster, client: ClusterClient
) -> None:
    me = Identity(f"u_{secrets.token_hex(6)}", "solo", "user")
    auth = bearer(cluster_stack.token(me))
    async with grpc.aio.insecure_channel(cluster_stack.service("yatzy")) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        snap = await stub.CreateMatch(
            match_pb2.CreateMatchRequest(
                seats=[match_pb2.Seat(user_id=me.user_id, display_name=me.name)],
                options=pack(yatzy_pb2.Options(card=yatzy_pb2.CLASSIC)),
            ),
            metadata=cluster_stack.platform_metadata(),
            timeout=10,
        )
        match_id = snap.match_id

        async def act(action: yatzy_pb2.Action) -> match_pb2.Snapshot:
            request = match_pb2.ActRequest(
                match_id=match_id, expected_version=snap.version, action=pack(action)
            )
            return await stub.Act(request, metadata=auth, timeout=10)

        for _ in range(13):
            snap = await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
            keep = keep_most_common(list(unpack(snap.view, yatzy_pb2.View).dice))
            if len(keep) < 5:
                snap = await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=keep)))
            best = max(unpack(snap.view, yatzy_pb2.View).preview, key=lambda p: p.points)
            snap = await act(yatzy_pb2.Action(score=yatzy_pb2.Score(box=best.box)))
        assert snap.status == match_pb2.FINISHED
        assert list(snap.result.ranks) == [1]
        events = [e async for e in stub.Watch(match_pb2.WatchRequest(match_id=match_id), metadata=auth)]
        assert [e.id for e in events] == list(range(1, snap.last_event_id + 1))
    assert_match_in_one_slot(client, cluster, match_id)


async def test_solo_yatzy_over_http_on_a_cluster(
    cluster_stack: Stack, cluster: RedisCluster, client: ClusterClient
) -> None:
    cluster_stack.service("yatzy")
    async with httpx.AsyncClient(base_url=cluster_stack.gateway(), timeout=15) as http:
        assert (await http.get("/healthz")).status_code == 200
        ana: Player = await register(http, "ana")
        table = await ana.create_table("yatzy", 1, {"card": "SCANDINAVIAN"})
        snap: dict[str, Any] = await ana.start(table["id"])
        while snap["status"] == "ACTIVE":
            snap = await ana.act(table["id"], snap["version"], {"roll": {}})
            keep = keep_most_common(snap["view"]["dice"])
            if len(keep) < 5:
                snap = await ana.act(table["id"], snap["version"], {"roll": {"keep": keep}})
            best = max(snap["view"]["preview"], key=lambda p: p["points"])
            snap = await ana.act(table["id"], snap["version"], {"score": {"box": best["box"]}})
        assert snap["status"] == "FINISHED" and snap["result"]["ranks"] == [1]
        assert all(box["filled"] for box in snap["view"]["cards"][0]["boxes"])
        assert (await ana.view(table["id"]))["status"] == "FINISHED"
        # The WebSocket feed (XREAD on the match's shard, a pub/sub channel
        # for notices) replays the finished match and ends.
        ws_url = cluster_stack.gateway().replace("http", "ws") + f"/v1/tables/{table['id']}/events"
        async with websockets.connect(ws_url) as ws:
            await ws.send(json.dumps({"token": ana.token, "after_event_id": 0}))
            received = []
            while not (message := json.loads(await asyncio.wait_for(ws.recv(), 10))).get("end"):
                received.append(message["id"])
        assert received == list(range(1, snap["last_event_id"] + 1))
    assert_match_in_one_slot(client, cluster, table["id"])
