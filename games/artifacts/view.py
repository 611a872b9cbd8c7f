"""What a seat or spectator sees: the whole table, never the order of the A-E decks below their
face-up cards; the Level 2 side of the market cards only for a seat with a die on a buy action."""

from __future__ import annotations

import msgspec

from contracts.views.artifacts import ArtifactsPlayer, ArtifactsView, CardAt, FaceView, Kinds, MuseumView, UnderwaterTop
from games.artifacts.components import KINDS, MARKET_DECKS, ArtifactsData
from games.artifacts.state import PLAY, ArtifactsState


def may_look_at_level_2(data: ArtifactsData, state: ArtifactsState, seat: int | None) -> bool:
    """ART-R11: "when buying, the player may look at the other side of the available cards; only
    after placing an adventurer die on the Buy action". True while `seat` is the active seat and
    one of its dice sits on a buy action this turn (a Buy or an Upgrade); never for spectators."""
    if seat is None or state.phase != PLAY or state.current != seat:
        return False
    levels = {pc.card: pc.level for pc in state.players[seat].cards}
    for key in state.used:
        card, _, slot = key.rpartition("#")
        if card in levels:
            actions = data.actions_of(card, levels[card])
            if int(slot) <= len(actions) and actions[int(slot) - 1].effect == "buy":
                return True
    return False


def _face(data: ArtifactsData, card: str) -> FaceView:
    return msgspec.convert(msgspec.to_builtins(data.assets[card].lv2), FaceView)


def build_view(data: ArtifactsData, state: ArtifactsState, seat: int | None) -> ArtifactsView:
    # No private hands: every seat sees the same table (`you` only says who asks), except the
    # Level 2 side of the market cards, shown to the active seat once a die is on a buy action.
    top = state.underwater[0] if state.underwater else None
    looking = may_look_at_level_2(data, state, seat)
    level_2 = {
        d: [None if x is None else _face(data, x) for x in state.market[i]] for i, d in enumerate(MARKET_DECKS)
    } if looking else None  # fmt: skip
    return ArtifactsView(
        you=seat,
        phase=state.phase,
        round=state.round,
        over=state.over,
        to_act=[] if state.over or state.current is None else [state.current],
        order=list(state.order),
        end_triggered=state.triggered,
        end_reputation=data.table.end_reputation,
        dice=sorted(state.dice),
        used=list(state.used),
        dived=state.dived,
        museum_side=state.museum_side,
        museums=[
            MuseumView(museum=mid, kind=data.museums[mid].kind, boxes=list(boxes))
            for mid, boxes in zip(state.museum_ids, state.boxes, strict=True)
        ],
        market={d: list(state.market[i]) for i, d in enumerate(MARKET_DECKS)},
        deck_sizes={d: len(state.decks[i]) for i, d in enumerate(MARKET_DECKS)},
        market_level_2=level_2,
        underwater=list(state.underwater),
        underwater_top=None if top is None else UnderwaterTop(card=top, number=data.underwater[top].number),
        players=[
            ArtifactsPlayer(
                seat=i,
                dollars=p.dollars,
                reputation=p.reputation,
                artifacts=Kinds(**dict(zip(KINDS, p.artifacts, strict=True))),
                underwater=list(p.underwater),
                cards=[CardAt(card=pc.card, level=pc.level, row=pc.row, col=pc.col) for pc in p.cards],
            )
            for i, p in enumerate(state.players)
        ],
        majorities=list(state.majorities),
        winners=list(state.winners),
    )
