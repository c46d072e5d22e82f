"""The match generator, written again from docs/fairness.md: HMAC-SHA256 in
counter mode. Block ``i`` is HMAC-SHA256(key = the 32-byte seed, message = i
as 8 bytes big-endian), read as a 256-bit big-endian integer; ``i`` starts
at 0 and every block read moves it on, rejected ones included."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

BLOCK_BITS = 256


class Generator:
    def __init__(self, key: bytes) -> None:
        self.key = key
        self.counter = 0  # blocks read so far: the index of the next one
        self.draws = 0  # values drawn

    def block(self) -> int:
        digest = hmac.new(self.key, self.counter.to_bytes(8, "big"), hashlib.sha256).digest()
        self.counter += 1
        return int.from_bytes(digest, "big")

    def below(self, n: int) -> int:
        """Uniform in 0..n-1: blocks at or above the largest multiple of n
        that fits in 256 bits are thrown away."""
        bound = (1 << BLOCK_BITS) - (1 << BLOCK_BITS) % n
        self.draws += 1
        while True:
            value = self.block()
            if value < bound:
                return value % n

    def die(self) -> int:
        return 1 + self.below(6)

    def shuffle(self, items: list[Any]) -> None:
        """Fisher–Yates from the last position down: position i (n-1 … 1)
        swaps with below(i + 1)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
