"""The gateway's gRPC face: the API's three services on one server, behind
the kit's call guard (the game services' metrics, error model and treatment
of requests that do not decode). Each service's methods are registered from
its descriptor, with a request parser that also refuses what this server
does not know (services/core/strict.py), as the HTTP face's JSON parser does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health
from rodada.platform.v1 import competitions_pb2, moderation_pb2, platform_pb2, social_pb2

from gateway.api.competitions import CompetitionServicer
from gateway.api.face import OPEN, Servicer
from gateway.api.moderation import ModerationServicer
from gateway.api.platform import PlatformServicer
from gateway.api.social import SocialServicer
from gateway.platform import Platform
from services.core import strict
from services.core.guard import CallGuard
from services.core.server import start_grpc

# The API: each public service and its implementation, served on both faces.
SERVICES: list[tuple[ServiceDescriptor, type[Servicer]]] = [
    (platform_pb2.DESCRIPTOR.services_by_name["PlatformService"], PlatformServicer),
    (social_pb2.DESCRIPTOR.services_by_name["SocialService"], SocialServicer),
    (competitions_pb2.DESCRIPTOR.services_by_name["CompetitionService"], CompetitionServicer),
    (moderation_pb2.DESCRIPTOR.services_by_name["ModerationService"], ModerationServicer),
]


def servicers(platform: Platform) -> dict[str, Servicer]:
    """One servicer per service (by full name), shared by both faces."""
    return {service.full_name: implementation(platform) for service, implementation in SERVICES}


def _parser(descriptor: Any) -> Callable[[bytes], Message]:
    cls = message_factory.GetMessageClass(descriptor)

    def parse(data: bytes) -> Message:
        message = cls.FromString(data)
        try:
            strict.check(message)
        except strict.Invalid as exc:  # the guard answers INVALID_ARGUMENT `invalid_request`
            raise DecodeError(str(exc)) from None
        return message

    return parse


def _handlers(service: ServiceDescriptor, servicer: Servicer) -> grpc.GenericRpcHandler:
    handlers = {}
    for method in service.methods:
        serialize = message_factory.GetMessageClass(method.output_type).SerializeToString
        behaviour, parse = getattr(servicer, method.name), _parser(method.input_type)
        if method.server_streaming:  # the guard ends it if its caller is banned
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(behaviour, parse, serialize)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(behaviour, parse, serialize)
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


async def start(
    platform: Platform, implementations: dict[str, Servicer], address: str, share_port: bool = False
) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """Serve the face; the caller turns its health NOT_SERVING when the
    replica drains, and stops it (after draining the feeds). ``share_port``:
    one of the pod's WORKERS (services/core/workers.py)."""
    open_methods = {
        f"/{service.full_name}/{method.name}"
        for service, _ in SERVICES
        for method in service.methods
        if method.name in OPEN
    }
    guard = CallGuard(platform.sessions.verifier, "platform", open_methods=open_methods)

    def register(server: grpc.aio.Server) -> list[str]:
        for service, _ in SERVICES:
            server.add_generic_rpc_handlers((_handlers(service, implementations[service.full_name]),))
        return [service.full_name for service, _ in SERVICES]

    return await start_grpc(address, guard, register, share_port)
