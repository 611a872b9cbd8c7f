"""Mechanica's determinize hook for search: re-deal what nobody has seen.

Two secrets sit in a Mechanica state (docs/rules/mechanica.md, "Hidden information"):

* the order of the improvement stack and the Extras, dealt from one shuffle of every tile; and
* the blueprint piles below their face-up cards, dealt from one shuffle of every blueprint. When
  the blueprints are replaced the face-up card goes to the bottom of its pile, so after t
  replacements a pile's top card and its t bottom cards are known and only the cards between
  them are secret.

A determinization keeps every size and every seen card in place and deals the unseen tiles (and,
separately, the unseen blueprints) in a random order onto the unseen positions. It needs the true
state (what the offline API holds): the unseen multiset is read off it, sorted first, so the sample
depends on public facts and `rng` alone, not on the true order.
"""

from __future__ import annotations

from games.mechanica.state import HIDDEN, MechanicaState, clone
from games.rng import Rng


def hidden_positions(state: MechanicaState) -> list[tuple[int, int]]:
    """(pile, index) of every blueprint nobody has seen yet."""
    out: list[tuple[int, int]] = []
    for pile, cards in enumerate(state.piles):
        out += [(pile, i) for i in range(1, len(cards) - state.piles_turned)]
    return out


def determinize(state: MechanicaState, rng: Rng) -> MechanicaState:
    """A clone of `state` with the unseen tiles and blueprints re-dealt; `state` is untouched."""
    out = clone(state)
    tiles = sorted(out.stack + out.extras)
    spots = hidden_positions(out)
    blueprints = sorted(out.piles[p][i] for p, i in spots)
    if HIDDEN in tiles or HIDDEN in blueprints:
        raise ValueError("a state folded from public events has no unseen multiset to deal: determinize the true state")
    rng.shuffle(tiles)
    rng.shuffle(blueprints)
    out.extras, out.stack = tiles[: len(out.extras)], tiles[len(out.extras) :]
    for (p, i), card in zip(spots, blueprints, strict=True):
        out.piles[p][i] = card
    return out
