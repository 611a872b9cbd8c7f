"""Oracles: every worked example of the rulebook (translated in the comments), through the rules."""

from __future__ import annotations

import pytest

from contracts import prosperity as c
from games.prosperity import RULES
from games.prosperity import scoring as sc
from games.prosperity.state import ProsperityState
from tests.games.prosperity.given import DATA, act, build, deck_with, end_turn_into_count, of, refused, table

# 1970 tiles highlighting each symbol, used to make a count happen.
COUNT_TILE = {
    "energy": "gasworks",
    "ecology": "public-parks",
    "capital": "canal-network",
    "research": "technical-college",
    "prosperity": "town-hall",
}
FILLER = "hydroelectric-dam"  # turn 1's tile, already counted in the given state


def blue(symbol: str) -> ProsperityState:
    """ "Blue is in the situation shown": energy total -2, ecology +2, no capital symbol visible,
    5 research symbols, 2 prosperity symbols on tiles and 1 uncovered on the pollution track.
    Blue is seat 0 (silver board); seat 1 ends turn 1, so Blue draws the tile highlighting
    `symbol` and counts first."""
    state = table(2, first=1, deck=deck_with([FILLER, COUNT_TILE[symbol]]), money=300)
    # Silver prints Wood stoves (+1 energy), Old mine (capital, -1 ecology, covered here), Green
    # belt (+1 ecology) and Villages (-1 energy, +1 ecology, 1 prosperity). On P2 the Gas power
    # plant (+4 energy, -1 ecology) offsets the Villages' ecology (prosperity-data-3) and the
    # Recycling centre's second energy symbol (prosperity-data-4).
    build(state, 0, {"Y1": "recycling-centre", "B2": "university", "B3": "research-institute",
                     "P2": "gas-power-plant"})  # fmt: skip
    state.players[0].discs = 6  # spaces 1-6 covered: the symbol printed on space 7 shows
    return state


def test_blue_board_is_the_rulebook_situation() -> None:
    p = blue("energy").players[0]
    board = DATA.boards["silver"]
    shown = sc.shown(DATA, board, p.stacks)
    assert (p.energy, p.ecology, shown.capital, shown.research) == (-2, 2, 0, 5)
    assert (shown.prosperity, sc.track_prosperity(board, p.discs)) == (2, 1)


def test_blue_energy_count_offers_200_or_100_and_a_disc_or_two_discs() -> None:
    # "For an Energy count, the player must pay 200 euros, or pay 100 euros and add a pollution
    # disc, or add two pollution discs."
    state = blue("energy")
    end_turn_into_count(state)
    assert state.symbol == "energy" and state.active == 0
    assert RULES.to_act(state) == [0]
    assert RULES.legal_actions(state, 0) == [c.SettleEnergy(discs=k) for k in (0, 1, 2)]
    outcomes = []
    for discs in (0, 1, 2):
        s = RULES.clone(state)
        (counted,) = [e for e in of(act(s, 0, c.SettleEnergy(discs=discs)), c.Counted) if e.seat == 0]
        outcomes.append((counted.money, counted.discs, s.players[0].money, s.players[0].discs))
    assert outcomes == [(-200, 0, 100, 6), (-100, 1, 200, 7), (0, 2, 300, 8)]


def test_blue_ecology_count_removes_two_discs() -> None:
    # "For an Ecology count, they will remove 2 pollution discs."
    state = blue("ecology")
    events = end_turn_into_count(state)
    counted = next(e for e in of(events, c.Counted) if e.seat == 0)
    assert (counted.discs, counted.money) == (-2, 0)
    assert state.players[0].discs == 4


def test_blue_capital_count_gives_nothing() -> None:
    # "For a Capital count, they will receive no money (no visible symbols)."
    state = blue("capital")
    events = end_turn_into_count(state)
    counted = next(e for e in of(events, c.Counted) if e.seat == 0)
    assert (counted.level, counted.money) == (0, 0)
    assert state.players[0].money == 300


def test_blue_research_count_moves_five_spaces_in_total() -> None:
    # "For a Research count, the player will advance five spaces in total on the research tracks."
    state = blue("research")
    end_turn_into_count(state)
    assert RULES.to_act(state) == [0]
    assert RULES.legal_actions(state, 0) == [c.SplitResearch(energy=k) for k in range(6)]
    for share in range(6):
        s = RULES.clone(state)
        act(s, 0, c.SplitResearch(energy=share))
        assert s.players[0].research == [1 + share, 1 + 5 - share]


def test_blue_prosperity_count_scores_three() -> None:
    # "For a Prosperity count, the player moves 3 points on the score track (two symbols on the
    # tiles and one on the pollution track)."
    state = blue("prosperity")
    events = end_turn_into_count(state)
    counted = next(e for e in of(events, c.Counted) if e.seat == 0)
    assert (counted.level, counted.points) == (3, 3)
    assert state.players[0].points == 3


def test_yellow_researches_to_ecology_3_then_buys_hydrogen_vehicles_for_200() -> None:
    # "On their turn Yellow takes Research as the first action and so reaches level 3 in Ecology.
    # As the second action they buy Hydrogen vehicles (level 4) and pay 200 euros (100 euros plus
    # 1 extra research level)."
    # The next tile counts research, which this board (no research symbol) leaves untouched.
    state = table(2, first=0, money=300, deck=deck_with([FILLER, "technical-college"]))
    state.players[0].research = [1, 2]
    hydrogen = DATA.tiles["hydrogen-vehicles"]
    assert (hydrogen.side, hydrogen.level, hydrogen.type) == ("ecology", 4, "transport")
    act(state, 0, c.Research(track="ecology"))
    assert state.players[0].research == [1, 3]
    (bought,) = of(act(state, 0, c.BuyTile(tile="hydrogen-vehicles", space="G2")), c.TileBought)
    assert bought.price == 200
    assert state.players[0].money == 100
    assert "hydrogen-vehicles" not in state.research_board


@pytest.mark.parametrize(("level", "marker", "price"), [(4, 4, 100), (4, 3, 200), (6, 3, 400), (1, 3, 50), (2, 9, 50)])
def test_price_rule(level: int, marker: int, price: int) -> None:
    # "Same level: 100 euros; higher: 100 euros plus 100 per extra level; lower: 50 euros."
    assert sc.price(level, marker) == price


def test_oil_power_plant_covering_coal() -> None:
    # "A player covers their coal power plant with an oil power plant: energy total up by 2 (the
    # oil station produces 4 instead of 2) and ecology total down by 1 (the oil station raises
    # pollution by 2 instead of 1)."
    coal, oil = DATA.tiles["coal-power-plant"], DATA.tiles["oil-power-plant"]
    assert (coal.energy, coal.ecology, oil.energy, oil.ecology) == (2, -1, 4, -2)
    state = table(2, first=0, money=1000)
    build(state, 0, {"P2": "coal-power-plant"})
    before = (state.players[0].energy, state.players[0].ecology)
    (bought,) = of(act(state, 0, c.BuyTile(tile="oil-power-plant", space="P2")), c.TileBought)
    assert bought.covered == "coal-power-plant"
    assert (bought.energy - before[0], bought.ecology - before[1]) == (2, -1)
    assert (state.players[0].energy, state.players[0].ecology) == (before[0] + 2, before[1] - 1)


def test_toll_roads_covering_the_green_belt() -> None:
    # "A player covers their green belt with toll roads. Their ecology total drops by 2 (they lose
    # the green belt's positive symbol and add a negative one). But now they can use the spaces
    # leading from the toll roads to build infrastructure."
    state = table(2, first=0, money=1000)
    silver = DATA.boards["silver"]
    g1 = silver.spaces[DATA.space_index["silver"]["G1"]]
    assert g1.printed is not None and (g1.printed.name, g1.printed.ecology) == ("Green belt", 1)
    assert refused(state, 0, c.BuyTile(tile="school", space="B4")).rule == "PRO-TRANSPORT"
    before = state.players[0].ecology
    (bought,) = of(act(state, 0, c.BuyTile(tile="toll-roads", space="G1")), c.TileBought)
    assert bought.ecology == before - 2
    act(state, 0, c.BuyTile(tile="school", space="B4"))
    assert state.players[0].stacks[DATA.space_index["silver"]["B4"]] == ["school"]


def test_the_rulebook_example_tile() -> None:
    # "Example tile: back and decade (2030); area and level (Ecology 6); scoring symbol
    # (Prosperity); energy impact -2; ecology impact -1; blue background (infrastructure)."
    t = DATA.tiles["eco-arcology"]
    assert (t.decade, t.side, t.level, t.count, t.energy, t.ecology, t.type) == (
        2030, "ecology", 6, "prosperity", -2, -1, "infrastructure",
    )  # fmt: skip
