"""The match random generator: HMAC-SHA256 in counter mode, keyed by a secret seed.

Every die, shuffle and draw of a match comes from here, so publishing
SHA-256(seed) at the start and the seed at the end lets anyone replay the
match and check every roll. The generator's only state is ``counter``, which
the service stores with the match.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

SEED_BYTES = 32
_BLOCK_BITS = 256
_HASH_BLOCK = 64  # SHA-256's block size in bytes, for HMAC's key padding
# HMAC's pads as whole numbers: one XOR of two ints instead of 64 of bytes,
# as a match's generators are made on every move.
_IPAD = int.from_bytes(b"\x36" * _HASH_BLOCK, "big")
_OPAD = int.from_bytes(b"\x5c" * _HASH_BLOCK, "big")


def new_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def seed_digest(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def cpu_seed(seed: bytes) -> bytes:
    """The key of the CPU players' own generator: SHA-256("rodada-cpu" ‖ seed).
    A separate stream keeps the game's draws (dice, deals) independent of the
    CPUs' choices, so a record can be verified without the CPU policies; the
    CPUs' choices are still fixed by the match's seed."""
    return hashlib.sha256(b"rodada-cpu" + seed).digest()


class MatchRng:
    """Deterministic: the same seed and counter give the same draws."""

    __slots__ = ("_inner", "_outer", "counter")

    def __init__(self, seed: bytes, counter: int = 0) -> None:
        if len(seed) != SEED_BYTES:
            raise ValueError(f"seed must be {SEED_BYTES} bytes")
        # HMAC(seed, m) = SHA-256((seed ⊕ opad) ‖ SHA-256((seed ⊕ ipad) ‖ m)), RFC 2104,
        # with the two keyed prefixes hashed once per match instead of on every
        # draw: the same digests as hmac.digest, in less than half the time.
        key = int.from_bytes(seed.ljust(_HASH_BLOCK, b"\0"), "big")
        self._inner = hashlib.sha256((key ^ _IPAD).to_bytes(_HASH_BLOCK, "big"))
        self._outer = hashlib.sha256((key ^ _OPAD).to_bytes(_HASH_BLOCK, "big"))
        self.counter = counter

    def _block(self) -> int:
        inner = self._inner.copy()
        inner.update(self.counter.to_bytes(8, "big"))
        outer = self._outer.copy()
        outer.update(inner.digest())
        self.counter += 1
        return int.from_bytes(outer.digest(), "big")

    def randbelow(self, n: int) -> int:
        """Uniform in [0, n), by rejection so that no value is favoured."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << _BLOCK_BITS) - (1 << _BLOCK_BITS) % n
        while True:
            value = self._block()
            if value < limit:
                return value % n

    def randint(self, low: int, high: int) -> int:
        """Uniform in [low, high], both included."""
        return low + self.randbelow(high - low + 1)

    def shuffle(self, items: list[Any]) -> None:
        """Fisher–Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]
