"""The greedy bot's cheaper evaluation makes exactly the choices of the algorithm it replaced.

`ReferenceGreedy` below is games/artifacts/bots.py's GreedyBot as it was before (commit 79c4b3b),
verbatim but for its name and its weights (imported from the bot, so that tuning them keeps the
comparison): it values every die use from the whole tableau (neighbours, visible reputation,
yields recomputed per use). The bot now values the same quantities from what one decision works
out once (each place's neighbours, the finds, the dive's gain). Over seeded decisions of 2-4
player games (greedy and random opponents, so also states greedy would not reach) both must give
the same command, and exactly the same value to every legal command.
"""

from __future__ import annotations

import msgspec
import pytest

from contracts import artifacts as c
from contracts.views.artifacts import ArtifactsPlayer, ArtifactsView, CardAt
from games.artifacts import RULES
from games.artifacts.bots import (
    ARTIFACT_DOLLARS,
    DIE_DOLLARS,
    DIVE_DIE,
    DOLLAR,
    ENGINE_SHARE,
    MAJORITY_ODDS,
    PIP,
    GreedyBot,
)
from games.artifacts.components import KINDS, Action, ArtifactsData, Face
from games.artifacts.scoring import action_yield, museum_winner, placement_gain, visible_reputation
from games.artifacts.state import Placed
from games.bots import RandomBot
from games.offline import new_game

# ---- the reference: the algorithm as it was ---------------------------------------------------
# Where each die-using command holds its die: a use is valued once, whatever die shows it.
_DIE_AT: dict[type[msgspec.Struct], int] = {
    cls: cls.__struct_fields__.index("die")
    for cls in (c.UseAction, c.Buy, c.Upgrade, c.SellToMuseum, c.SellToCollectors)
}


def _placed(cards: list[CardAt]) -> list[Placed]:
    return [Placed(card=x.card, level=x.level, row=x.row, col=x.col) for x in cards]


class ReferenceGreedy:
    def __init__(self, data: ArtifactsData) -> None:
        self.data = data
        self._cost_weight = DOLLAR

    def choose(self, view: ArtifactsView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        if view.phase != "play":
            return legal[0]
        me = view.players[seat]
        cards = _placed(me.cards)
        base = visible_reputation(self.data, cards, me.underwater)
        leader = max(p.reputation for p in view.players)
        # Turns left for this seat, roughly: engines pay only while the game lasts.
        horizon = 0.0 if view.end_triggered else max(0.0, (view.end_reputation - leader) / 2.0)
        # Dollars matter while scarce and while there is time to spend them; hoards are worthless.
        scarcity = min(1.0, 12.0 / max(1, me.dollars))
        self._cost_weight = DOLLAR * max(0.05, scarcity * min(1.0, horizon / 3.0))
        best: msgspec.Struct = legal[0]
        best_value = 0.0
        # The die only breaks ties, so value each use once whatever the die showing it.
        memo: dict[tuple[object, ...], float] = {}
        for a in legal:
            at = _DIE_AT.get(type(a))
            if at is None:
                value = self._value(view, me, seat, cards, base, horizon, a)
            else:
                fields = msgspec.structs.astuple(a)
                key = (type(a), fields[:at], fields[at + 1 :])
                found = memo.get(key)
                if found is None:
                    found = memo[key] = self._value(view, me, seat, cards, base, horizon, a)
                value = found - PIP * fields[at]
            if value > best_value:
                best, best_value = a, value
        return best

    def _value(
        self, view: ArtifactsView, me: ArtifactsPlayer, seat: int, cards: list[Placed], base: int,
        horizon: float, a: msgspec.Struct,
    ) -> float:  # fmt: skip
        data = self.data
        if isinstance(a, c.UseAction):
            level = next((pc.level for pc in cards if pc.card == a.card), 1)
            where = next((pc for pc in cards if pc.card == a.card), None)
            act = data.actions_of(a.card, level)[a.action - 1]
            return self._yield(act, cards, me.underwater, where) * DOLLAR
        if isinstance(a, c.Buy):
            asset = data.assets[a.market]
            where = Placed(card=a.market, level=1, row=a.row, col=a.col)
            gain = placement_gain(data, cards, me.underwater, where)
            new = [*cards, where]
            engine = self._engine(asset.lv1, new, me.underwater, where) * horizon
            cost = asset.cost + asset.scrolls * ARTIFACT_DOLLARS["scroll"]
            return gain + engine - cost * self._cost_weight
        if isinstance(a, c.Upgrade):
            asset = data.assets[a.target]
            new = [Placed(card=x.card, level=2 if x.card == a.target else x.level, row=x.row, col=x.col) for x in cards]
            gain = visible_reputation(data, new, me.underwater) - base
            where = next(x for x in new if x.card == a.target)
            engine = (self._engine(asset.lv2, new, me.underwater, where)
                      - self._engine(asset.lv1, new, me.underwater, where)) * horizon  # fmt: skip
            cost = asset.cost + asset.scrolls * ARTIFACT_DOLLARS["scroll"]
            return gain + engine - cost * self._cost_weight
        if isinstance(a, c.SellToMuseum):
            return self._museum(view, seat, a)
        if isinstance(a, c.SellToCollectors):
            sold = [a.fossil, a.scroll, a.gem, a.statue]
            kinds = sum(1 for n in sold if n)
            dollars = sum(sold) + max(0, kinds - 1)
            kept = sum(n * ARTIFACT_DOLLARS[k] for n, k in zip(sold, KINDS, strict=True))
            return (dollars - kept) * DOLLAR
        if isinstance(a, c.Dive):
            assert view.underwater_top is not None, "Dive is legal only with a card on the underwater stack"
            top = view.underwater_top.card
            gain = visible_reputation(data, cards, [*me.underwater, top]) - base
            return gain - DIVE_DIE * len(a.dice) - PIP * sum(a.dice)
        return 0.0

    def _yield(self, act: Action, cards: list[Placed], underwater: list[str], where: Placed | None) -> float:
        amount = action_yield(self.data, act, cards, underwater, where)
        if act.effect.startswith("artifact"):
            return amount * ARTIFACT_DOLLARS[act.kind]
        return float(amount)

    def _engine(self, face: Face, cards: list[Placed], underwater: list[str], where: Placed) -> float:
        """Reputation-equivalent a face earns per remaining turn of this seat."""
        dollars = face.adventurers * DIE_DOLLARS
        for act in face.actions:
            if act.effect == "buy":
                dollars += 1.0
            else:
                dollars += ENGINE_SHARE * self._yield(act, cards, underwater, where)
        return dollars * DOLLAR * 0.5

    def _museum(self, view: ArtifactsView, seat: int, a: c.SellToMuseum) -> float:
        data = self.data
        museum = data.museums[a.museum]
        orders = museum.boxes_2p if view.museum_side == "2p" else museum.boxes_3p
        count = orders[a.box - 1]
        dollars = count + museum.bonus - count * ARTIFACT_DOLLARS[museum.kind]
        boxes = next(m.boxes for m in view.museums if m.museum == a.museum)
        n = len(view.players)
        before, _ = museum_winner(boxes, n)
        after_boxes = list(boxes)
        after_boxes[a.box - 1] = seat
        after, _ = museum_winner(after_boxes, n)
        swing = museum.majority * MAJORITY_ODDS * ((after == seat) - (before == seat))
        return dollars * DOLLAR + swing


# ---- the comparison ---------------------------------------------------------------------------

Decision = tuple[ArtifactsView, list[msgspec.Struct], int]


def _decisions(num_players: int, games: int) -> list[Decision]:
    """Every play-phase decision of a greedy seat in seeded games; in odd games one seat is random."""
    out: list[Decision] = []
    for g in range(games):
        bots: list[ReferenceGreedy | RandomBot] = [ReferenceGreedy(RULES.data) for _ in range(num_players)]
        if g % 2:
            bots[g % num_players] = RandomBot(g)
        game = new_game(RULES, num_players, f"same-choices-{num_players}-{g}", record_events=False)
        while not game.is_terminal():
            seat = game.current_player()
            assert seat is not None
            view, legal = game.view(seat), game.legal_actions(seat)
            assert isinstance(view, ArtifactsView)
            bot = bots[seat]
            if isinstance(bot, ReferenceGreedy) and view.phase == "play":
                out.append((view, legal, seat))
            game.apply(bot.choose(view, legal, seat), seat)
    return out


@pytest.mark.parametrize(("num_players", "games"), [(2, 16), (3, 8), (4, 6)])
def test_the_cheaper_greedy_makes_the_same_choices(num_players: int, games: int) -> None:
    decisions = _decisions(num_players, games)
    assert len(decisions) > 300 * num_players // 2
    old, new = ReferenceGreedy(RULES.data), GreedyBot(RULES.data)
    kinds: set[type] = set()
    for view, legal, seat in decisions:
        assert new.choose(view, legal, seat) == old.choose(view, legal, seat), (view, seat)
        # The same value for every command, not only the best one (old.choose set the weight).
        values = new.values(view, legal, seat)
        me = view.players[seat]
        cards = _placed(me.cards)
        base = visible_reputation(RULES.data, cards, me.underwater)
        leader = max(p.reputation for p in view.players)
        horizon = 0.0 if view.end_triggered else max(0.0, (view.end_reputation - leader) / 2.0)
        for a, value in zip(legal, values, strict=True):
            at = _DIE_AT.get(type(a))
            want = old._value(view, me, seat, cards, base, horizon, a)
            if at is not None:
                want -= PIP * msgspec.structs.astuple(a)[at]
            assert value == want, (a, value, want)
            kinds.add(type(a))
    # Every kind of command was valued at least once.
    assert {c.UseAction, c.Buy, c.Upgrade, c.SellToMuseum, c.SellToCollectors, c.Dive, c.EndTurn} <= kinds
