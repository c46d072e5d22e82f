"""Feeds that last a whole match, over two gateway replicas: held idle past
every timeout on the way, they still carry the next event; the real 120 s
inactivity notice reaches every seat's feed (and one resumed after missing
it); a draining replica sends its feeds elsewhere without a gap or a
duplicate; one user cannot hold more than MAX_FEEDS_PER_USER feeds."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from typing import Any

import grpc
import httpx
import pytest
import websockets
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.core.errors import error_reason
from tests.integration.grpc_client import bearer
from tests.integration.http_client import Feed, Player, notice, register, seated_table, table_change
from tests.integration.waiting import until
from tools.stack import Stack

# The longest server-side timeout on a feed's way: the gRPC keepalive (a ping
# after 30 s idle, 10 s for its answer). The others are shorter: the
# WebSocket ping every FEED_PING_SECONDS (20 s), the feed hub's health check
# of its Redis connection (15 s), a Redis command's timeout (5 s); no proxy
# stands in between here, and the hub's pub/sub reads have no timeout.
LONGEST_TIMEOUT_SECONDS = 40
IDLE_SECONDS = 3 * LONGEST_TIMEOUT_SECONDS + 5  # also past the 120 s inactivity deadline


def items_since(feed: Feed, start: int) -> list[dict[str, Any]]:
    return feed.items[start:]


async def drain_items(feed: Feed) -> None:
    """Read whatever the feed has right now (short waits)."""
    while True:
        try:
            await feed.next(timeout=0.5)
        except TimeoutError:
            return


async def grpc_follow(
    address: str, token: str, table_id: str, after: int, into: list[Any]
) -> grpc.aio.AioRpcError | None:
    """Follow a table over the platform's gRPC face until the stream ends;
    the error it ended with, if any."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = platform_pb2_grpc.PlatformServiceStub(channel)
        try:
            async for item in stub.FollowTable(
                platform_pb2.FollowTableRequest(table_id=table_id, after_event_id=after),
                metadata=bearer(token),
            ):
                into.append(item)
        except grpc.aio.AioRpcError as error:
            return error
    return None


async def test_idle_feeds_outlive_every_timeout_and_carry_the_inactivity_notice(stack: Stack) -> None:
    first, second = stack.gateway(0), stack.gateway(1)
    async with httpx.AsyncClient(base_url=first, timeout=15) as http:
        ana, bia, eve, leo = [await register(http, name) for name in ("ana", "bia", "eve", "leo")]
        table_id, snap = await seated_table([ana, bia], "yatzy")
        lobby = await leo.create_table("yatzy", 2)
        grpc_items: list[Any] = []
        follower = asyncio.create_task(
            grpc_follow(stack.platform_grpc(1), bia.token, table_id, 0, grpc_items)
        )
        # A feed that will miss the notice: read up to now, then closed.
        async with bia.feed(second, table_id) as early:
            await early.until(lambda item: "snapshot" in item)
        resume_from = early.last_event_id
        async with (
            ana.feed(first, table_id) as ana_feed,
            bia.feed(second, table_id) as bia_feed,
            eve.feed(first, table_id) as spectator,
            leo.feed(second, lobby["id"]) as lobby_feed,
        ):
            for feed in (ana_feed, bia_feed, spectator):
                await feed.until(lambda item: "snapshot" in item)
            await lobby_feed.until(lambda item: "table" in item)
            marks = {id(f): len(f.items) for f in (ana_feed, bia_feed, spectator, lobby_feed)}
            # Nobody moves: seat 0 runs out of time at 120 s, and the clocks
            # tell the table; the feeds stay quiet otherwise.
            await asyncio.sleep(IDLE_SECONDS)
            for feed in (ana_feed, bia_feed, spectator):
                await drain_items(feed)
                told = [n for item in items_since(feed, marks[id(feed)]) if (n := notice(item))]
                assert told == [{"kind": "NOTICE_KIND_INACTIVE", "seat": 0, "since": told[0]["since"]}], (
                    feed.items
                )
                assert feed.close_code is None
            await drain_items(lobby_feed)
            assert lobby_feed.items[marks[id(lobby_feed)] :] == [] and lobby_feed.close_code is None
            # After all that idleness, the next event reaches every feed.
            await ana.act(table_id, snap["version"], {"roll": {}})
            for feed in (ana_feed, bia_feed, spectator):
                await feed.until(lambda item: "snapshot" in item)
                assert any(item.get("event", {}).get("event", {}).get("rolled") for item in feed.items)
            await eve.join(lobby["invite_code"])
            joined = await lobby_feed.until(lambda item: table_change(item) is not None)
            assert table_change(joined[-1])["kind"] == "TABLE_CHANGE_KIND_JOINED"  # type: ignore[index]
        # The gRPC feed held through the same idleness and got the same.
        await asyncio.sleep(0.5)
        follower.cancel()
        told = [(n.kind, n.seat) for i in grpc_items if i.HasField("event") and (n := i.event.notice).kind]
        assert told.count((match_pb2.NOTICE_KIND_INACTIVE, 0)) == 1
        # ana's feed closed above: her last one at the table, so the table was told.
        assert (match_pb2.NOTICE_KIND_DISCONNECTED, 0) in told
        assert any(i.HasField("snapshot") and i.snapshot.version == snap["version"] + 1 for i in grpc_items)
        # bia's last feed (the gRPC one) is gone too: the table is told (a
        # spectator's feed from before the notice shows when).
        async with eve.feed(first, table_id, after_event_id=resume_from) as watching:
            await watching.until(lambda item: (notice(item) or {}).get("seat") == 1, timeout=30)
            assert notice(watching.items[-1])["kind"] == "NOTICE_KIND_DISCONNECTED"  # type: ignore[index]
        # A feed resumed from before the notice receives it, and the table
        # hears bia came back.
        async with bia.feed(first, table_id, after_event_id=resume_from) as resumed:
            await resumed.until(lambda item: "snapshot" in item)
            seen = [(n["kind"], n["seat"]) for item in resumed.items if (n := notice(item))]
            assert seen.count(("NOTICE_KIND_INACTIVE", 0)) == 1
            assert ("NOTICE_KIND_DISCONNECTED", 1) in seen and seen[-1] == ("NOTICE_KIND_RECONNECTED", 1)


async def test_a_draining_replica_sends_its_feeds_elsewhere_without_gap_or_duplicate(stack: Stack) -> None:
    doomed = stack.gateway(2)
    async with httpx.AsyncClient(base_url=stack.gateway(0), timeout=15) as http:
        ana = await register(http, "ana")
        table_id, snap = await seated_table([ana], "yatzy")
        grpc_items: list[Any] = []
        follower = asyncio.create_task(
            grpc_follow(stack.platform_grpc(2), ana.token, table_id, 0, grpc_items)
        )
        async with ana.feed(doomed, table_id) as feed:
            await feed.until(lambda item: "snapshot" in item)
            snap = await ana.act(table_id, snap["version"], {"roll": {}})
            await feed.until(
                lambda item: "snapshot" in item and item["snapshot"]["version"] == snap["version"]
            )
            stack.processes["gateway-2"].send_signal(signal.SIGTERM)
            # Both faces' health fail at once, for load balancers to stop sending.
            async with grpc.aio.insecure_channel(stack.platform_grpc(2)) as channel:
                health = health_pb2_grpc.HealthStub(channel)

                async def not_serving() -> bool:
                    reply = await health.Check(health_pb2.HealthCheckRequest())
                    return bool(reply.status == health_pb2.HealthCheckResponse.NOT_SERVING)

                await until(not_serving, timeout=5)
            # Moves go on meanwhile, through the healthy replica.
            snap = await ana.act(table_id, snap["version"], {"roll": {"keep": [0]}})
            with pytest.raises(websockets.ConnectionClosed):
                while True:
                    await feed.next(timeout=10)
            assert feed.close_code == 1012
            assert feed.socket.close_reason == "draining"
        error = await asyncio.wait_for(follower, 10)
        assert error is not None and error.code() == grpc.StatusCode.UNAVAILABLE
        assert error_reason(error) == "draining"
        snap = await ana.act(table_id, snap["version"], {"score": {"box": "CHANCE"}})
        # Resume elsewhere from the last event id received.
        async with ana.feed(stack.gateway(0), table_id, after_event_id=feed.last_event_id) as resumed:
            while resumed.last_event_id < snap["last_event_id"]:
                await resumed.next()
        ids = [item["event"]["id"] for item in [*feed.items, *resumed.items] if "event" in item]
        assert ids == list(range(1, snap["last_event_id"] + 1))
        grpc_ids = [i.event.id for i in grpc_items if i.HasField("event")]
        assert grpc_ids == ids[: len(grpc_ids)] and grpc_ids


async def test_one_user_cannot_use_up_the_feeds(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(0), timeout=15) as http:
        ana = await register(http, "ana")
        table_id, _ = await seated_table([ana], "yatzy")
        cap = 10  # MAX_FEEDS_PER_USER's default
        feeds = [ana.feed(stack.gateway(i % 2), table_id) for i in range(cap)]
        for feed in feeds:
            await feed.__aenter__()
            await feed.until(lambda item: "snapshot" in item)
        try:
            async with ana.feed(stack.gateway(1), table_id) as extra:
                refusal = await extra.next()
                assert refusal["error"]["code"] == "too_many_feeds"
                await extra.socket.wait_closed()
                assert extra.close_code == 4429
            # Another user is not affected.
            bia = await register(http, "bia")
            async with bia.feed(stack.gateway(1), table_id) as other:
                await other.until(lambda item: "snapshot" in item)
            # Closing one frees a place.
            await feeds.pop().__aexit__(None, None, None)
            await asyncio.sleep(0.5)
            async with ana.feed(stack.gateway(1), table_id) as again:
                await again.until(lambda item: "snapshot" in item)
        finally:
            for feed in feeds:
                await feed.__aexit__(None, None, None)


async def test_a_feed_answers_pings_and_refuses_a_bad_start(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(0), timeout=15) as http:
        ana: Player = await register(http, "ana")
        table_id, snap = await seated_table([ana], "yatzy")
        async with ana.feed(stack.gateway(0), table_id) as feed:
            await feed.until(lambda item: "snapshot" in item)
            await feed.socket.send(json.dumps({"ping": "are you there"}))
            assert await feed.next() == {"pong": "are you there"}
        async with ana.feed(stack.gateway(0), table_id, after_event_id=snap["last_event_id"] + 5) as bad:
            assert (await bad.next())["error"]["code"] == "invalid_event_id"
            await bad.socket.wait_closed()
            assert bad.close_code == 4422
        async with ana.feed(stack.gateway(0), "no-such-table") as missing:
            assert (await missing.next())["error"]["code"] == "table_not_found"
            await missing.socket.wait_closed()
            assert missing.close_code == 4404


async def test_every_feed_has_one_hello_and_one_keepalive(stack: Stack) -> None:
    """The table's, a ticket's, the social and a tournament's feed: a first
    frame of 100,000 nested JSON arrays is a bad hello (4422) on each, not a
    dropped connection; a good hello gets the feed, which answers pings."""
    base = stack.gateway(0).replace("http", "ws", 1)
    async with httpx.AsyncClient(base_url=stack.gateway(0), timeout=15) as http:
        ana: Player = await register(http, "nested")
        table_id, _ = await seated_table([ana], "yatzy")
        ticket = await ana.call("POST", "/v1/matchmaking/tickets", {"game": "yatzy"})
        feeds = {
            "table": (f"/v1/tables/{table_id}/events", {"after_event_id": 0}),
            "ticket": (f"/v1/matchmaking/tickets/{ticket['id']}/events", {}),
            "social": ("/v1/social/events", {"after_id": ""}),
            "tournament": ("/v1/tournaments/no-such-tournament/events", {}),
        }
        nested = "[" * 100_000 + "]" * 100_000
        for name, (path, _) in feeds.items():
            async with websockets.connect(base + path, max_size=None) as socket:
                await socket.send(nested)
                refusal = json.loads(await asyncio.wait_for(socket.recv(), 10))
                await asyncio.wait_for(socket.wait_closed(), 10)
                assert (socket.close_code, refusal["error"]["code"]) == (4422, "invalid_request"), name
        for name, (path, hello) in feeds.items():
            async with websockets.connect(base + path) as socket:
                await socket.send(json.dumps({"token": ana.token, **hello}))
                await socket.send(json.dumps({"ping": name}))
                said: list[Any] = []
                with contextlib.suppress(websockets.ConnectionClosed):
                    while {"pong": name} not in said or name == "tournament":
                        said.append(json.loads(await asyncio.wait_for(socket.recv(), 10)))
                if name == "tournament":  # no such tournament: refused, as every feed refuses
                    assert said[-1]["error"]["code"] == "tournament_not_found", said
                    assert socket.close_code == 4404
                else:
                    assert {"pong": name} in said, (name, said)
        await ana.call("DELETE", f"/v1/matchmaking/tickets/{ticket['id']}")
