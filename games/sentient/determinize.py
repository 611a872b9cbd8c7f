"""Sentient's determinize hook for search: re-deal the only secret, the deck order.

Everything else in a Sentient state is public (docs/rules/sentient.md, "Hidden information"), and
future dice, investor layouts and reshuffles come from the seed, which `OfflineGame.clone(resample=
True)` replaces. So a determinization is: the true state with the deck replaced by a random order
of the cards nobody has seen.
"""

from __future__ import annotations

from collections import Counter

from games.rng import Rng
from games.sentient import RULES
from games.sentient.components import SentientData
from games.sentient.fold import HIDDEN_CARD
from games.sentient.state import SentientState, clone


def unseen_cards(state: SentientState, data: SentientData) -> list[str]:
    """The cards not visible anywhere on the table (factory, networks, collected, discard), in
    file order: exactly the deck's contents, computed from public information only."""
    seen: Counter[str] = Counter(cid for cid in state.factory if cid is not None)
    seen.update(state.discard)
    for p in state.players:
        seen.update(cid for cid in p.network if cid is not None)
        seen.update(p.collected)
    out: list[str] = []
    for cid in data.card_ids:
        if seen[cid]:
            seen[cid] -= 1
        else:
            out.append(cid)
    return out


def determinize(state: SentientState, rng: Rng, data: SentientData | None = None) -> SentientState:
    """A clone of `state` whose deck is a random order of the unseen cards; `state` is untouched.

    Public facts are kept: the deck's size and multiset (derivable from the table) and every other
    field. A state folded from public events holds "?" placeholders; their identities are rebuilt
    from the table, which needs the component data (default: the data of `games.sentient.RULES`).
    """
    out = clone(state)
    if HIDDEN_CARD in out.deck:
        cards = unseen_cards(out, data if data is not None else RULES.data)
        if len(cards) != len(out.deck):
            raise ValueError(f"deck holds {len(out.deck)} cards but {len(cards)} are unseen")
        out.deck = cards
    # Start from a canonical order so the result is a function of public facts and `rng` alone:
    # shuffling the true order would make the sample (not its distribution) depend on it, and a
    # public fold and the true state must give the same sample.
    out.deck.sort()
    rng.shuffle(out.deck)
    return out
