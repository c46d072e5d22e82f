"""A ticket's views and updates as the protos' messages and as the JSON a
WebSocket follower gets, built field by field.

``json_format.ParseDict`` (a dict to a message) walks every field's
descriptor on every call: in a matchmaking burst it was the costliest part
of turning a ticket into a reply. The shapes here are few and fixed, so they
are written out; tests/gateway/test_matchmaking_messages.py holds each to
what ``ParseDict`` and ``gateway.protojson.message_json`` give for real
tickets and updates.
"""

from __future__ import annotations

from typing import Any

from rodada.platform.v1 import platform_pb2

from gateway.accounts import is_guest
from gateway.games import Games

# A ticket view's fields that are plain scalars of the Ticket message
# (options and members are built apart).
_TICKET_SCALARS = (
    "id",
    "game",
    "mode",
    "ranked",
    "state",
    "party",
    "created_at",
    "enqueued_at",
    "party_code",
    "position",
    "queue_length",
    "waited_seconds",
    "estimated_wait_seconds",
    "table_id",
    "seat",
    "closed_at",
    "reason",
)
_QUEUE_INTS = ("position", "queue_length")


def ticket_message(view: dict[str, Any], games: Games) -> platform_pb2.Ticket:
    """A ticket's view (``Matchmaking.describe``) as the protos' Ticket."""
    fields = {k: view[k] for k in _TICKET_SCALARS if view.get(k) is not None}
    return platform_pb2.Ticket(
        **fields,
        cpu_seats=view.get("cpu_seats") or (),
        options=games.get(view["game"]).pack("Options", view["options"], "invalid_options"),
        members=[
            platform_pb2.User(id=m["user_id"], name=m["name"], role=m["role"], guest=is_guest(m["user_id"]))
            for m in view["members"]
        ],
    )


def ticket_update(ticket_id: str, update: dict[str, Any]) -> platform_pb2.TicketUpdate:
    """A ``Matchmaking.follow`` update as the protos' TicketUpdate."""
    message = platform_pb2.TicketUpdate(ticket_id=ticket_id)
    for kind, body in _update_fields(update).items():
        if kind == "matched":
            message.matched.CopyFrom(platform_pb2.Matched(**body))
        elif kind == "closed":
            message.closed.CopyFrom(platform_pb2.Closed(**body))
        else:
            message.queue.CopyFrom(platform_pb2.QueueStatus(**body))
    return message


def ticket_update_json(ticket_id: str, update: dict[str, Any]) -> dict[str, Any]:
    """The same update as proto3 JSON (``message_json`` of
    :func:`ticket_update`), without building the message."""
    js: dict[str, Any] = {"ticket_id": ticket_id}
    for kind, body in _update_fields(update).items():
        if kind == "matched":
            js[kind] = {"table_id": body["table_id"], "seat": body["seat"], "cpu_seats": body["cpu_seats"]}
        elif kind == "closed":
            js[kind] = {"state": body["state"], "reason": body["reason"]}
        else:
            queue = {
                "state": body["state"],
                "position": body["position"],
                "queue_length": body["queue_length"],
                "party_code": body["party_code"],
            }
            if "estimated_wait_seconds" in body:  # with presence: printed after the others
                queue["estimated_wait_seconds"] = body["estimated_wait_seconds"]
            js[kind] = queue
    return js


def _update_fields(update: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The update with every field the message has, defaults filled in (as
    ParseDict reads a missing or null field: unset)."""
    fields: dict[str, dict[str, Any]] = {}
    if "matched" in update:
        matched = update["matched"]
        fields["matched"] = {
            "table_id": matched.get("table_id") or "",
            "seat": int(matched.get("seat") or 0),
            "cpu_seats": [int(s) for s in matched.get("cpu_seats") or ()],
        }
    if "closed" in update:
        closed = update["closed"]
        fields["closed"] = {"state": closed.get("state") or "", "reason": closed.get("reason") or ""}
    if "queue" in update:
        queue = update["queue"]
        body: dict[str, Any] = {"state": queue.get("state") or ""}
        body["party_code"] = queue.get("party_code") or ""
        for name in _QUEUE_INTS:
            body[name] = int(queue.get(name) or 0)
        if queue.get("estimated_wait_seconds") is not None:
            body["estimated_wait_seconds"] = float(queue["estimated_wait_seconds"])
        fields["queue"] = body
    return fields
