"""Prosperity's determinize hook for search: re-deal the only secret, the order of the decade deck.

Each decade's tiles are printed in the data file and the decade on each back is public, so what a
player does not know is which of a decade's undrawn tiles lies where among that decade's backs
(docs/rules/prosperity.md, "Hidden information"). A determinization keeps every back and deals each
decade's undrawn tiles onto them in a random order.
"""

from __future__ import annotations

from collections import Counter

from games.prosperity.components import ProsperityData
from games.prosperity.state import ProsperityState, clone
from games.rng import Rng


def unseen_tiles(state: ProsperityState, data: ProsperityData) -> dict[int, list[str]]:
    """Per decade, the tiles not drawn yet, in file order: computed from public facts only."""
    drawn = Counter(state.drawn)
    out: dict[int, list[str]] = {}
    for decade, ids in data.decade_tiles:
        left: list[str] = []
        for tile in ids:
            if drawn[tile]:
                drawn[tile] -= 1
            else:
                left.append(tile)
        out[decade] = left
    return out


def determinize(state: ProsperityState, rng: Rng, data: ProsperityData) -> ProsperityState:
    """A clone of `state` whose deck is a random order of each decade's undrawn tiles under the
    same backs; `state` is untouched. Works on a state folded from public events too ("?" tiles)."""
    out = clone(state)
    unseen = unseen_tiles(out, data)
    for decade, tiles in unseen.items():
        if len(tiles) != out.backs.count(decade):
            raise ValueError(f"decade {decade}: {out.backs.count(decade)} backs but {len(tiles)} undrawn tiles")
        # File order first, so the sample is a function of public facts and `rng` alone.
        rng.shuffle(tiles)
    out.deck = [unseen[decade].pop() for decade in out.backs]
    return out
