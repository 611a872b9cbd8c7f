"""Artifacts, Inc.'s determinize hook for search: re-deal the only secret, the decks' order.

Each asset deck (A..E) is shuffled once at set-up and only ever drawn from the top; everything
else is on the table (docs/rules/artifacts.md, "Hidden information"). A determinization keeps each
deck's size and deals it a random order of its undrawn cards. Those come from public facts only:
the deck's cards in the data file (the same whatever the player count) minus the ones face up in
its market or owned by a player. So the hook works on a state folded from public events ("?"
placeholders) as on the true state, and gives both the same sample for the same `rng`.
"""

from __future__ import annotations

from games.artifacts import RULES
from games.artifacts.components import MARKET_DECKS, ArtifactsData
from games.artifacts.state import ArtifactsState, clone
from games.rng import Rng


def unseen_cards(state: ArtifactsState, data: ArtifactsData) -> list[list[str]]:
    """Per deck (MARKET_DECKS order), its cards not drawn yet, sorted."""
    owned = {c.card for p in state.players for c in p.cards}
    out: list[list[str]] = []
    for i, deck in enumerate(MARKET_DECKS):
        # Asset ids are unique, and a drawn card stays face up or owned for the rest of the game.
        drawn = owned | {x for x in state.market[i] if x is not None}
        out.append(sorted(x for x in data.decks[deck] if x not in drawn))
    return out


def determinize(state: ArtifactsState, rng: Rng, data: ArtifactsData | None = None) -> ArtifactsState:
    """A clone of `state` whose decks are re-shuffled; `state` is untouched.

    `data` is the component data the game was set up with (default: that of
    `games.artifacts.RULES`).
    """
    out = clone(state)
    # Rebuilt from the data and sorted, never read off the state: the sample must not depend on the
    # true order, and a public fold holds only "?" there.
    for i, cards in enumerate(unseen_cards(out, data if data is not None else RULES.data)):
        if len(cards) != len(out.decks[i]):
            raise ValueError(f"deck {MARKET_DECKS[i]} holds {len(out.decks[i])} cards but {len(cards)} are undrawn")
        rng.shuffle(cards)
        out.decks[i] = cards
    return out
