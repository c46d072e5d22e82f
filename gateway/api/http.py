"""The HTTP face: one generic transcoder, driven by each RPC's
``google.api.http`` binding (the grpc-gateway convention), over the same
servicer methods the gRPC face serves.

For each binding the FastAPI app gets a route — a plain ASGI endpoint, no
dependency injection and no validation model: this is the web client's hot
path. A request becomes the RPC's request message: the path's parameters,
then the query's (operations without a body) or the JSON body (``body:
"*"``), through the strict parser (services/core/strict.py); an Any holding a
game's message (``rodada.common.v1.game_message``) is written by clients as
that message's JSON without ``"@type"``, and parsed as the game's own — the
game of the request's ``game``, or of the table its ``table_id`` names. The
token is verified here (the guard does it on the gRPC face), the servicer
method runs with a context carrying it, and the reply — or the binding's
``response_body`` field of it — is printed as proto3 JSON
(gateway/protojson.py): 201 for an RPC declared ``http_created``, 204 with
no body for a reply message without fields, else 200. Every refusal is the
one error model's (services/core/errors.py).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

import orjson
from fastapi import FastAPI
from google.api import annotations_pb2 as google_api
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from rodada.common.v1 import annotations_pb2 as rodada_api
from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from gateway.api.face import OPEN, HttpContext
from gateway.api.grpc import SERVICES
from gateway.games import GameClient
from gateway.platform import Platform
from gateway.protojson import message_json
from services.core import guard, strict
from services.core.errors import Refused, invalid

log = logging.getLogger("rodada.gateway.http")

MAX_BODY = 1 << 20  # bytes; no request of the API comes near
_PARAMETER = re.compile(r"\{(\w+)\}")
_JSON = [(b"content-type", b"application/json")]


@dataclass(frozen=True)
class Binding:
    """One RPC's HTTP operation, as its ``google.api.http`` option declares it."""

    service: str
    method: MethodDescriptor
    verb: str
    path: str
    body: str
    response_body: str
    created: bool

    @property
    def request(self) -> Descriptor:
        return self.method.input_type

    @property
    def reply(self) -> Descriptor:
        """What the HTTP reply is the JSON of."""
        if not self.response_body:
            return self.method.output_type
        field = self.method.output_type.fields_by_name[self.response_body]
        assert field.message_type is not None
        return field.message_type

    @cached_property
    def path_fields(self) -> tuple[str, ...]:
        return tuple(_PARAMETER.findall(self.path))

    @property
    def status(self) -> int:
        if self.created:
            return 201
        return 204 if not self.method.output_type.fields else 200

    @property
    def open(self) -> bool:
        """Needs no token (the same methods as on the gRPC face)."""
        return self.method.name in OPEN

    @cached_property
    def game_fields(self) -> dict[str, str]:
        """Request fields holding a game's message: field → message name."""
        return {
            field.name: field.GetOptions().Extensions[rodada_api.game_message]
            for field in self.request.fields
            if field.GetOptions().Extensions[rodada_api.game_message]
        }

    @cached_property
    def query_fields(self) -> dict[str, FieldDescriptor]:
        """Fields a query parameter may set: the request's scalar fields that
        neither the path nor a body binds."""
        if self.body:
            return {}
        return {
            field.name: field
            for field in self.request.fields
            if field.name not in self.path_fields and field.cpp_type != FieldDescriptor.CPPTYPE_MESSAGE
        }


def bindings() -> list[Binding]:
    """Every HTTP binding of the API's services, in declaration order."""
    found = []
    for service, _ in SERVICES:
        for method in service.methods:
            options = method.GetOptions()
            rule = options.Extensions[google_api.http]
            verb = rule.WhichOneof("pattern")
            if verb is None:
                continue
            assert verb != "custom" and not rule.additional_bindings, method.full_name
            path = getattr(rule, verb)
            assert "=" not in path and "*" not in path, f"{method.full_name}: simple {{field}} templates only"
            found.append(
                Binding(
                    service=service.full_name,
                    method=method,
                    verb=verb.upper(),
                    path=path,
                    body=rule.body,
                    response_body=rule.response_body,
                    created=options.Extensions[rodada_api.http_created],
                )
            )
    return found


def mount(app: FastAPI) -> None:
    """A route on ``app`` for every binding."""
    for binding in bindings():
        # An ASGI endpoint (not a request handler): Starlette runs it as it is.
        # gateway/openapi.py documents these routes, from the bindings.
        route = _Route(binding.path, Operation(binding), methods=[binding.verb], name=binding.method.name)
        route.include_in_schema = False
        app.router.routes.append(route)


class _Route(Route):
    """A Starlette route that names itself in the scope, as FastAPI's do, so
    the request metrics (gateway/app.py) label a call by its path template."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is not Match.NONE:
            child["route"] = self
        return match, child


class Operation:
    """The ASGI endpoint of one binding."""

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self.request_class = message_factory.GetMessageClass(binding.request)
        self.name = binding.method.name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope["app"].state
        platform: Platform = state.platform
        token = _bearer(scope["headers"])
        try:
            if self.binding.open:
                identity = None
                if token:  # an open call ignores a token it cannot use, as over gRPC
                    try:
                        identity = platform.sessions.caller(token).identity
                    except Refused:
                        token = None
            else:
                identity = platform.sessions.caller(token).identity
            guard.CALLER.set(identity)
            request = await self.request(platform, scope, await _body(receive))
            host, port = scope.get("client") or ("unknown", 0)
            method = getattr(state.servicers[self.binding.service], self.name)
            reply = await method(request, HttpContext(token, host, port))
        except Exception as error:
            refusal = guard.as_refusal(error)
            if refusal.http_status >= 500 and refusal is not error:
                log.error("%s %s failed", self.binding.verb, self.binding.path, exc_info=error)
            await _refuse(send, refusal)
            return
        status = self.binding.status
        if status == 204:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if self.binding.response_body:
            reply = getattr(reply, self.binding.response_body)
        await _reply(send, status, orjson.dumps(message_json(reply)))

    async def request(self, platform: Platform, scope: Scope, body: bytes) -> Message:
        """The RPC's request message from the path, the query and the body."""
        binding = self.binding
        data: Any = {}
        if body.strip():
            if not binding.body:
                raise invalid("invalid_request", f"{binding.verb} {binding.path} takes no body")
            try:
                data = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                raise invalid("invalid_request", f"the body is not JSON: {exc}") from None
            if binding.body != "*":
                data = {binding.body: data}
            elif not isinstance(data, dict):
                raise invalid("invalid_request", "the body must be a JSON object")
        for name, value in scope["path_params"].items():
            if name in data:
                raise invalid("invalid_request", f"{name} is given by the path, not the body")
            data[name] = value
        if scope["query_string"]:
            self._query(data, scope["query_string"])
        given = {name: data.pop(name) for name in binding.game_fields if data.get(name) is not None}
        request = self.request_class()
        try:
            strict.parse_json(data, request)
        except strict.Invalid as exc:
            raise invalid("invalid_request", str(exc)) from None
        if given:
            game = await self._game(platform, request)
            for name, value in given.items():
                getattr(request, name).CopyFrom(game.pack(binding.game_fields[name], value))
        return request

    def _query(self, data: dict[str, Any], query: bytes) -> None:
        fields = self.binding.query_fields
        for key, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
            field = fields.get(key)
            if field is None:
                raise invalid("invalid_request", f"unknown query parameter {key!r}")
            if field.type == FieldDescriptor.TYPE_BOOL:
                if value not in ("true", "false"):
                    raise invalid("invalid_request", f"{key}: true or false")
                parsed: Any = value == "true"
            else:
                parsed = value
            if field.is_repeated:
                data.setdefault(key, []).append(parsed)
            elif key in data:
                raise invalid("invalid_request", f"{key} is given twice")
            else:
                data[key] = parsed

    async def _game(self, platform: Platform, request: Any) -> GameClient:
        """The game a request's game messages belong to."""
        if "game" in self.binding.request.fields_by_name:
            return platform.games.get(request.game)
        return await platform.play.game_of(request.table_id)


def _bearer(headers: list[tuple[bytes, bytes]]) -> str | None:
    for key, value in headers:
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


async def _body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("the client left")
        body += bytes(message.get("body", b""))
        if len(body) > MAX_BODY:
            raise invalid("invalid_request", f"the body is larger than {MAX_BODY} bytes")
        if not message.get("more_body", False):
            return body


async def _reply(send: Send, status: int, content: bytes, headers: list[tuple[bytes, bytes]] = _JSON) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(content)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": content})


def retry_after(refusal: Refused) -> str | None:
    """The ``Retry-After`` of a refusal, in whole seconds: a rate limit says
    when; an outage (a game service's too) is worth a retry in a second."""
    seconds = refusal.retry_after
    if seconds is None and refusal.http_status == 503:
        seconds = 1.0
    return None if seconds is None else str(max(1, math.ceil(seconds)))


async def _refuse(send: Send, refusal: Refused) -> None:
    headers, wait = _JSON, retry_after(refusal)
    if wait is not None:
        headers = [*_JSON, (b"retry-after", wait.encode())]
    await _reply(send, refusal.http_status, orjson.dumps(refusal.body()), headers)
