"""A greedy Prosperity bot: the legal command whose immediate result looks best, read from the view.

It values a position as the points in hand plus what the visible symbols are expected to yield
over the counts still to come (the view lists them) and the final scoring. Nothing here is a rule.
"""

from __future__ import annotations

import msgspec

from contracts.prosperity import (
    BuyTile,
    ChooseBoard,
    CleanUp,
    Income,
    Research,
    SettleEnergy,
    SplitResearch,
)
from contracts.views.prosperity import ProsperityPlayer, ProsperityView
from games.prosperity import scoring as sc
from games.prosperity.components import Board, Face, ProsperityData, Tile

# Heuristic weights (bot policy only).
NEGATIVE_ENERGY = 0.4  # points lost per negative energy level per count (100 euros, or a disc)
DISC_REMOVED = 0.5  # points an ecology level is worth per count while discs remain
DISC_HELD = 0.3  # general cost of a disc on the track
DANGER_MARGIN = 3  # discs this close to the triangle are penalised hard
DANGER = 1.5
RESEARCH_SYMBOL = 0.3  # per research step to come
RESEARCH_STEP = 0.25  # per marker step (cheaper tiles, majority)
BALANCE = 0.05  # prefer the lower track a little
UNLOCK = 0.5  # per blue space a transport tile opens
FINAL_COUNTS = {"energy": 2, "ecology": 2, "capital": 1, "research": 0, "prosperity": 1}


class _Model(msgspec.Struct, kw_only=True):
    money: int
    discs: int
    points: int
    research: list[int]
    energy: int
    ecology: int
    capital: int
    research_symbols: int
    prosperity: int
    unlocked: int = 0


class GreedyBot:
    def __init__(self, data: ProsperityData) -> None:
        self.data = data

    def choose(self, view: ProsperityView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        if isinstance(legal[0], ChooseBoard):
            return next((a for a in legal if isinstance(a, ChooseBoard) and a.side == "silver"), legal[0])
        me = view.players[seat]
        # Past ChooseBoard every seat has a side, so its board's figures are in the view.
        assert me.capital is not None and me.research_symbols is not None and me.prosperity_symbols is not None
        board = self.data.boards[me.side]
        left = {s: n + FINAL_COUNTS[s] for s, n in msgspec.structs.asdict(view.counts_left).items()}
        base = _Model(
            money=me.money,
            discs=me.discs,
            points=me.points,
            research=[me.research.energy, me.research.ecology],
            energy=me.energy,
            ecology=me.ecology,
            capital=me.capital,
            research_symbols=me.research_symbols,
            prosperity=me.prosperity_symbols,
        )
        best = legal[0]
        best_value = float("-inf")
        for action in legal:
            value = self._value(self._after(view, me, board, base, action), board, left)
            if value > best_value:
                best, best_value = action, value
        return best

    def _after(
        self, view: ProsperityView, me: ProsperityPlayer, board: Board, base: _Model, action: msgspec.Struct
    ) -> _Model:
        m = msgspec.structs.replace(base, research=list(base.research))
        if isinstance(action, Income):
            m.money += sc.INCOME
        elif isinstance(action, CleanUp):
            m.discs -= 1
        elif isinstance(action, Research):
            m.research[0 if action.track == "energy" else 1] += 1
        elif isinstance(action, SettleEnergy):
            assert view.pending is not None, "SettleEnergy is legal only while a count waits on it"
            levels = max(view.pending.options)
            m.money -= sc.ENERGY_PAY * (levels - action.discs)
            m.discs += action.discs
        elif isinstance(action, SplitResearch):
            steps = m.research_symbols
            e, c = sc.split_steps(steps, action.energy, m.research, self.data.research_top)
            m.research[0] += e
            m.research[1] += c
        elif isinstance(action, BuyTile):
            self._buy(me, board, m, action)
        return m

    def _buy(self, me: ProsperityPlayer, board: Board, m: _Model, action: BuyTile) -> None:
        tile = self.data.tiles[action.tile]
        m.money -= sc.price(tile.level, m.research[0 if tile.side == "energy" else 1])
        if tile.special:
            m.points += tile.points
            m.discs -= min(tile.clean, m.discs)
            return
        index = self.data.space_index[me.side][action.space or ""]
        assert me.spaces is not None
        stack = me.spaces[index].tiles
        old: Face | Tile | None = self.data.tiles[stack[-1]] if stack else board.spaces[index].printed
        for face, sign in ((tile, 1), (old, -1)):
            if face is None:
                continue
            m.energy += sign * face.energy
            m.ecology += sign * face.ecology
            m.capital += sign * face.capital
            m.research_symbols += sign * face.research
            m.prosperity += sign * face.prosperity
        if not stack:
            m.unlocked += sum(1 for s in board.spaces if s.needs == board.spaces[index].id)

    def _value(self, m: _Model, board: Board, left: dict[str, int]) -> float:
        v = m.points + m.money / sc.CONVERSION
        if m.energy >= 0:
            v += m.energy * sc.ENERGY_GAIN / sc.CONVERSION * left["energy"]
        else:
            v += m.energy * NEGATIVE_ENERGY * left["energy"]
        v += m.capital * sc.CAPITAL_GAIN / sc.CONVERSION * left["capital"]
        per_level = DISC_REMOVED if (m.discs > 0 or m.ecology < 0) else sc.ECOLOGY_REFUND / sc.CONVERSION
        v += m.ecology * per_level * left["ecology"]
        # Research symbols step during counts and twice (both tracks) at the end.
        v += m.research_symbols * RESEARCH_SYMBOL * (left["research"] + 1)
        v += RESEARCH_STEP * sum(m.research) + BALANCE * min(m.research)
        if not sc.polluted(board, m.discs):
            v += (m.prosperity + sc.track_prosperity(board, m.discs)) * left["prosperity"]
        v -= DISC_HELD * m.discs
        over = m.discs - (board.pollution_spaces - DANGER_MARGIN)
        if over > 0:
            v -= DANGER * over
        return v + UNLOCK * m.unlocked
