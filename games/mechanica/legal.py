"""Every command the player to act may send now (exact: each is accepted, nothing else is)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import permutations
from typing import Any

import msgspec

from contracts import mechanica as c
from games.mechanica import factory as fx
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.state import BIG, HIDDEN, HUGE, SMALL, MechanicaState, PlayerState

_NAMES = {arrow: name for name, arrow in FORK_DIRECTIONS.items()}


def row_choices(bots: list[str], free: list[int]) -> list[list[int]]:
    """Every accepted `rows` (1-based) for recycling `bots` into the free 0-based start rows.
    Orders that put the same models into the same holes are listed once."""
    return [list(rows) for rows in _row_choices(tuple(bots), tuple(free))]


@lru_cache(maxsize=4096)
def _row_choices(bots: tuple[str, ...], free: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    need = min(len(bots), len(free))
    seen: set[tuple[tuple[int, str], ...]] = set()
    out: list[tuple[int, ...]] = []
    for perm in permutations(free, need):
        key = tuple(sorted(zip(perm, bots, strict=False)))
        if key in seen:
            continue
        seen.add(key)
        out.append(tuple(r + 1 for r in perm))
    return tuple(out)


def _blueprint_rows(d: MechanicaData, s: MechanicaState, seat: int, bots: list[str]) -> list[list[int]]:
    """Truck rows for each listed bot, one per distinct way of taking bots out of the trucks."""
    geo = d.geometry
    p = s.players[seat]
    stock = {geo.row_col(sq)[0] + 1: list(p.holes[sq]) for sq in geo.dock_squares}
    out: list[list[int]] = []
    seen: set[tuple[tuple[str, int], ...]] = set()

    def walk(i: int, chosen: list[int], left: dict[int, list[str]]) -> Iterator[list[int]]:
        if i == len(bots):
            yield chosen
            return
        for row, holes in left.items():
            if bots[i] in holes:
                rest = dict(left)
                taken = list(holes)
                taken.remove(bots[i])
                rest[row] = taken
                yield from walk(i + 1, [*chosen, row], rest)

    for rows in walk(0, [], stock):
        key = tuple(sorted(zip(bots, rows, strict=True)))
        if key not in seen:
            seen.add(key)
            out.append(rows)
    return out


class LegalMemo:
    """Parts of the legal-action list that depend on few inputs, for one data set (the rules
    object keeps one): built on every call they were most of an offline step, while a game sees
    a handful of fork layouts and shop prices. Each table is cleared when it reaches SIZE."""

    SIZE = 1024
    __slots__ = ("forks", "installs")

    def __init__(self) -> None:
        # (forks, forks turned this turn, can buy a fork) -> the SetFork and BuyFork commands.
        self.forks: dict[tuple[tuple[str, ...], tuple[int, ...], bool], tuple[msgspec.Struct, ...]] = {}
        # (price, place) -> an Install on every square of that place.
        self.installs: dict[tuple[int, str], tuple[msgspec.Struct, ...]] = {}


def _installs(d: MechanicaData, price: int, place: str) -> tuple[msgspec.Struct, ...]:
    geo = d.geometry
    squares = {"start": geo.start_squares, "floor": geo.floor_squares, "dock": geo.dock_squares}[place]
    return tuple(c.Install(price=price, row=r + 1, col=col + 1) for r, col in (geo.row_col(sq) for sq in squares))


def _fork_actions(d: MechanicaData, p: PlayerState, can_buy_fork: bool) -> tuple[msgspec.Struct, ...]:
    geo = d.geometry
    has_forks = any(p.forks[sq] and sq not in p.forks_turned for sq in geo.floor_squares)
    if not (can_buy_fork or has_forks):
        return ()
    out: list[msgspec.Struct] = []
    for sq, arrows in fx.fork_options(d, p).items():
        r, col = divmod(sq, geo.ncols)
        if p.forks[sq]:
            if sq in p.forks_turned:
                continue
            for arrow in arrows:
                if arrow != p.forks[sq]:
                    out.append(c.SetFork(row=r + 1, col=col + 1, direction=_NAMES[arrow]))
        elif can_buy_fork:
            for arrow in arrows:
                out.append(c.BuyFork(row=r + 1, col=col + 1, direction=_NAMES[arrow]))
    return tuple(out)


def _memo(table: dict[Any, Any], key: Any, make: Callable[..., Any], *args: Any) -> Any:
    found = table.get(key)
    if found is None:
        if len(table) >= LegalMemo.SIZE:
            table.clear()
        found = table[key] = make(*args)
    return found


def legal_actions(
    d: MechanicaData, s: MechanicaState, seat: int, memo: LegalMemo | None = None
) -> list[msgspec.Struct]:
    """`memo`: the caller's tables for this data set (None: none kept)."""
    if memo is None:
        memo = LegalMemo()
    geo = d.geometry
    p = s.players[seat]
    out: list[msgspec.Struct] = []
    if not s.bought:
        for sq in geo.dock_squares:
            row = geo.row_col(sq)[0] + 1
            for model in dict.fromkeys(m for m in p.holes[sq] if m):
                out.append(c.Sell(row=row, model=model))
    prices = d.setup.shop_prices
    free_now = fx.free_start_rows(d, p)
    for space, tile in enumerate(s.shop):
        price = prices[space]
        if not tile or price > p.wallet:
            continue
        kind = d.tiles[tile]
        out += _memo(memo.installs, (price, kind.place), _installs, d, price, kind.place)
        for rows in row_choices(kind.recycle, free_now):
            out.append(c.Recycle(price=price, rows=rows))
    for pile, cards in enumerate(s.piles):
        if not cards or cards[0] == HIDDEN or cards[0] in p.blueprints_done:
            continue
        for rows in _blueprint_rows(d, s, seat, d.blueprints[cards[0]].bots):
            out.append(c.CompleteBlueprint(pile=pile + 1, rows=rows))
    t = d.trucks
    for sq in geo.dock_squares:
        row = geo.row_col(sq)[0] + 1
        tile = p.tiles[sq]
        if tile == SMALL:
            if t.big_cost <= p.wallet:
                out.append(c.BuyTruck(row=row, size=BIG))
            if t.huge_cost <= p.wallet:
                out.append(c.BuyTruck(row=row, size=HUGE))
        elif tile == BIG and t.upgrade_cost <= p.wallet:
            out.append(c.UpgradeTruck(row=row))
    can_buy_fork = d.forks.cost <= p.wallet
    key = (tuple(p.forks), tuple(p.forks_turned), can_buy_fork)
    out += _memo(memo.forks, key, _fork_actions, d, p, can_buy_fork)
    fell = s.shop[-1]
    if fell:
        for rows in row_choices(d.tiles[fell].recycle, fx.free_start_rows(d, p, after_making=True)):
            out.append(c.EndTurn(rows=rows))
    else:
        out.append(c.EndTurn())
    return out


def default_action(d: MechanicaData, s: MechanicaState, seat: int) -> msgspec.Struct:
    """End the turn; bots of an improvement falling into the Recycler go into the first free
    start-zone holes, top first."""
    fell = s.shop[-1]
    if not fell:
        return c.EndTurn()
    free = fx.free_start_rows(d, s.players[seat], after_making=True)
    need = min(len(d.tiles[fell].recycle), len(free))
    return c.EndTurn(rows=[r + 1 for r in free[:need]])
