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


# An investor position before the move: influence and agents per seat on its slots, what the
# investor is worth to the bot, and what the bot holds of it now (investor and chip).
_Standing = tuple[list[int], list[int], float, float]


class GreedyBot:
    def __init__(self, data: SentientData) -> None:
        self.data = data

    def choose(self, view: SentientView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        acquires = [a for a in legal if isinstance(a, Acquire)]
        if not acquires:
            return legal[0]
        me = view.players[seat]
        investors = self._investor_tables(view, me, seat)
        cards = self.data.cards
        scored = sum(score_card(cards[c], me.dice[i], me.dice[i + 1]) for i, c in enumerate(me.network) if c)
        card_part: dict[tuple[int, int, bool, bool], float] = {}
        infl_part: dict[tuple[int, int], float] = {}
        best: msgspec.Struct | None = None
        best_value = float("-inf")
        for a in acquires:
            ck = (a.factory_slot, a.network_slot, a.block_left, a.block_right)
            cv = card_part.get(ck)
            if cv is None:
                cv = card_part[ck] = self._card_value(view, me, scored, *ck)
            ik = (a.factory_slot, a.assistants)
            iv = infl_part.get(ik)
            if iv is None:
                iv = infl_part[ik] = self._influence_value(view, seat, investors, *ik)
            value = cv + iv - ASSISTANT_COST * (a.assistants + a.block_left + a.block_right)
            if value > best_value:
                best, best_value = a, value
        assert best is not None
        can_pass = any(isinstance(a, Pass) for a in legal)
        if can_pass and best_value < PASS_BELOW and me.agents > 1:
            return Pass()
        return best

    def _card_value(
        self, view: SentientView, me: SentientPlayer, before: int, fs: int, ns: int, bl: bool, br: bool
    ) -> float:
        """What connecting the card in factory slot `fs` to network slot `ns` adds to the points the
        network scores now (`before`), plus 1 per investor of its type already held."""
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
        network[ns - 1] = card.id
        after = sum(score_card(cards[c], new[i], new[i + 1]) for i, c in enumerate(network) if c)
        # Every investor of this type already held pays 1 more at the end of the game.
        held = me.investor_types.count(card.type)
        return float(after - before + held)

    def _investor_tables(self, view: SentientView, me: SentientPlayer, seat: int) -> list[_Standing | None]:
        """Per investor position, how it stands before this move (None: no investor there): what
        every candidate move is compared with, so it is worked out once a decision."""
        n = len(view.players)
        out: list[_Standing | None] = []
        for pos, inv in enumerate(view.investors):
            if inv is None:
                out.append(None)
                continue
            slots = investor_slots(pos)
            influence = [sum(view.factory[i].influence[s] for i in slots) for s in range(n)]
            agents = [sum(view.factory[i].agents[s] for i in slots) for s in range(n)]
            first0, second0 = rank_investor(influence, agents, view.turn_order)
            worth = self._investor_worth(view, me, inv.type)
            had = (worth if first0 == seat else 0.0) + (1.0 if second0 == seat else 0.0)
            out.append((influence, agents, worth, had))
        return out

    def _influence_value(
        self, view: SentientView, seat: int, investors: list[_Standing | None], fs: int, extra: int
    ) -> float:
        value = 0.0
        for pos in (fs - 1, fs):
            standing = investors[pos]
            if standing is None:
                continue
            before, agents_before, worth, had = standing
            influence, agents = list(before), list(agents_before)
            influence[seat] += 1 + extra
            agents[seat] += 1
            first1, second1 = rank_investor(influence, agents, view.turn_order)
            gain = (worth if first1 == seat else 0.0) + (1.0 if second1 == seat else 0.0)
            value += INVESTOR_HOLD_ODDS * (gain - had)
        return value

    def _investor_worth(self, view: SentientView, me: SentientPlayer, inv_type: str) -> float:
        cards = self.data.cards
        owned = sum(1 for c in me.collected if cards[c].type == inv_type)
        owned += sum(1 for c in me.network if c and cards[c].type == inv_type)
        rounds_left: int = 3 - view.round
        return owned + FUTURE_CARDS_PER_ROUND * rounds_left
