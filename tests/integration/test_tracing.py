"""Traces across the real platform: a gateway and a game service (Nim) as
processes over a real Redis, exporting over OTLP/gRPC to a receiver in this
test (opentelemetry-proto's TraceService). One action, however it comes in —
HTTP, the gateway's gRPC face, a WebSocket feed — is one trace: the
client's ``traceparent`` its parent, the gateway's spans, the game
service's, and Redis's commands, each linked to the span that made it."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import websockets
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2
from prometheus_client.parser import text_string_to_metric_families
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from tests.conftest import TEST_PACKAGES
from tests.integration.http_client import Player, guest, seated_table
from tools.stack import Stack

SERVER, CLIENT = trace_pb2.Span.SPAN_KIND_SERVER, trace_pb2.Span.SPAN_KIND_CLIENT
GATEWAY, NIM = "rodada-gateway", "rodada-nim"
# Each stack names itself in its resource, so a test counts only its own
# stack's exports: the module's traced stack keeps exporting (its background
# loops' spans) while another test runs.
STACK = "rodada.test.stack"


@dataclass(frozen=True)
class Received:
    service: str
    stack: str
    span: trace_pb2.Span

    @property
    def attributes(self) -> dict[str, Any]:
        return {
            a.key: getattr(a.value, a.value.WhichOneof("value") or "string_value")
            for a in self.span.attributes
        }

    @property
    def redis(self) -> bool:
        return self.attributes.get("db.system") == "redis" or self.attributes.get("db.system.name") == "redis"


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace receiver that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Received] = []
        self.exports: list[str] = []  # the stack each resource's batch came from

    async def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        for resource_spans in request.resource_spans:
            attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            service, stack = attributes["service.name"], attributes.get(STACK, "")
            self.exports.append(stack)
            for scope_spans in resource_spans.scope_spans:
                self.spans.extend(Received(service, stack, s) for s in scope_spans.spans)
        return trace_service_pb2.ExportTraceServiceResponse()

    def trace(self, trace_id: bytes) -> list[Received]:
        return [r for r in self.spans if r.span.trace_id == trace_id]

    async def wait_for(self, trace_id: bytes, done: Any, timeout: float = 20.0) -> list[Received]:
        """The trace's spans once ``done(spans)`` holds (spans come in batches)."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.trace(trace_id)
            if done(spans) or time.monotonic() > deadline:
                return spans
            await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    server = grpc.aio.server()
    found = Receiver()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(found, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield found, f"http://127.0.0.1:{port}"
    finally:
        await server.stop(None)


def _stack(root: Path, endpoint: str, name: str, **env: str) -> Stack:
    return Stack(
        root,
        packages=TEST_PACKAGES,
        games=["nim"],
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_RESOURCE_ATTRIBUTES": f"{STACK}={name}",
            **env,
        },
    )


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory, receiver: tuple[Receiver, str]) -> Iterator[Stack]:
    with _stack(tmp_path_factory.mktemp("traced"), receiver[1], "traced") as stack:
        stack.gateway()
        yield stack


def _traceparent() -> tuple[str, bytes, bytes]:
    """A client's W3C traceparent, and its trace and span ids."""
    trace_id, span_id = secrets.token_bytes(16), secrets.token_bytes(8)
    return f"00-{trace_id.hex()}-{span_id.hex()}-01", trace_id, span_id


async def _table(http: httpx.AsyncClient) -> tuple[str, dict[str, Player], dict[str, Any]]:
    """A started Nim table: its id, its players by seat, the first snapshot."""
    ana, bia = await guest(http, "ana"), await guest(http, "bia")
    table_id, snapshot = await seated_table([ana, bia], "nim", {"heap": 9, "max_take": 2})
    return table_id, {str(i): p for i, p in enumerate((ana, bia))}, snapshot


def _by_id(spans: list[Received]) -> dict[bytes, Received]:
    return {r.span.span_id: r for r in spans}


def _ancestors(span: Received, by_id: dict[bytes, Received]) -> list[Received]:
    found, parent = [], by_id.get(span.span.parent_span_id)
    while parent is not None:
        found.append(parent)
        parent = by_id.get(parent.span.parent_span_id)
    return found


def _rooted(spans: list[Received], client_span: bytes) -> bool:
    """Every span's parent has come in, but the client's (spans come in
    batches, each process's on its own)."""
    by_id = _by_id(spans)
    return all(r.span.parent_span_id in by_id or r.span.parent_span_id == client_span for r in spans)


def _assert_one_tree(spans: list[Received], client_span: bytes) -> Received:
    """Every span's parent is in the trace, but the root's, which is the
    client's span; the root."""
    by_id = _by_id(spans)
    roots = [r for r in spans if r.span.parent_span_id not in by_id]
    assert [r.span.parent_span_id for r in roots] == [client_span], [(r.service, r.span.name) for r in roots]
    return roots[0]


def _complete(spans: list[Received]) -> bool:
    """The gateway's server span, the game service's, and Redis in the game
    service are all in."""
    return (
        any(r.service == GATEWAY and r.span.kind == SERVER for r in spans)
        and any(r.service == NIM and r.span.kind == SERVER for r in spans)
        and any(r.service == NIM and r.redis for r in spans)
    )


async def test_one_action_over_http_is_one_trace_through_gateway_service_and_redis(
    traced: Stack, receiver: tuple[Receiver, str]
) -> None:
    found = receiver[0]
    async with httpx.AsyncClient(base_url=traced.gateway(), timeout=30) as http:
        table_id, players, snapshot = await _table(http)
        player = players[str(snapshot["to_act"][0])]
        traceparent, trace_id, client_span = _traceparent()
        response = await http.post(
            f"/v1/tables/{table_id}/actions",
            json={"expected_version": snapshot["version"], "action": {"take": {"stones": 1}}},
            headers={**player.headers, "traceparent": traceparent},
        )
        assert response.status_code == 200, response.text
        # A refusal crosses the traced hops as it is (status, code).
        again = await http.post(
            f"/v1/tables/{table_id}/actions",
            json={"expected_version": snapshot["version"], "action": {"take": {"stones": 1}}},
            headers=player.headers,
        )
        assert (again.status_code, again.json()["error"]["code"]) == (409, "stale_version")
    # The metrics count as they do without tracing: the service's guard saw
    # the move and the refusal.
    counted = {
        sample.labels["code"]: sample.value
        for family in text_string_to_metric_families(httpx.get(traced.metrics_url("nim"), timeout=10).text)
        for sample in family.samples
        if sample.name == "rodada_grpc_requests_total" and sample.labels["method"] == "Act"
    }
    assert counted.get("OK", 0) >= 1 and counted.get("ABORTED", 0) >= 1, counted
    spans = await found.wait_for(trace_id, lambda s: _complete(s) and _rooted(s, client_span))
    assert _complete(spans), [(r.service, r.span.name) for r in spans]
    # Every process names its stack (what the switched-off test relies on).
    assert {r.stack for r in spans} == {"traced"}, {(r.service, r.stack) for r in spans}
    root = _assert_one_tree(spans, client_span)
    # The root is the gateway's HTTP server span, named for the route.
    assert (root.service, root.span.kind) == (GATEWAY, SERVER)
    assert root.span.name == "POST /v1/tables/{table_id}/actions"
    by_id = _by_id(spans)
    # The game service's Act: a server span whose parent is the gateway's
    # client span for that call, under the HTTP request.
    (act,) = [r for r in spans if r.service == NIM and r.span.kind == SERVER]
    assert act.span.name == "/rodada.common.v1.MatchService/Act"
    call = by_id[act.span.parent_span_id]
    assert (call.service, call.span.kind, call.span.name) == (GATEWAY, CLIENT, act.span.name)
    assert root in _ancestors(call, by_id)
    # The request's log lines (its access line) carry its trace id.
    logs = [
        json.loads(line)
        for line in traced.log_path("gateway").read_text().splitlines()
        if line.startswith("{")
    ]
    access = [entry for entry in logs if f'/v1/tables/{table_id}/actions HTTP/1.1" 200' in entry["msg"]]
    assert access and all(entry.get("trace_id") == trace_id.hex() for entry in access), access
    # The move's Redis commands (the load, the one-round-trip commit) are the
    # game service's, under its Act; any the gateway made are under its request.
    service_redis = [r for r in spans if r.service == NIM and r.redis]
    assert service_redis and all(act in _ancestors(r, by_id) for r in service_redis)
    assert all(root in _ancestors(r, by_id) for r in spans if r.redis and r.service == GATEWAY)
    # Redis spans carry the command, never its arguments (keys, match state).
    for r in spans:
        if r.redis:
            statement = str(r.attributes.get("db.statement", r.attributes.get("db.query.text", "")))
            assert table_id not in statement and set(statement.split()[1:]) <= {"?"}, statement
            assert not any(table_id in str(v) for v in r.attributes.values()), r.attributes


async def test_a_call_to_the_gateways_grpc_face_continues_the_callers_trace(
    traced: Stack, receiver: tuple[Receiver, str]
) -> None:
    found = receiver[0]
    async with httpx.AsyncClient(base_url=traced.gateway(), timeout=30) as http:
        table_id, players, _ = await _table(http)
    traceparent, trace_id, client_span = _traceparent()
    async with grpc.aio.insecure_channel(traced.platform_grpc()) as channel:
        stub = platform_pb2_grpc.PlatformServiceStub(channel)
        metadata = (("authorization", f"Bearer {players['0'].token}"), ("traceparent", traceparent))
        await stub.GetView(platform_pb2.GetViewRequest(table_id=table_id), metadata=metadata, timeout=10)
    spans = await found.wait_for(trace_id, lambda s: _complete(s) and _rooted(s, client_span))
    assert _complete(spans), [(r.service, r.span.name) for r in spans]
    root = _assert_one_tree(spans, client_span)
    assert (root.service, root.span.kind, root.span.name) == (
        GATEWAY,
        SERVER,
        "/rodada.platform.v1.PlatformService/GetView",
    )
    (view,) = [r for r in spans if r.service == NIM and r.span.kind == SERVER]
    assert view.span.name == "/rodada.common.v1.MatchService/GetView"
    assert root in _ancestors(view, _by_id(spans))


@pytest.mark.parametrize("carried_by", ["hello", "upgrade"])
async def test_a_feed_continues_the_trace_its_hello_or_upgrade_request_carries(
    traced: Stack, receiver: tuple[Receiver, str], carried_by: str
) -> None:
    found = receiver[0]
    base = traced.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        table_id, players, _ = await _table(http)
    traceparent, trace_id, client_span = _traceparent()
    hello: dict[str, Any] = {"token": players["0"].token}
    headers = {}
    if carried_by == "hello":
        hello["traceparent"] = traceparent
    else:
        headers["traceparent"] = traceparent
    url = base.replace("http", "ws", 1) + f"/v1/tables/{table_id}/events"
    async with websockets.connect(url, additional_headers=headers, ping_interval=None) as socket:
        await socket.send(json.dumps(hello))
        first = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert "snapshot" in first or "event" in first or "table" in first, first
    # The feed's span ends with the feed.
    spans = await found.wait_for(
        trace_id,
        lambda s: any(r.service == GATEWAY and r.span.kind == SERVER for r in s) and _rooted(s, client_span),
    )
    root = _assert_one_tree(spans, client_span)
    assert (root.service, root.span.kind, root.span.name) == (GATEWAY, SERVER, "WS /v1/tables/{id}/events")


async def test_with_tracing_switched_off_nothing_is_exported(
    tmp_path: Path, receiver: tuple[Receiver, str]
) -> None:
    """OTEL_SDK_DISABLED=true: an endpoint is set, yet nothing is traced or
    sent, and the logs carry no trace ids."""
    found, endpoint = receiver
    with _stack(tmp_path, endpoint, "switched-off", OTEL_SDK_DISABLED="true") as stack:
        async with httpx.AsyncClient(base_url=stack.gateway(), timeout=30) as http:
            table_id, players, snapshot = await _table(http)
            player = players[str(snapshot["to_act"][0])]
            traceparent, trace_id, _ = _traceparent()
            response = await http.post(
                f"/v1/tables/{table_id}/actions",
                json={"expected_version": snapshot["version"], "action": {"take": {"stones": 1}}},
                headers={**player.headers, "traceparent": traceparent},
            )
            assert response.status_code == 200, response.text
            await asyncio.sleep(1.0)  # ten times the batch delay the exporters would have
        logs = stack.log_path("gateway").read_text()
    assert "switched-off" not in found.exports and not found.trace(trace_id)
    # The request's access line is there, without trace ids.
    (line,) = [line for line in logs.splitlines() if f"/v1/tables/{table_id}/actions" in line]
    assert "trace_id" not in json.loads(line), line
