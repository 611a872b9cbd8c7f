"""Build Mechanica states from hand-written events (the "given" of given/when/then tests)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from contracts import mechanica as c
from games.base import Rejected
from games.mechanica import RULES
from games.mechanica.state import MechanicaState
from games.rng import Rng
from tests.games import gwt
from tests.games.gwt import of as of  # re-exported for the tests

DATA = RULES.data
TILES = list(DATA.tile_ids)
BLUEPRINTS = list(DATA.blueprint_ids)


def tile(kind: str, n: int = 1) -> str:
    return f"{kind}-{n}"


def spot(row: int, col: int, hole: int = 1) -> c.Spot:
    return c.Spot(row=row, col=col, hole=hole)


def table_events(
    num_players: int,
    *,
    first: int = 0,
    stack: Sequence[str] | None = None,
    extras: Sequence[str] | None = None,
    piles: Sequence[Sequence[str]] | None = None,
    money: int = 8,
) -> list[msgspec.Struct]:
    """Set-up with chosen outcomes, then workday 1's run: each Basic bot rides to the central truck."""
    extras = list(extras) if extras is not None else TILES[-6:]
    stack = list(stack) if stack is not None else [t for t in TILES if t not in extras]
    pile_lists = [list(p) for p in piles] if piles is not None else [BLUEPRINTS[:7], BLUEPRINTS[7:]]
    events: list[msgspec.Struct] = [
        c.GameSetUp(first_player=first, money=money, starting_bot="basic"),
        c.ImprovementsShuffled(stack_size=len(stack), extras_size=len(extras), stack=stack, extras=extras),
        c.BlueprintsShuffled(sizes=[len(p) for p in pile_lists], face_up=[p[0] for p in pile_lists], piles=pile_lists),
        c.ImprovementDrawn(improvement=stack[0], price=7, source="stack"),
        c.ImprovementDrawn(improvement=stack[1], price=5, source="stack"),
        c.WorkdayStarted(workday=1),
    ]
    for seat in range(num_players):
        move = c.BotMove(model="basic", source=spot(3, 1), target=spot(3, 5))
        events.append(c.BotsMoved(seat=seat, moves=[move]))
    events.append(c.TurnStarted(seat=first))
    return events


def fold(num_players: int, events: Sequence[msgspec.Struct]) -> MechanicaState:
    state: MechanicaState = gwt.fold(RULES, num_players, events)
    return state


def table(num_players: int = 2, **kw: object) -> MechanicaState:
    return fold(num_players, table_events(num_players, **kw))  # type: ignore[arg-type]


def given(state: MechanicaState, *events: msgspec.Struct) -> MechanicaState:
    for ev in events:
        RULES.evolve(state, ev)
    return state


def installed(seat: int, improvement: str, row: int, col: int) -> c.ImprovementInstalled:
    """An improvement standing on (row, col) (no purchase: the "given" skips how it got there)."""
    return c.ImprovementInstalled(seat=seat, improvement=improvement, row=row, col=col)


def bots_at(seat: int, *where: tuple[str, int, int, int]) -> c.BotsMade:
    """Bots (model, row, col, hole) put into `seat`'s holes."""
    return c.BotsMade(seat=seat, bots=[c.PlacedBot(seat=seat, model=m, spot=spot(r, col, h)) for m, r, col, h in where])


def act(state: MechanicaState, seat: int, cmd: msgspec.Struct, seed: str = "t") -> list[msgspec.Struct]:
    """Decide (must be accepted) and fold the outcome into `state`; returns the events."""
    return gwt.act(RULES, state, seat, cmd, Rng.for_version(seed, state.workday))


def refused(state: MechanicaState, seat: int, cmd: msgspec.Struct) -> Rejected:
    return gwt.refused(RULES, state, seat, cmd)


def holes(state: MechanicaState, seat: int, row: int, col: int) -> list[str]:
    return state.players[seat].holes[DATA.geometry.square(row - 1, col - 1)]
