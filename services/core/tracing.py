"""Distributed traces (OpenTelemetry), off unless an OTLP endpoint is set.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
set and ``OTEL_SDK_DISABLED`` not true, :func:`configure` installs the SDK
once per process and exports spans over OTLP/gRPC in batches; the other
standard ``OTEL_*`` variables (sampler, batch delays, headers, resource
attributes) are read by the SDK as the specification says. Spans come from
the well-kept instrumentations, each installed only then:

- HTTP: FastAPI's (a server span per request, ``traceparent`` honoured);
- gRPC: a server interceptor on every gRPC server (the game services, the
  gateway's face for mobile apps) and client interceptors on the gateway's
  channels to the games, so ``traceparent`` crosses every hop in metadata;
- Redis: every command and pipeline a child span, its arguments replaced by
  ``?`` (values, seeds and hidden dice never leave in a span);
- WebSocket feeds: one server span per feed (gateway/sockets.py), its parent
  the ``traceparent`` of the hello, else of the upgrade request.

Off — the default — none of this is installed (nor imported here): no
interceptor, no middleware, no wrapper; each function here answers from one
flag. Work in
the background (clocks, the matcher, gauges) starts no trace of its own: a
Redis command or gRPC call without a parent span is not sampled; a listener
that a request starts but that serves everyone after it (the feeds' pub/sub
readers) runs outside that request's trace (:func:`background`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import grpc
    from fastapi import FastAPI
    from opentelemetry.context import Context

    from services.core.settings import CommonSettings

_enabled = False
# Health and reflection: probes every few seconds, not requests worth a trace.
_UNTRACED_SERVICES = ("grpc.health.", "grpc.reflection.")
# Probes and scrapes on the HTTP port.
_UNTRACED_URLS = "/healthz,/livez,/metrics"


def enabled() -> bool:
    return _enabled


def configure(service: str, settings: CommonSettings) -> bool:
    """Install tracing for this process if the settings ask for it; whether
    it is on. ``service`` names the process (``rodada-<service>``) unless
    OTEL_SERVICE_NAME does."""
    global _enabled
    endpoint = settings.otel_exporter_otlp_traces_endpoint or settings.otel_exporter_otlp_endpoint
    if _enabled or not endpoint or settings.otel_sdk_disabled:
        return _enabled
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({SERVICE_NAME: settings.otel_service_name or f"rodada-{service}"})
    provider = TracerProvider(resource=resource)
    provider.sampler = _requests_only(provider.sampler)  # OTEL_TRACES_SAMPLER's, for what it samples
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    RedisInstrumentor().instrument(tracer_provider=provider)
    _enabled = True
    return True


def _requests_only(inner: Any) -> Any:
    """A sampler that drops root spans a request did not start (a Redis
    command or gRPC call made by a background loop: kind CLIENT or INTERNAL,
    no parent) and asks ``inner`` about the rest."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    class RequestsOnly(Sampler):
        def should_sample(
            self,
            parent_context: Context | None,
            trace_id: int,
            name: str,
            kind: trace.SpanKind | None = None,
            attributes: Any = None,
            links: Sequence[trace.Link] | None = None,
            trace_state: trace.TraceState | None = None,
        ) -> SamplingResult:
            parent = trace.get_current_span(parent_context).get_span_context()
            if not parent.is_valid and kind in (trace.SpanKind.CLIENT, trace.SpanKind.INTERNAL, None):
                return SamplingResult(Decision.DROP)
            return inner.should_sample(  # type: ignore[no-any-return]
                parent_context, trace_id, name, kind, attributes, links, trace_state
            )

        def get_description(self) -> str:
            return f"RequestsOnly{{{inner.get_description()}}}"

    return RequestsOnly()


def _traced_call(details: Any) -> bool:
    method = details.method.decode() if isinstance(details.method, bytes) else details.method
    return not method.lstrip("/").startswith(_UNTRACED_SERVICES)


def server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """For ``grpc.aio.server``: a span per call, its parent the caller's
    ``traceparent`` metadata (nothing when tracing is off)."""
    if not _enabled:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor(filter_=_traced_call)]  # type: ignore[no-untyped-call]


def client_interceptors() -> list[grpc.aio.ClientInterceptor] | None:
    """For ``grpc.aio.insecure_channel``: a span per call, ``traceparent``
    sent in its metadata (None when tracing is off: a channel without
    interceptors takes grpc's fast path)."""
    if not _enabled:
        return None
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return aio_client_interceptors(filter_=_traced_call)  # type: ignore[no-untyped-call,no-any-return]


def instrument_app(app: FastAPI) -> None:
    """A server span per HTTP request (probes and scrapes left out)."""
    if not _enabled:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(app, excluded_urls=_UNTRACED_URLS, exclude_spans=["receive", "send"])


def upgrade_context(headers: Iterable[tuple[bytes, bytes]]) -> Context | None:
    """The trace context a WebSocket's upgrade request carried, if any."""
    if not _enabled:
        return None
    carrier = {
        key.decode("latin-1"): value.decode("latin-1")
        for key, value in headers
        if key in (b"traceparent", b"tracestate")
    }
    return _extract(carrier) if carrier else None


def _extract(carrier: Mapping[str, str]) -> Context:
    from opentelemetry import propagate

    return propagate.extract(carrier)


@contextlib.contextmanager
def feed_span(name: str, upgrade: Context | None, hello: Mapping[str, Any]) -> Iterator[None]:
    """A WebSocket feed's server span, for as long as the feed lives (as a
    streaming gRPC call's span does): its parent is the hello's
    ``traceparent`` (browsers cannot set the upgrade request's headers),
    else the upgrade request's."""
    if not _enabled:
        yield
        return
    from opentelemetry import trace

    parent = upgrade
    if isinstance(hello.get("traceparent"), str):
        state = hello.get("tracestate")
        parent = _extract(
            {"traceparent": hello["traceparent"], **({"tracestate": state} if isinstance(state, str) else {})}
        )
    tracer = trace.get_tracer("rodada.feeds")
    with tracer.start_as_current_span(name, context=parent, kind=trace.SpanKind.SERVER):
        yield


@contextlib.contextmanager
def redis_span(commands: Sequence[Sequence[Any]]) -> Iterator[None]:
    """A client span for commands sent past redis-py (``wire.py``), as its
    instrumentation would make one: named for the commands, their arguments
    left out."""
    if not _enabled:
        yield
        return
    from opentelemetry import trace

    name = " ".join(str(command[0]) for command in commands[:8])
    attributes: dict[str, str | int] = {
        "db.system": "redis",
        "db.statement": name,
        "db.redis.pipeline_length": len(commands),
    }
    tracer = trace.get_tracer("rodada.redis")
    with tracer.start_as_current_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes):
        yield


def background() -> contextvars.Context | None:
    """For ``create_task(..., context=…)`` of a task that a request starts
    but that serves everyone after it (a pub/sub listener): the current
    context without the request's span, so its work is not filed under that
    request. None (the current context, as usual) when tracing is off."""
    if not _enabled:
        return None
    from opentelemetry import context

    copied = contextvars.copy_context()
    copied.run(context.attach, context.Context())
    return copied


def log_ids() -> tuple[str, str] | None:
    """The current span's trace and span ids, in hex, for the logs."""
    if not _enabled:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")
