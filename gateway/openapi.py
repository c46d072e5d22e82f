"""The API described for clients, generated from the protos: an OpenAPI
document whose operations are the RPCs' HTTP bindings (gateway/api/http.py)
and whose bodies are the protos' JSON Schemas (gateway/schemas.py), every
error response documented as it is sent; and the WebSocket feeds in an
AsyncAPI document built from the same schemas, which the OpenAPI links to.
Both are made once, after the games have described themselves. Operations'
summaries and descriptions are the RPCs' comments in the .proto files (read
from the descriptor set the Makefile writes beside the stubs, when there)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor
from rodada.platform.v1 import competitions_pb2, platform_pb2, social_pb2

from gateway.api.http import Binding, bindings
from gateway.games import Games
from gateway.schemas import REF, Schemas

JSON = dict[str, Any]
ERROR = "Error"
ERROR_SCHEMA: JSON = {
    "type": "object",
    "description": "Every refusal: a stable code to switch on, and a message for people.",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "stable, snake_case, e.g. not_your_turn"},
                "message": {"type": "string"},
            },
            "required": ["code", "message"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 1},
    }
}
# What every operation may answer besides its success (services/core/errors.py
# derives the status from the refusal's gRPC code).
ERRORS = {
    "401": "Bad or missing token, bad password (`unauthenticated`, `bad_credentials`, `refresh_token_used`).",
    "403": "Not allowed (`not_host`, `not_seated`, `invite_required`, `account_required`, …).",
    "404": "No such thing (`table_not_found`, `invite_not_found`, `unknown_game`, …).",
    "409": "The state refuses it now (`stale_version`, `not_your_turn`, `table_full`, `busy`, …).",
    "422": "Malformed: not the request message, strictly (`invalid_request`: an unknown field, a wrong type, "
    "a number out of its field's range, an enum name or number the enum does not have), or refused by the "
    "game or the platform (`malformed_action`, `invalid_options`, …).",
    "429": "Rate-limited (`rate_limited`); retry after the `Retry-After` header's seconds.",
    "503": "Redis or a game service is unavailable (`unavailable`); retry after `Retry-After`.",
    "504": "A game service did not answer in time.",
}
ASYNCAPI_URL = "/v1/feeds/asyncapi.json"
# Every hello may carry the W3C trace context the feed's span continues
# (browsers cannot set the upgrade request's headers).
TRACE_CONTEXT: JSON = {
    "traceparent": {"type": "string", "description": "W3C trace context the feed's span continues"},
    "tracestate": {"type": "string", "description": "W3C trace state, with traceparent"},
}
# What the feeds carry: a table's items, a ticket's updates, social events, a tournament.
FEED_MESSAGES: list[Any] = [
    platform_pb2.FollowTableResponse,
    platform_pb2.TicketUpdate,
    social_pb2.FollowSocialResponse,
    competitions_pb2.Tournament,
]
DESCRIPTORS = Path(platform_pb2.__file__).resolve().parents[3] / "rodada.binpb"


def build_openapi(app: FastAPI, games: Games) -> tuple[JSON, JSON]:
    """The OpenAPI document and the AsyncAPI document of the feeds."""
    document = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=f"{app.description}\n\nThe WebSocket feeds are described by the AsyncAPI document "
        f"at [{ASYNCAPI_URL}]({ASYNCAPI_URL}).".strip(),
        routes=app.routes,
    )
    document["externalDocs"] = {"url": ASYNCAPI_URL, "description": "The WebSocket feeds (AsyncAPI 3.0)"}
    schemas = Schemas([g.messages for g in games.described()])
    paths = document.setdefault("paths", {})
    for binding in bindings():
        paths.setdefault(binding.path, {})[binding.verb.lower()] = _operation(binding, schemas)
    for message in FEED_MESSAGES:  # the feeds' (AsyncAPI), in the same components
        schemas.ref(message.DESCRIPTOR)
    document.setdefault("components", {})["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "An access token from /v1/auth/*"}
    }
    components = document["components"].setdefault("schemas", {})
    components[ERROR] = ERROR_SCHEMA
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components.update(schemas.schemas)
    return document, _asyncapi(document)


def _operation(binding: Binding, schemas: Schemas) -> JSON:
    method = binding.method
    service = method.containing_service
    comment = comments().get(method.full_name, "")
    summary = comment.split("\n\n")[0].replace("\n", " ").split(". ")[0].rstrip(".")
    operation: JSON = {
        "tags": [service.name.removesuffix("Service")],
        "operationId": f"{service.name}_{method.name}",
        "summary": summary or method.name,
        "description": f"{comment}\n\ngRPC: `{service.full_name}/{method.name}`".strip(),
        "parameters": [
            _parameter(binding.request.fields_by_name[name], "path", schemas) for name in binding.path_fields
        ]
        + [_parameter(field, "query", schemas) for field in binding.query_fields.values()],
    }
    if binding.body:
        operation["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": _body(binding, schemas)}},
        }
    ok: JSON = {"description": {200: "OK", 201: "Created", 204: "No Content"}[binding.status]}
    if binding.status != 204:
        ok["content"] = {"application/json": {"schema": schemas.ref(binding.reply)}}
    error = {"application/json": {"schema": {"$ref": REF + ERROR}}}
    operation["responses"] = {str(binding.status): ok} | {
        code: {"description": description, "content": error}
        | ({"headers": _RETRY_AFTER} if code in ("429", "503") else {})
        for code, description in ERRORS.items()
    }
    if not binding.open:
        operation["security"] = [{"bearer": []}]
    return operation


def _parameter(field: FieldDescriptor, where: str, schemas: Schemas) -> JSON:
    parameter: JSON = {
        "name": field.name,
        "in": where,
        "required": where == "path",
        "schema": schemas.field(field),
    }
    described = comments().get(field.full_name)
    if described:
        parameter["description"] = described
    if field.is_repeated:
        parameter |= {"style": "form", "explode": True}
    return parameter


def _body(binding: Binding, schemas: Schemas) -> JSON:
    """The body's schema: the request message's fields but the path's, a
    game's message written without ``@type``."""
    properties: JSON = {}
    for field in binding.request.fields:
        if field.name in binding.path_fields:
            continue
        game = binding.game_fields.get(field.name)
        properties[field.name] = schemas.game_messages(game) if game else schemas.field(field)
        described = comments().get(field.full_name)
        if described:
            properties[field.name] = properties[field.name] | {"description": described}
    return {"type": "object", "properties": properties, "additionalProperties": False}


@functools.cache
def comments() -> dict[str, str]:
    """Each method's and field's leading comment in the protos, by full name
    (empty without the descriptor set: the stubs alone carry none)."""
    if not DESCRIPTORS.exists():
        return {}
    found: dict[str, str] = {}
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes())
    for file in files.file:
        by_path = {
            tuple(location.path): location.leading_comments for location in file.source_code_info.location
        }
        for s, service in enumerate(file.service):
            for m, method in enumerate(service.method):
                found[f"{file.package}.{service.name}.{method.name}"] = _text(by_path, 6, s, 2, m)
        for i, message in enumerate(file.message_type):
            for f, field in enumerate(message.field):
                found[f"{file.package}.{message.name}.{field.name}"] = _text(by_path, 4, i, 2, f)
    return found


def _text(comments: dict[tuple[int, ...], str], *path: int) -> str:
    return "\n".join(line.strip() for line in comments.get(path, "").strip().splitlines())


_CONTROL: dict[str, JSON] = {
    "End": {
        "type": "object",
        "description": "The feed is over (then close 1000).",
        "properties": {
            "end": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}
        },
        "required": ["end"],
    },
    "Pong": {
        "type": "object",
        "description": 'The answer to a client\'s {"ping": x}.',
        "properties": {"pong": {}},
        "required": ["pong"],
    },
    "Refusal": {"$ref": REF + ERROR},
}


def _asyncapi(openapi: JSON) -> JSON:
    """AsyncAPI 3.0 for the WebSocket feeds, on the OpenAPI's schemas."""
    components = dict(openapi["components"]["schemas"])
    components |= {name: schema for name, schema in _CONTROL.items() if name != "Refusal"}
    ref = "#/components/schemas/"

    def message(name: str, summary: str, payload: str) -> JSON:
        return {
            "name": name,
            "summary": summary,
            "contentType": "application/json",
            "payload": {"$ref": ref + payload},
        }

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Rodada feeds",
            "version": "1",
            "description": (
                "WebSocket feeds of the Rodada gateway. Close codes: 1000 the match (ticket) is over; "
                "1012 the server drains — resume on any replica from the last event id; 1013 the client "
                "fell too far behind — resume likewise; 4000 + an HTTP status for a refusal (4401 bad "
                "token, 4403, 4404 no such table, 4422 a hello that is not a JSON object or a bad "
                'after_event_id, 4429 too many feeds, 4503 unavailable), after an {"error"} message. Every '
                'feed answers {"ping": x} with {"pong": x}.'
            ),
        },
        "channels": {
            "table": {
                "address": "/v1/tables/{table_id}/events",
                "parameters": {"table_id": {"description": "the table (and match) id"}},
                "messages": {
                    "hello": message("hello", "First client message", "TableHello"),
                    "ping": message("ping", "Client keepalive", "Ping"),
                    "item": message(
                        "item", "An event, a snapshot or the table", "rodada.platform.v1.FollowTableResponse"
                    ),
                    "end": message("end", "The match is over", "End"),
                    "error": message("error", "A refusal, before the close", ERROR),
                    "pong": message("pong", "The answer to a ping", "Pong"),
                },
            },
            "ticket": {
                "address": "/v1/matchmaking/tickets/{ticket_id}/events",
                "parameters": {"ticket_id": {"description": "one of the caller's tickets"}},
                "messages": {
                    "hello": message("hello", "First client message", "TicketHello"),
                    "ping": message("ping", "Client keepalive", "Ping"),
                    "update": message("update", "The ticket changed", "rodada.platform.v1.TicketUpdate"),
                    "end": message("end", "The ticket is closed", "End"),
                    "error": message("error", "A refusal, before the close", ERROR),
                    "pong": message("pong", "The answer to a ping", "Pong"),
                },
            },
            "tournament": {
                "address": "/v1/tournaments/{tournament_id}/events",
                "parameters": {"tournament_id": {"description": "the tournament"}},
                "messages": {
                    "hello": message("hello", "First client message", "TicketHello"),
                    "ping": message("ping", "Client keepalive", "Ping"),
                    "item": message("item", "The tournament, now and after each change", "TournamentUpdate"),
                    "end": message("end", "The tournament is over", "End"),
                    "error": message("error", "A refusal, before the close", ERROR),
                    "pong": message("pong", "The answer to a ping", "Pong"),
                },
            },
            "social": {
                "address": "/v1/social/events",
                "messages": {
                    "hello": message("hello", "First client message", "SocialHello"),
                    "ping": message("ping", "Client keepalive", "Ping"),
                    "item": message(
                        "item",
                        "A private message, a friend notice or a table invite",
                        "rodada.platform.v1.FollowSocialResponse",
                    ),
                    "error": message("error", "A refusal, before the close", ERROR),
                    "pong": message("pong", "The answer to a ping", "Pong"),
                },
            },
        },
        "operations": {
            "sendTableHello": {
                "action": "send",
                "channel": {"$ref": "#/channels/table"},
                "messages": [
                    {"$ref": "#/channels/table/messages/hello"},
                    {"$ref": "#/channels/table/messages/ping"},
                ],
            },
            "receiveTable": {
                "action": "receive",
                "channel": {"$ref": "#/channels/table"},
                "messages": [
                    {"$ref": f"#/channels/table/messages/{m}"} for m in ("item", "end", "error", "pong")
                ],
            },
            "sendTicketHello": {
                "action": "send",
                "channel": {"$ref": "#/channels/ticket"},
                "messages": [
                    {"$ref": "#/channels/ticket/messages/hello"},
                    {"$ref": "#/channels/ticket/messages/ping"},
                ],
            },
            "sendSocialHello": {
                "action": "send",
                "channel": {"$ref": "#/channels/social"},
                "messages": [
                    {"$ref": "#/channels/social/messages/hello"},
                    {"$ref": "#/channels/social/messages/ping"},
                ],
            },
            "receiveSocial": {
                "action": "receive",
                "channel": {"$ref": "#/channels/social"},
                "messages": [{"$ref": f"#/channels/social/messages/{m}"} for m in ("item", "error", "pong")],
            },
            "sendTournamentHello": {
                "action": "send",
                "channel": {"$ref": "#/channels/tournament"},
                "messages": [
                    {"$ref": "#/channels/tournament/messages/hello"},
                    {"$ref": "#/channels/tournament/messages/ping"},
                ],
            },
            "receiveTournament": {
                "action": "receive",
                "channel": {"$ref": "#/channels/tournament"},
                "messages": [
                    {"$ref": f"#/channels/tournament/messages/{m}"} for m in ("item", "end", "error", "pong")
                ],
            },
            "receiveTicket": {
                "action": "receive",
                "channel": {"$ref": "#/channels/ticket"},
                "messages": [
                    {"$ref": f"#/channels/ticket/messages/{m}"} for m in ("update", "end", "error", "pong")
                ],
            },
        },
        "components": {
            "schemas": components
            | {
                "TableHello": {
                    "type": "object",
                    "properties": {
                        "token": {"type": "string", "description": "an access token"},
                        "after_event_id": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "the last event id seen",
                        },
                        **TRACE_CONTEXT,
                    },
                    "required": ["token"],
                },
                "TicketHello": {
                    "type": "object",
                    "properties": {"token": {"type": "string"}, **TRACE_CONTEXT},
                    "required": ["token"],
                },
                "Ping": {"type": "object", "properties": {"ping": {}}, "required": ["ping"]},
                "TournamentUpdate": {
                    "type": "object",
                    "properties": {"tournament": {"$ref": ref + "rodada.platform.v1.Tournament"}},
                    "required": ["tournament"],
                },
                "SocialHello": {
                    "type": "object",
                    "properties": {
                        "token": {"type": "string", "description": "an access token"},
                        "after_id": {"type": "string", "description": "the last SocialEvent id seen"},
                        **TRACE_CONTEXT,
                    },
                    "required": ["token"],
                },
            }
        },
    }
