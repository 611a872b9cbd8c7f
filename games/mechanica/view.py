"""What a seat or spectator sees: every factory, the shop, the face-up blueprints and who has
completed what; never the order of the improvement stack, the Extras or the blueprint piles."""

from __future__ import annotations

from typing import Any

from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.scoring import improvements_value
from games.mechanica.state import HIDDEN, MechanicaState

_FORK_NAMES = {arrow: name for name, arrow in FORK_DIRECTIONS.items()}


def _grid(flat: list[Any] | tuple[Any, ...], ncols: int) -> list[list[Any]]:
    return [list(flat[i : i + ncols]) for i in range(0, len(flat), ncols)]


def _factory(data: MechanicaData, state: MechanicaState, seat: int) -> dict[str, Any]:
    """Flat row-major lists (index = (row - 1) * cols + (col - 1)), the shape the engine uses:
    the piece on each square and its holes in belt order; forks by "row,col"."""
    geo = data.geometry
    p = state.players[seat]
    forks: dict[str, str] = {}
    for sq, f in enumerate(p.forks):
        if f:
            r, col = geo.row_col(sq)
            forks[f"{r + 1},{col + 1}"] = _FORK_NAMES[f]
    return {
        "pieces": p.tiles[:],
        "holes": [h[:] for h in p.holes],
        "forks": forks,
        "forks_turned": [f"{r + 1},{col + 1}" for r, col in map(geo.row_col, p.forks_turned)],
    }


def build_view(data: MechanicaData, state: MechanicaState, seat: int | None) -> dict[str, Any]:
    # No private hands: every seat sees the same table; `you` only says who asks.
    prices = data.setup.shop_prices
    return {
        "game": "mechanica",
        # The printed board: arrows (> ^ v, T dock, # none) and areas per square, row 1 first.
        "board": {
            "rows": data.geometry.nrows,
            "cols": data.geometry.ncols,
            "arrows": _grid(data.geometry.arrow, data.geometry.ncols),
            "areas": _grid(data.geometry.area, data.geometry.ncols),
        },
        "you": seat,
        "workday": state.workday,
        "over": state.over,
        "to_act": [] if state.over or state.current is None else [state.current],
        "first_player": state.first_player,
        "bought_this_turn": state.bought,
        "stack_size": len(state.stack),
        "extras_size": len(state.extras),
        "shop": [
            {"price": prices[i], "improvement": t, "kind": data.tiles[t].id if t else ""}
            for i, t in enumerate(state.shop)
        ],
        "blueprints": [
            {
                "pile": i + 1,
                "size": len(pile),
                "face_up": pile[0] if pile and pile[0] != HIDDEN else "",
                "bots": list(data.blueprints[pile[0]].bots) if pile and pile[0] in data.blueprints else [],
                "money": data.blueprints[pile[0]].money if pile and pile[0] in data.blueprints else 0,
                # Seats that completed this card (now or when it was up before): they may not again.
                "completed_by": [seat for seat, p in enumerate(state.players) if pile and pile[0] in p.blueprints_done],
            }
            for i, pile in enumerate(state.piles)
        ],
        "sideways": state.sideways,
        "discard": list(state.discard),
        "players": [
            {
                "seat": i,
                "wallet": p.wallet,
                "vault": p.vault,
                "improvements_value": improvements_value(data, p),
                "blueprints_done": list(p.blueprints_done),
                "factory": _factory(data, state, i),
            }
            for i, p in enumerate(state.players)
        ],
        "final_scores": list(state.final_scores),
        "winners": list(state.winners),
    }
