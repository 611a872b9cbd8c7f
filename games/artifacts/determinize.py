"""Artifacts, Inc.'s determinize hook for search: re-deal the only secret, the decks' order.

Each asset deck (A..E) is shuffled once at set-up and only ever drawn from the top; everything
else is on the table (docs/rules/artifacts.md, "Hidden information"). A determinization keeps each
deck's size and contents and deals them in a random order. It needs the true state (what the
offline API holds): each deck's contents are read off it and sorted first, so the sample depends on
public facts (which cards of a deck have not been drawn) and `rng` alone, not on the true order.
"""

from __future__ import annotations

from games.artifacts.state import HIDDEN_CARD, ArtifactsState, clone
from games.rng import Rng


def determinize(state: ArtifactsState, rng: Rng) -> ArtifactsState:
    """A clone of `state` whose decks are re-shuffled; `state` is untouched."""
    out = clone(state)
    for i, deck in enumerate(out.decks):
        if HIDDEN_CARD in deck:
            raise ValueError("a state folded from public events has no deck contents: determinize the true state")
        cards = sorted(deck)
        rng.shuffle(cards)
        out.decks[i] = cards
    return out
