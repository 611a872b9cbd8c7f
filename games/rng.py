"""Deterministic, language-neutral randomness for the rules.

Rules never touch a global RNG: the referee hands them an `Rng` derived from the game's secret
seed and the log version being written. The stream is SHA-256 in counter mode so that anyone, in
any language, can recompute every shuffle and roll once the seed is revealed (see docs/fairness.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")


class Rng:
    """SHA-256(key || counter) byte stream with unbiased integer sampling."""

    __slots__ = ("_buffer", "_counter", "_key")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._buffer = b""

    @classmethod
    def for_version(cls, seed: str, version: int) -> Rng:
        """The RNG used to decide the command that writes events after `version`."""
        return cls(hashlib.sha256(f"{seed}:{version}".encode()).digest())

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def below(self, n: int) -> int:
        """Uniform integer in [0, n), by rejection sampling on 32-bit words (no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 32) - ((1 << 32) % n)
        while True:
            x = int.from_bytes(self._take(4), "big")
            if x < limit:
                return x % n

    def die(self, sides: int = 6) -> int:
        return self.below(sides) + 1

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, from the last position down."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def shuffled(self, items: list[T]) -> list[T]:
        out = list(items)
        self.shuffle(out)
        return out


def seed_commitment(seed: str) -> str:
    """What a game publishes at creation instead of its seed."""
    return hashlib.sha256(seed.encode()).hexdigest()
