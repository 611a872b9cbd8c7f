"""Build Sentient states from hand-written events (the "given" of given/when/then tests)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contracts import sentient as c
from games.base import Rejected
from games.rng import Rng
from games.sentient import RULES
from games.sentient.state import SentientState

DATA = RULES.data
ROUND1_INVESTORS = [
    "INV-1-information", "INV-1-industry", "INV-1-military", "INV-1-service", "INV-1-transport",
]  # fmt: skip


def card_where(**want: object) -> str:
    """The first card id whose fields equal `want` (e.g. type="service", kind="sum_minus", offset=6)."""
    for card in DATA.cards.values():
        if all(getattr(card, k) == v for k, v in want.items()):
            return card.id
    raise LookupError(f"no card with {want}")


def table_events(
    num_players: int,
    *,
    order: Sequence[int] | None = None,
    dice: Sequence[Sequence[int]] | None = None,
    factory: Sequence[str] | None = None,
    deck_rest: Sequence[str] | None = None,
    round_no: int = 1,
    investors: Sequence[str] | None = None,
    sides: Sequence[str] | None = None,
) -> list[msgspec.Struct]:
    """Set-up events with chosen outcomes: the factory cards sit on top of the deck."""
    order = list(order) if order is not None else list(range(num_players))
    sides = list(sides) if sides is not None else list(DATA.side_ids[:num_players])
    factory = list(factory) if factory is not None else list(DATA.card_ids[:4])
    if deck_rest is None:
        deck_rest = [cid for cid in DATA.card_ids if cid not in factory]
    if investors is None:
        investors = list(DATA.investors_by_round[round_no - 1])
    dice = dice if dice is not None else [[3, 3, 3, 3, 3]] * num_players
    deck = factory + list(deck_rest)
    events: list[msgspec.Struct] = [
        c.BoardsDealt(sides=sides, starting_investors=[DATA.board_sides[s].starting_investor for s in sides]),
        c.DeckShuffled(size=len(deck), cards=deck),
        c.RoundStarted(round=round_no, turn_order=order, investors=list(investors)),
        c.FactoryRefilled(slots=[1, 2, 3, 4], cards=factory),
    ]
    events += [c.DiceRolled(seat=s, values=list(dice[s])) for s in range(num_players)]
    return events


def fold(num_players: int, events: Sequence[msgspec.Struct]) -> SentientState:
    state = RULES.initial_state(num_players)
    for ev in events:
        state = RULES.evolve(state, ev)
    return state


def act(state: SentientState, seat: int, cmd: msgspec.Struct, seed: str = "t") -> list[msgspec.Struct]:
    """Decide (must be accepted) and fold the outcome into `state`; returns the events."""
    out = RULES.decide(state, seat, cmd, Rng.for_version(seed, len(state.deck) + 1000 * state.round))
    assert not isinstance(out, Rejected), out
    for ev in out:
        RULES.evolve(state, ev)
    return out


def refused(state: SentientState, seat: int, cmd: msgspec.Struct) -> Rejected:
    out = RULES.decide(state, seat, cmd, Rng.for_version("t", 0))
    assert isinstance(out, Rejected), out
    return out
