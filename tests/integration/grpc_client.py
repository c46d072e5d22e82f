"""Helpers for talking gRPC as a mobile app does: to the gateway's platform face
(rodada.platform.v1.PlatformService) or to a game service directly."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def pack(message: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def unpack(packed: any_pb2.Any, message_cls: type[Message]) -> Any:
    message = message_cls()
    assert packed.Unpack(message), packed.type_url
    return message


def as_dict(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def event_kind(event: match_pb2.MatchEvent, event_cls: type[Message]) -> tuple[str, dict[str, Any]]:
    body = unpack(event.event, event_cls)
    kind = body.WhichOneof("event")
    return kind, as_dict(getattr(body, kind))


# -- refusals -------------------------------------------------------------------


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    """The google.rpc.ErrorInfo a refusal carries (reason, domain, metadata)."""
    status = rpc_status.from_call(error)
    for detail in status.details if status else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError(f"no ErrorInfo in {error!r}")


def refusal(error: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    """A failed call as (status code, ErrorInfo reason)."""
    return error.code(), error_info(error).reason


async def raw_unary(
    channel: grpc.aio.Channel, method: str, body: bytes, metadata: Sequence[tuple[str, str]] = ()
) -> grpc.aio.AioRpcError:
    """Send ``body`` as it is (no serializer) to the unary ``method``
    ("/package.Service/Method"); the error it fails with."""
    call = channel.unary_unary(method, request_serializer=_identity, response_deserializer=_identity)
    try:
        reply = await call(body, metadata=tuple(metadata), timeout=10)
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError(f"{method} accepted {body!r}: {reply!r}")


async def raw_stream(
    channel: grpc.aio.Channel, method: str, body: bytes, metadata: Sequence[tuple[str, str]] = ()
) -> grpc.aio.AioRpcError:
    """The same for a server-streaming ``method``."""
    call = channel.unary_stream(method, request_serializer=_identity, response_deserializer=_identity)
    try:
        async for item in call(body, metadata=tuple(metadata), timeout=10):
            raise AssertionError(f"{method} streamed {item!r} for {body!r}")
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError(f"{method} accepted {body!r}")


def _identity(data: bytes) -> bytes:
    return data


# -- the platform face (rodada.platform.v1.PlatformService) ----------------------


async def follow_table(
    api: platform_pb2_grpc.PlatformServiceStub, token: str, table_id: str, after_event_id: int = 0
) -> AsyncIterator[platform_pb2.FollowTableResponse]:
    """A table's feed over gRPC, until the stream ends (OK after the match's
    final event and snapshot)."""
    request = platform_pb2.FollowTableRequest(table_id=table_id, after_event_id=after_event_id)
    async for item in api.FollowTable(request, metadata=bearer(token)):
        yield item


def feed_events(items: Sequence[platform_pb2.FollowTableResponse]) -> list[match_pb2.MatchEvent]:
    return [item.event for item in items if item.WhichOneof("item") == "event"]


def feed_snapshots(items: Sequence[platform_pb2.FollowTableResponse]) -> list[match_pb2.Snapshot]:
    return [item.snapshot for item in items if item.WhichOneof("item") == "snapshot"]


def table_change(event: match_pb2.MatchEvent) -> platform_pb2.TableChange | None:
    """A table-change event's TableChange, or None for anything else."""
    if event.WhichOneof("body") != "table":
        return None
    change: platform_pb2.TableChange = unpack(event.table, platform_pb2.TableChange)
    return change
