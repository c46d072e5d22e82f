"""The social graph: friend requests and their answers, friendships, blocks,
presence, and inviting a friend to a table.

Both sides of a relation are written (each in its own user's slot). The
answer to a request is taken by deleting it (HDEL answers 1 once), so a
request accepted on two replicas at once makes one friendship and one
notice. Presence is read from the feeds every replica registers: a user
with a live feed (a table's or the social feed) is online; the table their
latest seated feed follows says where they sit.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from rodada.platform.v1 import social_pb2

from gateway.accounts import ROLES  # the roles of an account (a guest has none)
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings
from gateway.social.feed import SocialFeeds
from gateway.tables import OPEN, Tables
from services.core import keys
from services.core.errors import Refused, conflict, invalid, not_found, permission_denied
from services.core.store import RedisClient
from services.core.tokens import Identity

Notice = social_pb2.FriendNoticeKind


def seat_of(table: dict[str, Any], user_id: str) -> int | None:
    for seat, player in enumerate(table["players"]):
        if player and player.get("user_id") == user_id:
            return seat
    return None


class Friends:
    def __init__(
        self,
        redis: RedisClient,
        feeds: SocialFeeds,
        tables: Tables,
        sessions: Sessions,
        settings: GatewaySettings,
    ) -> None:
        self.redis = redis  # str replies
        self.feeds = feeds
        self.tables = tables
        self.sessions = sessions
        self.settings = settings
        # Told of each block and unblock once stored (gateway/social/sights.py:
        # the blocker's open feeds, on every replica).
        self.blocks_changed: Callable[[str, str, bool], Awaitable[None]] | None = None

    # -- who ------------------------------------------------------------------

    async def _account(self, user_id: str) -> tuple[str, str] | None:
        """(name, role) of a user, or None if there is none."""
        if not user_id or len(user_id) > 64:
            return None
        name, role = cast(list[str | None], await self.redis.hmget(keys.user(user_id), ["name", "role"]))
        return None if name is None else (name, role or "user")

    async def _other(self, me: Identity, user_id: str) -> str:
        """A user the caller may befriend: an account other than the caller's."""
        require_account(me)
        if user_id == me.user_id:
            raise conflict("own_user", "that is you")
        found = await self._account(user_id)
        if found is None or found[1] not in ROLES:
            raise not_found("user_not_found", f"no user {user_id!r}")
        return user_id

    async def resolve(self, user_id: str, username: str) -> str:
        if bool(user_id) == bool(username):
            raise invalid("invalid_request", "name the user by user_id or by username (one of the two)")
        if username:
            found = cast(str | None, await self.redis.get(keys.username(username)))
            if found is None:
                raise not_found("user_not_found", f"no user named {username!r}")
            return found
        return user_id

    async def blocked_between(self, a: str, b: str) -> bool:
        pipe = self.redis.pipeline(transaction=False)
        pipe.sismember(keys.blocked(a), b)
        pipe.sismember(keys.blocked(b), a)
        return any(await pipe.execute())

    async def blockers(self, sender: str, users: list[str]) -> set[str]:
        """Which of ``users`` blocked ``sender``."""
        if not users:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for user in users:
            pipe.sismember(keys.blocked(user), sender)
        return {user for user, hit in zip(users, await pipe.execute(), strict=True) if hit}

    async def blocked_by(self, user_id: str) -> set[str]:
        return set(cast(set[str], await self.redis.smembers(keys.blocked(user_id))))

    async def are_friends(self, a: str, b: str) -> bool:
        return bool(await self.redis.hexists(keys.friends(a), b))

    async def _notify(self, to: str, kind: int, about: Identity) -> None:
        notice = social_pb2.FriendNotice(kind=kind, user_id=about.user_id, name=about.name)  # type: ignore[arg-type]
        await self.feeds.write(to, social_pb2.SocialEvent(at=time.time(), friend=notice))

    # -- requests and answers ----------------------------------------------------------

    async def request(self, me: Identity, user_id: str, username: str) -> social_pb2.RequestFriendResponse:
        other = await self._other(me, await self.resolve(user_id, username))
        if await self.blocked_between(me.user_id, other):
            raise permission_denied("blocked", "one of you blocked the other")
        if await self.are_friends(me.user_id, other):
            raise conflict("already_friends", "you are friends already")
        if await self.redis.hexists(keys.requests_in(me.user_id), other):
            await self.accept(me, other)
            return social_pb2.RequestFriendResponse(friends=True, user_id=other)
        # A bucket: a few at once, then a steady pace, so nobody floods
        # another's social feed by requesting and withdrawing in a loop.
        await self.sessions.limit(self.settings.friend_requests_per_user, me.user_id, bucket=True)
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        pipe.hsetnx(keys.requests_in(other), me.user_id, now)
        pipe.hset(keys.requests_out(me.user_id), other, now)
        new, _ = await pipe.execute()
        if new:
            await self._notify(other, Notice.FRIEND_NOTICE_KIND_REQUESTED, me)
        return social_pb2.RequestFriendResponse(friends=False, user_id=other)

    async def accept(self, me: Identity, user_id: str) -> social_pb2.Friend:
        other = await self._other(me, user_id)
        if not await self.redis.hdel(keys.requests_in(me.user_id), other):
            raise not_found("request_not_found", "that user has not asked you to be friends")
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(keys.requests_out(other), me.user_id)
        pipe.hdel(keys.requests_out(me.user_id), other)
        pipe.hdel(keys.requests_in(other), me.user_id)
        pipe.hset(keys.friends(me.user_id), other, now)
        pipe.hset(keys.friends(other), me.user_id, now)
        await pipe.execute()
        await self._notify(other, Notice.FRIEND_NOTICE_KIND_ACCEPTED, me)
        found = await self._account(other)
        friend = social_pb2.Friend(user_id=other, name=found[0] if found else "", since=now)
        await self._presence([friend])
        return friend

    async def decline(self, me: Identity, user_id: str) -> None:
        require_account(me)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(keys.requests_in(me.user_id), user_id)
        pipe.hdel(keys.requests_out(user_id), me.user_id)
        pipe.hdel(keys.requests_out(me.user_id), user_id)  # withdrawing one's own
        pipe.hdel(keys.requests_in(user_id), me.user_id)
        incoming, _, outgoing, _ = await pipe.execute()
        if not incoming and not outgoing:
            raise not_found("request_not_found", "no friend request between you and that user")
        if incoming:
            await self._notify(user_id, Notice.FRIEND_NOTICE_KIND_DECLINED, me)

    async def _unfriend(self, me: str, other: str) -> bool:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(keys.friends(me), other)
        pipe.hdel(keys.friends(other), me)
        removed, _ = await pipe.execute()
        return bool(removed)

    async def remove(self, me: Identity, user_id: str) -> None:
        require_account(me)
        if not await self._unfriend(me.user_id, user_id):
            raise not_found("not_friends", "you are not friends with that user")
        await self._notify(user_id, Notice.FRIEND_NOTICE_KIND_REMOVED, me)

    async def block(self, me: Identity, user_id: str) -> None:
        if user_id == me.user_id:
            raise conflict("own_user", "that is you")
        if await self._account(user_id) is None:
            raise not_found("user_not_found", f"no user {user_id!r}")
        await self.redis.sadd(keys.blocked(me.user_id), user_id)
        await self._unfriend(me.user_id, user_id)
        pipe = self.redis.pipeline(transaction=False)
        for a, b in ((me.user_id, user_id), (user_id, me.user_id)):
            pipe.hdel(keys.requests_in(a), b)
            pipe.hdel(keys.requests_out(a), b)
        await pipe.execute()
        if self.blocks_changed is not None:
            await self.blocks_changed(me.user_id, user_id, True)

    async def unblock(self, me: Identity, user_id: str) -> None:
        if not await self.redis.srem(keys.blocked(me.user_id), user_id):
            raise not_found("not_blocked", "you have not blocked that user")
        if self.blocks_changed is not None:
            await self.blocks_changed(me.user_id, user_id, False)

    # -- the list and presence ---------------------------------------------------------

    async def listing(self, me: Identity) -> social_pb2.ListFriendsResponse:
        pipe = self.redis.pipeline(transaction=True)  # one user's keys: one slot
        pipe.hgetall(keys.friends(me.user_id))
        pipe.hgetall(keys.requests_in(me.user_id))
        pipe.hgetall(keys.requests_out(me.user_id))
        pipe.smembers(keys.blocked(me.user_id))
        friends, incoming, outgoing, blocked = await pipe.execute()
        names = await self._names([*friends, *incoming, *outgoing])
        reply = social_pb2.ListFriendsResponse(
            friends=sorted(
                (
                    social_pb2.Friend(user_id=u, name=names.get(u, ""), since=float(t))
                    for u, t in friends.items()
                ),
                key=lambda f: (f.name.lower(), f.user_id),
            ),
            incoming=_requests(incoming, names),
            outgoing=_requests(outgoing, names),
            blocked=sorted(blocked),
        )
        await self._presence(list(reply.friends))
        return reply

    async def _names(self, user_ids: list[str]) -> dict[str, str]:
        if not user_ids:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for user in user_ids:
            pipe.hget(keys.user(user), "name")
        return {u: n or "" for u, n in zip(user_ids, await pipe.execute(), strict=True)}

    async def _presence(self, friends: list[social_pb2.Friend]) -> None:
        if not friends:
            return
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        for friend in friends:
            pipe.zcount(keys.feeds(friend.user_id), now, "+inf")  # the feeds' registry: presence
            pipe.get(keys.at_table(friend.user_id))
        replies = await pipe.execute()
        for friend, count, table_id in zip(friends, replies[::2], replies[1::2], strict=True):
            friend.online = int(count) > 0
            if friend.online and table_id:
                try:
                    table = await self.tables.get(table_id)
                except Refused:
                    continue
                friend.table_id, friend.table_game, friend.table_status = (
                    table_id,
                    table["game"],
                    table["status"],
                )

    # -- inviting -----------------------------------------------------------------

    async def invite(self, me: Identity, user_id: str, table_id: str) -> social_pb2.TableInvite:
        """Tell a friend where to sit: an open table's free seat (of the
        caller's team first: Dominó's partner sits opposite), or a private
        table's invite code (host only)."""
        require_account(me)
        if not await self.are_friends(me.user_id, user_id):
            raise not_found("not_friends", "you can invite friends only")
        if await self.blocked_between(me.user_id, user_id):
            raise permission_denied("blocked", "one of you blocked the other")
        table = await self.tables.get(table_id)
        mine = seat_of(table, me.user_id)
        if mine is None:
            raise permission_denied("not_seated", "sit at the table to invite someone to it")
        if table["status"] != OPEN:
            raise conflict("table_closed", "the table has started")
        if seat_of(table, user_id) is not None:
            raise conflict("already_seated", "your friend is at this table already")
        team = next((t for t in table["teams"] if mine in t["seats"]), None)
        free = [s for s, p in enumerate(table["players"]) if p is None]
        ours = [s for s in (team["seats"] if team else []) if table["players"][s] is None]
        await self.sessions.limit(self.settings.table_invites_per_user, me.user_id, bucket=True)
        invite = social_pb2.TableInvite(
            table_id=table_id, game=table["game"], from_user_id=me.user_id, from_name=me.name
        )
        if table["open"]:
            if not free:
                raise conflict("no_seat", "the table has no free seat")
            invite.seat = (ours or free)[0]
        else:
            if table["host"] != me.user_id:
                raise permission_denied("not_host", "only the host may invite to a private table")
            created = await self.tables.invite(me, table_id, team["name"] if team and ours else None)
            invite.invite_code = created["code"]
        await self.feeds.write(user_id, social_pb2.SocialEvent(at=time.time(), invite=invite))
        return invite


def require_account(me: Identity) -> None:
    if me.role not in ROLES:
        raise permission_denied("account_required", "friends and private messages need an account")


def _requests(entries: dict[str, str], names: dict[str, str]) -> list[social_pb2.FriendRequest]:
    requests = [
        social_pb2.FriendRequest(user_id=u, name=names.get(u, ""), sent_at=float(t))
        for u, t in entries.items()
    ]
    return sorted(requests, key=lambda r: r.sent_at)
