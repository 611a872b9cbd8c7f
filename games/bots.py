"""Game-agnostic bots. Bots sit outside the rules, so they may use their own stdlib RNG."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec


class Bot(Protocol):
    def choose(self, view: Any, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        """One of `legal` (never empty when called) for `seat`, given what `seat` sees: the game's
        view struct (contracts/views/)."""
        ...


class RandomBot:
    """Uniform over the legal commands."""

    def __init__(self, seed: int | str = 0) -> None:
        self._rng = random.Random(seed)

    def choose(self, view: Any, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        return legal[self._rng.randrange(len(legal))]
