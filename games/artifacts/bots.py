"""A greedy Artifacts, Inc. bot: the best immediate value among the legal commands, read from the view.

Values are in reputation points; dollars and artifacts are worth what they tend to buy. Nothing
here is a rule.

A decision values each die use once (the die only breaks ties) and reads what many uses share
from `_Decision`, worked out once per decision: the seat's cards by id, per place in its rows the
neighbours' categories and the reputation their abilities pay a newcomer, the finds, the dive's
gain. The values are the same numbers, computed in the same order, as valuing every use from the
whole tableau (neighbours, visible reputation): tests/games/artifacts/test_greedy_same_choices.py
keeps that algorithm and checks both give every command the same value. It is the rollout policy
of the hosted search bot, so its cost is the search's.
"""

from __future__ import annotations

import msgspec

from contracts import artifacts as c
from contracts.views.artifacts import ArtifactsPlayer, ArtifactsView, CardAt
from games.artifacts.components import CATEGORIES, Action, ArtifactsData, Face
from games.artifacts.scoring import museum_winner, visible_reputation
from games.artifacts.state import Placed

DOLLAR = 0.3  # an E card: about 13 dollars for 5 reputation
# Below what a museum pays, so artifacts get sold; scrolls also pay for cards.
ARTIFACT_DOLLARS = {"fossil": 0.9, "scroll": 1.4, "gem": 1.1, "statue": 1.2}
DIE_DOLLARS = 2.0  # what one more adventurer die tends to earn per turn
ENGINE_SHARE = 0.5  # a printed action is not used every turn
DIVE_DIE = 0.25  # a die spent on a dive could have done something else
MAJORITY_ODDS = 0.6  # a museum lead may still be overtaken
PIP = 0.01  # among equal uses, keep the higher dice
_SCROLL_DOLLARS = ARTIFACT_DOLLARS["scroll"]
_NONE = dict.fromkeys(("any", *CATEGORIES), 0)
_FOSSIL, _SCROLL, _GEM, _STATUE = (ARTIFACT_DOLLARS[k] for k in ("fossil", "scroll", "gem", "statue"))
_ADJACENT = ("artifact_adjacent", "dollars_adjacent")


def _placed(cards: list[CardAt]) -> list[Placed]:
    return [Placed(card=x.card, level=x.level, row=x.row, col=x.col) for x in cards]


class _Place:
    """One place in a seat's rows: how many neighbours of each category ("any": all of them), and
    what the neighbours' rep_adjacent abilities pay per category of a card placed here."""

    __slots__ = ("bonus", "counts")

    def __init__(self, data: ArtifactsData, cards: list[Placed], row: int, col: int) -> None:
        counts = _NONE.copy()
        bonus = _NONE.copy()
        for nb in cards:
            # scoring.neighbours: left, right, above or below; never diagonal, never itself.
            if (nb.row == row and abs(nb.col - col) == 1) or (nb.col == col and nb.row != row):
                counts["any"] += 1
                counts[data.assets[nb.card].category] += 1
                for ab in data.face(nb.card, nb.level).abilities:
                    if ab.effect == "rep_adjacent":
                        bonus[ab.category] += ab.per
        self.counts = counts
        self.bonus = bonus


class _Decision:
    """What one decision's valuations share (module docstring), each part worked out when first asked."""

    def __init__(self, bot: GreedyBot, view: ArtifactsView, me: ArtifactsPlayer, seat: int) -> None:
        self.bot = bot
        self.data = bot.data
        self.view = view
        self.me = me
        self.seat = seat
        self.cards = _placed(me.cards)
        leader = max(p.reputation for p in view.players)
        # Turns left for this seat, roughly: engines pay only while the game lasts.
        self.horizon = 0.0 if view.end_triggered else max(0.0, (view.end_reputation - leader) / 2.0)
        # Dollars matter while scarce and while there is time to spend them; hoards are worthless.
        scarcity = min(1.0, 12.0 / max(1, me.dollars))
        self.cost_weight = DOLLAR * max(0.05, scarcity * min(1.0, self.horizon / 3.0))
        self.by_card: dict[str, Placed] = {}
        for pc in self.cards:
            self.by_card.setdefault(pc.card, pc)
        self._places: dict[tuple[int, int], _Place] = {}
        self._finds: dict[str, int] = {}
        self._dive_gain: int | None = None
        # Each use's value without its die, by what the value depends on.
        self.uses: dict[tuple[str, int], float] = {}
        self.buys: dict[tuple[str, int, int], float] = {}
        self.upgrades: dict[str, float] = {}
        self.sales: dict[tuple[str, int], float] = {}
        self.collectors: dict[tuple[int, int, int, int], float] = {}
        self._markets: dict[str, tuple[Face, str, float, int | None, float | None]] = {}

    def place(self, row: int, col: int) -> _Place:
        found = self._places.get((row, col))
        if found is None:
            found = self._places[row, col] = _Place(self.data, self.cards, row, col)
        return found

    def finds(self, find: str) -> int:
        n = self._finds.get(find)
        if n is None:
            underwater = self.data.underwater
            n = self._finds[find] = sum(1 for u in self.me.underwater if find == "any" or underwater[u].find == find)
        return n

    # ---- what scoring computes, from the shared parts -----------------------------------

    def action_yield(self, act: Action, where: _Place | None) -> int:
        """scoring.action_yield."""
        if act.effect in ("artifact_adjacent", "dollars_adjacent"):
            assert where is not None, "adjacency actions are printed on asset cards only"
            return act.amount + act.per * where.counts[act.category]
        if act.effect == "dollars_finds":
            return act.amount + act.per * self.finds(act.find)
        return act.amount

    def reputation(self, face: Face, at: _Place) -> int:
        """scoring.card_reputation of a card showing `face` at a place."""
        total = face.reputation
        for ab in face.abilities:
            if ab.effect == "rep_adjacent":
                total += ab.per * at.counts[ab.category]
            else:
                total += ab.per * self.finds(ab.find)
        return total

    def yield_value(self, act: Action, where: _Place | None) -> float:
        amount = self.action_yield(act, where)
        if act.effect.startswith("artifact"):
            return amount * ARTIFACT_DOLLARS[act.kind]
        return float(amount)

    def engine(self, face: Face, where: _Place | None) -> float:
        """Reputation-equivalent a face earns per remaining turn of this seat."""
        dollars = face.adventurers * DIE_DOLLARS
        for act in face.actions:
            if act.effect == "buy":
                dollars += 1.0
            else:
                dollars += ENGINE_SHARE * self.yield_value(act, where)
        return dollars * DOLLAR * 0.5

    # ---- each use's value, without its die ----------------------------------------------

    def use(self, card: str, action: int) -> float:
        pc = self.by_card.get(card)
        level = pc.level if pc is not None else 1
        where = self.place(pc.row, pc.col) if pc is not None else None
        act = self.data.actions_of(card, level)[action - 1]
        return self.yield_value(act, where) * DOLLAR

    def market(self, market: str) -> tuple[Face, str, float, int | None, float | None]:
        """A market card's Level 1 face, category and weighted cost, and its reputation and
        engine where they do not depend on the place (no adjacency), else None."""
        found = self._markets.get(market)
        if found is None:
            asset = self.data.assets[market]
            face = asset.lv1
            reputation = None
            if all(ab.effect != "rep_adjacent" for ab in face.abilities):
                reputation = face.reputation + sum(ab.per * self.finds(ab.find) for ab in face.abilities)
            engine = None
            if all(act.effect not in _ADJACENT for act in face.actions):
                engine = self.engine(face, None) * self.horizon
            cost = asset.cost + asset.scrolls * _SCROLL_DOLLARS
            found = self._markets[market] = (face, asset.category, cost * self.cost_weight, reputation, engine)
        return found

    def buy(self, market: str, row: int, col: int) -> float:
        face, category, cost, reputation, engine = self._markets.get(market) or self.market(market)
        at = self._places.get((row, col)) or self.place(row, col)
        # scoring.placement_gain: its own face, plus what its neighbours' abilities pay for it.
        if reputation is None:
            reputation = self.reputation(face, at)
        gain = reputation + at.bonus["any"] + at.bonus[category]
        if engine is None:
            engine = self.engine(face, at) * self.horizon
        return gain + engine - cost

    def upgrade(self, target: str) -> float:
        asset = self.data.assets[target]
        # Turning a card over changes its own reputation only: its neighbours count categories.
        gain = 0
        for pc in self.cards:
            if pc.card == target and pc.level != 2:
                at = self.place(pc.row, pc.col)
                gain += self.reputation(asset.lv2, at) - self.reputation(asset.lv1, at)
        where = self.by_card[target]
        at = self.place(where.row, where.col)
        engine = (self.engine(asset.lv2, at) - self.engine(asset.lv1, at)) * self.horizon
        cost = asset.cost + asset.scrolls * _SCROLL_DOLLARS
        return gain + engine - cost * self.cost_weight

    def museum(self, museum_id: str, box: int) -> float:
        data, view, seat = self.data, self.view, self.seat
        museum = data.museums[museum_id]
        orders = museum.boxes_2p if view.museum_side == "2p" else museum.boxes_3p
        count = orders[box - 1]
        dollars = count + museum.bonus - count * ARTIFACT_DOLLARS[museum.kind]
        boxes = next(m.boxes for m in view.museums if m.museum == museum_id)
        n = len(view.players)
        before, _ = museum_winner(boxes, n)
        after_boxes = list(boxes)
        after_boxes[box - 1] = seat
        after, _ = museum_winner(after_boxes, n)
        swing = museum.majority * MAJORITY_ODDS * ((after == seat) - (before == seat))
        return dollars * DOLLAR + swing

    @staticmethod
    def sale(sold: tuple[int, int, int, int]) -> float:
        fossil, scroll, gem, statue = sold
        kinds = (fossil > 0) + (scroll > 0) + (gem > 0) + (statue > 0)
        dollars = fossil + scroll + gem + statue + max(0, kinds - 1)
        # Added left to right from the fossils, as a sum() over them would.
        kept = fossil * _FOSSIL + scroll * _SCROLL + gem * _GEM + statue * _STATUE
        return (dollars - kept) * DOLLAR

    def dive_gain(self) -> int:
        if self._dive_gain is None:
            assert self.view.underwater_top is not None, "Dive is legal only with a card on the underwater stack"
            top = self.view.underwater_top.card
            base = visible_reputation(self.data, self.cards, self.me.underwater)
            self._dive_gain = visible_reputation(self.data, self.cards, [*self.me.underwater, top]) - base
        return self._dive_gain

    def value(self, a: msgspec.Struct) -> float:
        """`a`'s value; a die use's is its use's less PIP per pip, so higher dice win ties.
        The kinds are asked in the order of how many of them a turn tends to list."""
        if isinstance(a, c.Buy):
            bk = (a.market, a.row, a.col)
            v = self.buys.get(bk)
            if v is None:
                v = self.buys[bk] = self.buy(*bk)
            return v - PIP * a.die
        if isinstance(a, c.SellToCollectors):
            sk = (a.fossil, a.scroll, a.gem, a.statue)
            v = self.collectors.get(sk)
            if v is None:
                v = self.collectors[sk] = self.sale(sk)
            return v - PIP * a.die
        if isinstance(a, c.UseAction):
            uk = (a.card, a.action)
            v = self.uses.get(uk)
            if v is None:
                v = self.uses[uk] = self.use(*uk)
            return v - PIP * a.die
        if isinstance(a, c.Dive):
            return self.dive_gain() - DIVE_DIE * len(a.dice) - PIP * sum(a.dice)
        if isinstance(a, c.SellToMuseum):
            mk = (a.museum, a.box)
            v = self.sales.get(mk)
            if v is None:
                v = self.sales[mk] = self.museum(*mk)
            return v - PIP * a.die
        if isinstance(a, c.Upgrade):
            v = self.upgrades.get(a.target)
            if v is None:
                v = self.upgrades[a.target] = self.upgrade(a.target)
            return v - PIP * a.die
        return 0.0  # EndTurn


class GreedyBot:
    def __init__(self, data: ArtifactsData) -> None:
        self.data = data

    def choose(self, view: ArtifactsView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        if view.phase != "play":
            return legal[0]
        decision = _Decision(self, view, view.players[seat], seat)
        value, buys, sales, uses = decision.value, decision.buys, decision.collectors, decision.uses
        best: msgspec.Struct = legal[0]
        best_value = 0.0
        for a in legal:
            # Buys, Private Collectors sales and actions are most of a turn's list: valued here,
            # as `value` would, without its call.
            if isinstance(a, c.Buy):
                bk = (a.market, a.row, a.col)
                v = buys.get(bk)
                if v is None:
                    v = buys[bk] = decision.buy(*bk)
                v -= PIP * a.die
            elif isinstance(a, c.SellToCollectors):
                sk = (a.fossil, a.scroll, a.gem, a.statue)
                v = sales.get(sk)
                if v is None:
                    v = sales[sk] = decision.sale(sk)
                v -= PIP * a.die
            elif isinstance(a, c.UseAction):
                uk = (a.card, a.action)
                v = uses.get(uk)
                if v is None:
                    v = uses[uk] = decision.use(*uk)
                v -= PIP * a.die
            else:
                v = value(a)
            if v > best_value:
                best, best_value = a, v
        return best

    def values(self, view: ArtifactsView, legal: list[msgspec.Struct], seat: int) -> list[float]:
        """Every legal command's value in the play phase (what `choose` maximises; for tests)."""
        decision = _Decision(self, view, view.players[seat], seat)
        return [decision.value(a) for a in legal]
