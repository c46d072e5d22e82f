"""The platform against a real local 3-master Redis Cluster (REDIS_CLUSTER=1,
tools/redis_cluster.py): the game services and the gateway as subprocesses,
a full game over gRPC (the platform face, followed with FollowTable and the
game service's Watch) and one over HTTP with its WebSocket feed. While a
match is followed, the feed hubs hold a sharded pub/sub subscription on the
node that owns the match's slot, and nowhere else; every key of a match and
its table is in that one slot (the match's group tag, keys.py)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from redis.cluster import ClusterNode
from redis.cluster import RedisCluster as ClusterClient
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.core import keys
from tests.integration.grpc_client import bearer, feed_events, feed_snapshots, follow_table, pack, unpack
from tests.integration.http_client import ACTIVE, FINISHED, Player, register
from tests.integration.social_client import SocialFeed, lobby_feed, next_chat
from tests.integration.test_matchmaking import follow, guest, queue
from tests.integration.waiting import until
from tools.redis_cluster import RedisCluster
from tools.stack import Stack

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def cluster_stack(cluster: RedisCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("cluster-stack"), redis_url=cluster.url, cluster=True) as stack:
        yield stack


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


def owner(client: ClusterClient, match_id: str) -> ClusterNode:
    node = client.get_node_from_key(keys.match(match_id))
    assert node is not None
    return node


def subscribers(client: ClusterClient, match_id: str) -> dict[int, tuple[int, int]]:
    """Per node (by port): subscribers of the match's live channel, sharded
    (SSUBSCRIBE) and classic (SUBSCRIBE)."""
    channel = keys.live(match_id)
    counts = {}
    for node in client.get_nodes():
        sharded = client.execute_command("PUBSUB SHARDNUMSUB", channel, target_nodes=node)
        classic = client.execute_command("PUBSUB NUMSUB", channel, target_nodes=node)
        counts[int(node.port)] = (_count(sharded), _count(classic))
    return counts


def _count(reply: Any) -> int:
    """PUBSUB *NUMSUB's reply for one channel, however redis-py shaped it."""
    if isinstance(reply, dict):
        return sum(int(v) for v in reply.values())
    if reply and isinstance(reply[0], list | tuple):
        return sum(int(pair[1]) for pair in reply)
    return int(reply[1]) if reply else 0


async def assert_followed_on_its_shard(client: ClusterClient, match_id: str, hubs: int) -> None:
    """``hubs`` processes' feed hubs (each one subscription however many
    feeds it serves) subscribe to the match's channel with sharded pub/sub on
    the node owning its slot; no node has a subscriber elsewhere or a classic
    one."""
    port = int(owner(client, match_id).port)

    async def subscribed() -> bool:
        return (await asyncio.to_thread(subscribers, client, match_id))[port][0] >= hubs

    await until(subscribed, timeout=10)
    counts = await asyncio.to_thread(subscribers, client, match_id)
    assert counts[port] == (hubs, 0), counts
    assert all(count == (0, 0) for p, count in counts.items() if p != port), counts


def assert_match_in_one_slot(client: ClusterClient, cluster: RedisCluster, match_id: str) -> None:
    tagged = [keys.table(match_id), keys.match(match_id), keys.history(match_id), keys.events(match_id)]
    group = keys.group(match_id)
    # The keys the commit script files a deadline or a result in, with the match.
    shared = [keys.clocks("yatzy", group), keys.active("yatzy", group), keys.results(group)]
    slots = {client.keyslot(key) for key in [*tagged, keys.live(match_id), *shared]}
    assert len(slots) == 1, slots
    assert len(client.get_nodes()) == len(cluster.ports) == 3
    # The match's keys really are stored, on the one node that owns that slot.
    holders: dict[int, list[str]] = {}
    others: list[str] = []
    for node in client.get_nodes():
        found = sorted(k.decode() for k in client.execute_command("KEYS", f"*{match_id}*", target_nodes=node))
        mine = [k for k in found if k in tagged]
        if mine:
            holders[int(node.port)] = mine
        others += [k for k in found if k not in tagged]
    assert holders == {int(owner(client, match_id).port): sorted(tagged)}, holders
    assert [client.type(key) for key in tagged] == [b"hash", b"hash", b"hash", b"stream"]
    # The table and its match are each their own record; their history's head is apart.
    assert (
        set(client.hkeys(keys.table(match_id)))
        == set(client.hkeys(keys.match(match_id)))
        == {b"v", b"w", b"doc"}
    )
    assert {b"e"} <= set(client.hkeys(keys.history(match_id)))
    # Anything else naming the match is not the match's: a player's own keys
    # (presence of their feeds, under the player's hash tag) and the results
    # pipeline's markers (recorded once into ratings and histories), which
    # keys.py keeps independent on purpose.
    assert all(k.startswith(("{u:", keys.rated(""), keys.rating_plan(""))) for k in others), others


async def test_a_yatzy_game_over_grpc_on_a_cluster(
    cluster_stack: Stack, cluster: RedisCluster, client: ClusterClient
) -> None:
    async with grpc.aio.insecure_channel(cluster_stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        session = (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name="solo"))).session
        auth = bearer(session.access_token)
        table = (
            await api.CreateTable(
                platform_pb2.CreateTableRequest(
                    game="yatzy", seats=1, options=pack(yatzy_pb2.Options(card=yatzy_pb2.CLASSIC))
                ),
                metadata=auth,
                timeout=10,
            )
        ).table
        snap = (
            await api.StartTable(platform_pb2.StartTableRequest(table_id=table.id), metadata=auth, timeout=10)
        ).match
        # Followed through the gateway's hub and through the game service's.
        followed: list[platform_pb2.FollowTableResponse] = []
        watched: list[match_pb2.WatchResponse] = []

        async def follow() -> None:
            followed.extend([item async for item in follow_table(api, session.access_token, table.id)])

        async def watch() -> None:
            async with grpc.aio.insecure_channel(cluster_stack.service("yatzy")) as service:
                stub = match_pb2_grpc.MatchServiceStub(service)
                request = match_pb2.WatchRequest(match_id=table.id)
                watched.extend([item async for item in stub.Watch(request, metadata=auth)])

        feeds = [asyncio.create_task(follow()), asyncio.create_task(watch())]
        await assert_followed_on_its_shard(client, table.id, hubs=2)

        async def act(action: yatzy_pb2.Action) -> match_pb2.Snapshot:
            request = platform_pb2.ActRequest(
                table_id=table.id, expected_version=snap.version, action=pack(action)
            )
            return (await api.Act(request, metadata=auth, timeout=10)).match

        for _ in range(13):
            snap = await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
            keep = keep_most_common(list(unpack(snap.view, yatzy_pb2.View).dice))
            if len(keep) < 5:
                snap = await act(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=keep)))
            best = max(unpack(snap.view, yatzy_pb2.View).preview, key=lambda p: p.points)
            snap = await act(yatzy_pb2.Action(score=yatzy_pb2.Score(box=best.box)))
        assert snap.status == match_pb2.MATCH_STATUS_FINISHED
        assert list(snap.result.ranks) == [1] and snap.result.reason == match_pb2.END_REASON_COMPLETED
        view = unpack(snap.view, yatzy_pb2.View)
        assert list(snap.result.scores) == [view.cards[0].total] and all(
            b.filled for b in view.cards[0].boxes
        )
        # Both feeds carried the whole game live and ended by themselves.
        await asyncio.wait_for(asyncio.gather(*feeds), 15)
        assert [e.id for e in feed_events(followed)] == list(range(1, snap.last_event_id + 1))
        assert feed_snapshots(followed)[-1].status == match_pb2.MATCH_STATUS_FINISHED
        watched_ids = [item.event.id for item in watched if item.HasField("event")]
        # The game service's Watch: the same history without the table's
        # changes (the lobby is the gateway's).
        assert watched_ids == [e.id for e in feed_events(followed) if e.WhichOneof("body") != "table"]
        assert watched_ids[-1] == snap.last_event_id
        assert [item.event for item in watched if item.HasField("event")][-1].final
        assert watched[-1].snapshot.status == match_pb2.MATCH_STATUS_FINISHED
    assert_match_in_one_slot(client, cluster, table.id)


async def test_a_yatzy_game_over_http_and_its_websocket_feed_on_a_cluster(
    cluster_stack: Stack, cluster: RedisCluster, client: ClusterClient
) -> None:
    base = cluster_stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        assert (await http.get("/healthz")).status_code == 200
        ana: Player = await register(http, "ana")
        table = await ana.create_table("yatzy", 1, {"card": "SCANDINAVIAN"})
        async with ana.feed(base, table["id"]) as feed:
            await feed.until(lambda item: "table" in item)
            snap: dict[str, Any] = await ana.start(table["id"])
            await feed.until(lambda item: "snapshot" in item)
            await assert_followed_on_its_shard(client, table["id"], hubs=1)
            while snap["status"] == ACTIVE:
                snap = await ana.act(table["id"], snap["version"], {"roll": {}})
                keep = keep_most_common(snap["view"]["dice"])
                if len(keep) < 5:
                    snap = await ana.act(table["id"], snap["version"], {"roll": {"keep": keep}})
                best = max(snap["view"]["preview"], key=lambda p: p["points"])
                snap = await ana.act(table["id"], snap["version"], {"score": {"box": best["box"]}})
            assert snap["status"] == FINISHED and snap["result"]["ranks"] == [1]
            assert all(box["filled"] for box in snap["view"]["cards"][0]["boxes"])
            # The feed (the stream's history, then the live channel on the
            # match's shard) carried every event and ends with the match.
            await feed.until(lambda item: "end" in item, timeout=15)
            await feed.socket.wait_closed()
        assert feed.close_code == 1000
        ids = [item["event"]["id"] for item in feed.items if "event" in item]
        assert ids == list(range(1, snap["last_event_id"] + 1))
        states = [item["snapshot"] for item in feed.items if "snapshot" in item]
        assert states[-1]["status"] == FINISHED and states[-1]["result"] == snap["result"]
        assert (await ana.view(table["id"]))["status"] == FINISHED

        # The result, filed by the match's last write on its shard, reaches
        # the player's history through the results consumer.
        async def recorded() -> bool:
            history = await ana.call("GET", f"/v1/users/{ana.user_id}/matches")
            return [m["match_id"] for m in history["matches"]] == [table["id"]]

        await until(recorded, timeout=15)
    assert_match_in_one_slot(client, cluster, table["id"])


async def test_friends_and_chat_on_a_cluster(cluster_stack: Stack, client: ClusterClient) -> None:
    """The social feed's script and live channel live in the user's slot:
    its sharded subscription is on that slot's node only; private messages
    and table chat reach their feeds."""
    base = cluster_stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        ana, bia = await register(http, "ana"), await register(http, "bia")
        await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
        async with SocialFeed(base, bia.token) as feed:
            channel = keys.social_live(bia.user_id)
            home = client.get_node_from_key(channel)
            assert home is not None
            for node in client.get_nodes():
                sharded = client.execute_command("PUBSUB SHARDNUMSUB", channel, target_nodes=node)
                assert _count(sharded) == (1 if node.port == home.port else 0), node.port
            said = await ana.call("POST", f"/v1/social/messages/{bia.user_id}", {"text": "<i>oi</i>"})
            assert (await feed.until(lambda e: "message" in e))["message"] == said
        table = await ana.create_table("yatzy", 2)
        await bia.join(table["invite_code"])
        bia_feed = await lobby_feed(bia, base, table["id"])
        try:
            chat = await ana.call("POST", f"/v1/tables/{table['id']}/chat", {"text": "boa sorte"})
            assert (await next_chat(bia_feed))[0] == chat
        finally:
            await bia_feed.__aexit__()


async def test_matchmaking_on_a_cluster_seats_a_duel_and_tells_both_followers(cluster_stack: Stack) -> None:
    """The take runs in its queue's slot; the notice that the ticket closed
    crosses nodes (classic pub/sub) to each follower's subscription."""
    async with httpx.AsyncClient(base_url=cluster_stack.gateway(), timeout=30) as http:
        ana, bia = await guest(http, "ana"), await guest(http, "bia")
        made = [await queue(p, "bozo", {"mode": "DUEL"}) for p in (ana, bia)]
        finals = await asyncio.gather(*(follow(p, t["id"]) for p, t in zip((ana, bia), made, strict=True)))
        matched = [f[-1]["matched"] for f in finals]
        assert matched[0]["table_id"] == matched[1]["table_id"]
        assert sorted(m["seat"] for m in matched) == [0, 1]
        table = await ana.table(matched[0]["table_id"])
        assert [p["user_id"] for p in table["players"]] == [
            (ana if matched[0]["seat"] == s else bia).user_id for s in (0, 1)
        ]
