"""A game service drains on SIGTERM: health turns NOT_SERVING at once so load
balancers stop sending while calls in flight are still answered, its feeds
end with UNAVAILABLE "draining" (to resume elsewhere), then the process
exits cleanly; any replica, including a new one, serves the same matches
since nothing lives in process memory, directly and through the gateway."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.core.errors import error_reason
from tests.integration.grpc_client import bearer, pack, unpack
from tests.integration.http_client import ApiRefused, register, seated_table
from tests.integration.waiting import until
from tools.stack import Stack

ROLL = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
KEEP_FIRST = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll(keep=[0])))


async def watch(
    stub: match_pb2_grpc.MatchServiceStub, match_id: str, token: str, after: int, into: list[Any]
) -> grpc.aio.AioRpcError | None:
    """Follow the match until the stream ends; the error it ended with, if any."""
    request = match_pb2.WatchRequest(match_id=match_id, after_event_id=after)
    try:
        async for item in stub.Watch(request, metadata=bearer(token)):
            into.append(item)
    except grpc.aio.AioRpcError as error:
        return error
    return None


async def act(
    stub: match_pb2_grpc.MatchServiceStub, token: str, snap: match_pb2.Snapshot, action: Any
) -> match_pb2.Snapshot:
    request = match_pb2.ActRequest(match_id=snap.match_id, expected_version=snap.version, action=action)
    return (await stub.Act(request, metadata=bearer(token))).snapshot


async def test_sigterm_drains_and_a_new_replica_serves_the_same_match(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        ana = await register(http, "ana")
        match_id, _ = await seated_table([ana], "yatzy")
        token = ana.token
        async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:
            stub = match_pb2_grpc.MatchServiceStub(channel)
            first = (
                await stub.GetView(match_pb2.GetViewRequest(match_id=match_id), metadata=bearer(token))
            ).snapshot
            snap = await act(stub, token, first, ROLL)
            watched: list[Any] = []
            watcher = asyncio.create_task(watch(stub, match_id, token, 0, watched))
            while not any(item.HasField("snapshot") for item in watched):
                await asyncio.sleep(0.02)
            process = stack.processes["yatzy"]
            process.send_signal(signal.SIGTERM)
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 5
            while True:  # the drain starts within moments of the signal
                status = (await health.Check(health_pb2.HealthCheckRequest())).status
                if status == health_pb2.HealthCheckResponse.NOT_SERVING:
                    break
                assert time.monotonic() < deadline, "health never turned NOT_SERVING"
                await asyncio.sleep(0.05)
            # Still answering while the load balancers take it out.
            snap = await act(stub, token, snap, KEEP_FIRST)
            # Its feeds end so that clients resume on another replica.
            ended = await asyncio.wait_for(watcher, 10)
            assert ended is not None and ended.code() == grpc.StatusCode.UNAVAILABLE
            assert error_reason(ended) == "draining"
            assert await asyncio.to_thread(process.wait, 15) == 0
        assert "draining" in stack.log_path("yatzy").read_text()
        seen = [item.event.id for item in watched if item.HasField("event")]

        async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:  # a new replica
            stub = match_pb2_grpc.MatchServiceStub(channel)
            again = (
                await stub.GetView(match_pb2.GetViewRequest(match_id=match_id), metadata=bearer(token))
            ).snapshot
            assert again == snap  # the same version, view, clock and all
            assert again.seat == 0 and again.status == match_pb2.MATCH_STATUS_ACTIVE

            # The gateway reaches the new replica as soon as its channel has
            # reconnected, and serves the same match.
            async def served() -> bool:
                try:
                    await ana.view(match_id)
                except ApiRefused as refused:
                    assert refused.status == 503, refused
                    return False
                return True

            await until(served, timeout=30, every=0.2)
            through_gateway = await ana.view(match_id)
            assert through_gateway["version"] == snap.version
            assert through_gateway["view"]["dice"] == list(unpack(snap.view, yatzy_pb2.View).dice)
            # It plays on there, and a feed resumed on the new replica has no
            # gap and no duplicate.
            preview = unpack(again.view, yatzy_pb2.View).preview
            after = await ana.act(
                match_id, again.version, {"score": {"box": yatzy_pb2.Box.Name(preview[0].box)}}
            )
            assert after["version"] == again.version + 1
            resumed: list[Any] = []
            follower = asyncio.create_task(watch(stub, match_id, token, max(seen, default=0), resumed))

            async def caught_up() -> bool:
                return any(i.snapshot.version == after["version"] for i in resumed)

            await until(caught_up, timeout=10)
            follower.cancel()
            # (The game service's Watch leaves the table's lobby events to the gateway.)
            ids = seen + [item.event.id for item in resumed if item.HasField("event")]
            assert ids == list(range(seen[0], after["last_event_id"] + 1))


async def test_a_start_the_game_never_answered_can_be_retried(stack: Stack) -> None:
    """The host's start times out while the game service is stalled (the
    match may or may not exist); starting again finishes it, and a start
    repeated after that is the same match, not an error."""
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=30) as http:
        ana, bia = await register(http, "ana"), await register(http, "bia")
        table = await ana.create_table("yatzy", 2)
        await bia.join(table["invite_code"])
        process = stack.processes["yatzy"]
        process.send_signal(signal.SIGSTOP)
        try:
            try:
                await ana.start(table["id"])
                raise AssertionError("a stalled game service answered")
            except ApiRefused as refused:
                assert refused.status in (503, 504), refused
        finally:
            process.send_signal(signal.SIGCONT)

        replies: list[dict[str, Any]] = []

        async def started() -> bool:
            try:
                replies.append(await ana.start(table["id"]))
            except ApiRefused as refused:
                assert refused.status in (503, 504), refused  # the channel reconnecting
                return False
            return True

        await until(started, timeout=30, every=0.2)
        (first,) = replies
        assert first["version"] == 1 and [s["user_id"] for s in first["seats"]] == [ana.user_id, bia.user_id]
        again = await ana.start(table["id"])
        assert again == first
        with_bia = await bia.view(table["id"])
        assert with_bia["version"] == 1 and with_bia["seat"] == 1
