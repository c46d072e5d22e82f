"""Access tokens: EdDSA (Ed25519) JWTs signed by the gateway, verified everywhere.

Services only hold public keys. Every token names its key (``kid``), so keys can
be rotated: verifiers accept every key they are given (the current and the
previous one).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "EdDSA"
ISSUER = "rodada"
PRIVATE_KEY_FILE = "signing.pem"
PUBLIC_KEY_FILE = "signing.pub.pem"


class TokenError(Exception):
    """The token is missing, malformed, forged or expired."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is calling, as the token says."""

    user_id: str
    name: str
    role: str  # "user", "admin", "guest" or "platform"

    @property
    def is_platform(self) -> bool:
        return self.role == "platform"


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _public_pem(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_or_create_signing_key(directory: Path, pem: str = "") -> Ed25519PrivateKey:
    """The gateway's signing key: ``pem`` (JWT_PRIVATE_KEY) if given, else the
    keys folder, where a new key pair is written on first run."""
    if pem:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("JWT_PRIVATE_KEY must be an Ed25519 key")
        return key
    private_path = directory / PRIVATE_KEY_FILE
    if private_path.exists():
        key = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError(f"{private_path} is not an Ed25519 key")
        return key
    directory.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem_bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # Write atomically and privately: a second process starting at the same
    # time must not read half a key. Linked, not renamed, so that of processes
    # starting together (a pod's WORKERS) one key wins and the others take it:
    # a token signed by one worker is then good at every other.
    tmp = private_path.with_suffix(f".{os.getpid()}.{secrets.token_hex(4)}.tmp")
    tmp.write_bytes(pem_bytes)
    tmp.chmod(0o600)
    try:
        os.link(tmp, private_path)
    except FileExistsError:
        return load_or_create_signing_key(directory)
    except OSError:  # a file system without hard links: last writer wins, as before
        tmp.replace(private_path)
    finally:
        tmp.unlink(missing_ok=True)
    (directory / PUBLIC_KEY_FILE).write_bytes(_public_pem(key.public_key()))
    return key


def rotate_signing_key(directory: Path) -> str:
    """Start signing with a new key: the current public key is kept as
    ``previous.pub.pem`` (replacing any older one) so tokens it signed stay
    valid until they expire. Returns the new key id."""
    current = directory / PUBLIC_KEY_FILE
    if current.exists():
        current.replace(directory / "previous.pub.pem")
    (directory / PRIVATE_KEY_FILE).unlink(missing_ok=True)
    return key_id(load_or_create_signing_key(directory).public_key())


def load_public_keys(directory: Path, pems_text: str = "") -> list[Ed25519PublicKey]:
    """Verification keys: ``pems_text`` (JWT_PUBLIC_KEYS) if given, else the
    keys folder's public key and any ``*.pub.pem`` beside it (a previous key
    during rotation)."""
    pems: list[bytes]
    if pems_text:
        blocks = pems_text.replace("\r", "").split("-----END PUBLIC KEY-----")
        pems = [(b.strip() + "\n-----END PUBLIC KEY-----\n").encode() for b in blocks if b.strip()]
    else:
        pems = [p.read_bytes() for p in sorted(directory.glob("*.pub.pem"))]
    keys = []
    for pem in pems:
        key = serialization.load_pem_public_key(pem)
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("public keys must be Ed25519")
        keys.append(key)
    if not keys:
        raise ValueError("no JWT public key configured (JWT_PUBLIC_KEYS or RODADA_KEYS_DIR)")
    return keys


class TokenSigner:
    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        self.kid = key_id(self.public_key)

    def issue(
        self, identity: Identity, ttl_seconds: int, kind: str = "access", jti: str | None = None
    ) -> str:
        now = int(time.time())
        claims: dict[str, object] = {
            "iss": ISSUER,
            "sub": identity.user_id,
            "name": identity.name,
            "role": identity.role,
            "typ": kind,
            "iat": now,
            "exp": now + ttl_seconds,
        }
        if jti:
            claims["jti"] = jti
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers={"kid": self.kid})


class BannedUsers(Protocol):
    """Who is banned (services/core/bans.py keeps it current), and a way to
    hear at once when a user is banned while something of theirs is open."""

    def __contains__(self, user_id: object) -> bool: ...

    def watch(self, user_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        """Call ``stop`` if ``user_id`` is banned; returns what to call to
        stop watching."""
        ...


class _Nobody:
    """No one is banned (a verifier no ban list was given)."""

    def __contains__(self, user_id: object) -> bool:
        return False

    def watch(self, user_id: str, stop: Callable[[], None]) -> Callable[[], None]:
        return lambda: None


class TokenVerifier:
    """Checks tokens; remembers the ones it has verified until they expire, since
    a client sends the same token with every move and the signature check is
    the costliest step of a call."""

    CACHE_SIZE = 10_000

    def __init__(self, public_keys: list[Ed25519PublicKey]) -> None:
        self._keys = {key_id(k): k for k in public_keys}
        self._verified: dict[tuple[str, str], tuple[Identity, float]] = {}
        # Users whose tokens are refused at once, though they live on until
        # they expire (services/core/bans.py keeps it current).
        self.banned: BannedUsers = _Nobody()

    def replace_keys(self, public_keys: list[Ed25519PublicKey]) -> None:
        """Take a new key set (after a rotation); tokens of dropped keys stop
        being accepted at once."""
        keys = {key_id(k): k for k in public_keys}
        if keys.keys() != self._keys.keys():
            self._keys = keys
            self._verified.clear()

    def refresh_claims(self, token: str) -> tuple[Identity, str]:
        """A refresh token's identity and id (``jti``); never cached, since each
        may be used once."""
        claims = self._claims(token, "refresh")
        jti = claims.get("jti")
        if not isinstance(jti, str):
            raise TokenError("refresh token without an id")
        return self._unbanned(
            Identity(str(claims["sub"]), str(claims.get("name", "")), str(claims["role"]))
        ), jti

    def verify(self, token: str, kind: str = "access") -> Identity:
        cached = self._verified.get((token, kind))
        if cached is not None and cached[1] > time.time():
            return self._unbanned(cached[0])
        identity, expires = self._verify(token, kind)
        if len(self._verified) >= self.CACHE_SIZE:
            self._verified.clear()  # crude but bounded; refilled by the next calls
        self._verified[(token, kind)] = (identity, expires)
        return self._unbanned(identity)

    def _unbanned(self, identity: Identity) -> Identity:
        if identity.user_id in self.banned:
            raise TokenError("this account is banned")
        return identity

    def _verify(self, token: str, kind: str) -> tuple[Identity, float]:
        claims = self._claims(token, kind)
        identity = Identity(str(claims["sub"]), str(claims.get("name", "")), str(claims["role"]))
        return identity, float(claims["exp"])

    def _claims(self, token: str, kind: str) -> dict[str, Any]:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = self._keys.get(kid) if isinstance(kid, str) else None
            if key is None:
                raise TokenError("token signed with an unknown key")
            claims = jwt.decode(
                token, key, algorithms=[ALGORITHM], issuer=ISSUER, options={"require": ["exp", "sub"]}
            )
        except jwt.PyJWTError as exc:
            raise TokenError(f"invalid token: {exc}") from exc
        if claims.get("typ") != kind:
            raise TokenError(f"not an {kind} token")
        return claims
