"""Deterministic, language-neutral randomness for the rules.

Rules never touch a global RNG: the referee hands them an `Rng` derived from the game's secret
seed and the log version being written. The stream is SHA-256 in counter mode so that anyone, in
any language, can recompute every shuffle and roll once the seed is revealed (see docs/fairness.md).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")


_WORD = struct.Struct(">8I")
_SPAN = 1 << 32


class Rng:
    """SHA-256(key || counter) byte stream with unbiased integer sampling."""

    __slots__ = ("_counter", "_key", "_source", "_words")

    def __init__(self, key: bytes) -> None:
        self._key: bytes | None = key
        # What `for_version` hashes into the key, on the first draw: most commands draw nothing.
        self._source = ""
        self._counter = 0
        # The current block's unread 32-bit big-endian words, last first (so `pop` reads in order):
        # every draw takes one whole word, so a block never splits across draws.
        self._words: list[int] = []

    @classmethod
    def for_version(cls, seed: str, version: int) -> Rng:
        """The RNG used to decide the command that writes events after `version`: keyed by
        SHA-256 of "<seed>:<version>"."""
        rng = cls(b"")
        rng._key = None
        rng._source = f"{seed}:{version}"
        return rng

    def _refill(self) -> None:
        key = self._key
        if key is None:
            key = self._key = hashlib.sha256(self._source.encode()).digest()
        block = hashlib.sha256(key + self._counter.to_bytes(8, "big")).digest()
        self._counter += 1
        self._words.extend(reversed(_WORD.unpack(block)))

    def below(self, n: int) -> int:
        """Uniform integer in [0, n), by rejection sampling on 32-bit words (no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _SPAN - _SPAN % n
        words = self._words
        while True:
            if not words:
                self._refill()
            x = words.pop()
            if x < limit:
                return x % n

    def die(self, sides: int = 6) -> int:
        return self.below(sides) + 1

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, from the last position down: position i swaps with `below(i + 1)`
        (inlined: a game's set-up shuffles about 80 positions)."""
        words = self._words
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            limit = _SPAN - _SPAN % n
            while True:
                if not words:
                    self._refill()
                x = words.pop()
                if x < limit:
                    break
            j = x % n
            items[i], items[j] = items[j], items[i]

    def shuffled(self, items: list[T]) -> list[T]:
        out = list(items)
        self.shuffle(out)
        return out


def seed_commitment(seed: str) -> str:
    """What a game publishes at creation instead of its seed."""
    return hashlib.sha256(seed.encode()).hexdigest()
