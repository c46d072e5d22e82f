"""Friends and chat over HTTP, and the social feed's WebSocket (the gRPC
face's SocialService has the same operations: gateway/social/grpc_face.py).

Chat text is data: replies carry it as a JSON string exactly as stored;
clients must render it as text, never as HTML."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Response, WebSocket
from pydantic import BaseModel, Field
from rodada.platform.v1 import social_pb2

from gateway.deps import CallerDep, JsonRoute, PlatformDep, message_json
from gateway.openapi import returns
from gateway.platform import Platform
from gateway.routes.feeds import FeedSocket, serve_feed
from services.kit.errors import invalid

router = APIRouter(prefix="/v1", tags=["social"], route_class=JsonRoute)


class FriendTarget(BaseModel):
    user_id: str = Field(default="", description="the user's id (or give username)")
    username: str = Field(default="", description="the user's username (or give user_id)")


class TableTarget(BaseModel):
    table_id: str = Field(description="a table the caller is seated at")


class Text(BaseModel):
    text: str = Field(description="plain text, 1 to CHAT_MAX_LENGTH characters; never markup")


class Report(BaseModel):
    channel: str = Field(
        description="CHAT_CHANNEL_PRIVATE, CHAT_CHANNEL_TABLE_PLAYERS or CHAT_CHANNEL_TABLE_SPECTATORS"
    )
    message_id: str
    user_id: str = Field(default="", description="private: the other user of the conversation")
    table_id: str = Field(default="", description="table chat: the table")
    reason: str = Field(default="", description="why, at most 500 characters")


@router.get("/social/friends", openapi_extra=returns(social_pb2.ListFriendsResponse))
async def list_friends(caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Friends with presence (online, and the table they sit at), friend
    requests both ways, and the users the caller blocked."""
    return message_json(await p.social.friends.listing(caller.identity))


@router.post(
    "/social/friends/requests", status_code=201, openapi_extra=returns(social_pb2.RequestFriendResponse)
)
async def request_friend(body: FriendTarget, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Ask a user to be friends (they are notified); if they had asked you
    already, you are friends now (``friends: true``)."""
    return message_json(await p.social.friends.request(caller.identity, body.user_id, body.username))


@router.post("/social/friends/{user_id}/accept", openapi_extra=returns(social_pb2.Friend))
async def accept_friend(user_id: str, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Accept a user's friend request."""
    return message_json(await p.social.friends.accept(caller.identity, user_id))


@router.post("/social/friends/{user_id}/decline", status_code=204)
async def decline_friend(user_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Decline a user's friend request, or withdraw your own."""
    await p.social.friends.decline(caller.identity, user_id)
    return Response(status_code=204)


@router.delete("/social/friends/{user_id}", status_code=204)
async def remove_friend(user_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """End a friendship."""
    await p.social.friends.remove(caller.identity, user_id)
    return Response(status_code=204)


@router.put("/social/blocks/{user_id}", status_code=204)
async def block_user(user_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Block a user: ends any friendship and request between you, refuses
    their requests and messages, hides their table chat from you."""
    await p.social.friends.block(caller.identity, user_id)
    return Response(status_code=204)


@router.delete("/social/blocks/{user_id}", status_code=204)
async def unblock_user(user_id: str, caller: CallerDep, p: PlatformDep) -> Response:
    """Lift a block."""
    await p.social.friends.unblock(caller.identity, user_id)
    return Response(status_code=204)


@router.post("/social/friends/{user_id}/invite", openapi_extra=returns(social_pb2.TableInvite))
async def invite_friend(user_id: str, body: TableTarget, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Invite a friend to the table you sit at: an open table's free seat
    (Dominó: opposite you), or a private table's invite code (host only)."""
    return message_json(await p.social.friends.invite(caller.identity, user_id, body.table_id))


@router.post("/social/messages/{user_id}", status_code=201, openapi_extra=returns(social_pb2.ChatMessage))
async def send_message(user_id: str, body: Text, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """A private message to a friend (rate-limited; blocked users refused)."""
    return message_json(await p.social.chat.send_private(caller.identity, user_id, body.text))


@router.get("/social/messages/{user_id}", openapi_extra=returns(social_pb2.ListMessagesResponse))
async def list_messages(user_id: str, caller: CallerDep, p: PlatformDep, limit: int = 0) -> dict[str, Any]:
    """The private messages with a friend, oldest first (the newest
    ``limit``, 50 by default, at most 200)."""
    messages = await p.social.chat.private_history(caller.identity, user_id, limit)
    return message_json(social_pb2.ListMessagesResponse(messages=messages))


@router.post("/tables/{table_id}/chat", status_code=201, openapi_extra=returns(social_pb2.ChatMessage))
async def send_table_message(table_id: str, body: Text, caller: CallerDep, p: PlatformDep) -> dict[str, Any]:
    """Say something at a table: to its players if you are seated, else to
    its spectators. It reaches the table's feeds as an event ``chat``."""
    return message_json(await p.social.chat.send_table(caller.identity, table_id, body.text))


@router.get("/tables/{table_id}/chat", openapi_extra=returns(social_pb2.ListTableMessagesResponse))
async def list_table_messages(
    table_id: str, caller: CallerDep, p: PlatformDep, limit: int = 0
) -> dict[str, Any]:
    """Your channel of the table's chat, oldest first."""
    messages = await p.social.chat.table_history(caller.identity, table_id, limit)
    return message_json(social_pb2.ListTableMessagesResponse(messages=messages))


@router.post("/social/reports", status_code=204)
async def report_message(body: Report, caller: CallerDep, p: PlatformDep) -> Response:
    """Report a message to the moderators."""
    if body.channel not in social_pb2.ChatChannel.keys():  # noqa: SIM118  (an enum wrapper, not a dict)
        raise invalid("invalid_request", "channel: CHAT_CHANNEL_PRIVATE, _TABLE_PLAYERS or _TABLE_SPECTATORS")
    request = social_pb2.ReportMessageRequest(
        channel=social_pb2.ChatChannel.Value(body.channel),
        message_id=body.message_id,
        user_id=body.user_id,
        table_id=body.table_id,
        reason=body.reason,
    )
    await p.social.chat.report(caller.identity, request)
    return Response(status_code=204)


@router.websocket("/social/events")
async def social_feed(websocket: WebSocket) -> None:
    """The caller's social feed: hello ``{"token", "after_id"}``, then
    ``{"event": SocialEvent}`` for each event after ``after_id`` still
    kept and each new one; ``{"ping": x}`` answered ``{"pong": x}``."""

    async def body(socket: FeedSocket, p: Platform) -> None:
        caller, hello = await socket.hello(p)
        after = hello.get("after_id", "")
        if not isinstance(after, str):
            raise invalid("invalid_request", "after_id: a string")
        # Registered and subscribed before pings are answered: a pong means
        # the feed is live.
        events, close = await p.social.open(caller.identity, after)
        try:
            await socket.pump(
                events,
                lambda event: orjson.dumps({"event": message_json(event)}).decode(),
            )
        finally:
            await close()

    await serve_feed(websocket, body)
