"""A greedy Sentient bot: the best immediate value among the legal commands, read from the view."""

from __future__ import annotations

import msgspec

from contracts.sentient import Acquire, Pass
from contracts.views.sentient import SentientPlayer, SentientView
from games.sentient.components import SentientData
from games.sentient.scoring import calibrate, investor_slots, rank_investor, score_card

# Heuristic weights (bot policy only; nothing here is a rule).
ASSISTANT_COST = 0.45  # an assistant kept may win an investor or save a die later
INVESTOR_HOLD_ODDS = 0.6  # a lead now may still be overtaken before the round ends
FUTURE_CARDS_PER_ROUND = 1.2  # cards of one type a player tends to collect per remaining round
PASS_BELOW = 0.5  # pass (refreshing the factory) when nothing on offer is worth more than this


class GreedyBot:
    def __init__(self, data: SentientData) -> None:
        self.data = data

    def choose(self, view: SentientView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        acquires = [a for a in legal if isinstance(a, Acquire)]
        if not acquires:
            return legal[0]
        me = view.players[seat]
        card_part: dict[tuple[int, int, bool, bool], float] = {}
        infl_part: dict[tuple[int, int], float] = {}
        best: msgspec.Struct | None = None
        best_value = float("-inf")
        for a in acquires:
            ck = (a.factory_slot, a.network_slot, a.block_left, a.block_right)
            cv = card_part.get(ck)
            if cv is None:
                cv = card_part[ck] = self._card_value(view, me, *ck)
            ik = (a.factory_slot, a.assistants)
            iv = infl_part.get(ik)
            if iv is None:
                iv = infl_part[ik] = self._influence_value(view, me, seat, *ik)
            value = cv + iv - ASSISTANT_COST * (a.assistants + a.block_left + a.block_right)
            if value > best_value:
                best, best_value = a, value
        assert best is not None
        can_pass = any(isinstance(a, Pass) for a in legal)
        if can_pass and best_value < PASS_BELOW and me.agents > 1:
            return Pass()
        return best

    def _card_value(self, view: SentientView, me: SentientPlayer, fs: int, ns: int, bl: bool, br: bool) -> float:
        cards = self.data.cards
        card_id = view.factory[fs - 1].card
        assert card_id is not None, "Acquire is legal only on a slot holding a card"
        card = cards[card_id]
        dice: list[int] = me.dice
        new = list(dice)
        if not bl:
            new[ns - 1] = calibrate(dice[ns - 1], card.left)
        if not br:
            new[ns] = calibrate(dice[ns], card.right)
        network: list[str | None] = list(me.network)
        before = sum(score_card(cards[c], dice[i], dice[i + 1]) for i, c in enumerate(network) if c)
        network[ns - 1] = card.id
        after = sum(score_card(cards[c], new[i], new[i + 1]) for i, c in enumerate(network) if c)
        # Every investor of this type already held pays 1 more at the end of the game.
        held = me.investor_types.count(card.type)
        return float(after - before + held)

    def _influence_value(self, view: SentientView, me: SentientPlayer, seat: int, fs: int, extra: int) -> float:
        value = 0.0
        n = len(view.players)
        for pos in (fs - 1, fs):
            inv = view.investors[pos]
            if inv is None:
                continue
            slots = investor_slots(pos)
            influence = [sum(view.factory[i].influence[s] for i in slots) for s in range(n)]
            agents = [sum(view.factory[i].agents[s] for i in slots) for s in range(n)]
            first0, second0 = rank_investor(influence, agents, view.turn_order)
            influence[seat] += 1 + extra
            agents[seat] += 1
            first1, second1 = rank_investor(influence, agents, view.turn_order)
            worth = self._investor_worth(view, me, inv.type)
            gain = (worth if first1 == seat else 0.0) + (1.0 if second1 == seat else 0.0)
            had = (worth if first0 == seat else 0.0) + (1.0 if second0 == seat else 0.0)
            value += INVESTOR_HOLD_ODDS * (gain - had)
        return value

    def _investor_worth(self, view: SentientView, me: SentientPlayer, inv_type: str) -> float:
        cards = self.data.cards
        owned = sum(1 for c in me.collected if cards[c].type == inv_type)
        owned += sum(1 for c in me.network if c and cards[c].type == inv_type)
        rounds_left: int = 3 - view.round
        return owned + FUTURE_CARDS_PER_ROUND * rounds_left
