"""Final totals: wallet + vault + end values of installed improvements; ties to the larger vault."""

from __future__ import annotations

from games.mechanica.components import MechanicaData
from games.mechanica.state import MechanicaState, PlayerState


def improvements_value(data: MechanicaData, p: PlayerState) -> int:
    return sum(data.tiles[t].end_value for t in p.tiles if t in data.tiles)


def totals(data: MechanicaData, s: MechanicaState) -> list[int]:
    return [p.wallet + p.vault + improvements_value(data, p) for p in s.players]


def winners(scores: list[int], vaults: list[int]) -> list[int]:
    """Seats with the best (total, vault); several when both are equal (a shared win)."""
    best = max(zip(scores, vaults, strict=True))
    return [i for i, key in enumerate(zip(scores, vaults, strict=True)) if key == best]
