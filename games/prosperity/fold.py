"""`evolve`: apply one event to the state, in place. Events carry outcomes, so nothing is computed
beyond bookkeeping (whose turn, what is left to count)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts.prosperity import (
    BoardChosen,
    CleanedUp,
    Counted,
    DeckBuilt,
    FinalScoringStarted,
    GameFinished,
    IncomeTaken,
    MoneyConverted,
    ResearchAdvanced,
    ResearchMajority,
    SpecialApplied,
    TableSet,
    TileBought,
    TileDrawn,
    TileFiled,
    TurnEnded,
)
from games.prosperity.components import ProsperityData
from games.prosperity.state import ACTIONS, COUNT, FINAL, HIDDEN_TILE, TRACKS, ProsperityState

ACTIONS_PER_TURN = 2


def _table_set(d: ProsperityData, s: ProsperityState, e: TableSet) -> None:
    s.research_board = list(e.research_board)
    s.first_player = e.first_player
    s.active = e.first_player
    for p in s.players:
        p.money = e.money
        p.discs = e.discs
        p.research = [e.research, e.research]


def _deck_built(d: ProsperityData, s: ProsperityState, e: DeckBuilt) -> None:
    s.deck = list(e.tiles) if e.tiles is not None else [HIDDEN_TILE] * e.size
    s.backs = list(e.backs)


def _board_chosen(d: ProsperityData, s: ProsperityState, e: BoardChosen) -> None:
    p = s.players[e.seat]
    p.side = e.side
    p.energy = e.energy
    p.ecology = e.ecology
    p.stacks = [[] for _ in d.boards[e.side].spaces]


def _tile_drawn(d: ProsperityData, s: ProsperityState, e: TileDrawn) -> None:
    del s.deck[0]
    del s.backs[0]
    s.drawn.append(e.tile)
    s.turn = e.turn
    s.active = e.seat
    s.phase = COUNT
    s.symbol = e.symbol
    n = s.num_players
    s.queue = [(e.seat + k) % n for k in range(n)]
    s.actions_left = 0


def _counted(d: ProsperityData, s: ProsperityState, e: Counted) -> None:
    p = s.players[e.seat]
    p.money += e.money
    p.discs += e.discs
    p.points += e.points
    p.research[0] += e.energy_steps
    p.research[1] += e.ecology_steps
    if s.queue and s.queue[0] == e.seat and s.symbol == e.symbol:
        del s.queue[0]


def _tile_filed(d: ProsperityData, s: ProsperityState, e: TileFiled) -> None:
    s.research_board.append(e.tile)
    s.phase = ACTIONS
    s.symbol = ""
    s.queue = []
    s.actions_left = ACTIONS_PER_TURN


def _income(d: ProsperityData, s: ProsperityState, e: IncomeTaken) -> None:
    s.players[e.seat].money += e.amount
    s.actions_left -= 1


def _cleaned_up(d: ProsperityData, s: ProsperityState, e: CleanedUp) -> None:
    s.players[e.seat].discs -= 1
    s.actions_left -= 1


def _research(d: ProsperityData, s: ProsperityState, e: ResearchAdvanced) -> None:
    s.players[e.seat].research[TRACKS.index(e.track)] += 1
    s.actions_left -= 1


def _tile_bought(d: ProsperityData, s: ProsperityState, e: TileBought) -> None:
    p = s.players[e.seat]
    s.research_board.remove(e.tile)
    p.money -= e.price
    p.stacks[d.space_index[p.side][e.space]].append(e.tile)
    p.energy = e.energy
    p.ecology = e.ecology
    s.actions_left -= 1


def _special(d: ProsperityData, s: ProsperityState, e: SpecialApplied) -> None:
    p = s.players[e.seat]
    s.research_board.remove(e.tile)
    p.money -= e.price
    p.points += e.points
    p.discs -= e.discs_removed
    s.actions_left -= 1


def _turn_ended(d: ProsperityData, s: ProsperityState, e: TurnEnded) -> None:
    s.actions_left = 0
    if e.next_seat is not None:
        s.active = e.next_seat


def _final_started(d: ProsperityData, s: ProsperityState, e: FinalScoringStarted) -> None:
    s.phase = FINAL
    s.symbol = "energy"
    s.queue = list(e.order)


def _money_converted(d: ProsperityData, s: ProsperityState, e: MoneyConverted) -> None:
    p = s.players[e.seat]
    p.money -= e.money
    p.points += e.points


def _majority(d: ProsperityData, s: ProsperityState, e: ResearchMajority) -> None:
    for p, pts in zip(s.players, e.points, strict=True):
        p.points += pts


def _finished(d: ProsperityData, s: ProsperityState, e: GameFinished) -> None:
    s.over = True
    s.queue = []
    s.symbol = ""
    s.final_scores = list(e.scores)
    s.final_money = list(e.money)
    s.winners = list(e.winners)


_HANDLERS: dict[type[msgspec.Struct], Callable[[ProsperityData, ProsperityState, Any], None]] = {
    TableSet: _table_set,
    DeckBuilt: _deck_built,
    BoardChosen: _board_chosen,
    TileDrawn: _tile_drawn,
    Counted: _counted,
    TileFiled: _tile_filed,
    IncomeTaken: _income,
    CleanedUp: _cleaned_up,
    ResearchAdvanced: _research,
    TileBought: _tile_bought,
    SpecialApplied: _special,
    TurnEnded: _turn_ended,
    FinalScoringStarted: _final_started,
    MoneyConverted: _money_converted,
    ResearchMajority: _majority,
    GameFinished: _finished,
}


def evolve(data: ProsperityData, state: ProsperityState, event: msgspec.Struct) -> ProsperityState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not a Prosperity event: {type(event).__name__}")
    handler(data, state, event)
    return state
