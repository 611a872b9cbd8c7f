"""Deciding the turn commands (other than EndTurn): each returns the events of an accepted
command or the refusal naming the rule broken. `legal_actions` builds only commands these accept."""

from __future__ import annotations

from collections import Counter

import msgspec

from contracts import mechanica as c
from games.base import Rejected
from games.mechanica import factory as fx
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.rule_ids import reject
from games.mechanica.state import BIG, HIDDEN, HUGE, SMALL, MechanicaState

Events = list[msgspec.Struct]


def dock_square(d: MechanicaData, row: int) -> int | None:
    """The dock square of 1-based `row`, or None if that row has no truck."""
    geo = d.geometry
    if not 1 <= row <= geo.nrows:
        return None
    sq = geo.square(row - 1, geo.ncols - 1)
    return sq if geo.area[sq] == "dock" else None


def board_square(d: MechanicaData, row: int, col: int) -> int | None:
    geo = d.geometry
    if not (1 <= row <= geo.nrows and 1 <= col <= geo.ncols):
        return None
    sq = geo.square(row - 1, col - 1)
    return sq if geo.area[sq] else None


def _afford(s: MechanicaState, seat: int, cost: int) -> Rejected | None:
    wallet = s.players[seat].wallet
    if cost > wallet:
        return reject("MEC-MONEY", f"costs {cost}, the wallet holds {wallet}")
    return None


def check_sell(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.Sell) -> Events | Rejected:
    if s.bought:
        return reject("MEC-SELL-FIRST", "an improvement was already bought this turn")
    if cmd.model not in d.value:  # before looking at holes: a free hole holds "", no bot model
        return reject("MEC-SELL", f"{cmd.model!r} is not a bot model ({', '.join(d.models)})")
    sq = dock_square(d, cmd.row)
    if sq is None:
        return reject("MEC-SELL", f"dock row {cmd.row} has no truck")
    holes = s.players[seat].holes[sq]
    if cmd.model not in holes:
        return reject("MEC-SELL", f"the truck on row {cmd.row} holds no {cmd.model} bot")
    hole = len(holes) - 1 - holes[::-1].index(cmd.model)
    tile = s.players[seat].tiles[sq]
    bonus = d.tiles[tile].money if tile in d.tiles else 0
    money = d.value[cmd.model] + bonus
    return [c.BotSold(seat=seat, row=cmd.row, hole=hole + 1, model=cmd.model, money=money)]


def check_buy(d: MechanicaData, s: MechanicaState, seat: int, price: int) -> c.ImprovementBought | Rejected:
    prices = d.setup.shop_prices
    if price not in prices or not s.shop[prices.index(price)]:
        return reject("MEC-SHOP", f"no improvement on the {price} space")
    refusal = _afford(s, seat, price)
    if refusal is not None:
        return refusal
    return c.ImprovementBought(seat=seat, improvement=s.shop[prices.index(price)], price=price)


def check_install(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.Install) -> Events | Rejected:
    bought = check_buy(d, s, seat, cmd.price)
    if isinstance(bought, Rejected):
        return bought
    kind = d.tiles[bought.improvement]
    sq = board_square(d, cmd.row, cmd.col)
    if sq is None or d.geometry.area[sq] != kind.place:
        return reject("MEC-INSTALL-PLACE", f"{kind.name} goes on a {kind.place} square, not ({cmd.row}, {cmd.col})")
    p = s.players[seat]
    keep = fx.hole_count(d, kind.place, bought.improvement)
    lost = [m for m in p.holes[sq][keep:] if m]
    installed = c.ImprovementInstalled(
        seat=seat, improvement=bought.improvement, row=cmd.row, col=cmd.col, replaced=p.tiles[sq], lost=lost
    )
    return [bought, installed]


def check_rows(
    d: MechanicaData, s: MechanicaState, seat: int, bots: list[str], rows: list[int], after_making: bool
) -> tuple[list[c.PlacedBot], list[str]] | Rejected:
    """Recycle bots into the start-zone holes of `rows`: (placed, lost) or the refusal."""
    free = fx.free_start_rows(d, s.players[seat], after_making)
    need = min(len(bots), len(free))
    if len(rows) != need:
        return reject("MEC-RECYCLE-ROWS", f"{len(bots)} bots, {len(free)} free start holes: name {need} rows")
    if len(set(rows)) != len(rows) or any(r - 1 not in free for r in rows):
        shown = [r + 1 for r in free]
        return reject("MEC-RECYCLE-ROWS", f"rows {rows} are not distinct free start holes (free: {shown})")
    geo = d.geometry
    placed = [
        c.PlacedBot(seat=seat, model=m, spot=fx.spot(d, geo.square(r - 1, 0), 0))
        for m, r in zip(bots, rows, strict=False)
    ]
    return placed, bots[need:]


def check_blueprint(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.CompleteBlueprint) -> Events | Rejected:
    if not 1 <= cmd.pile <= len(s.piles) or not s.piles[cmd.pile - 1] or s.piles[cmd.pile - 1][0] == HIDDEN:
        return reject("MEC-BLUEPRINT", f"pile {cmd.pile} has no face-up blueprint")
    bp = d.blueprints[s.piles[cmd.pile - 1][0]]
    if bp.id in s.players[seat].blueprints_done:
        return reject("MEC-BLUEPRINT-ONCE", f"seat {seat} already completed {bp.id} (pile {cmd.pile}) in this game")
    if len(cmd.rows) != len(bp.bots):
        return reject("MEC-BLUEPRINT", f"{bp.id} lists {len(bp.bots)} bots, {len(cmd.rows)} rows given")
    p = s.players[seat]
    used: Counter[tuple[int, int]] = Counter()
    spots: list[c.Spot] = []
    for model, row in zip(bp.bots, cmd.rows, strict=True):
        sq = dock_square(d, row)
        holes = p.holes[sq] if sq is not None else []
        hole = next((h for h in range(len(holes) - 1, -1, -1) if holes[h] == model and not used[(row, h)]), None)
        if sq is None or hole is None:
            return reject("MEC-BLUEPRINT", f"no {model} bot left in a truck on dock row {row} for {bp.id}")
        used[(row, hole)] += 1
        spots.append(fx.spot(d, sq, hole))
    return [
        c.BlueprintCompleted(
            seat=seat, pile=cmd.pile, blueprint=bp.id, spots=spots, models=list(bp.bots), money=bp.money
        )
    ]


def check_truck(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.BuyTruck) -> Events | Rejected:
    t = d.trucks
    if cmd.size not in (BIG, HUGE):
        return reject("MEC-TRUCK", f"trucks for sale are big or huge, not {cmd.size!r}")
    sq = dock_square(d, cmd.row)
    if sq is None or s.players[seat].tiles[sq] != SMALL:
        return reject("MEC-TRUCK", f"dock row {cmd.row} holds no small truck")
    cost = t.big_cost if cmd.size == BIG else t.huge_cost
    refusal = _afford(s, seat, cost)
    if refusal is not None:
        return refusal
    return [c.TruckBought(seat=seat, row=cmd.row, size=cmd.size, cost=cost, replaced=SMALL)]


def check_upgrade(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.UpgradeTruck) -> Events | Rejected:
    sq = dock_square(d, cmd.row)
    if sq is None or s.players[seat].tiles[sq] != BIG:
        return reject("MEC-TRUCK", f"dock row {cmd.row} holds no big truck to upgrade")
    refusal = _afford(s, seat, d.trucks.upgrade_cost)
    if refusal is not None:
        return refusal
    return [c.TruckBought(seat=seat, row=cmd.row, size=HUGE, cost=d.trucks.upgrade_cost, replaced=BIG)]


def check_fork(d: MechanicaData, s: MechanicaState, seat: int, cmd: c.BuyFork | c.SetFork) -> Events | Rejected:
    p = s.players[seat]
    sq = board_square(d, cmd.row, cmd.col)
    on_floor = sq is not None and d.geometry.area[sq] == "floor"
    arrow = FORK_DIRECTIONS.get(cmd.direction, "")
    if isinstance(cmd, c.BuyFork):
        if sq is None or not on_floor or p.forks[sq]:
            return reject("MEC-FORK-SQUARE", f"({cmd.row}, {cmd.col}) is not a floor square without a fork")
        if not arrow:
            return reject("MEC-FORK-ARROW", f"{cmd.direction!r} is not up, down or right")
        refusal = _afford(s, seat, d.forks.cost)
        if refusal is not None:
            return refusal
    else:
        if sq is None or not on_floor or not p.forks[sq]:
            return reject("MEC-FORK-SQUARE", f"you have no fork on ({cmd.row}, {cmd.col})")
        if not arrow:
            return reject("MEC-FORK-ARROW", f"{cmd.direction!r} is not up, down or right")
        if sq in p.forks_turned or p.forks[sq] == arrow:
            where = f"({cmd.row}, {cmd.col})"
            return reject("MEC-FORK-ONCE", f"the fork on {where} was set this turn or already points there")
    if not fx.fork_ok(d, p, sq, arrow):
        return reject("MEC-FORK-ARROW", f"{cmd.direction} from ({cmd.row}, {cmd.col}) leaves the board or loops")
    if isinstance(cmd, c.BuyFork):
        return [c.ForkBought(seat=seat, row=cmd.row, col=cmd.col, direction=cmd.direction, cost=d.forks.cost)]
    return [c.ForkSet(seat=seat, row=cmd.row, col=cmd.col, direction=cmd.direction)]
