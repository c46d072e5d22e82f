"""Deadlines: fired by whichever gateway replica gets there first, exactly once.

After every write a game service puts ``<match>:<version>`` in
``clocks:<game>``, scored by when the seat to act runs out of time (and
removes the previous version's entry). Every replica polls the due entries;
``ZREM`` answers 1 to exactly one of them, which then acts. Every action names
the version the deadline was set for, so a move made in time always wins: the
game refuses the late action as stale and nothing happens.

What is done is the game's policy (``gateway.games.Policy``): tell the table
the seat may be claimed against or removed, have the CPU play the turn, or
end an idle solo match.
"""

from __future__ import annotations

import asyncio
import logging
import time

import grpc
import orjson
from rodada.common.v1 import match_pb2

from gateway import metrics
from gateway.games import GameClient
from gateway.platform import RPC_TIMEOUT_SECONDS, Platform
from services.kit.store import clocks_key
from services.kit.tasks import cancel_requested
from services.kit.tokens import Identity

log = logging.getLogger("rodada.gateway.clocks")
BATCH = 100


def notices_channel(match_id: str) -> str:
    return f"notices:{match_id}"


async def run_clocks(platform: Platform, cycle_seconds: float) -> None:
    """Poll every game's due deadlines forever."""
    while not cancel_requested():
        try:
            await fire_due(platform)
        except Exception:  # a Redis or service hiccup must not stop the clocks
            log.exception("clock cycle failed")
        await asyncio.sleep(cycle_seconds)


async def fire_due(platform: Platform, now: float | None = None) -> int:
    """Fire every deadline due by ``now``; returns how many this replica won."""
    now = time.time() if now is None else now
    won = 0
    for game in platform.games.values():
        key = clocks_key(game.name)
        due: list[tuple[str, float]] = await platform.redis.zrangebyscore(  # type: ignore[assignment]
            key, "-inf", now, start=0, num=BATCH, withscores=True
        )
        for member, deadline in due:
            if not await platform.redis.zrem(key, member):
                continue  # another replica took it
            won += 1
            metrics.TIMER_LAG.observe(max(0.0, time.time() - deadline))
            match_id, _, version = str(member).rpartition(":")
            action = await fire(platform, game, match_id, int(version))
            metrics.TIMERS_FIRED.labels(game.name, action).inc()
    return won


async def fire(platform: Platform, game: GameClient, match_id: str, version: int) -> str:
    """Act on one deadline; returns what was done, for the metrics."""
    snap = await game.stub.GetView(
        match_pb2.GetViewRequest(match_id=match_id),
        metadata=platform.platform_metadata(),
        timeout=RPC_TIMEOUT_SECONDS,
    )
    if snap.status != match_pb2.ACTIVE or snap.version != version or not snap.to_act:
        return "moved"
    seat = snap.to_act[0]
    player = snap.seats[seat]
    # The deadline acts for the idle seat itself: the game checks the time.
    as_player = (
        (
            "authorization",
            "Bearer " + platform.signer.issue(Identity(player.user_id, player.display_name, "user"), 60),
        ),
    )
    try:
        if game.policy.solo_expires and len(snap.seats) == 1:
            await game.stub.Leave(
                match_pb2.LeaveRequest(match_id=match_id, expected_version=version),
                metadata=as_player,
                timeout=RPC_TIMEOUT_SECONDS,
            )
            return "expired"
        if game.policy.on_deadline == "cpu_turn":
            request = match_pb2.ActRequest(
                match_id=match_id, expected_version=version, action=game.pack("Action", {"timeout": {}})
            )
            await game.stub.Act(request, metadata=as_player, timeout=RPC_TIMEOUT_SECONDS)
            return "cpu_turn"
    except grpc.aio.AioRpcError as error:
        if error.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
            return "moved"  # a move made in time won the race
        raise
    notice = {"notice": {"kind": "inactive", "seat": seat, "version": version, "since": snap.last_action_at}}
    await platform.redis.publish(notices_channel(match_id), orjson.dumps(notice))
    return "notified"
