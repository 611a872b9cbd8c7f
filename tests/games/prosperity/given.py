"""Build Prosperity states from hand-written events (the "given" of given/when/then tests)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contracts import prosperity as c
from games.base import Rejected
from games.prosperity import RULES
from games.prosperity import scoring as sc
from games.prosperity.state import ProsperityState
from games.rng import Rng
from tests.games import gwt
from tests.games.gwt import of as of  # re-exported for the tests

DATA = RULES.data
DECADE_ORDER: list[str] = [tid for _, ids in DATA.decade_tiles for tid in ids]


def deck_with(top: Sequence[str]) -> list[str]:
    """The unshuffled decade deck with `top` moved to the top, in that order."""
    return list(top) + [t for t in DECADE_ORDER if t not in top]


def table_events(
    num_players: int,
    *,
    first: int = 0,
    deck: Sequence[str] | None = None,
    sides: Sequence[str] | None = None,
    money: int = 100,
) -> list[msgspec.Struct]:
    """Set-up with chosen outcomes, boards chosen, turn 1 drawn by `first` and counted (the count's
    outcomes left out), so the state is in `first`'s action phase."""
    deck = list(deck) if deck is not None else list(DECADE_ORDER)
    sides = list(sides) if sides is not None else ["silver"] * num_players
    events: list[msgspec.Struct] = [
        c.TableSet(research_board=list(DATA.start_tiles), first_player=first, money=money, discs=8, research=1),
        c.DeckBuilt(size=len(deck), backs=[DATA.tiles[t].decade for t in deck], tiles=deck),
    ]
    for seat, side in enumerate(sides):
        printed = sc.shown(DATA, DATA.boards[side], [])
        events.append(c.BoardChosen(seat=seat, side=side, energy=printed.energy, ecology=printed.ecology))
    symbol = DATA.tiles[deck[0]].count
    assert symbol is not None
    events += [c.TileDrawn(seat=first, turn=1, tile=deck[0], symbol=symbol), c.TileFiled(tile=deck[0])]
    return events


def fold(num_players: int, events: Sequence[msgspec.Struct]) -> ProsperityState:
    state: ProsperityState = gwt.fold(RULES, num_players, events)
    return state


def table(num_players: int = 2, **kw: object) -> ProsperityState:
    return fold(num_players, table_events(num_players, **kw))  # type: ignore[arg-type]


def build(state: ProsperityState, seat: int, placements: dict[str, str]) -> None:
    """Put tiles (space id -> tile id) on a seat's board as earlier purchases would have, and set
    the totals the rules keep."""
    p = state.players[seat]
    index = DATA.space_index[p.side]
    for space, tile in placements.items():
        p.stacks[index[space]].append(tile)
        if tile in state.research_board:
            state.research_board.remove(tile)
    shown = sc.shown(DATA, DATA.boards[p.side], p.stacks)
    p.energy, p.ecology = shown.energy, shown.ecology


def act(state: ProsperityState, seat: int, cmd: msgspec.Struct, seed: str = "t") -> list[msgspec.Struct]:
    """Decide (must be accepted) and fold the outcome into `state`; returns the events."""
    return gwt.act(RULES, state, seat, cmd, Rng.for_version(seed, state.turn))


def refused(state: ProsperityState, seat: int, cmd: msgspec.Struct) -> Rejected:
    return gwt.refused(RULES, state, seat, cmd)


def end_turn_into_count(state: ProsperityState) -> list[msgspec.Struct]:
    """The active player spends its remaining actions on income, so the next turn's tile is drawn
    and counted; returns the events."""
    events: list[msgspec.Struct] = []
    seat = state.active
    while state.active == seat and state.actions_left > 0:
        events += act(state, seat, c.Income())
    return events
