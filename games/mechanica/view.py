"""What a seat or spectator sees: every factory, the shop, the face-up blueprints and who has
completed what; never the order of the improvement stack, the Extras or the blueprint piles."""

from __future__ import annotations

from contracts.views.mechanica import (
    BlueprintPile,
    Board,
    Factory,
    Fork,
    MechanicaPlayer,
    MechanicaView,
    ShopSpace,
    Square,
)
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.scoring import improvements_value
from games.mechanica.state import HIDDEN, MechanicaState

_FORK_NAMES = {arrow: name for name, arrow in FORK_DIRECTIONS.items()}


def _grid(flat: tuple[str, ...], ncols: int) -> list[list[str]]:
    return [list(flat[i : i + ncols]) for i in range(0, len(flat), ncols)]


def _factory(data: MechanicaData, state: MechanicaState, seat: int) -> Factory:
    """Flat row-major lists (index = (row - 1) * cols + (col - 1)), the shape the engine uses:
    the piece on each square and its holes in belt order; forks by row and column."""
    geo = data.geometry
    p = state.players[seat]
    forks: list[Fork] = []
    for sq, f in enumerate(p.forks):
        if f:
            r, col = geo.row_col(sq)
            forks.append(Fork(row=r + 1, col=col + 1, direction=_FORK_NAMES[f]))
    return Factory(
        pieces=p.tiles[:],
        holes=[h[:] for h in p.holes],
        forks=forks,
        forks_turned=[Square(row=r + 1, col=col + 1) for r, col in map(geo.row_col, p.forks_turned)],
    )


def _pile(data: MechanicaData, state: MechanicaState, i: int, pile: list[str]) -> BlueprintPile:
    top = pile[0] if pile and pile[0] != HIDDEN else ""
    card = data.blueprints.get(top)
    return BlueprintPile(
        pile=i + 1,
        size=len(pile),
        face_up=top,
        bots=list(card.bots) if card is not None else [],
        money=card.money if card is not None else 0,
        completed_by=[seat for seat, p in enumerate(state.players) if top and top in p.blueprints_done],
    )


def build_view(data: MechanicaData, state: MechanicaState, seat: int | None) -> MechanicaView:
    # No private hands: every seat sees the same table; `you` only says who asks.
    prices = data.setup.shop_prices
    geo = data.geometry
    return MechanicaView(
        board=Board(
            rows=geo.nrows, cols=geo.ncols, arrows=_grid(geo.arrow, geo.ncols), areas=_grid(geo.area, geo.ncols)
        ),
        you=seat,
        workday=state.workday,
        over=state.over,
        to_act=[] if state.over or state.current is None else [state.current],
        first_player=state.first_player,
        bought_this_turn=state.bought,
        stack_size=len(state.stack),
        extras_size=len(state.extras),
        shop=[
            ShopSpace(price=prices[i], improvement=t, kind=data.tiles[t].id if t else "")
            for i, t in enumerate(state.shop)
        ],
        blueprints=[_pile(data, state, i, pile) for i, pile in enumerate(state.piles)],
        sideways=state.sideways,
        discard=list(state.discard),
        players=[
            MechanicaPlayer(
                seat=i,
                wallet=p.wallet,
                vault=p.vault,
                improvements_value=improvements_value(data, p),
                blueprints_done=list(p.blueprints_done),
                factory=_factory(data, state, i),
            )
            for i, p in enumerate(state.players)
        ],
        final_scores=list(state.final_scores),
        winners=list(state.winners),
    )
