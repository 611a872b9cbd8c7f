"""Build Artifacts, Inc. states from hand-written events (the "given" of given/when/then tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from contracts import artifacts as c
from games.artifacts import RULES
from games.artifacts.components import KINDS, MARKET_DECKS
from games.artifacts.state import ArtifactsState
from games.base import Rejected
from games.rng import Rng
from tests.games import gwt
from tests.games.gwt import of as of  # re-exported for the tests

DATA = RULES.data
START = list(DATA.starting_ids)


def table_events(
    num_players: int,
    *,
    order: Sequence[int] | None = None,
    market: Mapping[str, Sequence[str]] | None = None,
    dollars: Sequence[int] | None = None,
    arrangements: Mapping[int, Sequence[str]] | None = None,
    dice: Sequence[int] = (1, 3, 5),
    underwater: Sequence[str] | None = None,
) -> list[msgspec.Struct]:
    """Set-up events with chosen outcomes, ending with the first player's TurnStarted(dice).

    `market` names the first face-up cards of some decks (they sit on top, in slot order; the
    remaining slots and the pile follow in file order); the other decks deal in file order."""
    side = "2p" if num_players == 2 else "3p"
    museums = list(DATA.museum_ids)
    boxes = [len(DATA.museums[m].boxes_2p if side == "2p" else DATA.museums[m].boxes_3p) for m in museums]
    events: list[msgspec.Struct] = [
        c.TableSet(
            museum_side=side,
            public=list(DATA.public_ids),
            museums=museums,
            boxes=boxes,
            underwater=list(underwater if underwater is not None else DATA.underwater_ids),
        )
    ]
    market = market or {}
    for deck in MARKET_DECKS:
        shown = list(market.get(deck, []))
        cards = shown + [x for x in DATA.decks[deck] if x not in shown]
        k = min(DATA.table.market_slots[deck], len(cards))
        assert len(shown) <= k, f"deck {deck} shows {k} cards, not {len(shown)}"
        events.append(c.DeckShuffled(deck=deck, size=len(cards), cards=cards))
        events.append(c.MarketRefilled(deck=deck, slots=list(range(1, k + 1)), cards=cards[:k]))
    order = list(order) if order is not None else list(range(num_players))
    if dollars is None:
        dollars = [0] * num_players
        for pos, seat in enumerate(order):
            dollars[seat] = DATA.table.starting_money[pos]
    events.append(c.PlayersSeated(order=order, dollars=list(dollars)))
    arrangements = arrangements or {}
    for seat in order:
        events.append(c.StartArranged(seat=seat, cards=list(arrangements.get(seat, START))))
    events.append(c.TurnStarted(seat=order[0], round=1, dice=list(dice)))
    return events


def fold(num_players: int, events: Sequence[msgspec.Struct]) -> ArtifactsState:
    state: ArtifactsState = gwt.fold(RULES, num_players, events)
    return state


def table(num_players: int = 3, **kw: Any) -> ArtifactsState:
    return fold(num_players, table_events(num_players, **kw))


def give(state: ArtifactsState, seat: int, *, dollars: int = 0, **artifacts: int) -> None:
    """Hand-written income events (as if earned earlier)."""
    if dollars:
        RULES.evolve(state, c.DollarsEarned(seat=seat, amount=dollars))
    for kind, n in artifacts.items():
        assert kind in KINDS, kind
        RULES.evolve(state, c.ArtifactsFound(seat=seat, kind=kind, count=n))


def roll(state: ArtifactsState, seat: int, dice: Sequence[int], round_no: int | None = None) -> None:
    """A hand-written TurnStarted: `seat` is now active with `dice`."""
    RULES.evolve(state, c.TurnStarted(seat=seat, round=round_no or max(1, state.round), dice=list(dice)))


def act(state: ArtifactsState, seat: int, cmd: msgspec.Struct, seed: str = "t") -> list[msgspec.Struct]:
    """Decide (must be accepted) and fold the outcome into `state`; returns the events."""
    return gwt.act(RULES, state, seat, cmd, Rng.for_version(seed, state.round * 1000 + len(state.dice)))


def refused(state: ArtifactsState, seat: int, cmd: msgspec.Struct) -> Rejected:
    return gwt.refused(RULES, state, seat, cmd)
