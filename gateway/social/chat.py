"""Chat: private messages between friends and each table's two channels
(its seated players; its spectators, whom the players never hear, so they
cannot help a player).

A message is data: its text is kept and delivered exactly as sent (after
the word filter), never interpreted; clients show it as text. Every send
is checked in this order, and a refusal changes nothing: length (1 to
CHAT_MAX_LENGTH characters), who may speak where (friends only, no block
either way; the players' channel for the seated), then the rate limit
(CHAT_LIMIT, every replica counting together).

History: one stream per conversation and per table channel, trimmed to
CHAT_HISTORY_LENGTH messages and kept CHAT_HISTORY_TTL_SECONDS after the
last. Delivery: a private message goes to both users' social feeds; a table
message is appended to the table's history as a MatchEvent ``chat`` and so
reaches the table's feeds, its audience the players' seats (leaving out
the players who blocked the sender) or only spectators
(``spectators_only``). Before the start, when feeds know no seats yet,
each feed sorts chat by whether its user is seated then (see ``ChatSight``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import any_pb2
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, social_pb2

from gateway import metrics
from gateway.accounts import is_guest
from gateway.paging import page
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings
from gateway.social.feed import SocialFeeds
from gateway.social.friends import Friends, require_account, seat_of
from gateway.tables import PLAYING, Tables
from services.core import keys
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied
from services.core.feeds import Item
from services.core.store import RecordStore, RedisClient
from services.core.tokens import Identity

if TYPE_CHECKING:
    from gateway.moderation.moderation import Moderation

Channel = social_pb2.ChatChannel
PRIVATE = Channel.CHAT_CHANNEL_PRIVATE
PLAYERS = Channel.CHAT_CHANNEL_TABLE_PLAYERS
SPECTATORS = Channel.CHAT_CHANNEL_TABLE_SPECTATORS
_STREAM_NAMES = {PLAYERS: "players", SPECTATORS: "spectators"}
_LABELS = {PRIVATE: "private", PLAYERS: "table_players", SPECTATORS: "table_spectators"}
MAX_REASON = 500
DEFAULT_LIMIT, MAX_LIMIT = 50, 200


class WordFilter:
    """Masks configured words (whole words, any case) with asterisks."""

    def __init__(self, words: str) -> None:
        listed = sorted({w.strip() for w in words.split(",") if w.strip()}, key=len, reverse=True)
        self.pattern = (
            re.compile(r"\b(?:" + "|".join(map(re.escape, listed)) + r")\b", re.IGNORECASE)
            if listed
            else None
        )

    def __call__(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: "*" * len(m.group(0)), text)


class Chat:
    def __init__(
        self,
        raw: RedisClient,
        store: RecordStore,
        tables: Tables,
        friends: Friends,
        feeds: SocialFeeds,
        sessions: Sessions,
        settings: GatewaySettings,
    ) -> None:
        self.raw = raw  # bytes replies: messages are stored serialized
        self.store = store
        self.tables = tables
        self.friends = friends
        self.feeds = feeds
        self.sessions = sessions
        self.settings = settings
        self.filter = WordFilter(settings.chat_word_filter)
        # Reports go to its queue, and a muted user may not chat (set by the Platform).
        self.moderation: Moderation | None = None

    # -- sending -------------------------------------------------------------------------

    async def _not_muted(self, me: Identity) -> None:
        until = await self.moderation.muted_until(me.user_id) if self.moderation else None
        if until is not None:
            left = max(0.0, until - time.time())
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "muted",
                f"a moderator muted you: you may chat again in {left:.0f} s",
                retry_after=left,
            )

    def _text(self, text: str) -> str:
        if not text.strip():
            raise invalid("empty_message", "say something")
        if len(text) > self.settings.chat_max_length:
            raise invalid(
                "message_too_long", f"at most {self.settings.chat_max_length} characters ({len(text)} sent)"
            )
        return self.filter(text)

    async def _keep(self, stream: str, message: social_pb2.ChatMessage) -> None:
        """Store the message in its history stream; its id is the entry's."""
        pipe = self.raw.pipeline(transaction=True)  # one key
        pipe.xadd(
            stream,
            {"d": message.SerializeToString()},
            maxlen=self.settings.chat_history_length,
            approximate=False,
        )
        pipe.expire(stream, self.settings.chat_history_ttl_seconds)
        entry_id, _ = await pipe.execute()
        message.id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    async def send_private(self, me: Identity, user_id: str, text: str) -> social_pb2.ChatMessage:
        with _counted(PRIVATE):
            require_account(me)
            text = self._text(text)
            await self._not_muted(me)
            if await self.friends.blocked_between(me.user_id, user_id):
                raise permission_denied("blocked", "one of you blocked the other")
            if not await self.friends.are_friends(me.user_id, user_id):
                raise not_found("not_friends", "you can send private messages to friends only")
            await self.sessions.limit(self.settings.chat_per_user, me.user_id)
            message = social_pb2.ChatMessage(
                channel=PRIVATE,
                sender_id=me.user_id,
                sender_name=me.name,
                sender_guest=is_guest(me.user_id),
                recipient_id=user_id,
                text=text,
                sent_at=time.time(),
            )
            await self._keep(keys.conversation(me.user_id, user_id), message)
            event = social_pb2.SocialEvent(at=message.sent_at, message=message)
            await self.feeds.write(user_id, event)
            await self.feeds.write(me.user_id, event)  # the sender's other devices
            return message

    async def send_table(self, me: Identity, table_id: str, text: str) -> social_pb2.ChatMessage:
        with _counted(None) as counting:
            text = self._text(text)
            await self._not_muted(me)
            table = await self.tables.get(table_id)
            seat = seat_of(table, me.user_id)
            channel = PLAYERS if seat is not None else SPECTATORS
            counting.channel = channel
            await self.sessions.limit(self.settings.chat_per_user, me.user_id)
            message = social_pb2.ChatMessage(
                channel=channel,
                sender_id=me.user_id,
                sender_name=me.name,
                sender_guest=is_guest(me.user_id),
                table_id=table_id,
                text=text,
                sent_at=time.time(),
            )
            chat = any_pb2.Any()
            chat.Pack(message)
            event = match_pb2.MatchEvent(
                version=await self.store.match_version(table_id), at=message.sent_at, chat=chat
            )
            if channel == SPECTATORS:
                event.spectators_only = True
            elif table["status"] == PLAYING:  # seats are known to the feeds from here on
                players = {p["user_id"]: s for s, p in enumerate(table["players"]) if p and p.get("user_id")}
                blockers = await self.friends.blockers(me.user_id, list(players))
                event.audience.extend(
                    s for s in range(table["seats"]) if not any(players.get(b) == s for b in blockers)
                )
            stream = keys.table_chat(table_id, _STREAM_NAMES[channel])
            await self._keep(stream, message)
            event.chat.Pack(message)  # now with its id
            live = match_pb2.LiveUpdate(events=[event]).SerializeToString()
            if await self.store.append(table_id, [event.SerializeToString()], live) is None:
                await self.raw.xdel(stream, message.id)  # nobody will hear it: not kept either
                raise conflict("table_closed", "the table's match is over")
            return message

    # -- reading -------------------------------------------------------------------------

    async def _read(self, stream: str, limit: int, hide: set[str]) -> list[social_pb2.ChatMessage]:
        _, count = page(0, limit, default=DEFAULT_LIMIT, maximum=MAX_LIMIT)
        entries: Any = await self.raw.xrevrange(stream, count=count)
        messages = []
        for entry_id, fields in reversed(entries):
            message = social_pb2.ChatMessage.FromString(fields[b"d"])
            message.id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
            if message.sender_id not in hide:
                messages.append(message)
        return messages

    async def private_history(self, me: Identity, user_id: str, limit: int) -> list[social_pb2.ChatMessage]:
        require_account(me)
        if not await self.friends.are_friends(me.user_id, user_id):
            raise not_found("not_friends", "you are not friends with that user")
        return await self._read(keys.conversation(me.user_id, user_id), limit, set())

    async def table_history(self, me: Identity, table_id: str, limit: int) -> list[social_pb2.ChatMessage]:
        table = await self.tables.get(table_id)
        channel = PLAYERS if seat_of(table, me.user_id) is not None else SPECTATORS
        hide = await self.friends.blocked_by(me.user_id)
        return await self._read(keys.table_chat(table_id, _STREAM_NAMES[channel]), limit, hide)

    async def report(self, me: Identity, request: social_pb2.ReportMessageRequest) -> None:
        if len(request.reason) > MAX_REASON:
            raise invalid("invalid_request", f"reason: at most {MAX_REASON} characters")
        if request.channel == PRIVATE:
            stream = keys.conversation(me.user_id, request.user_id)
        elif request.channel in _STREAM_NAMES:
            table = await self.tables.get(request.table_id)
            seated = seat_of(table, me.user_id) is not None
            if seated != (request.channel == PLAYERS):
                raise permission_denied("not_your_channel", "report what your channel of the table carried")
            stream = keys.table_chat(request.table_id, _STREAM_NAMES[request.channel])
        else:
            raise invalid("invalid_request", "channel: PRIVATE, TABLE_PLAYERS or TABLE_SPECTATORS")
        try:
            entries: Any = await self.raw.xrange(stream, request.message_id, request.message_id)
        except Exception:  # a malformed id
            entries = []
        if not entries:
            raise not_found("message_not_found", "no such message (or it is no longer kept)")
        message = social_pb2.ChatMessage.FromString(entries[0][1][b"d"])
        if message.sender_id == me.user_id:
            raise invalid("invalid_request", "that is your own message")
        assert self.moderation is not None, "the Platform wires moderation in"
        message_key = f"{stream}:{request.message_id}"
        if await self.moderation.already_reported(me.user_id, message_key):
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS, "already_reported", "you reported this message already"
            )
        await self.sessions.limit(self.settings.reports_per_user, me.user_id, bucket=True)
        await self.moderation.file(
            message_key,
            {
                "reporter_id": me.user_id,
                "channel": int(request.channel),
                "message_id": request.message_id,
                "table_id": request.table_id,
                "conversation_user_id": request.user_id if request.channel == PRIVATE else "",
                "sender_id": message.sender_id,
                "sender_name": message.sender_name,
                "text": message.text,
                "reason": request.reason,
            },
        )
        metrics.CHAT_REPORTS.labels(_LABELS[request.channel]).inc()


class _counted:
    """Counts a send by its outcome: sent by channel, or refused by reason."""

    def __init__(self, channel: social_pb2.ChatChannel.ValueType | None) -> None:
        self.channel = channel

    def __enter__(self) -> _counted:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if error is None:
            metrics.CHAT_SENT.labels(_LABELS[self.channel] if self.channel else "table").inc()
        elif isinstance(error, Refused):
            metrics.CHAT_REFUSED.labels(error.reason).inc()


_NOBODY: frozenset[str] = frozenset()


class ChatSight:
    """Which table chat one feed's user may see, kept per feed from what
    the feed itself carries: the table (before the start), each table
    change (with the table after it), the user's snapshots (seat or
    spectator). The hub already applies audiences once seats are known;
    before the start, when it knows none, this keeps the players' channel
    to the seated and the spectators' to the others. Senders the user
    had blocked when the feed opened are left out."""

    __slots__ = ("hidden", "seated", "user_id")  # one per open table feed: kept small

    def __init__(self, user_id: str, seated: bool, hidden: set[str]) -> None:
        self.user_id = user_id
        self.seated = seated
        self.hidden = frozenset(hidden) if hidden else _NOBODY

    def wrap(self, sink: Callable[[Item | None], None]) -> Callable[[Item | None], None]:
        def filtered(item: Item | None) -> None:
            if item is None or self.shows(item.message):
                sink(item)

        return filtered

    def shows(self, message: Any) -> bool:
        if isinstance(message, platform_pb2.Table):
            self.seated = any(p.user_id == self.user_id for p in message.players)
        elif isinstance(message, match_pb2.Snapshot):
            self.seated = message.seat >= 0
        elif isinstance(message, match_pb2.MatchEvent):
            body = message.WhichOneof("body")
            if body == "table":
                change = platform_pb2.TableChange()
                if message.table.Unpack(change) and change.HasField("table"):
                    self.seated = any(p.user_id == self.user_id for p in change.table.players)
            elif body == "chat":
                chat = social_pb2.ChatMessage()
                if not message.chat.Unpack(chat) or chat.sender_id in self.hidden:
                    return False
                return (chat.channel == PLAYERS) == self.seated
        return True
