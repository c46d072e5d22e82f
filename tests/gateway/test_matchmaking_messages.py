"""gateway/matchmaking/messages.py builds tickets and their updates field by
field: each must equal what json_format's ParseDict (and, for a follower's
JSON, gateway.protojson over that message) gives, for tickets and updates
as Matchmaking makes them."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from google.protobuf import json_format
from rodada.platform.v1 import platform_pb2

from gateway.accounts import is_guest
from gateway.matchmaking.messages import ticket_message, ticket_update, ticket_update_json
from gateway.matchmaking.queues import _UPDATE_FIELDS, Queue, Status, Ticket, _view
from gateway.protojson import message_json

TICKET = "0123456789abcdef" * 2

UPDATES: list[dict[str, Any]] = [
    {"queue": {"state": "waiting", "position": 3, "queue_length": 7, "estimated_wait_seconds": 12}},
    {"queue": {"state": "waiting", "position": 1, "queue_length": 1, "estimated_wait_seconds": None}},
    {"queue": {"state": "waiting", "position": 2, "queue_length": 2, "estimated_wait_seconds": 0}},
    {"queue": {"state": "party_open", "party_code": "abc123xyz"}},
    {"queue": {"state": "party_open"}},
    {"matched": {"table_id": "4f2a9c0d1e3b5a77", "seat": 1, "cpu_seats": []}},
    {"matched": {"table_id": "4f2a9c0d1e3b5a77", "seat": 0, "cpu_seats": [1, 2, 3]}},
    {"closed": {"state": "dropped", "reason": "connection_lost"}},
    {"closed": {"state": "failed", "reason": None}},
]


def parsed_update(update: dict[str, Any]) -> platform_pb2.TicketUpdate:
    """The way the gateway built them before messages.py."""
    message = platform_pb2.TicketUpdate(ticket_id=TICKET)
    json_format.ParseDict(update, message)
    return message


@pytest.mark.parametrize("update", UPDATES)
def test_an_update_is_the_message_parse_dict_makes(update: dict[str, Any]) -> None:
    assert ticket_update(TICKET, update) == parsed_update(update)


@pytest.mark.parametrize("update", UPDATES)
def test_an_updates_json_is_the_messages_proto3_json(update: dict[str, Any]) -> None:
    assert ticket_update_json(TICKET, update) == message_json(parsed_update(update))


class OneGame:
    """Games.get(...).pack for the ticket's options: packed by json_format."""

    def get(self, name: str) -> OneGame:
        return self

    def pack(self, name: str, data: Any, reason: str | None = None) -> Any:
        from google.protobuf import any_pb2, struct_pb2

        packed = any_pb2.Any()
        packed.Pack(json_format.ParseDict(data, struct_pb2.Struct()))
        return packed


def parsed_ticket(view: dict[str, Any], games: Any) -> platform_pb2.Ticket:
    fields = {k: v for k, v in view.items() if k not in ("options", "members") and v is not None}
    ticket = json_format.ParseDict(fields, platform_pb2.Ticket())
    ticket.options.CopyFrom(games.get(view["game"]).pack("Options", view["options"]))
    ticket.members.extend(
        platform_pb2.User(id=m["user_id"], name=m["name"], role=m["role"], guest=is_guest(m["user_id"]))
        for m in view["members"]
    )
    return ticket


BASE: dict[str, Any] = {
    "id": TICKET,
    "game": "bozo",
    "mode": "duel",
    "ranked": False,
    "options": {"mode": "DUEL"},
    "party": False,
    "members": [{"user_id": "g_ana", "name": "Ana", "role": "guest"}],
    "created_at": 1796280000.25,
}
VIEWS: list[dict[str, Any]] = [
    BASE
    | {
        "state": "waiting",
        "enqueued_at": 1796280000.5,
        "position": 4,
        "queue_length": 9,
        "waited_seconds": 1.5,
        "estimated_wait_seconds": None,
    },
    BASE
    | {
        "state": "waiting",
        "enqueued_at": 1796280000.5,
        "position": 1,
        "queue_length": 1,
        "waited_seconds": 0.0,
        "estimated_wait_seconds": 3,
    },
    BASE
    | {
        "ranked": True,
        "party": True,
        "state": "party_open",
        "enqueued_at": None,
        "party_code": "Zx9_abcdEFGH",
        "members": [{"user_id": "ana", "name": "Ana", "role": "user"}],
    },
    BASE
    | {
        "state": "matched",
        "enqueued_at": 1796280000.5,
        "table_id": "4f2a9c0d1e3b5a77",
        "seat": 0,
        "cpu_seats": [1],
        "closed_at": 1796280002.75,
    },
    BASE
    | {
        "state": "dropped",
        "enqueued_at": 1796280000.5,
        "closed_at": 1796280009.0,
        "reason": "connection_lost",
    },
]


@pytest.mark.parametrize("view", VIEWS)
def test_a_ticket_is_the_message_parse_dict_makes(view: dict[str, Any]) -> None:
    games: Any = OneGame()
    assert ticket_message(view, games) == parsed_ticket(view, games)


def test_views_and_updates_as_matchmaking_makes_them_are_parse_dicts() -> None:
    """Through queues._view itself, for a waiting, a party and a matched ticket."""
    queue = Queue("bozo", "duel", False, '{"mode":"DUEL"}')
    member = {"user_id": "g_ana", "name": "Ana", "role": "guest", "rating": 1500.0}
    common: dict[str, Any] = {
        "id": TICKET,
        "queue": queue,
        "leader": "g_ana",
        "created_at": 1796280000.25,
        "members": [member],
        "party_code": None,
        "reason": None,
    }
    tickets = [
        Ticket(
            **common,
            party=False,
            state="waiting",
            enqueued_at=1796280000.5,
            table_id=None,
            seats={},
            cpu_seats=[],
            closed_at=None,
        ),
        Ticket(
            **common | {"party_code": "Zx9_abcdEFGH"},
            party=True,
            state="party_open",
            enqueued_at=None,
            table_id=None,
            seats={},
            cpu_seats=[],
            closed_at=None,
        ),
        Ticket(
            **common,
            party=False,
            state="matched",
            enqueued_at=1796280000.5,
            table_id="4f2a9c0d1e3b5a77",
            seats={"g_ana": 1},
            cpu_seats=[],
            closed_at=1796280003.0,
        ),
    ]
    games: Any = OneGame()
    for ticket, waits in itertools.product(tickets, ([], [4.0, 6.5])):
        view = _view(
            Status(ticket, 2 if ticket.state == "waiting" else None, 5, waits), "g_ana", 1796280002.0
        )
        assert ticket_message(view, games) == parsed_ticket(view, games)
        update = {"queue": {k: view[k] for k in _UPDATE_FIELDS if k in view}}
        assert ticket_update(TICKET, update) == parsed_update(update)
        assert ticket_update_json(TICKET, update) == message_json(parsed_update(update))
