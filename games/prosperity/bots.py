"""A greedy Prosperity bot: the legal command whose immediate result looks best, read from the view.

It values a position as the points in hand plus what the visible symbols are expected to yield
over the counts still to come (the view lists them) and the final scoring. Nothing here is a rule.
"""

from __future__ import annotations

from typing import NamedTuple

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
from contracts.views.prosperity import ProsperityView, SpaceView
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
# What the final count adds to the counts still to come, per symbol: the rules' own, but research,
# whose final steps the research term adds itself (`symbols * RESEARCH_SYMBOL * (left + 1)`).
FINAL_COUNTS = {
    "energy": sc.count_times("energy", True),
    "ecology": sc.count_times("ecology", True),
    "capital": sc.count_times("capital", True),
    "research": 0,
    "prosperity": sc.count_times("prosperity", True),
}


class _TileFigures(NamedTuple):
    """What a purchase changes, read once per tile (the rollouts of search ask millions of times)."""

    on_energy_side: bool
    level: int
    special: bool
    points: int
    clean: int
    energy: int
    ecology: int
    capital: int
    research: int
    prosperity: int


class _Position(NamedTuple):
    """The acting seat's figures the value reads, as the view shows them before a command."""

    money: int
    discs: int
    points: int
    research_energy: int
    research_ecology: int
    energy: int
    ecology: int
    capital: int
    research_symbols: int
    prosperity_symbols: int


class GreedyBot:
    def __init__(self, data: ProsperityData) -> None:
        self.data = data
        self._tiles = {
            t.id: _TileFigures(
                t.side == "energy",
                t.level,
                t.special,
                t.points,
                t.clean,
                t.energy,
                t.ecology,
                t.capital,
                t.research,
                t.prosperity,
            )
            for t in data.tiles.values()
        }
        # Per board: how many blue spaces a first tile on each space opens.
        self._unlocks = {
            side: [sum(1 for s in board.spaces if s.needs == space.id) for space in board.spaces]
            for side, board in data.boards.items()
        }

    def choose(self, view: ProsperityView, legal: list[msgspec.Struct], seat: int) -> msgspec.Struct:
        if isinstance(legal[0], ChooseBoard):
            return next((a for a in legal if isinstance(a, ChooseBoard) and a.side == "silver"), legal[0])
        me = view.players[seat]
        # Past ChooseBoard every seat has a side, so its board's figures are in the view.
        assert me.capital is not None and me.research_symbols is not None and me.prosperity_symbols is not None
        assert me.spaces is not None
        board = self.data.boards[me.side]
        left = {s: n + FINAL_COUNTS[s] for s, n in msgspec.structs.asdict(view.counts_left).items()}
        value = _Valuer(board, me.side, left)
        now = _Position(
            me.money,
            me.discs,
            me.points,
            me.research.energy,
            me.research.ecology,
            me.energy,
            me.ecology,
            me.capital,
            me.research_symbols,
            me.prosperity_symbols,
        )
        money, discs, points, r0, r1, energy, ecology, capital, symbols, prosperity = now
        best = legal[0]
        best_value = float("-inf")
        tops: list[tuple[int, int, int, int, int, bool]] | None = None
        for action in legal:
            if isinstance(action, BuyTile):
                if tops is None:
                    tops = self._tops(board, me.spaces)
                v = self._buy(value, tops, action, now)
            elif isinstance(action, Income):
                v = value(money + sc.INCOME, discs, points, r0, r1, energy, ecology, capital, symbols, prosperity, 0)
            elif isinstance(action, CleanUp):
                v = value(money, discs - 1, points, r0, r1, energy, ecology, capital, symbols, prosperity, 0)
            elif isinstance(action, Research):
                e = action.track == "energy"
                v = value(money, discs, points, r0 + e, r1 + (not e), energy, ecology, capital, symbols, prosperity, 0)
            elif isinstance(action, SettleEnergy):
                assert view.pending is not None, "SettleEnergy is legal only while a count waits on it"
                levels = max(view.pending.options)
                paid = money - sc.ENERGY_PAY * (levels - action.discs)
                v = value(paid, discs + action.discs, points, r0, r1, energy, ecology, capital, symbols, prosperity, 0)
            elif isinstance(action, SplitResearch):
                de, dc = sc.split_steps(symbols, action.energy, (r0, r1), self.data.research_top)
                v = value(money, discs, points, r0 + de, r1 + dc, energy, ecology, capital, symbols, prosperity, 0)
            else:
                v = value(money, discs, points, r0, r1, energy, ecology, capital, symbols, prosperity, 0)
            if v > best_value:
                best, best_value = action, v
        return best

    def _tops(self, board: Board, spaces: list[SpaceView]) -> list[tuple[int, int, int, int, int, bool]]:
        """Per space: the symbols showing now (top tile, printed tile or nothing), and whether it is empty."""
        out = []
        tiles = self.data.tiles
        for i, space in enumerate(spaces):
            stack = space.tiles
            face: Face | Tile | None = tiles[stack[-1]] if stack else board.spaces[i].printed
            if face is None:
                out.append((0, 0, 0, 0, 0, not stack))
            else:
                out.append((face.energy, face.ecology, face.capital, face.research, face.prosperity, not stack))
        return out

    def _buy(
        self, value: _Valuer, tops: list[tuple[int, int, int, int, int, bool]], action: BuyTile, now: _Position
    ) -> float:
        money, discs, points, r0, r1, energy, ecology, capital, symbols, prosperity = now
        t = self._tiles[action.tile]
        money -= sc.price(t.level, r0 if t.on_energy_side else r1)
        if t.special:
            return value(
                money,
                discs - min(t.clean, discs),
                points + t.points,
                r0,
                r1,
                energy,
                ecology,
                capital,
                symbols,
                prosperity,
                0,
            )
        index = self.data.space_index[value.side][action.space or ""]
        e, c, k, r, p, empty = tops[index]
        return value(
            money,
            discs,
            points,
            r0,
            r1,
            energy + t.energy - e,
            ecology + t.ecology - c,
            capital + t.capital - k,
            symbols + t.research - r,
            prosperity + t.prosperity - p,
            self._unlocks[value.side][index] if empty else 0,
        )


class _Valuer:
    """A position's value for one decision: the counts to come and the board are fixed, so what
    depends on them alone (the pollution track's symbols per disc count) is worked out once."""

    __slots__ = (
        "board",
        "left_capital",
        "left_ecology",
        "left_energy",
        "left_prosperity",
        "left_research",
        "side",
        "track",
    )

    def __init__(self, board: Board, side: str, left: dict[str, int]) -> None:
        self.board = board
        self.side = side
        self.left_energy = left["energy"]
        self.left_capital = left["capital"]
        self.left_ecology = left["ecology"]
        self.left_research = left["research"]
        self.left_prosperity = left["prosperity"]
        self.track: dict[int, int | None] = {}

    def _track(self, discs: int) -> int | None:
        """Uncovered track symbols at `discs`, None when polluted."""
        board = self.board
        shown = None if sc.polluted(board, discs) else sc.track_prosperity(board, discs)
        self.track[discs] = shown
        return shown

    def __call__(
        self,
        money: int,
        discs: int,
        points: int,
        r0: int,
        r1: int,
        energy: int,
        ecology: int,
        capital: int,
        symbols: int,
        prosperity: int,
        unlocked: int,
    ) -> float:
        # The same operations in the same order as ever, so that floats (and ties) come out the same.
        v = points + money / sc.CONVERSION
        if energy >= 0:
            v += energy * sc.ENERGY_GAIN / sc.CONVERSION * self.left_energy
        else:
            v += energy * NEGATIVE_ENERGY * self.left_energy
        v += capital * sc.CAPITAL_GAIN / sc.CONVERSION * self.left_capital
        per_level = DISC_REMOVED if (discs > 0 or ecology < 0) else sc.ECOLOGY_REFUND / sc.CONVERSION
        v += ecology * per_level * self.left_ecology
        # Research symbols step during counts and twice (both tracks) at the end.
        v += symbols * RESEARCH_SYMBOL * (self.left_research + 1)
        v += RESEARCH_STEP * (r0 + r1) + BALANCE * min(r0, r1)
        track = self.track[discs] if discs in self.track else self._track(discs)
        if track is not None:
            v += (prosperity + track) * self.left_prosperity
        v -= DISC_HELD * discs
        over = discs - (self.board.pollution_spaces - DANGER_MARGIN)
        if over > 0:
            v -= DANGER * over
        return v + UNLOCK * unlocked
