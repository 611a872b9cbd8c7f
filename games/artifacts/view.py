"""What a seat or spectator sees: the whole table, never the order of the A-E decks."""

from __future__ import annotations

from typing import Any

from games.artifacts.components import KINDS, MARKET_DECKS, ArtifactsData
from games.artifacts.state import ArtifactsState


def build_view(data: ArtifactsData, state: ArtifactsState, seat: int | None) -> dict[str, Any]:
    # No private hands: every seat sees the same table; `you` only says who asks.
    top = state.underwater[0] if state.underwater else None
    return {
        "game": "artifacts",
        "you": seat,
        "phase": state.phase,
        "round": state.round,
        "over": state.over,
        "to_act": [] if state.over or state.current is None else [state.current],
        "order": list(state.order),
        "end_triggered": state.triggered,
        "end_reputation": data.table.end_reputation,
        "dice": sorted(state.dice),
        "used": list(state.used),
        "dived": state.dived,
        "museum_side": state.museum_side,
        "museums": [
            {"museum": mid, "kind": data.museums[mid].kind, "boxes": list(boxes)}
            for mid, boxes in zip(state.museum_ids, state.boxes, strict=True)
        ],
        "market": {d: list(state.market[i]) for i, d in enumerate(MARKET_DECKS)},
        "deck_sizes": {d: len(state.decks[i]) for i, d in enumerate(MARKET_DECKS)},
        "underwater": list(state.underwater),
        "underwater_top": None if top is None else {"card": top, "number": data.underwater[top].number},
        "players": [
            {
                "seat": i,
                "dollars": p.dollars,
                "reputation": p.reputation,
                "artifacts": dict(zip(KINDS, p.artifacts, strict=True)),
                "underwater": list(p.underwater),
                "cards": [{"card": pc.card, "level": pc.level, "row": pc.row, "col": pc.col} for pc in p.cards],
            }
            for i, p in enumerate(state.players)
        ],
        "majorities": list(state.majorities),
        "winners": list(state.winners),
    }
