"""What moderators and admins do (ModerationService, both faces), and what
the rest of the platform asks of moderation: filing a report, whether a user
is muted.

Roles are read from the account at each call (not from the token), so a
grant or a revocation counts at once. A report is one reporter's of one
message (a second is refused); it waits in the open queue until a moderator
takes it, and leaves it resolved. Every action is appended to the audit log.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, cast

import grpc
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import moderation_pb2 as pb
from rodada.platform.v1 import social_pb2

from gateway.accounts import ROLES
from gateway.paging import page
from services.core import keys
from services.core.bans import Bans
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied
from services.core.store import RedisClient
from services.core.tokens import Identity

STAFF = ("moderator", "admin")
MAX_TEXT = 500
MAX_MUTE_SECONDS = 30 * 24 * 3600
AUDIT_KEPT = 100_000
_SCAN_BATCH = 500
Channel = social_pb2.ChatChannel
_STREAM_NAMES = {
    Channel.CHAT_CHANNEL_TABLE_PLAYERS: "players",
    Channel.CHAT_CHANNEL_TABLE_SPECTATORS: "spectators",
}
_STATUS = {
    "open": pb.REPORT_STATUS_OPEN,
    "taken": pb.REPORT_STATUS_TAKEN,
    "resolved": pb.REPORT_STATUS_RESOLVED,
}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _reason(text: str, what: str = "reason") -> str:
    if len(text) > MAX_TEXT:
        raise invalid("invalid_request", f"{what}: at most {MAX_TEXT} characters")
    return text


class Moderation:
    def __init__(self, redis: RedisClient, raw: RedisClient, bans: Bans) -> None:
        self.redis = redis  # str replies
        self.raw = raw  # bytes replies: chat and events are stored serialized
        self.bans = bans

    # -- roles -----------------------------------------------------------------------

    async def role(self, user_id: str) -> str | None:
        """The account's role now, or None if there is no such account."""
        if not user_id or len(user_id) > 64:
            return None
        return cast(str | None, await self.redis.hget(keys.user(user_id), "role"))

    async def _staff(self, me: Identity, admin: bool = False) -> None:
        role = await self.role(me.user_id)
        if admin and role != "admin":
            raise permission_denied("admins_only", "only admins may do this")
        if role not in STAFF:
            raise permission_denied("moderators_only", "only moderators and admins may do this")

    async def _target(self, me: Identity, user_id: str) -> str:
        """A user a moderator may act on: an account or a guest, not staff, not oneself."""
        role = await self.role(user_id)
        if role is None:
            raise not_found("user_not_found", f"no user {user_id!r}")
        if user_id == me.user_id:
            raise conflict("own_user", "that is you")
        if role in STAFF:
            raise conflict("staff_user", "moderators and admins are not muted or banned")
        return role

    async def set_moderator(self, me: Identity, user_id: str, moderator: bool) -> None:
        await self._staff(me, admin=True)
        role = await self.role(user_id)
        if role is None or role not in (*ROLES, "moderator"):
            raise not_found("user_not_found", f"no account {user_id!r}")
        if role == "admin":
            raise conflict("staff_user", "an admin's role is changed with tools/admin.py")
        await self.redis.hset(keys.user(user_id), "role", "moderator" if moderator else "user")
        await self._audit(me, "grant_moderator" if moderator else "revoke_moderator", user_id)

    # -- reports ---------------------------------------------------------------------

    async def already_reported(self, reporter: str, message_key: str) -> bool:
        return bool(await self.redis.exists(keys.reported(reporter, message_key)))

    async def file(self, message_key: str, fields: dict[str, str | int]) -> str:
        """Queue a report (``fields``: the Report's, and ``stream``, where the
        message is kept); one per reporter and message."""
        report_id = secrets.token_urlsafe(9)
        if not await self.redis.set(
            keys.reported(str(fields["reporter_id"]), message_key), report_id, nx=True
        ):
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS, "already_reported", "you reported this message already"
            )
        now = time.time()
        pipe = self.redis.pipeline(transaction=True)  # one slot: {mod}
        record: dict[str, str | int | float] = {
            **fields,
            "id": report_id,
            "status": "open",
            "reported_at": now,
        }
        pipe.hset(keys.report(report_id), mapping=record)  # type: ignore[arg-type]
        pipe.zadd(keys.REPORTS_OPEN, {report_id: now})
        await pipe.execute()
        return report_id

    async def _report(self, report_id: str) -> dict[str, str]:
        found = cast(dict[str, str], await self.redis.hgetall(keys.report(report_id))) if report_id else {}
        if not found:
            raise not_found("report_not_found", f"no report {report_id!r}")
        return found

    @staticmethod
    def _message(found: dict[str, str]) -> pb.Report:
        return pb.Report(
            id=found["id"],
            status=_STATUS.get(found.get("status", ""), pb.REPORT_STATUS_UNSPECIFIED),
            reporter_id=found.get("reporter_id", ""),
            channel=int(found.get("channel", 0)),  # type: ignore[arg-type]
            message_id=found.get("message_id", ""),
            table_id=found.get("table_id", ""),
            conversation_user_id=found.get("conversation_user_id", ""),
            sender_id=found.get("sender_id", ""),
            sender_name=found.get("sender_name", ""),
            text=found.get("text", ""),
            reason=found.get("reason", ""),
            reported_at=float(found.get("reported_at", 0)),
            taken_by=found.get("taken_by", ""),
            resolution=found.get("resolution", ""),
            resolved_at=float(found.get("resolved_at", 0)),
        )

    async def reports(self, me: Identity, resolved: bool, offset: int, limit: int) -> pb.ListReportsResponse:
        offset, limit = page(offset, limit, default=20, maximum=100)
        await self._staff(me)
        queue = keys.REPORTS_RESOLVED if resolved else keys.REPORTS_OPEN
        pipe = self.redis.pipeline(transaction=True)
        pipe.zrange(queue, offset, offset + limit - 1)
        pipe.zcard(queue)
        ids, total = await pipe.execute()
        reply = pb.ListReportsResponse(total=int(total))
        for report_id in ids:
            found = cast(dict[str, str], await self.redis.hgetall(keys.report(_text(report_id))))
            if found:
                reply.reports.append(self._message(found))
        return reply

    async def take(self, me: Identity, report_id: str) -> pb.Report:
        await self._staff(me)
        found = await self._report(report_id)
        if found.get("status") == "resolved":
            raise conflict("report_resolved", "this report is resolved")
        if not await self.redis.hsetnx(keys.report(report_id), "taken_by", me.user_id):
            taker = cast(str | None, await self.redis.hget(keys.report(report_id), "taken_by"))
            if taker != me.user_id:
                raise conflict("report_taken", "another moderator took this report")
        await self.redis.hset(keys.report(report_id), "status", "taken")
        await self._audit(me, "take_report", report_id)
        return self._message(await self._report(report_id))

    async def resolve(self, me: Identity, report_id: str, resolution: str) -> pb.Report:
        _reason(resolution, "resolution")
        await self._staff(me)
        found = await self._report(report_id)
        if found.get("status") == "resolved":
            raise conflict("report_resolved", "this report is resolved")
        if found.get("taken_by") != me.user_id:
            raise conflict("report_not_taken", "take the report before resolving it")
        now = time.time()
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(
            keys.report(report_id),
            mapping={"status": "resolved", "resolution": resolution, "resolved_at": now},
        )
        pipe.zrem(keys.REPORTS_OPEN, report_id)
        pipe.zadd(keys.REPORTS_RESOLVED, {report_id: now})
        await pipe.execute()
        await self._audit(me, "resolve_report", report_id, resolution)
        return self._message(await self._report(report_id))

    # -- mutes and bans ----------------------------------------------------------------

    async def mute(self, me: Identity, user_id: str, seconds: int, reason: str) -> float:
        _reason(reason)
        if not 0 < seconds <= MAX_MUTE_SECONDS:
            raise invalid("invalid_duration", f"seconds: 1 to {MAX_MUTE_SECONDS}")
        await self._staff(me)
        await self._target(me, user_id)
        until = time.time() + seconds
        await self.redis.set(keys.muted(user_id), repr(until), ex=seconds)
        await self._audit(me, "mute", user_id, f"{seconds} s: {reason}")
        return until

    async def muted_until(self, user_id: str) -> float | None:
        until = cast(str | None, await self.redis.get(keys.muted(user_id)))
        return float(until) if until else None

    async def ban(self, me: Identity, user_id: str, reason: str) -> None:
        _reason(reason)
        await self._staff(me)
        await self._target(me, user_id)
        await self.redis.sadd(keys.BANNED, user_id)
        await self.bans.changed(user_id, True)
        await self._audit(me, "ban", user_id, reason)

    async def unban(self, me: Identity, user_id: str) -> None:
        await self._staff(me)
        if not await self.redis.srem(keys.BANNED, user_id):
            raise not_found("user_not_found", "that user is not banned")
        await self.bans.changed(user_id, False)
        await self._audit(me, "unban", user_id)

    # -- removing a message ----------------------------------------------------------------

    async def remove(self, me: Identity, request: pb.RemoveMessageRequest) -> None:
        _reason(request.reason)
        await self._staff(me)
        if request.channel == Channel.CHAT_CHANNEL_PRIVATE:
            if len(request.user_ids) != 2:
                raise invalid("invalid_request", "user_ids: the two users of the conversation")
            stream = keys.conversation(*request.user_ids)
        elif request.channel in _STREAM_NAMES:
            stream = keys.table_chat(request.table_id, _STREAM_NAMES[request.channel])
        else:
            raise invalid("invalid_request", "channel: PRIVATE, TABLE_PLAYERS or TABLE_SPECTATORS")
        try:
            removed = await self.raw.xdel(stream, request.message_id)
        except Exception:  # a malformed id
            removed = 0
        if not removed:
            raise not_found("message_not_found", "no such message (or it is no longer kept)")
        if request.channel == Channel.CHAT_CHANNEL_PRIVATE:
            for user_id in request.user_ids:
                await self._scrub(keys.social_feed(user_id), request.message_id, _social_message_id)
        else:
            await self._scrub(keys.events(request.table_id), request.message_id, _event_message_id)
        await self._audit(me, "remove_message", request.message_id, request.reason)

    async def _scrub(self, stream: str, message_id: str, id_of: Any) -> None:
        """Delete the entries of ``stream`` that carry the message (a table's
        history: its replay; a user's social feed)."""
        start = "-"
        while True:
            entries: Any = await self.raw.xrange(stream, start, "+", count=_SCAN_BATCH)
            gone = [entry_id for entry_id, fields in entries if id_of(fields.get(b"d", b"")) == message_id]
            if gone:
                await self.raw.xdel(stream, *gone)
            if len(entries) < _SCAN_BATCH:
                return
            start = "(" + _text(entries[-1][0])

    # -- the audit log ---------------------------------------------------------------------

    async def _audit(self, me: Identity, action: str, target: str, detail: str = "") -> None:
        await self.redis.xadd(
            keys.AUDIT,
            {
                "at": time.time(),
                "moderator": me.user_id,
                "action": action,
                "target": target,
                "detail": detail,
            },
            maxlen=AUDIT_KEPT,
            approximate=True,
        )

    async def audit(self, me: Identity, offset: int, limit: int) -> pb.ListAuditLogResponse:
        offset, limit = page(offset, limit, default=20, maximum=100)
        await self._staff(me)
        entries: Any = await self.redis.xrevrange(keys.AUDIT, count=offset + limit)
        return pb.ListAuditLogResponse(
            entries=[
                pb.AuditEntry(
                    at=float(fields["at"]),
                    moderator_id=fields["moderator"],
                    action=fields["action"],
                    target=fields["target"],
                    detail=fields.get("detail", ""),
                )
                for _, fields in entries[offset:]
            ]
        )


def _event_message_id(data: bytes) -> str:
    event = match_pb2.MatchEvent.FromString(data)
    if event.WhichOneof("body") != "chat":
        return ""
    message = social_pb2.ChatMessage()
    return message.id if event.chat.Unpack(message) else ""


def _social_message_id(data: bytes) -> str:
    event = social_pb2.SocialEvent.FromString(data)
    return event.message.id if event.HasField("message") else ""
