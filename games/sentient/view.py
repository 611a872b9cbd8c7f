"""What a seat or spectator sees: everything on the table, never the order of the deck."""

from __future__ import annotations

from contracts.views.sentient import FactorySlot, InvestorAt, SentientPlayer, SentientView
from games.sentient.components import SentientData
from games.sentient.scoring import investor_slots
from games.sentient.state import FACTORY_SLOTS, SentientState


def build_view(data: SentientData, state: SentientState, seat: int | None) -> SentientView:
    # Sentient has no private hands: every seat sees the same table; `you` only says who asks.
    investors = [
        None
        if inv_id is None
        else InvestorAt(
            position=pos,
            investor=inv_id,
            type=data.investors[inv_id].type,
            slots=[i + 1 for i in investor_slots(pos, FACTORY_SLOTS)],
        )
        for pos, inv_id in enumerate(state.investors)
    ]
    return SentientView(
        you=seat,
        round=state.round,
        over=state.over,
        to_act=[] if state.over or state.current is None else [state.current],
        turn_order=list(state.turn_order),
        next_turn_order=list(state.next_order),
        deck_size=len(state.deck),
        discard=list(state.discard),
        factory=[
            FactorySlot(
                slot=i + 1,
                card=cid,
                influence=list(state.influence[i]) if state.influence else [],
                agents=list(state.agents_at[i]) if state.agents_at else [],
            )
            for i, cid in enumerate(state.factory)
        ],
        investors=investors,
        players=[
            SentientPlayer(
                seat=i,
                board_side=p.board_side,
                starting_investor=p.starting_investor,
                dice=list(p.dice),
                network=list(p.network),
                agents=p.agents,
                assistants=p.assistants,
                passed=p.passed,
                vp=p.vp,
                investors=list(p.investors),
                investor_types=[p.starting_investor] + [data.investors[x].type for x in p.investors],
                collected=list(p.collected),
            )
            for i, p in enumerate(state.players)
        ],
        final_scores=list(state.final_scores),
        winners=list(state.winners),
    )
