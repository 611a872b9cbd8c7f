"""Oracles for a turn's purchases: selling, installing over a piece, trucks, forks, the default."""

from __future__ import annotations

import msgspec

from contracts import mechanica as c
from games.mechanica import RULES
from games.mechanica.state import MechanicaState
from tests.games.mechanica.given import DATA, TILES, act, bots_at, given, holes, installed, of, table, tile


def test_sale_values_and_the_armored_truck_bonus() -> None:
    state = table()
    given(state, installed(0, tile("armored_truck"), 4, 5), bots_at(0, ("deluxe", 4, 5, 1), ("plus", 2, 5, 1)))
    assert act(state, 0, c.Sell(row=3, model="basic"))[0].money == 2  # type: ignore[attr-defined]
    assert act(state, 0, c.Sell(row=2, model="plus"))[0].money == 4  # type: ignore[attr-defined]
    assert act(state, 0, c.Sell(row=4, model="deluxe"))[0].money == 6 + 1  # type: ignore[attr-defined]
    assert state.players[0].wallet == 8 + 2 + 4 + 7


def test_installing_over_a_piece_demolishes_it() -> None:
    up, dup = tile("upgrader"), tile("duplicator")
    state = table(stack=[up, dup, *[t for t in TILES if t not in (up, dup)][:19]], money=20)
    given(state, installed(0, tile("splitter"), 3, 3), bots_at(0, ("plus", 3, 3, 1), ("deluxe", 3, 3, 3)))
    events = act(state, 0, c.Install(price=7, row=3, col=3))  # the upgrader has 2 holes, the splitter 3
    (ev,) = of(events, c.ImprovementInstalled)
    assert ev == c.ImprovementInstalled(
        seat=0, improvement=up, row=3, col=3, replaced=tile("splitter"), lost=["deluxe"]
    )
    assert holes(state, 0, 3, 3) == ["plus", ""] and tile("splitter") in state.discard
    assert state.players[0].wallet == 13 and state.shop[0] == ""
    # The Basic Fabricator and small trucks are pieces too: a fabricator may cover the printed one.
    fab = tile("advanced_fabricator")
    state.shop[1] = fab
    act(state, 0, c.Install(price=5, row=3, col=1))
    assert state.players[0].tiles[10] == fab


def test_trucks_keep_their_bots_and_an_upgrade_makes_a_huge_truck() -> None:
    state = table()
    act(state, 0, c.BuyTruck(row=3, size="big"))
    assert holes(state, 0, 3, 5) == ["basic", ""] and state.players[0].tiles[14] == "big"
    act(state, 0, c.UpgradeTruck(row=3))
    assert holes(state, 0, 3, 5) == ["basic", "", ""]
    assert state.players[0].tiles[14] == "huge" and state.players[0].wallet == 8 - 3 - 3
    armored = tile("armored_truck")
    state.shop[0] = armored
    state.players[0].wallet = 10
    act(state, 0, c.Install(price=7, row=3, col=5))  # an improvement truck replaces the huge one
    assert state.players[0].tiles[14] == armored and holes(state, 0, 3, 5) == ["basic", "", ""]


def test_trucks_and_forks_never_run_out() -> None:
    # Rulebook: "Los camiones siempre se pueden comprar y nunca cambian de precio" and "Las
    # horquillas siempre se pueden comprar y nunca cambian de precio": the box's 7 huge trucks and
    # 10 forks are no limit.
    # Given four players with money enough for three huge trucks each
    state = table(4, money=15)
    # When each in turn buys a huge truck for every dock row (12 in all)
    for seat in range(4):
        for row in (2, 3, 4):
            assert c.BuyTruck(row=row, size="huge") in RULES.legal_actions(state, seat)
            bought = act(state, seat, c.BuyTruck(row=row, size="huge"))
            # Then every purchase is accepted at the printed price
            assert bought == [c.TruckBought(seat=seat, row=row, size="huge", cost=5, replaced="small")]
        act(state, seat, RULES.default_action(state, seat))
    # Given one player with money for a fork on every floor square
    state = table(1, money=20)
    # When it buys forks one after another (the first legal fork each time) until none is left to buy
    bought_forks = 0
    while forks := [a for a in RULES.legal_actions(state, 0) if isinstance(a, c.BuyFork)]:
        act(state, 0, forks[0])
        bought_forks += 1
    # Then every floor square got one, far more than the box's 10, each for 1
    assert bought_forks == len(DATA.geometry.floor_squares) == 15
    assert state.players[0].wallet == 20 - 15


def _workday(state: MechanicaState) -> list[msgspec.Struct]:
    events: list[msgspec.Struct] = []
    for seat in (0, 1):
        events += act(state, seat, RULES.default_action(state, seat))
    return events


def test_fork_settings_persist_and_steer_every_run() -> None:
    state = table()
    act(state, 0, c.Sell(row=3, model="basic"))
    act(state, 0, c.BuyFork(row=3, col=4, direction="down"))
    assert state.players[0].wallet == 8 + 2 - 1
    events = _workday(state)
    (moved,) = [e for e in of(events, c.BotsMoved) if e.seat == 0]
    start, truck = c.Spot(row=3, col=1, hole=1), c.Spot(row=4, col=5, hole=1)
    assert moved.moves == [c.BotMove(model="basic", source=start, target=truck)]
    act(state, 0, c.SetFork(row=3, col=4, direction="right"))
    events = _workday(state)  # the fork stays where it was set, the next bot goes to row 3's truck
    (moved,) = [e for e in of(events, c.BotsMoved) if e.seat == 0]
    assert moved.moves[0].target == c.Spot(row=3, col=5, hole=1)
    assert state.players[0].forks[13] == ">"


def test_default_action_ends_the_turn() -> None:
    state = table()
    assert RULES.default_action(state, 0) == c.EndTurn()
