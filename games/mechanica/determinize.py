"""Mechanica's determinize hook for search: re-deal what nobody has seen.

Two secrets sit in a Mechanica state (docs/rules/mechanica.md, "Hidden information"):

* the order of the improvement stack and the Extras, dealt from one shuffle of every tile; and
* the blueprint piles below their face-up cards, dealt from one shuffle of every blueprint. When
  the blueprints are replaced the face-up card goes to the bottom of its pile, so after t
  replacements a pile's top card and its t bottom cards are known and only the cards between
  them are secret.

A determinization keeps every size and every seen card in place and deals the unseen tiles (and,
separately, the unseen blueprints) in a random order onto the unseen positions. The unseen
multisets come from public facts only: every tile (blueprint) of the data file minus those visible
in the shop, on a factory, in the discard (face up in a pile). So the hook works on a state folded
from public events ("?" placeholders) as on the true state, and gives both the same sample for the
same `rng`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from games.mechanica import RULES
from games.mechanica.components import MechanicaData
from games.mechanica.state import MechanicaState, clone
from games.rng import Rng


def hidden_positions(state: MechanicaState) -> list[tuple[int, int]]:
    """(pile, index) of every blueprint nobody has seen yet."""
    out: list[tuple[int, int]] = []
    for pile, cards in enumerate(state.piles):
        out += [(pile, i) for i in range(1, len(cards) - state.piles_turned)]
    return out


def _minus(ids: Iterable[str], seen: Counter[str]) -> list[str]:
    out: list[str] = []
    for x in ids:
        if seen[x]:
            seen[x] -= 1
        else:
            out.append(x)
    return out


def unseen_tiles(state: MechanicaState, data: MechanicaData) -> list[str]:
    """The improvements in the stack and the Extras, sorted: the data's tiles minus those in the
    shop, on a factory or in the discard (a bought tile is installed or recycled at once)."""
    seen = Counter(t for t in state.shop if t)
    seen.update(state.discard)
    for p in state.players:
        seen.update(t for t in p.tiles if t in data.tiles)
    return sorted(_minus(data.tile_ids, seen))


def unseen_blueprints(state: MechanicaState, data: MechanicaData) -> list[str]:
    """The blueprints at `hidden_positions`, sorted: the data's blueprints minus those seen in the
    piles (completed blueprints stay in their pile, so they are among these)."""
    spots = set(hidden_positions(state))
    seen = Counter(card for p, cards in enumerate(state.piles) for i, card in enumerate(cards) if (p, i) not in spots)
    return sorted(_minus(data.blueprint_ids, seen))


def determinize(state: MechanicaState, rng: Rng, data: MechanicaData | None = None) -> MechanicaState:
    """A clone of `state` with the unseen tiles and blueprints re-dealt; `state` is untouched.

    `data` is the component data the game was set up with (default: that of
    `games.mechanica.RULES`).
    """
    d = data if data is not None else RULES.data
    out = clone(state)
    # Sorted and rebuilt from the data, never read off the state: the sample must not depend on the
    # true order, and a public fold holds only "?" there.
    tiles = unseen_tiles(out, d)
    if len(tiles) != len(out.stack) + len(out.extras):
        raise ValueError(f"stack and Extras hold {len(out.stack) + len(out.extras)} tiles but {len(tiles)} are unseen")
    spots = hidden_positions(out)
    blueprints = unseen_blueprints(out, d)
    if len(blueprints) != len(spots):
        raise ValueError(f"the piles hide {len(spots)} blueprints but {len(blueprints)} are unseen")
    rng.shuffle(tiles)
    rng.shuffle(blueprints)
    out.extras, out.stack = tiles[: len(out.extras)], tiles[len(out.extras) :]
    for (p, i), card in zip(spots, blueprints, strict=True):
        out.piles[p][i] = card
    return out
