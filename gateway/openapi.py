"""The API described for clients: an OpenAPI document whose bodies are the
protos' JSON Schemas (gateway/schemas.py), every error response documented
as it is sent, and the WebSocket feeds described by an AsyncAPI document
(linked from the OpenAPI) built from the same schemas. Both are made once,
after the games have described themselves."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from google.protobuf.message import Message
from rodada.platform.v1 import platform_pb2

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
        }
    },
    "required": ["error"],
}
ERRORS = {
    "401": "Bad or missing token, bad password (`unauthenticated`, `bad_credentials`, `refresh_token_used`).",
    "403": "Not allowed (`not_host`, `not_seated`, `invite_required`, `account_required`, …).",
    "404": "No such thing (`table_not_found`, `invite_not_found`, `unknown_game`, …).",
    "409": "The state refuses it now (`stale_version`, `not_your_turn`, `table_full`, `busy`, …).",
    "422": "Malformed (`invalid_request`, `malformed_action`, `invalid_options`, …).",
    "429": "Rate-limited (`rate_limited`); retry after the `Retry-After` header's seconds.",
    "503": "Redis or a game service is unavailable (`unavailable`); retry after `Retry-After`.",
    "504": "A game service did not answer in time.",
}
# Request fields holding a game's message, by schema and property: the union
# of every game's message of that name.
GAME_FIELDS = {
    ("ActBody", "action"): "Action",
    ("AskBody", "question"): "Question",
    ("CreateTable", "options"): "Options",
    ("NewTicket", "options"): "Options",
    ("CreateTournament", "options"): "Options",
}
FEEDS = {
    "/v1/tables/{table_id}/events": (
        "table_id",
        "A table's feed, from its creation to its match's end",
        "rodada.platform.v1.FollowTableResponse",
    ),
    "/v1/matchmaking/tickets/{ticket_id}/events": (
        "ticket_id",
        "A matchmaking ticket's feed (the open socket keeps the ticket alive)",
        "rodada.platform.v1.TicketUpdate",
    ),
    "/v1/social/events": (
        "",
        "The caller's social feed: private messages, friend notices, table invites",
        "rodada.platform.v1.FollowSocialResponse",
    ),
}
ASYNCAPI_URL = "/v1/feeds/asyncapi.json"


def returns(message: type[Message]) -> JSON:
    """A route's ``openapi_extra``: the proto message its body is."""
    return {"x-message": message.DESCRIPTOR.full_name}


def _descriptor(full_name: str) -> Any:
    for module in _modules():
        for name in module.DESCRIPTOR.message_types_by_name:
            message = getattr(module, name)
            if message.DESCRIPTOR.full_name == full_name:
                return message.DESCRIPTOR
    raise KeyError(full_name)


def _modules() -> list[Any]:
    from rodada.common.v1 import match_pb2
    from rodada.platform.v1 import competitions_pb2, social_pb2

    return [platform_pb2, match_pb2, social_pb2, competitions_pb2]


def build_openapi(app: FastAPI, games: Games) -> tuple[JSON, JSON]:
    """The OpenAPI document and the AsyncAPI document of the feeds."""
    document = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
    )
    schemas = Schemas([g.messages for g in games.described()])
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for operations in document["paths"].values():
        for operation in operations.values():
            message = operation.pop("x-message", None)
            if message:
                ok = next(code for code in operation["responses"] if code.startswith("2"))
                operation["responses"][ok] = {
                    "description": operation["responses"][ok].get("description", "OK"),
                    "content": {"application/json": {"schema": schemas.ref(_descriptor(message))}},
                }
            for code, description in ERRORS.items():
                if code == "422" or code not in operation["responses"]:
                    operation["responses"][code] = {
                        "description": description,
                        "content": {"application/json": {"schema": {"$ref": REF + ERROR}}},
                    }
            operation["responses"].pop("default", None)
    for (schema_name, field), message in GAME_FIELDS.items():
        if schema_name in components:
            components[schema_name]["properties"][field] = schemas.game_messages(message)
    for path, (parameter, summary, message) in FEEDS.items():
        document["paths"][path] = {
            "get": _feed_operation(parameter, summary, schemas.ref(_descriptor(message)))
        }
    components[ERROR] = ERROR_SCHEMA
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components.update(schemas.schemas)
    return document, _asyncapi(document)


def _feed_operation(parameter: str, summary: str, item: JSON) -> JSON:
    return {
        "tags": ["feeds"],
        "summary": f"{summary} (WebSocket)",
        "description": (
            'Open a WebSocket here and send the hello `{"token": "<access token>", '
            '"after_event_id": N}` (tables), `{"token": ...}` (tickets) or `{"token": ..., '
            '"after_id": "<last SocialEvent id>"}` (the social feed) as the first '
            "message. Messages and close codes are in the AsyncAPI document: "
            f"[{ASYNCAPI_URL}]({ASYNCAPI_URL}) and docs/feeds.md."
        ),
        "operationId": f"feed_{parameter.removesuffix('_id') or 'social'}",
        "parameters": [
            {"name": parameter, "in": "path", "required": True, "schema": {"type": "string"}}
            for parameter in [parameter]
            if parameter
        ],
        "responses": {
            "101": {
                "description": "Switching to the WebSocket protocol; each message is one of these.",
                "content": {"application/json": {"schema": {"oneOf": [item, *_CONTROL.values()]}}},
            }
        },
        "externalDocs": {"url": ASYNCAPI_URL, "description": "The feeds' AsyncAPI document"},
    }


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
    """AsyncAPI 3.0 for the two WebSocket feeds, on the OpenAPI's schemas."""
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
                "hello, 4403, 4404 no such table, 4422 bad after_event_id, 4429 too many feeds, 4503 "
                'unavailable), after an {"error"} message.'
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
                    "update": message("update", "The ticket changed", "rodada.platform.v1.TicketUpdate"),
                    "end": message("end", "The ticket is closed", "End"),
                    "error": message("error", "A refusal, before the close", ERROR),
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
                "messages": [{"$ref": "#/channels/ticket/messages/hello"}],
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
            "receiveTicket": {
                "action": "receive",
                "channel": {"$ref": "#/channels/ticket"},
                "messages": [{"$ref": f"#/channels/ticket/messages/{m}"} for m in ("update", "end", "error")],
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
                    },
                    "required": ["token"],
                },
                "TicketHello": {
                    "type": "object",
                    "properties": {"token": {"type": "string"}},
                    "required": ["token"],
                },
                "Ping": {"type": "object", "properties": {"ping": {}}, "required": ["ping"]},
                "SocialHello": {
                    "type": "object",
                    "properties": {
                        "token": {"type": "string", "description": "an access token"},
                        "after_id": {"type": "string", "description": "the last SocialEvent id seen"},
                    },
                    "required": ["token"],
                },
            }
        },
    }
