"""rodada.platform.v1.SocialService: friends, private messages, table chat,
reports and the caller's social feed (gateway/social/)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from rodada.platform.v1 import social_pb2 as pb
from rodada.platform.v1 import social_pb2_grpc

from gateway.api.face import Context, Servicer, caller


class SocialServicer(Servicer, social_pb2_grpc.SocialServiceServicer):
    async def ListFriends(self, request: pb.ListFriendsRequest, context: Context) -> pb.ListFriendsResponse:
        return await self.p.social.friends.listing(caller(context).identity)

    async def RequestFriend(
        self, request: pb.RequestFriendRequest, context: Context
    ) -> pb.RequestFriendResponse:
        return await self.p.social.friends.request(
            caller(context).identity, request.user_id, request.username
        )

    async def AcceptFriend(
        self, request: pb.AcceptFriendRequest, context: Context
    ) -> pb.AcceptFriendResponse:
        friend = await self.p.social.friends.accept(caller(context).identity, request.user_id)
        return pb.AcceptFriendResponse(friend=friend)

    async def DeclineFriend(
        self, request: pb.DeclineFriendRequest, context: Context
    ) -> pb.DeclineFriendResponse:
        await self.p.social.friends.decline(caller(context).identity, request.user_id)
        return pb.DeclineFriendResponse()

    async def RemoveFriend(
        self, request: pb.RemoveFriendRequest, context: Context
    ) -> pb.RemoveFriendResponse:
        await self.p.social.friends.remove(caller(context).identity, request.user_id)
        return pb.RemoveFriendResponse()

    async def BlockUser(self, request: pb.BlockUserRequest, context: Context) -> pb.BlockUserResponse:
        await self.p.social.friends.block(caller(context).identity, request.user_id)
        return pb.BlockUserResponse()

    async def UnblockUser(self, request: pb.UnblockUserRequest, context: Context) -> pb.UnblockUserResponse:
        await self.p.social.friends.unblock(caller(context).identity, request.user_id)
        return pb.UnblockUserResponse()

    async def InviteFriend(
        self, request: pb.InviteFriendRequest, context: Context
    ) -> pb.InviteFriendResponse:
        invite = await self.p.social.friends.invite(
            caller(context).identity, request.user_id, request.table_id
        )
        return pb.InviteFriendResponse(invite=invite)

    async def SendMessage(self, request: pb.SendMessageRequest, context: Context) -> pb.SendMessageResponse:
        message = await self.p.social.chat.send_private(
            caller(context).identity, request.user_id, request.text
        )
        return pb.SendMessageResponse(message=message)

    async def ListMessages(
        self, request: pb.ListMessagesRequest, context: Context
    ) -> pb.ListMessagesResponse:
        me = caller(context).identity
        return pb.ListMessagesResponse(
            messages=await self.p.social.chat.private_history(me, request.user_id, request.limit)
        )

    async def SendTableMessage(
        self, request: pb.SendTableMessageRequest, context: Context
    ) -> pb.SendTableMessageResponse:
        message = await self.p.social.chat.send_table(
            caller(context).identity, request.table_id, request.text
        )
        return pb.SendTableMessageResponse(message=message)

    async def ListTableMessages(
        self, request: pb.ListTableMessagesRequest, context: Context
    ) -> pb.ListTableMessagesResponse:
        me = caller(context).identity
        return pb.ListTableMessagesResponse(
            messages=await self.p.social.chat.table_history(me, request.table_id, request.limit)
        )

    async def ReportMessage(
        self, request: pb.ReportMessageRequest, context: Context
    ) -> pb.ReportMessageResponse:
        await self.p.social.chat.report(caller(context).identity, request)
        return pb.ReportMessageResponse()

    async def FollowSocial(
        self, request: pb.FollowSocialRequest, context: Context
    ) -> AsyncIterator[pb.FollowSocialResponse]:
        events, close = await self.p.social.open(caller(context).identity, request.after_id)
        try:
            async for event in events:
                yield pb.FollowSocialResponse(event=event)
        finally:
            await close()
