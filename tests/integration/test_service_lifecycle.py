"""A game service drains on SIGTERM: health turns NOT_SERVING at once so load
balancers stop sending, then the process exits cleanly; any replica, including
a new one, serves the same matches since nothing lives in process memory."""

from __future__ import annotations

import asyncio
import secrets
import signal
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rodada.common.v1 import match_pb2, match_pb2_grpc
from rodada.yatzy.v1 import yatzy_pb2

from services.kit.tokens import Identity
from tests.integration.grpc_client import bearer, pack
from tools.stack import Stack


async def test_sigterm_drains_and_a_new_replica_serves_the_same_match(stack: Stack) -> None:
    me = Identity(f"u_{secrets.token_hex(6)}", "solo", "user")
    address = stack.service("yatzy")
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        snap = await stub.CreateMatch(
            match_pb2.CreateMatchRequest(seats=[match_pb2.Seat(user_id=me.user_id)]),
            metadata=stack.platform_metadata(),
        )
        roll = pack(yatzy_pb2.Action(roll=yatzy_pb2.Roll()))
        snap = await stub.Act(
            match_pb2.ActRequest(match_id=snap.match_id, expected_version=snap.version, action=roll),
            metadata=bearer(stack.token(me)),
        )
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
        assert await asyncio.to_thread(process.wait, 15) == 0
    assert "draining" in stack.log_path("yatzy").read_text()

    async with grpc.aio.insecure_channel(stack.service("yatzy")) as channel:  # a new replica
        again = await match_pb2_grpc.MatchServiceStub(channel).GetView(
            match_pb2.GetViewRequest(match_id=snap.match_id), metadata=bearer(stack.token(me))
        )
        assert again.version == snap.version and again.view == snap.view
