"""A greedy Mechanica bot: the best immediate value among the legal commands, read from the view.

It hands in the best blueprint, sells everything else, then buys what its factory's belt traffic
says pays back before the game ends (an improvement on a busy lane, a fabricator for a lane whose
truck has room, a bigger truck for a jammed one, a cheap recycle), and ends its turn.
"""

from __future__ import annotations

import msgspec

from contracts import mechanica as c
from contracts.views.mechanica import MechanicaView
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.state import BASIC_FABRICATOR, BIG, HUGE, SMALL

# Heuristic weights (bot policy only; nothing here is a rule).
GAIN_PER_BOT: dict[str, float] = {
    "upgrade": 2.0,
    "wrap": 2.5,  # value + bonus into the vault, and the bot no longer needs a truck
    "duplicate": 1.5,
    "downgrade": 1.0,
    "split": 0.3,
    "assemble": 0.3,
}
RECYCLE_USEFUL = 0.8  # a recycled bot still has to reach a truck with room
MIN_SCORE = 0.5
_BUYS = (c.Install, c.Recycle, c.BuyTruck, c.UpgradeTruck)


class _Factory:
    """The seat's factory from the view, with each square's lane traffic."""

    def __init__(self, data: MechanicaData, view: MechanicaView, seat: int) -> None:
        geo = data.geometry
        me = view.players[seat].factory
        self.pieces: list[str] = me.pieces
        self.arrows = list(geo.arrow)
        for fork in me.forks:
            self.arrows[geo.square(fork.row - 1, fork.col - 1)] = FORK_DIRECTIONS[fork.direction]
        self.data = data
        # Bots per workday crossing each square: one per fabricator upstream of it.
        self.traffic = [0] * len(self.pieces)
        self.fed: dict[int, int] = {sq: 0 for sq in geo.dock_squares}
        for sq in geo.start_squares:
            if self._fabricator(self.pieces[sq]):
                for step in self.path(sq):
                    self.traffic[step] += 1

    def _fabricator(self, piece: str) -> bool:
        return piece == BASIC_FABRICATOR or (piece in self.data.tiles and self.data.tiles[piece].effect == "fabricate")

    def path(self, sq: int) -> list[int]:
        geo = self.data.geometry
        out = [sq]
        while geo.area[sq] != "dock":
            nxt = geo.target(sq, self.arrows[sq])
            assert nxt is not None
            sq = nxt
            out.append(sq)
        return out

    def capacity(self, sq: int) -> int:
        piece = self.pieces[sq]
        t = self.data.trucks
        return {SMALL: t.small_capacity, BIG: t.big_capacity, HUGE: t.huge_capacity}.get(piece) or (
            self.data.tiles[piece].capacity if piece in self.data.tiles else 0
        )

    def spare(self, dock: int) -> int:
        return self.capacity(dock) - self.traffic[dock]


class GreedyBot:
    def __init__(self, data: MechanicaData) -> None:
        self.data = data

    def choose(self, view: MechanicaView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        blueprints = [a for a in legal if isinstance(a, c.CompleteBlueprint)]
        if blueprints:
            return max(blueprints, key=lambda a: self._blueprint_gain(view, a))
        sells = [a for a in legal if isinstance(a, c.Sell)]
        if sells:
            return sells[0]
        best = self._best_buy(view, legal, seat)
        if best is not None:
            return best
        # A search may offer a subset of the legal commands (games.mcts): EndTurn need not be in it.
        return next((a for a in legal if isinstance(a, c.EndTurn)), legal[0])

    def _best_buy(self, view: MechanicaView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct | None:
        fac = _Factory(self.data, view, seat)
        days = self._days_left(view)
        best: msgspec.Struct | None = None
        best_score = MIN_SCORE
        for a in legal:
            if not isinstance(a, _BUYS):
                continue
            score = self._score(view, fac, days, a)
            if score > best_score:
                best, best_score = a, score
        return best

    def _days_left(self, view: MechanicaView) -> float:
        n = len(view.players)
        stock: int = view.stack_size + (view.extras_size if n == 4 else 0)
        in_shop = sum(1 for s in view.shop if s.improvement)
        return max(0.0, (stock + in_shop) / n - 1)

    def _blueprint_gain(self, view: MechanicaView, a: c.CompleteBlueprint) -> float:
        bp = view.blueprints[a.pile - 1]
        money: int = bp.money
        return float(money - sum(self.data.value[m] for m in bp.bots))

    def _score(self, view: MechanicaView, fac: _Factory, days: float, a: msgspec.Struct) -> float:
        d = self.data
        geo = d.geometry
        prices = d.setup.shop_prices
        if isinstance(a, c.Install):
            tile = view.shop[prices.index(a.price)].improvement
            kind = d.tiles[tile]
            sq = geo.square(a.row - 1, a.col - 1)
            if fac.pieces[sq] in d.tiles or fac.pieces[sq] == BASIC_FABRICATOR:
                return float("-inf")  # never demolish a working piece
            per_day = 0.0
            if kind.effect == "fabricate":
                dock = fac.path(sq)[-1]
                per_day = d.value[kind.makes] if fac.spare(dock) > 0 else 0.0
            elif kind.effect == "truck":
                per_day = kind.money * min(fac.traffic[sq], kind.capacity)
                per_day += max(0, min(fac.traffic[sq], kind.capacity) - fac.capacity(sq)) * 3.0
            else:
                per_day = GAIN_PER_BOT[kind.effect] * min(fac.traffic[sq], kind.inputs)
            return per_day * max(0.0, days - 1) + kind.end_value - a.price
        if isinstance(a, c.Recycle):
            tile = view.shop[prices.index(a.price)].improvement
            bots = d.tiles[tile].recycle[: len(a.rows)]
            return RECYCLE_USEFUL * sum(d.value[m] for m in bots) - a.price - 0.1 * sum(a.rows)
        if isinstance(a, (c.BuyTruck, c.UpgradeTruck)):
            sq = geo.square(a.row - 1, geo.ncols - 1)
            size = a.size if isinstance(a, c.BuyTruck) else HUGE
            cost = (
                d.trucks.upgrade_cost
                if isinstance(a, c.UpgradeTruck)
                else (d.trucks.big_cost if size == BIG else d.trucks.huge_cost)
            )
            new_cap = d.trucks.big_capacity if size == BIG else d.trucks.huge_capacity
            extra = min(fac.traffic[sq], new_cap) - min(fac.traffic[sq], fac.capacity(sq))
            return extra * 3.0 * max(0.0, days - 1) - cost
        return float("-inf")
