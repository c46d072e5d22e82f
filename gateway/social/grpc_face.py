"""rodada.platform.v1.SocialService on the gateway's gRPC face, beside
PlatformService (same server, guard, errors): the same operations as the
HTTP routes in gateway/routes/social.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
from rodada.platform.v1 import social_pb2, social_pb2_grpc

from gateway.platform import Platform
from services.kit.guard import bearer
from services.kit.tokens import Identity

SOCIAL_SERVICE = social_pb2.DESCRIPTOR.services_by_name["SocialService"].full_name

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class SocialServicer(social_pb2_grpc.SocialServiceServicer):
    def __init__(self, platform: Platform) -> None:
        self.p = platform
        self.social = platform.social

    def _me(self, context: Context) -> Identity:
        return self.p.sessions.caller(bearer(context.invocation_metadata())).identity

    async def ListFriends(
        self, request: social_pb2.ListFriendsRequest, context: Context
    ) -> social_pb2.ListFriendsResponse:
        return await self.social.friends.listing(self._me(context))

    async def RequestFriend(
        self, request: social_pb2.RequestFriendRequest, context: Context
    ) -> social_pb2.RequestFriendResponse:
        return await self.social.friends.request(self._me(context), request.user_id, request.username)

    async def AcceptFriend(
        self, request: social_pb2.AcceptFriendRequest, context: Context
    ) -> social_pb2.AcceptFriendResponse:
        friend = await self.social.friends.accept(self._me(context), request.user_id)
        return social_pb2.AcceptFriendResponse(friend=friend)

    async def DeclineFriend(
        self, request: social_pb2.DeclineFriendRequest, context: Context
    ) -> social_pb2.DeclineFriendResponse:
        await self.social.friends.decline(self._me(context), request.user_id)
        return social_pb2.DeclineFriendResponse()

    async def RemoveFriend(
        self, request: social_pb2.RemoveFriendRequest, context: Context
    ) -> social_pb2.RemoveFriendResponse:
        await self.social.friends.remove(self._me(context), request.user_id)
        return social_pb2.RemoveFriendResponse()

    async def BlockUser(
        self, request: social_pb2.BlockUserRequest, context: Context
    ) -> social_pb2.BlockUserResponse:
        await self.social.friends.block(self._me(context), request.user_id)
        return social_pb2.BlockUserResponse()

    async def UnblockUser(
        self, request: social_pb2.UnblockUserRequest, context: Context
    ) -> social_pb2.UnblockUserResponse:
        await self.social.friends.unblock(self._me(context), request.user_id)
        return social_pb2.UnblockUserResponse()

    async def InviteFriend(
        self, request: social_pb2.InviteFriendRequest, context: Context
    ) -> social_pb2.InviteFriendResponse:
        invite = await self.social.friends.invite(self._me(context), request.user_id, request.table_id)
        return social_pb2.InviteFriendResponse(invite=invite)

    async def SendMessage(
        self, request: social_pb2.SendMessageRequest, context: Context
    ) -> social_pb2.SendMessageResponse:
        message = await self.social.chat.send_private(self._me(context), request.user_id, request.text)
        return social_pb2.SendMessageResponse(message=message)

    async def ListMessages(
        self, request: social_pb2.ListMessagesRequest, context: Context
    ) -> social_pb2.ListMessagesResponse:
        messages = await self.social.chat.private_history(self._me(context), request.user_id, request.limit)
        return social_pb2.ListMessagesResponse(messages=messages)

    async def SendTableMessage(
        self, request: social_pb2.SendTableMessageRequest, context: Context
    ) -> social_pb2.SendTableMessageResponse:
        message = await self.social.chat.send_table(self._me(context), request.table_id, request.text)
        return social_pb2.SendTableMessageResponse(message=message)

    async def ListTableMessages(
        self, request: social_pb2.ListTableMessagesRequest, context: Context
    ) -> social_pb2.ListTableMessagesResponse:
        messages = await self.social.chat.table_history(self._me(context), request.table_id, request.limit)
        return social_pb2.ListTableMessagesResponse(messages=messages)

    async def ReportMessage(
        self, request: social_pb2.ReportMessageRequest, context: Context
    ) -> social_pb2.ReportMessageResponse:
        await self.social.chat.report(self._me(context), request)
        return social_pb2.ReportMessageResponse()

    async def FollowSocial(
        self, request: social_pb2.FollowSocialRequest, context: Context
    ) -> AsyncIterator[social_pb2.FollowSocialResponse]:
        events, close = await self.social.open(self._me(context), request.after_id)
        try:
            async for event in events:
                yield social_pb2.FollowSocialResponse(event=event)
        finally:
            await close()


def add_to_server(platform: Platform, server: grpc.aio.Server) -> str:
    """Serve SocialService on ``server``; its full name (for reflection)."""
    social_pb2_grpc.add_SocialServiceServicer_to_server(SocialServicer(platform), server)
    return SOCIAL_SERVICE
