"""Other players as a mobile app would be: stub-driven, gRPC only. Each
follows the table's feed and acts whenever a pushed snapshot says it is
its turn."""

from __future__ import annotations

from collections.abc import Callable

import grpc
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from tests.integration.grpc_client import bearer, follow_table, pack

ACTIVE = match_pb2.MATCH_STATUS_ACTIVE
Decide = Callable[[match_pb2.Snapshot], Message]


async def guest(api: platform_pb2_grpc.PlatformServiceStub, name: str) -> platform_pb2.Session:
    return (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name=name))).session


async def play(
    api: platform_pb2_grpc.PlatformServiceStub, token: str, table_id: str, decide: Decide
) -> list[platform_pb2.FollowTableResponse]:
    """Play the seat to the end; everything the feed delivered."""
    items: list[platform_pb2.FollowTableResponse] = []
    reached = 0  # the version our own last move brought the match to
    async for item in follow_table(api, token, table_id):
        items.append(item)
        if item.WhichOneof("item") != "snapshot":
            continue
        snap = item.snapshot
        if snap.status != ACTIVE or snap.version < reached or snap.seat not in snap.to_act:
            continue
        request = platform_pb2.ActRequest(
            table_id=table_id, expected_version=snap.version, action=pack(decide(snap))
        )
        try:
            reached = (await api.Act(request, metadata=bearer(token))).match.version
        except grpc.aio.AioRpcError as error:
            # Someone else moved first (e.g. switched assisted mode): the
            # feed brings the new version's snapshot.
            assert error.code() == grpc.StatusCode.ABORTED, error
    return items
