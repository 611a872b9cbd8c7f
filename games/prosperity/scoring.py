"""Pure Prosperity arithmetic: visible symbols, pollution, prices, counts, research majority.

Shared by the rules (which turn the results into events) and the bots (which look ahead with it).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from games.prosperity.components import Board, Face, ProsperityData, Tile
from games.prosperity.state import FINAL, ProsperityState

ENERGY_GAIN = 50  # euros per positive energy level
ENERGY_PAY = 100  # euros per negative energy level not taken as a disc
ECOLOGY_REFUND = 50  # euros per disc an ecology count cannot remove
CAPITAL_GAIN = 100  # euros per capital symbol
INCOME = 100
BASE_PRICE = 100
PRICE_STEP = 100
BELOW_PRICE = 50
CONVERSION = 300  # euros per prosperity point at the end
# The final count takes energy and ecology twice ("2 * Energía", "2 * Ecología"), the rest once, as
# does every count during play. Only energy's and ecology's counts multiply by it: capital,
# research and prosperity count what is shown.
FINAL_TIMES = {"energy": 2, "ecology": 2}
MAJORITY_FIRST, MAJORITY_SECOND, MAJORITY_TIE = 3, 1, 2


class Symbols(msgspec.Struct, kw_only=True):
    """What the visible tiles of one board show (pollution track not included)."""

    energy: int = 0
    ecology: int = 0
    capital: int = 0
    research: int = 0
    prosperity: int = 0


def shown(data: ProsperityData, board: Board, stacks: Sequence[Sequence[str]]) -> Symbols:
    """Sum of the top tile of every space, or its printed tile when nothing covers it."""
    out = Symbols()
    tiles = data.tiles
    for i, space in enumerate(board.spaces):
        face: Face | Tile | None = tiles[stacks[i][-1]] if stacks and stacks[i] else space.printed
        if face is None:
            continue
        out.energy += face.energy
        out.ecology += face.ecology
        out.capital += face.capital
        out.research += face.research
        out.prosperity += face.prosperity
    return out


def polluted(board: Board, discs: int) -> bool:
    """At least one disc on the last (triangular) space: no prosperity points from counts."""
    return discs > board.pollution_spaces


def track_prosperity(board: Board, discs: int) -> int:
    """Prosperity symbols left uncovered on the pollution track (discs fill from space 1 up)."""
    return sum(1 for n in board.pollution_prosperity if n > discs)


def prosperity_count(board: Board, discs: int, tile_symbols: int) -> int:
    """Points a prosperity count gives: tiles plus uncovered track symbols, none if polluted."""
    if polluted(board, discs):
        return 0
    return tile_symbols + track_prosperity(board, discs)


def price(tile_level: int, marker: int) -> int:
    """Same level 100; each level above the marker +100; any level below 50."""
    if tile_level < marker:
        return BELOW_PRICE
    return BASE_PRICE + PRICE_STEP * (tile_level - marker)


def count_times(symbol: str, final: bool) -> int:
    """How many times a count takes `symbol`: FINAL_TIMES in the final count, else once."""
    return FINAL_TIMES.get(symbol, 1) if final else 1


def energy_options(total: int, times: int, money: int) -> range:
    """Discs a seat may take for a negative energy count (the rest paid at 100 each, never more
    than it holds). Empty for a non-negative total (no choice)."""
    if total >= 0:
        return range(0)
    levels = -total * times
    lowest = max(0, levels - money // ENERGY_PAY)
    return range(lowest, levels + 1)


def ecology_outcome(total: int, times: int, discs: int) -> tuple[int, int]:
    """(disc change, euros) of an ecology count: remove one disc per positive level, 50 euros per
    disc that is no longer there to remove; add one disc per negative level."""
    levels = total * times
    if levels >= 0:
        removed = min(levels, discs)
        return -removed, ECOLOGY_REFUND * (levels - removed)
    return -levels, 0


def research_range(steps: int, markers: Sequence[int], top: int) -> range:
    """Energy-track shares a seat may choose for `steps` research steps without wasting any (a
    track cannot pass `top`). When both tracks cannot take them all, every free space is filled:
    the single option left is returned."""
    room_e, room_c = top - markers[0], top - markers[1]
    if steps >= room_e + room_c:
        return range(room_e, room_e + 1)
    return range(max(0, steps - room_c), min(steps, room_e) + 1)


def split_steps(steps: int, energy_share: int, markers: Sequence[int], top: int) -> tuple[int, int]:
    """Steps actually taken on (energy, ecology) for a chosen share (a marker stops at the top)."""
    return min(energy_share, top - markers[0]), min(steps - energy_share, top - markers[1])


def majority(positions: Sequence[int]) -> list[int]:
    """Research-track points: highest 3, second 1; a tie for first gives every leader 2 and no
    second place; a tie for second gives nobody the 1."""
    points = [0] * len(positions)
    ranked = sorted(set(positions), reverse=True)
    leaders = [i for i, v in enumerate(positions) if v == ranked[0]]
    if len(leaders) > 1:
        for i in leaders:
            points[i] = MAJORITY_TIE
        return points
    points[leaders[0]] = MAJORITY_FIRST
    if len(ranked) > 1:
        seconds = [i for i, v in enumerate(positions) if v == ranked[1]]
        if len(seconds) == 1:
            points[seconds[0]] = MAJORITY_SECOND
    return points


def winners(scores: Sequence[int], money: Sequence[int]) -> list[int]:
    """Most points; ties broken by money left; still tied: shared win."""
    best = max(zip(scores, money, strict=True))
    return [i for i, key in enumerate(zip(scores, money, strict=True)) if key == best]


def pending_options(data: ProsperityData, state: ProsperityState, seat: int) -> range:
    """The choices of the count waiting for `seat`: discs to take (energy) or energy-track steps
    (research)."""
    p = state.players[seat]
    if state.symbol == "energy":
        return energy_options(p.energy, count_times("energy", state.phase == FINAL), p.money)
    steps = shown(data, data.boards[p.side], p.stacks).research
    return research_range(steps, p.research, data.research_top)
