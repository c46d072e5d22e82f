"""Accounts in Redis: registered users (argon2 password hashes) and guests.

Keys: ``user:<id>`` hash (username, name, role, password hash),
``username:<lowercased name>`` → id, claimed with SET NX so two sign-ups of
one name cannot both win.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
import unicodedata
from typing import cast

import grpc
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from services.core import keys
from services.core.errors import Refused, invalid, not_found, unauthenticated
from services.core.store import RedisClient
from services.core.tokens import Identity

USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,24}$")
GUEST_PREFIX = "g_"  # a guest's user id starts with it; an account's with "u_"
# Names that would pass for staff (or for us): refused as a name or as its
# start or end, whatever the case, accents, spacing and punctuation.
RESERVED_NAMES = (
    "admin",
    "administrador",
    "administrator",
    "moderador",
    "moderator",
    "mod",
    "rodada",
    "staff",
    "suporte",
    "support",
    "sistema",
    "system",
)
MIN_PASSWORD, MAX_PASSWORD = 8, 128
# Roles an account may hold (guests are "guest"): admins also announce
# tournaments and grant the moderator role; moderators and admins moderate.
ROLES = ("user", "moderator", "admin")


def is_guest(user_id: str) -> bool:
    return user_id.startswith(GUEST_PREFIX)


def _folded(name: str) -> str:
    """A name as it reads: no accents, no case, letters and digits only."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c)).casefold()


def impersonates_staff(name: str) -> bool:
    """ "Moderator", "ADMIN_ana", "Ródada" and "mod" read as staff; "badminton"
    and "modesto" do not ("mod" only as the whole name)."""
    folded = _folded(name)
    if folded == "mod":
        return True
    return any(folded.startswith(word) or folded.endswith(word) for word in RESERVED_NAMES if word != "mod")


def _check_name(name: str) -> None:
    if impersonates_staff(name):
        raise invalid("reserved_name", f"{name!r} reads as a staff name; choose another")


def _bad_credentials() -> Refused:
    return unauthenticated("wrong username or password", "bad_credentials")


class Accounts:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self.hasher = PasswordHasher()
        # Compared against when the user does not exist, so a login for an
        # unknown name costs the same time as a wrong password.
        self._decoy = self.hasher.hash(secrets.token_hex(16))

    async def register(self, username: str, password: str) -> Identity:
        if not USERNAME.match(username):
            raise invalid("invalid_username", "username: 3-24 characters of letters, digits, _ . -")
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise invalid("invalid_password", f"password: {MIN_PASSWORD}-{MAX_PASSWORD} characters")
        _check_name(username)
        user_id = "u_" + secrets.token_hex(8)
        if not await self.redis.set(keys.username(username), user_id, nx=True):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "username_taken", "that username is taken")
        password_hash = await asyncio.to_thread(self.hasher.hash, password)
        await self.redis.hset(
            keys.user(user_id),
            mapping={
                "username": username,
                "name": username,
                "role": "user",
                "password": password_hash,
                "created_at": time.time(),
            },
        )
        return Identity(user_id, username, "user")

    async def login(self, username: str, password: str) -> Identity:
        # The gateway's client decodes replies, so they are str.
        user_id = (
            cast(str | None, await self.redis.get(keys.username(username)))
            if USERNAME.match(username)
            else None
        )
        password_hash, name, role = None, None, None
        if user_id is not None:
            password_hash, name, role = cast(
                list[str | None], await self.redis.hmget(keys.user(user_id), ["password", "name", "role"])
            )
        try:
            await asyncio.to_thread(self.hasher.verify, password_hash or self._decoy, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            raise _bad_credentials() from None
        if user_id is None or password_hash is None:
            raise _bad_credentials()
        return Identity(user_id, name or "", role if role in ROLES else "user")

    async def set_role(self, username: str, role: str) -> str:
        """Make an account an admin or a plain user again (tools/admin.py);
        it takes effect at the account's next log-in. The account's id."""
        if role not in ROLES:
            raise invalid("invalid_role", f"roles: {', '.join(ROLES)}")
        user_id = cast(str | None, await self.redis.get(keys.username(username)))
        if user_id is None:
            raise not_found("user_not_found", f"no account {username!r}")
        await self.redis.hset(keys.user(user_id), "role", role)
        return user_id

    async def guest(self, name: str | None) -> Identity:
        """A guest, under ``name`` if it is a good one: not a staff name, and
        not an account's (a guest may not pass for someone with one)."""
        user_id = GUEST_PREFIX + secrets.token_hex(8)
        if name and USERNAME.match(name):
            _check_name(name)
            if await self.redis.exists(keys.username(name)):
                raise Refused(
                    grpc.StatusCode.ALREADY_EXISTS,
                    "username_taken",
                    "an account has that name; choose another",
                )
        display = name if name and USERNAME.match(name) else f"guest-{user_id[2:8]}"
        await self.redis.hset(
            keys.user(user_id), mapping={"name": display, "role": "guest", "created_at": time.time()}
        )
        return Identity(user_id, display, "guest")

    async def name(self, user_id: str) -> str | None:
        return cast(str | None, await self.redis.hget(keys.user(user_id), "name"))
