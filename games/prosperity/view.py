"""What a seat or spectator sees: everything on the table, never the order of the deck.

The deck's backs (the decade of each tile) are public, and so is the list of tiles each decade
holds, so the symbols still to be counted (per decade and overall) are shown too.
"""

from __future__ import annotations

import msgspec

from contracts.views.prosperity import (
    LaidTile,
    Pending,
    ProsperityPlayer,
    ProsperityView,
    Research,
    SpaceView,
    SymbolCounts,
)
from games.prosperity import scoring as sc
from games.prosperity.components import SYMBOLS, ProsperityData
from games.prosperity.state import COUNT, FINAL, SETUP, ProsperityState


def counts_left(data: ProsperityData, state: ProsperityState) -> tuple[dict[str, int], dict[str, int]]:
    """Counts still to come (before final scoring): in the whole deck, and in the top tile's decade."""
    left = dict(data.count_totals)
    for tid in state.drawn:
        symbol = data.tiles[tid].count
        if symbol is not None:
            left[symbol] -= 1
    decade_left = dict.fromkeys(SYMBOLS, 0)
    if state.backs:
        drawn = set(state.drawn)
        for tid, highlighted in data.counting_tiles.get(state.backs[0], ()):
            if tid not in drawn:
                decade_left[highlighted] += 1
    return left, decade_left


def _player(data: ProsperityData, state: ProsperityState, seat: int) -> ProsperityPlayer:
    p = state.players[seat]
    base = ProsperityPlayer(
        seat=seat,
        side=p.side,
        money=p.money,
        discs=p.discs,
        points=p.points,
        research=Research(energy=p.research[0], ecology=p.research[1]),
        energy=p.energy,
        ecology=p.ecology,
    )
    if not p.side:
        return base
    board = data.boards[p.side]
    shown = sc.shown(data, board, p.stacks)
    index = data.space_index[p.side]
    return msgspec.structs.replace(
        base,
        capital=shown.capital,
        research_symbols=shown.research,
        prosperity_symbols=shown.prosperity,
        track_prosperity=sc.track_prosperity(board, p.discs),
        pollution_spaces=board.pollution_spaces,
        polluted=sc.polluted(board, p.discs),
        spaces=[
            SpaceView(
                id=space.id,
                colour=space.colour,
                tiles=list(p.stacks[i]),
                shows=p.stacks[i][-1] if p.stacks[i] else (space.printed.name if space.printed else None),
                usable=not space.needs or bool(p.stacks[index[space.needs]]),
                needs=space.needs or None,
            )
            for i, space in enumerate(board.spaces)
        ],
    )


def build_view(data: ProsperityData, state: ProsperityState, seat: int | None) -> ProsperityView:
    # Prosperity has no private hands: every seat sees the same table; `you` only says who asks.
    left, decade_left = counts_left(data, state)
    pending: Pending | None = None
    if not state.over and state.phase in (COUNT, FINAL) and state.queue:
        head = state.queue[0]
        options = sc.pending_options(data, state, head)
        pending = Pending(seat=head, symbol=state.symbol, final=state.phase == FINAL, options=list(options))
    if state.over:
        to_act: list[int] = []
    elif state.phase == SETUP:
        to_act = [i for i, p in enumerate(state.players) if not p.side]
    elif state.phase in (COUNT, FINAL):
        to_act = state.queue[:1]
    else:
        to_act = [state.active]
    return ProsperityView(
        you=seat,
        phase=state.phase,
        over=state.over,
        turn=state.turn,
        turns=len(state.drawn) + len(state.deck),
        active=state.active,
        first_player=state.first_player,
        to_act=to_act,
        actions_left=state.actions_left,
        counting=state.symbol if state.phase == COUNT else None,
        drawn_tile=state.drawn[-1] if state.phase == COUNT and state.drawn else None,
        pending=pending,
        deck_size=len(state.deck),
        deck_backs=list(state.backs),
        counts_left=SymbolCounts(**left),
        decade_counts_left=SymbolCounts(**decade_left),
        drawn=list(state.drawn),
        research_board=list(state.research_board),
        # The same tiles as they lie beside the research board: by side, then level.
        research_board_layout=[
            LaidTile(tile=t.id, side=t.side, level=t.level, type=t.type)
            for t in sorted((data.tiles[tid] for tid in state.research_board), key=lambda t: (t.side, t.level, t.id))
        ],
        players=[_player(data, state, i) for i in range(state.num_players)],
        final_scores=list(state.final_scores),
        money_left=list(state.final_money),
        winners=list(state.winners),
    )
