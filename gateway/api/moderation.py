"""rodada.platform.v1.ModerationService: roles, the reports queue, mutes,
bans, removing messages and the audit log (gateway/moderation/)."""

from __future__ import annotations

from rodada.platform.v1 import moderation_pb2 as pb
from rodada.platform.v1 import moderation_pb2_grpc

from gateway.api.face import Context, Servicer, caller


class ModerationServicer(Servicer, moderation_pb2_grpc.ModerationServiceServicer):
    async def GrantModerator(
        self, request: pb.GrantModeratorRequest, context: Context
    ) -> pb.GrantModeratorResponse:
        await self.p.moderation.set_moderator(caller(context).identity, request.user_id, True)
        return pb.GrantModeratorResponse()

    async def RevokeModerator(
        self, request: pb.RevokeModeratorRequest, context: Context
    ) -> pb.RevokeModeratorResponse:
        await self.p.moderation.set_moderator(caller(context).identity, request.user_id, False)
        return pb.RevokeModeratorResponse()

    async def ListReports(self, request: pb.ListReportsRequest, context: Context) -> pb.ListReportsResponse:
        me = caller(context).identity
        return await self.p.moderation.reports(me, request.resolved, request.offset, request.limit)

    async def TakeReport(self, request: pb.TakeReportRequest, context: Context) -> pb.TakeReportResponse:
        report = await self.p.moderation.take(caller(context).identity, request.report_id)
        return pb.TakeReportResponse(report=report)

    async def ResolveReport(
        self, request: pb.ResolveReportRequest, context: Context
    ) -> pb.ResolveReportResponse:
        me = caller(context).identity
        report = await self.p.moderation.resolve(me, request.report_id, request.resolution)
        return pb.ResolveReportResponse(report=report)

    async def MuteUser(self, request: pb.MuteUserRequest, context: Context) -> pb.MuteUserResponse:
        me = caller(context).identity
        until = await self.p.moderation.mute(me, request.user_id, request.seconds, request.reason)
        return pb.MuteUserResponse(until=until)

    async def BanUser(self, request: pb.BanUserRequest, context: Context) -> pb.BanUserResponse:
        await self.p.moderation.ban(caller(context).identity, request.user_id, request.reason)
        return pb.BanUserResponse()

    async def UnbanUser(self, request: pb.UnbanUserRequest, context: Context) -> pb.UnbanUserResponse:
        await self.p.moderation.unban(caller(context).identity, request.user_id)
        return pb.UnbanUserResponse()

    async def RemoveMessage(
        self, request: pb.RemoveMessageRequest, context: Context
    ) -> pb.RemoveMessageResponse:
        await self.p.moderation.remove(caller(context).identity, request)
        return pb.RemoveMessageResponse()

    async def ListAuditLog(
        self, request: pb.ListAuditLogRequest, context: Context
    ) -> pb.ListAuditLogResponse:
        return await self.p.moderation.audit(caller(context).identity, request.offset, request.limit)
