"""What every gRPC server of the platform does alike — each game service and
the gateway's platform face: standard health; server reflection over v1 and
v1alpha, describing itself and its services; INVALID_ARGUMENT
(`invalid_request`) for a request whose bytes do not decode, on every
method; the same request metrics; Redis latency for every command."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import httpx
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from prometheus_client.parser import text_string_to_metric_families
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from gateway.api.grpc import SERVICES
from services.core.tokens import Identity
from tests.integration.grpc_client import bearer, raw_stream, raw_unary, refusal
from tools.stack import Stack

MATCH_SERVICE = match_pb2.DESCRIPTOR.services_by_name["MatchService"]
PLATFORM_SERVICE = platform_pb2.DESCRIPTOR.services_by_name["PlatformService"]
# The gateway's face: every public service on one server.
FACE = [service for service, _ in SERVICES]
DESCRIPTORS = {d.full_name: d for d in (MATCH_SERVICE, *FACE)}
REFLECTION = {
    "v1": "grpc.reflection.v1.ServerReflection",
    "v1alpha": "grpc.reflection.v1alpha.ServerReflection",
}
HEALTH = "grpc.health.v1.Health"
# Not a message of any type: a length-delimited field 1 that claims 5 bytes
# and has 2.
UNDECODABLE = b"\x0a\x05ab"


def servers(stack: Stack) -> dict[str, tuple[str, str]]:
    """Every gRPC server: name → (address, its API's full service name)."""
    found = {game: (stack.service(game), MATCH_SERVICE.full_name) for game in stack.games}
    for service in FACE:  # one server
        found[service.name] = (stack.platform_grpc(), service.full_name)
    return found


async def reflect(
    channel: grpc.aio.Channel, version: str, *requests: reflection_pb2.ServerReflectionRequest
) -> list[reflection_pb2.ServerReflectionResponse]:
    """Ask reflection ``version`` (v1 or v1alpha). Both versions' messages are
    the same fields under another package: v1alpha's classes encode v1's."""
    call = channel.stream_stream(
        f"/{REFLECTION[version]}/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )

    async def outgoing() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        for request in requests:
            yield request

    return [reply async for reply in call(outgoing(), timeout=10)]


def files(reply: reflection_pb2.ServerReflectionResponse) -> list[descriptor_pb2.FileDescriptorProto]:
    assert reply.WhichOneof("message_response") == "file_descriptor_response", reply
    return [
        descriptor_pb2.FileDescriptorProto.FromString(data)
        for data in reply.file_descriptor_response.file_descriptor_proto
    ]


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
async def test_every_server_serves_health_and_reflection(stack: Stack, version: str) -> None:
    every = servers(stack)
    for name, (address, service) in every.items():
        async with grpc.aio.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for checked in ("", service):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=checked), timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING, (name, checked)

            listed, described, itself = await reflect(
                channel,
                version,
                reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=service),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=REFLECTION[version]),
            )
            names = {s.name for s in listed.list_services_response.service}
            served = {s for a, s in every.values() if a == address}
            assert names == {*served, HEALTH, *REFLECTION.values()}, (name, names)
            api = files(described)[0]
            assert f"{api.package}.{api.service[0].name}" == service, name
            (reflection_file,) = files(itself)
            assert reflection_file.package == REFLECTION[version].rsplit(".", 1)[0], name
            assert [s.name for s in reflection_file.service] == ["ServerReflection"]


async def test_an_undecodable_request_is_invalid_argument_on_every_method(stack: Stack) -> None:
    """Every method of every server, with a token and without (the bytes are
    judged first), unary and streaming alike."""
    token = bearer(stack.token(Identity("u_garbage", "garbage", "user")))
    refused = {}
    for name, (address, service) in servers(stack).items():
        descriptor = DESCRIPTORS[service]
        async with grpc.aio.insecure_channel(address) as channel:
            for method in descriptor.methods:
                path = f"/{service}/{method.name}"
                send = raw_stream if method.server_streaming else raw_unary
                for metadata in (token, ()):
                    error = await send(channel, path, UNDECODABLE, metadata)
                    refused[(name, method.name, bool(metadata))] = refusal(error)
    assert len(refused) == 2 * (
        len(stack.games) * len(MATCH_SERVICE.methods) + sum(len(service.methods) for service in FACE)
    )
    wrong = {k: v for k, v in refused.items() if v != (grpc.StatusCode.INVALID_ARGUMENT, "invalid_request")}
    assert not wrong, wrong


def samples(url: str, name: str) -> list[dict[str, str]]:
    """The label sets of metric sample ``name`` in a /metrics page."""
    text = httpx.get(url, timeout=10).text
    return [
        {**sample.labels, "value": str(sample.value)}
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def count(found: list[dict[str, str]], **labels: str) -> float:
    return sum(float(s["value"]) for s in found if all(s.get(k) == v for k, v in labels.items()))


async def test_the_gateway_face_and_the_games_record_the_same_metrics(stack: Stack) -> None:
    """The gateway's face (service "platform") records requests by method and
    code and a latency histogram under the game services' names and labels,
    and the gateway measures its Redis commands beyond the tables' (an
    account, a token, a rate limit)."""
    gateway_metrics = stack.gateway_metrics_url()
    yatzy_metrics = stack.metrics_url("yatzy")
    before = count(samples(gateway_metrics, "rodada_grpc_requests_total"), service="platform", method="GetMe")
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        session = (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name="metrics"))).session
        await api.GetMe(platform_pb2.GetMeRequest(), metadata=bearer(session.access_token))
        await raw_unary(channel, f"/{PLATFORM_SERVICE.full_name}/GetMe", UNDECODABLE)
        table = (
            await api.CreateTable(
                platform_pb2.CreateTableRequest(game="yatzy", seats=1), metadata=bearer(session.access_token)
            )
        ).table
        await api.StartTable(
            platform_pb2.StartTableRequest(table_id=table.id), metadata=bearer(session.access_token)
        )

    requests = samples(gateway_metrics, "rodada_grpc_requests_total")
    assert count(requests, service="platform", method="GetMe", code="OK") >= 1
    assert count(requests, service="platform", method="GetMe") - before >= 2
    assert count(requests, service="platform", method="GetMe", code="INVALID_ARGUMENT") >= 1
    latency = samples(gateway_metrics, "rodada_grpc_request_seconds_count")
    assert count(latency, service="platform", method="StartTable") >= 1
    game_requests = samples(yatzy_metrics, "rodada_grpc_requests_total")
    assert count(game_requests, service="yatzy", method="CreateMatch", code="OK") >= 1
    # The same names and labels on both sides.
    for name in ("rodada_grpc_requests_total", "rodada_grpc_request_seconds_bucket"):
        gateway_labels = {frozenset(s) - {"value"} for s in samples(gateway_metrics, name)}
        game_labels = {frozenset(s) - {"value"} for s in samples(yatzy_metrics, name)}
        assert gateway_labels == game_labels, name

    redis = samples(gateway_metrics, "rodada_redis_seconds_count")
    ops = {s["op"] for s in redis if float(s["value"]) > 0}
    # Tables (hmget, evalsha), and what the table store never did: the
    # guest's refresh token (set), the feeds' and limits' bookkeeping.
    assert {"hmget", "evalsha", "set"} <= ops, ops
    game_redis = samples(yatzy_metrics, "rodada_redis_seconds_count")
    game_ops = {s["op"] for s in game_redis if float(s["value"]) > 0}
    assert {"hmget", "evalsha"} <= game_ops, game_ops
