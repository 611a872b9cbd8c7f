"""Set-up, turn and count flow, special tiles, final scoring, data validation, the rules doc."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from contracts import prosperity as c
from games.bots import RandomBot
from games.kit import DataError
from games.play import play_game
from games.prosperity import RULES
from games.prosperity import scoring as sc
from games.prosperity.components import DATA_FILE, load, parse
from games.prosperity.state import ACTIONS, COUNT, FINAL, SETUP, ProsperityState
from games.rng import Rng
from tests.games.prosperity.given import DATA, act, build, deck_with, end_turn_into_count, fold, of, refused, table

FILLER = "hydroelectric-dam"


def test_setup_lays_out_the_table() -> None:
    events = RULES.setup(3, Rng.for_version("s", 0))
    table_set, deck = events
    assert isinstance(table_set, c.TableSet) and isinstance(deck, c.DeckBuilt)
    assert sorted(table_set.research_board) == sorted(DATA.start_tiles) and len(table_set.research_board) == 24
    assert (table_set.money, table_set.discs, table_set.research) == (100, 8, 1)
    assert 0 <= table_set.first_player < 3
    assert deck.tiles is not None and deck.size == 36 == len(set(deck.tiles))
    # 1970 on top ... 2030 at the bottom, each decade's own tiles in its block.
    assert deck.backs == [d for d, ids in DATA.decade_tiles for _ in ids]
    assert [DATA.tiles[t].decade for t in deck.tiles] == deck.backs
    state = fold(3, events)
    assert state.phase == SETUP and RULES.to_act(state) == [0, 1, 2]
    assert all(p.money == 100 and p.discs == 8 and p.research == [1, 1] for p in state.players)


def test_setup_is_random_but_reproducible() -> None:
    a = RULES.setup(4, Rng.for_version("x", 0))
    assert a == RULES.setup(4, Rng.for_version("x", 0))
    firsts = {RULES.setup(4, Rng.for_version(f"s{i}", 0))[0].first_player for i in range(40)}  # type: ignore[attr-defined]
    assert firsts == {0, 1, 2, 3}
    with pytest.raises(ValueError):
        RULES.setup(5, Rng.for_version("x", 0))


def test_the_deck_order_is_secret() -> None:
    _, deck = RULES.setup(2, Rng.for_version("s", 0))
    public = RULES.public_event(deck)
    assert isinstance(public, c.DeckBuilt) and public.tiles is None and public.backs == deck.backs  # type: ignore[attr-defined]
    replayed = fold(2, [RULES.public_event(e) for e in RULES.setup(2, Rng.for_version("s", 0))])  # type: ignore[misc]
    assert set(replayed.deck) == {"?"}
    view = RULES.view(replayed, None)
    assert "deck" not in view.__struct_fields__ and view.deck_size == 36


def test_every_seat_chooses_its_board_then_the_first_player_draws() -> None:
    state = fold(3, RULES.setup(3, Rng.for_version("b", 0)))
    first = state.first_player
    act(state, 2, c.ChooseBoard(side="black"))
    assert RULES.to_act(state) == [0, 1]
    act(state, 0, c.ChooseBoard(side="silver"))
    events = act(state, 1, c.ChooseBoard(side="silver"))
    (drawn,) = of(events, c.TileDrawn)
    assert (drawn.seat, drawn.turn) == (first, 1)
    assert [p.side for p in state.players] == ["silver", "silver", "black"]
    # Turn 1 counts for everyone (boards start at energy 0 / ecology 0: no choice), then actions.
    assert state.phase == ACTIONS and state.active == first and state.actions_left == 2
    assert [e.seat for e in of(events, c.Counted)] == [(first + k) % 3 for k in range(3)]
    assert of(events, c.TileFiled) == [c.TileFiled(tile=drawn.tile)]
    assert drawn.tile in state.research_board


def test_counting_waits_for_each_choice_in_order_from_the_active_player() -> None:
    # Seat 2 ends its turn; seat 0 draws an energy count; seats 0 and 1 both have energy -2.
    state = table(3, first=2, deck=deck_with([FILLER, "gasworks"]), money=300)
    build(state, 0, {"B2": "university"})
    build(state, 1, {"B2": "university"})
    events = end_turn_into_count(state)
    assert state.phase == COUNT and state.active == 0 and RULES.to_act(state) == [0]
    assert of(events, c.Counted) == []
    events = act(state, 0, c.SettleEnergy(discs=2))
    assert [e.seat for e in of(events, c.Counted)] == [0]
    assert RULES.to_act(state) == [1]
    assert RULES.legal_actions(state, 0) == [] and len(RULES.legal_actions(state, 1)) == 3
    events = act(state, 1, c.SettleEnergy(discs=0))
    # Seat 2 needs no choice: it counts at once, the tile is filed and seat 0 acts.
    assert [e.seat for e in of(events, c.Counted)] == [1, 2]
    assert state.phase == ACTIONS and RULES.to_act(state) == [0]
    assert [p.discs for p in state.players] == [10, 8, 8]
    assert [p.money for p in state.players] == [300, 100, 500]  # seat 2 took income twice


def test_research_splits_wait_in_order_from_the_active_player() -> None:
    # Seat 2 ends its turn; seat 0 draws a research count. Seats 0 and 2 show 2 research symbols
    # with both markers at 1 (three ways to split: a real choice); seat 1 shows none.
    state = table(3, first=2, deck=deck_with([FILLER, "technical-college"]))
    build(state, 0, {"B2": "university"})
    build(state, 2, {"B2": "university"})
    events = end_turn_into_count(state)
    assert state.phase == COUNT and state.symbol == "research" and state.active == 0
    assert RULES.to_act(state) == [0] and of(events, c.Counted) == []
    assert RULES.legal_actions(state, 2) == []
    # The later seat may not split before the active seat has.
    assert refused(state, 2, c.SplitResearch(energy=0)).rule == "PRO-WAIT"
    events = act(state, 0, c.SplitResearch(energy=2))
    # Seat 1 needs no choice and counts at once; the count then waits for seat 2.
    assert [e.seat for e in of(events, c.Counted)] == [0, 1]
    assert state.phase == COUNT and RULES.to_act(state) == [2]
    assert RULES.legal_actions(state, 0) == [] and len(RULES.legal_actions(state, 2)) == 3
    events = act(state, 2, c.SplitResearch(energy=0))
    (counted,) = of(events, c.Counted)
    assert (counted.seat, counted.energy_steps, counted.ecology_steps) == (2, 0, 2)
    assert of(events, c.TileFiled) == [c.TileFiled(tile="technical-college")]
    assert [p.research for p in state.players] == [[3, 1], [1, 1], [1, 3]]
    assert state.phase == ACTIONS and RULES.to_act(state) == [0]


def test_no_choice_when_the_player_cannot_pay() -> None:
    state = table(2, first=1, deck=deck_with([FILLER, "gasworks"]), money=0)
    build(state, 0, {"B2": "university"})
    events = end_turn_into_count(state)
    assert state.phase == ACTIONS  # both counted without waiting
    counted = next(e for e in of(events, c.Counted) if e.seat == 0)
    assert (counted.discs, counted.money) == (2, 0)


def test_positive_energy_gains_50_per_level() -> None:
    state = table(2, first=1, deck=deck_with([FILLER, "gasworks"]), money=0)
    build(state, 0, {"P2": "nuclear-power-plant"})  # silver: +1 printed, -1 printed, +6
    events = end_turn_into_count(state)
    counted = next(e for e in of(events, c.Counted) if e.seat == 0)
    assert (counted.level, counted.money) == (6, 300)


def test_ecology_pays_50_per_disc_it_cannot_remove_and_adds_discs_when_negative() -> None:
    state = table(2, first=1, deck=deck_with([FILLER, "public-parks"]), money=0)
    # Silver prints +1 ecology in all (Green belt +1, Old mine -1, Villages +1).
    build(state, 0, {"Y2": "water-treatment"})  # ecology +3: +4 in all
    build(state, 1, {"Y2": "factories", "B1": "shopping-centre"})  # -1, Villages covered: -1 in all
    state.players[0].discs = 1
    events = end_turn_into_count(state)
    mine, theirs = (next(e for e in of(events, c.Counted) if e.seat == s) for s in (0, 1))
    assert (mine.discs, mine.money) == (-1, 150)
    assert (theirs.discs, theirs.money) == (1, 0)
    assert [p.discs for p in state.players] == [0, 9]


def test_capital_gives_100_per_symbol() -> None:
    state = table(2, first=1, deck=deck_with([FILLER, "canal-network"]), money=0)
    build(state, 0, {"Y2": "steel-works"})  # 3 + the printed Old mine
    events = end_turn_into_count(state)
    assert next(e for e in of(events, c.Counted) if e.seat == 0).money == 400


def test_no_prosperity_points_with_a_disc_on_the_triangle() -> None:
    state = table(2, first=1, deck=deck_with([FILLER, "town-hall"]))
    board = DATA.boards["silver"]
    state.players[0].discs = board.pollution_spaces + 1
    state.players[1].discs = board.pollution_spaces  # full round spaces, triangle empty
    events = end_turn_into_count(state)
    mine, theirs = (next(e for e in of(events, c.Counted) if e.seat == s) for s in (0, 1))
    assert mine.points == 0 and sc.polluted(board, state.players[0].discs)
    assert theirs.points == 1  # the printed Villages


def test_pollution_track_symbols_show_as_discs_leave() -> None:
    board = DATA.boards["silver"]
    assert [sc.track_prosperity(board, d) for d in (8, 7, 6, 4, 2, 0)] == [0, 0, 1, 2, 3, 4]


def test_actions_income_cleanup_research_then_the_next_turn() -> None:
    state = table(2, first=0, deck=deck_with([FILLER, "technical-college"]))
    act(state, 0, c.Income())
    assert state.players[0].money == 200 and state.actions_left == 1
    events = act(state, 0, c.CleanUp())
    assert state.players[0].discs == 7
    assert of(events, c.TurnEnded) == [c.TurnEnded(seat=0, next_seat=1)]
    assert state.active == 1 and state.turn == 2 and state.actions_left == 2
    act(state, 1, c.Research(track="ecology"))
    act(state, 1, c.Research(track="ecology"))
    assert state.players[1].research == [1, 3] and state.active == 0


def test_covering_a_tile_and_printed_tiles() -> None:
    state = table(2, first=0, money=1000)
    act(state, 0, c.BuyTile(tile="workshops", space="Y1"))  # covers the printed Old mine
    p = state.players[0]
    shown = sc.shown(DATA, DATA.boards["silver"], p.stacks)
    assert (shown.capital, p.ecology, p.energy) == (1, 2, -1)  # Green belt and Villages: +2
    act(state, 0, c.BuyTile(tile="recycling-centre", space="Y1"))
    assert p.stacks[DATA.space_index["silver"]["Y1"]] == ["workshops", "recycling-centre"]


def test_special_tiles_apply_and_are_discarded() -> None:
    state = table(2, first=0, money=1000)
    state.research_board += ["world-expo", "reforestation"]
    state.players[0].discs = 2
    (applied,) = of(act(state, 0, c.BuyTile(tile="world-expo")), c.SpecialApplied)
    assert (applied.points, applied.price) == (2, 600)  # energy level 6 from marker 1
    assert state.players[0].points == 2
    (cleaned,) = of(act(state, 0, c.BuyTile(tile="reforestation")), c.SpecialApplied)
    assert cleaned.discs_removed == 2 and state.players[0].discs == 0
    assert "world-expo" not in state.research_board and "reforestation" not in state.research_board
    assert all("world-expo" not in st for st in state.players[0].stacks)


def test_majority() -> None:
    assert sc.majority([5, 3, 1]) == [3, 1, 0]
    assert sc.majority([5, 5, 1]) == [2, 2, 0]
    assert sc.majority([5, 3, 3, 1]) == [3, 0, 0, 0]
    assert sc.majority([4, 4, 4]) == [2, 2, 2]
    assert sc.majority([2, 7]) == [1, 3]


def test_winners_tie_break_on_money_then_shared() -> None:
    assert sc.winners([30, 30, 20], [100, 250, 290]) == [1]
    assert sc.winners([30, 30, 20], [100, 100, 290]) == [0, 1]


def _last_turn(money: int = 0) -> ProsperityState:
    """Two players; seat 1 takes the last turn (turn 36), with one action left."""
    state = table(2, first=0, money=money)
    state.deck, state.backs = [], []
    state.drawn = list(DATA.tiles)[24:]  # every decade tile drawn
    state.turn, state.active, state.actions_left = 36, 1, 1
    return state


def test_final_scoring_in_the_rulebook_order() -> None:
    state = _last_turn(money=0)
    p0, p1 = state.players
    build(state, 0, {"P2": "solar-power-plant", "Y2": "water-treatment", "B2": "research-institute"})
    p0.money, p0.discs, p0.research = 290, 2, [3, 5]
    p1.money, p1.research = 620, [4, 2]
    events = act(state, 1, c.Income())
    kinds = [
        (type(e).__name__, getattr(e, "symbol", getattr(e, "track", None)))
        for e in events
        if isinstance(e, (c.Counted, c.MoneyConverted, c.ResearchMajority))
    ]
    assert kinds == [
        ("Counted", "energy"), ("Counted", "energy"),
        ("Counted", "ecology"), ("Counted", "ecology"),
        ("Counted", "capital"), ("Counted", "capital"),
        ("MoneyConverted", None), ("MoneyConverted", None),
        ("Counted", "research"), ("Counted", "research"),
        ("ResearchMajority", "energy"), ("ResearchMajority", "ecology"),
        ("Counted", "prosperity"), ("Counted", "prosperity"),
    ]  # fmt: skip
    assert of(events, c.FinalScoringStarted) == [c.FinalScoringStarted(order=[1, 0])]
    by = {(e.seat, e.symbol): e for e in of(events, c.Counted)}
    # Seat 0: energy +1-1+3-1-2 = 0; ecology +1-1+1+3 = +4 twice: 8 levels, 2 discs removed, 6 x 50.
    assert (by[(0, "ecology")].times, by[(0, "ecology")].discs, by[(0, "ecology")].money) == (2, -2, 300)
    # Capital: 0 (Old mine still shows: 1) -> 100. 290 + 300 + 100 = 690: 2 points, 90 left.
    (conv0,) = [e for e in of(events, c.MoneyConverted) if e.seat == 0]
    assert (conv0.money, conv0.points, conv0.money_left) == (600, 2, 90)
    # Research: seat 0 has 3 symbols -> both tracks +3: (6, 8); seat 1 none: (4, 2).
    assert (by[(0, "research")].energy_steps, by[(0, "research")].ecology_steps) == (3, 3)
    majority = of(events, c.ResearchMajority)
    assert [m.points for m in majority] == [[3, 1], [3, 1]]
    assert state.over and RULES.is_over(state)
    result = RULES.result(state)
    assert result.scores == [p0.points, p1.points]


def test_final_energy_counts_twice_and_waits_for_the_choice() -> None:
    state = _last_turn(money=1000)
    build(state, 0, {"B2": "university"})  # energy -2: 4 levels
    act(state, 1, c.Income())
    assert state.phase == FINAL and RULES.to_act(state) == [0]
    assert RULES.legal_actions(state, 0) == [c.SettleEnergy(discs=k) for k in range(5)]
    events = act(state, 0, c.SettleEnergy(discs=1))
    first = of(events, c.Counted)[0]
    assert (first.seat, first.symbol, first.times, first.level, first.money, first.discs) == (
        0, "energy", 2, -4, -300, 1,
    )  # fmt: skip
    assert of(events, c.GameFinished)


def test_the_game_lasts_36_turns_and_every_tile_is_drawn_once() -> None:
    played = play_game(RULES, [RandomBot(1), RandomBot(2), RandomBot(3)], "flow", 3, keep_events=True)
    drawn = of(played.events, c.TileDrawn)
    assert [e.turn for e in drawn] == list(range(1, 37))
    assert Counter(e.seat for e in drawn) == {0: 12, 1: 12, 2: 12}
    assert sorted(e.tile for e in drawn) == sorted(t for _, ids in DATA.decade_tiles for t in ids)
    assert len(of(played.events, c.GameFinished)) == 1


def test_default_actions() -> None:
    state = fold(2, RULES.setup(2, Rng.for_version("d", 0)))
    assert RULES.default_action(state, 0) == c.ChooseBoard(side="silver")
    assert RULES.default_action(table(), 0) == c.Income()
    pending = table(2, first=1, deck=deck_with([FILLER, "gasworks"]), money=100)
    build(pending, 0, {"B2": "university"})
    end_turn_into_count(pending)
    assert RULES.default_action(pending, 0) == c.SettleEnergy(discs=1)  # pay what it can


def test_data_errors_name_the_file_and_field(tmp_path: Path) -> None:
    assert load().data_version == RULES.data_version
    raw = tomllib.loads(DATA_FILE.read_text())
    raw["tiles"][3]["side"] = "left"
    with pytest.raises(DataError, match=r"prosperity\.toml.*tiles\[3\]\.side"):
        parse(raw, DATA_FILE)
    raw = tomllib.loads(DATA_FILE.read_text())
    del raw["tiles"][-1]
    with pytest.raises(DataError, match=r"expected 60 tiles"):
        parse(raw, DATA_FILE)
    raw = tomllib.loads(DATA_FILE.read_text())
    raw["tiles"][30]["count"] = "energy"  # a second energy in 1980
    with pytest.raises(DataError, match=r"tiles\[30\]|decade 1980"):
        parse(raw, DATA_FILE)
    raw = tomllib.loads(DATA_FILE.read_text())
    raw["boards"][0]["spaces"][9]["needs"] = "B1"
    with pytest.raises(DataError, match=r"boards\[0\].*spaces\[9\]\.needs"):
        parse(raw, DATA_FILE)
    bad = tmp_path / "broken.toml"
    bad.write_text("data_version = ")
    with pytest.raises(DataError, match=r"broken\.toml"):
        load(bad)


def test_rules_doc_quotes_every_rule_text() -> None:
    from games.prosperity.rule_ids import RULES_TEXT

    doc = " ".join((Path(__file__).parents[3] / "docs" / "rules" / "prosperity.md").read_text().split())
    for rule, text in RULES_TEXT.items():
        assert f"**{rule}** — {' '.join(text.split())}" in doc, rule
