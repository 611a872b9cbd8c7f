"""`evolve`: apply one event to the state, in place. Events carry outcomes, so nothing is decided
here; the data only says how many holes a piece has and what the printed board holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts import mechanica as c
from games.mechanica.components import FORK_DIRECTIONS, MechanicaData
from games.mechanica.factory import hole_count
from games.mechanica.state import BASIC_FABRICATOR, EMPTY, HIDDEN, SMALL, MechanicaState

Handler = Callable[[MechanicaData, MechanicaState, Any], None]


def _sq(d: MechanicaData, row: int, col: int) -> int:
    return d.geometry.square(row - 1, col - 1)


def _put(d: MechanicaData, s: MechanicaState, bot: c.PlacedBot) -> None:
    s.players[bot.seat].holes[_sq(d, bot.spot.row, bot.spot.col)][bot.spot.hole - 1] = bot.model


def _clear(d: MechanicaData, s: MechanicaState, seat: int, sp: c.Spot) -> None:
    s.players[seat].holes[_sq(d, sp.row, sp.col)][sp.hole - 1] = EMPTY


def _game_set_up(d: MechanicaData, s: MechanicaState, e: c.GameSetUp) -> None:
    geo = d.geometry
    s.first_player = e.first_player
    for p in s.players:
        p.wallet = e.money
        for sq, area in enumerate(geo.area):
            tile = BASIC_FABRICATOR if sq == geo.basic_square else SMALL if area == "dock" else EMPTY
            p.tiles[sq] = tile
            p.holes[sq] = [EMPTY] * hole_count(d, area, tile)
        p.holes[geo.basic_square][0] = e.starting_bot


def _improvements_shuffled(d: MechanicaData, s: MechanicaState, e: c.ImprovementsShuffled) -> None:
    s.stack = list(e.stack) if e.stack is not None else [HIDDEN] * e.stack_size
    s.extras = list(e.extras) if e.extras is not None else [HIDDEN] * e.extras_size


def _blueprints_shuffled(d: MechanicaData, s: MechanicaState, e: c.BlueprintsShuffled) -> None:
    if e.piles is not None:
        s.piles = [list(p) for p in e.piles]
    else:
        s.piles = [[top] + [HIDDEN] * (n - 1) for top, n in zip(e.face_up, e.sizes, strict=True)]


def _improvement_drawn(d: MechanicaData, s: MechanicaState, e: c.ImprovementDrawn) -> None:
    (s.stack if e.source == "stack" else s.extras).pop(0)
    s.shop[d.setup.shop_prices.index(e.price)] = e.improvement


def _workday_started(d: MechanicaData, s: MechanicaState, e: c.WorkdayStarted) -> None:
    s.workday = e.workday
    s.current = None


def _bots_moved(d: MechanicaData, s: MechanicaState, e: c.BotsMoved) -> None:
    for mv in e.moves:
        _clear(d, s, e.seat, mv.source)
        _put(d, s, c.PlacedBot(seat=e.seat, model=mv.model, spot=mv.target))


def _improvement_activated(d: MechanicaData, s: MechanicaState, e: c.ImprovementActivated) -> None:
    for sp in e.consumed:
        _clear(d, s, e.seat, sp)
    for bot in e.made:
        _put(d, s, bot)
    p = s.players[e.seat]
    p.wallet += e.wallet
    p.vault += e.vault


def _turn_started(d: MechanicaData, s: MechanicaState, e: c.TurnStarted) -> None:
    s.current = e.seat
    s.bought = False
    s.players[e.seat].forks_turned = []


def _bot_sold(d: MechanicaData, s: MechanicaState, e: c.BotSold) -> None:
    p = s.players[e.seat]
    p.holes[_sq(d, e.row, d.geometry.ncols)][e.hole - 1] = EMPTY
    p.wallet += e.money


def _improvement_bought(d: MechanicaData, s: MechanicaState, e: c.ImprovementBought) -> None:
    s.shop[d.setup.shop_prices.index(e.price)] = EMPTY
    s.players[e.seat].wallet -= e.price
    s.bought = True


def _replace(d: MechanicaData, s: MechanicaState, seat: int, sq: int, tile: str) -> None:
    """`tile` now stands on `sq`: the old piece leaves (an improvement to the discard; a truck to
    the box, which sets no limit) and bots stay in the holes the new piece also has."""
    p = s.players[seat]
    old = p.tiles[sq]
    if old in d.tiles:
        s.discard.append(old)
    p.tiles[sq] = tile
    n = hole_count(d, d.geometry.area[sq], tile)
    kept = p.holes[sq][:n]
    p.holes[sq] = kept + [EMPTY] * (n - len(kept))


def _improvement_installed(d: MechanicaData, s: MechanicaState, e: c.ImprovementInstalled) -> None:
    _replace(d, s, e.seat, _sq(d, e.row, e.col), e.improvement)


def _improvement_recycled(d: MechanicaData, s: MechanicaState, e: c.ImprovementRecycled) -> None:
    for bot in e.placed:
        _put(d, s, bot)
    s.discard.append(e.improvement)


def _blueprint_completed(d: MechanicaData, s: MechanicaState, e: c.BlueprintCompleted) -> None:
    for sp in e.spots:
        _clear(d, s, e.seat, sp)
    p = s.players[e.seat]
    p.vault += e.money
    p.blueprints_done.append(e.blueprint)
    s.sideways = True


def _truck_bought(d: MechanicaData, s: MechanicaState, e: c.TruckBought) -> None:
    _replace(d, s, e.seat, _sq(d, e.row, d.geometry.ncols), e.size)
    s.players[e.seat].wallet -= e.cost


def _fork_bought(d: MechanicaData, s: MechanicaState, e: c.ForkBought) -> None:
    p = s.players[e.seat]
    sq = _sq(d, e.row, e.col)
    p.forks[sq] = FORK_DIRECTIONS[e.direction]
    p.forks_turned.append(sq)
    p.wallet -= e.cost


def _fork_set(d: MechanicaData, s: MechanicaState, e: c.ForkSet) -> None:
    p = s.players[e.seat]
    sq = _sq(d, e.row, e.col)
    p.forks[sq] = FORK_DIRECTIONS[e.direction]
    p.forks_turned.append(sq)


def _bots_made(d: MechanicaData, s: MechanicaState, e: c.BotsMade) -> None:
    for bot in e.bots:
        _put(d, s, bot)


def _shop_rotated(d: MechanicaData, s: MechanicaState, e: c.ShopRotated) -> None:
    s.shop = [EMPTY, *s.shop[:-1]]


def _turn_ended(d: MechanicaData, s: MechanicaState, e: c.TurnEnded) -> None:
    s.current = None
    s.bought = False


def _blueprints_replaced(d: MechanicaData, s: MechanicaState, e: c.BlueprintsReplaced) -> None:
    for pile, top in zip(s.piles, e.face_up, strict=True):
        pile.append(pile.pop(0))
        pile[0] = top
    s.piles_turned += 1
    s.sideways = False


def _nothing(d: MechanicaData, s: MechanicaState, e: Any) -> None:
    return None


def _game_finished(d: MechanicaData, s: MechanicaState, e: c.GameFinished) -> None:
    s.over = True
    s.current = None
    s.final_scores = list(e.scores)
    s.winners = list(e.winners)


_HANDLERS: dict[type[msgspec.Struct], Handler] = {
    c.GameSetUp: _game_set_up,
    c.ImprovementsShuffled: _improvements_shuffled,
    c.BlueprintsShuffled: _blueprints_shuffled,
    c.ImprovementDrawn: _improvement_drawn,
    c.WorkdayStarted: _workday_started,
    c.BotsMoved: _bots_moved,
    c.ImprovementActivated: _improvement_activated,
    c.TurnStarted: _turn_started,
    c.BotSold: _bot_sold,
    c.ImprovementBought: _improvement_bought,
    c.ImprovementInstalled: _improvement_installed,
    c.ImprovementRecycled: _improvement_recycled,
    c.BlueprintCompleted: _blueprint_completed,
    c.TruckBought: _truck_bought,
    c.ForkBought: _fork_bought,
    c.ForkSet: _fork_set,
    c.BotsMade: _bots_made,
    c.ShopRotated: _shop_rotated,
    c.TurnEnded: _turn_ended,
    c.BlueprintsReplaced: _blueprints_replaced,
    c.WorkdayEnded: _nothing,
    c.GameFinished: _game_finished,
}


def evolve(data: MechanicaData, state: MechanicaState, event: msgspec.Struct) -> MechanicaState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not a Mechanica event: {type(event).__name__}")
    handler(data, state, event)
    return state
