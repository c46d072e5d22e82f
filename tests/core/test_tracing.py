"""Tracing's switch and its parts that need no platform: off by default with
nothing of the SDK or the instrumentations loaded or installed; the JSON
logs carry the current span's ids; background work starts no trace."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Decision

from services.core import logs, tracing

REPO = Path(__file__).resolve().parents[2]

# In a fresh interpreter, with no OTEL_* variable: build what a gateway and
# a game service build, and tell what tracing put in place.
_OFF = """
import json, sys
import grpc
from services.core import tracing
from services.core.settings import ServiceSettings
from gateway.app import create_app
from gateway.games import Games
from gateway.settings import GatewaySettings
import redis.asyncio
from opentelemetry import trace

# (redis-py imports the SDK's metrics for its own opt-in metrics: not ours.)
TRACING_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.instrumentation", "opentelemetry.exporter")

on = [tracing.configure("gateway", GatewaySettings()), tracing.configure("nim", ServiceSettings())]
app = create_app(GatewaySettings())
games = Games({"nim": "127.0.0.1:1"})
print(json.dumps({
    "on": on,
    "server_interceptors": len(tracing.server_interceptors()),
    "client_interceptors": len(tracing.client_interceptors() or []),
    "app_instrumented": getattr(app, "_is_instrumented_by_opentelemetry", False),
    "redis_wrapped": hasattr(redis.asyncio.Redis.execute_command, "__wrapped__"),
    "provider": type(trace.get_tracer_provider()).__name__,
    "loaded": sorted(m for m in sys.modules if m.startswith(TRACING_MODULES)),
}))
"""


def test_tracing_is_off_by_default_and_nothing_of_it_is_installed() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", _OFF], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {
        "on": [False, False],
        "server_interceptors": 0,
        "client_interceptors": 0,
        "app_instrumented": False,
        "redis_wrapped": False,
        "provider": "ProxyTracerProvider",  # the API's no-op
        "loaded": [],
    }


def test_a_disabled_sdk_wins_over_an_endpoint() -> None:
    from services.core.settings import CommonSettings

    settings = CommonSettings(otel_exporter_otlp_endpoint="http://127.0.0.1:4317", otel_sdk_disabled=True)
    assert not tracing.enabled()
    assert tracing.configure("nim", settings) is False
    assert not tracing.enabled()


def test_log_lines_carry_the_current_spans_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracing, "_enabled", True)
    tracer = TracerProvider().get_tracer("test")
    formatter = logs.JsonFormatter()

    def line() -> dict[str, object]:
        record = logging.LogRecord("rodada.test", logging.INFO, __file__, 1, "hello", None, None)
        return json.loads(formatter.format(record))  # type: ignore[no-any-return]

    assert "trace_id" not in line() and "span_id" not in line()
    with tracer.start_as_current_span("request") as span:
        context = span.get_span_context()
        inside = line()
    assert inside["trace_id"] == format(context.trace_id, "032x")
    assert inside["span_id"] == format(context.span_id, "016x")
    assert "trace_id" not in line()


def test_background_work_starts_no_trace_but_requests_and_their_children_do() -> None:
    sampler = tracing._requests_only(ALWAYS_ON)
    tracer = TracerProvider(sampler=sampler).get_tracer("test")

    def decision(kind: trace.SpanKind, parent: trace.Span | None = None) -> Decision:
        context = trace.set_span_in_context(parent) if parent is not None else None
        return sampler.should_sample(context, 1, "x", kind).decision  # type: ignore[no-any-return]

    # A Redis command or a gRPC call made by a clock or the matcher: dropped.
    assert decision(trace.SpanKind.CLIENT) is Decision.DROP
    assert decision(trace.SpanKind.INTERNAL) is Decision.DROP
    # A request (HTTP, gRPC, a feed) starts one; what it calls is in it.
    assert decision(trace.SpanKind.SERVER) is Decision.RECORD_AND_SAMPLE
    with tracer.start_as_current_span("request", kind=trace.SpanKind.SERVER) as request:
        assert request.is_recording()
        assert decision(trace.SpanKind.CLIENT, request) is Decision.RECORD_AND_SAMPLE


async def test_a_listener_a_request_starts_is_not_filed_under_that_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tracing.background(): the task runs without the request's span, but
    with the rest of its context (the log fields)."""
    tracer = TracerProvider().get_tracer("test")

    async def seen() -> tuple[bool, str | None]:
        return trace.get_current_span().get_span_context().is_valid, logs.REQUEST_ID.get()

    with tracer.start_as_current_span("request"):
        logs.REQUEST_ID.set("r1")
        assert tracing.background() is None  # off: the current context, as always
        assert await asyncio.create_task(seen(), context=tracing.background()) == (True, "r1")
        monkeypatch.setattr(tracing, "_enabled", True)
        assert await asyncio.create_task(seen(), context=tracing.background()) == (False, "r1")
        assert await asyncio.create_task(seen()) == (True, "r1")
