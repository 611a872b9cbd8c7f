"""Given events, when a command, then Rejected with the rule id: one test (or more) per refusal rule."""

from __future__ import annotations

import msgspec

from contracts import prosperity as c
from games.base import Rejected
from games.prosperity import RULES
from games.prosperity.rule_ids import REFUSAL_RULES, RULES_TEXT
from games.prosperity.state import ProsperityState
from tests.games.prosperity.given import build, deck_with, end_turn_into_count, fold, refused, table, table_events

TESTED: set[str] = set()


def _assert_rule(out: Rejected, rule: str) -> None:
    assert out.rule == rule, out
    assert out.text == RULES_TEXT[rule]
    assert out.detail
    TESTED.add(rule)


def _setup_phase(n: int = 2) -> ProsperityState:
    return fold(n, table_events(n)[:2])  # table set and deck built, no board chosen yet


def _energy_pending(seat_negative: int, money: int = 100) -> ProsperityState:
    """Seat 1 ends turn 1, seat 0 draws an energy count; `seat_negative` has energy -2."""
    state = table(2, first=1, deck=deck_with(["hydroelectric-dam", "gasworks"]), money=money)
    build(state, seat_negative, {"B2": "university"})
    end_turn_into_count(state)
    assert RULES.to_act(state) == [seat_negative]
    return state


def _research_pending() -> ProsperityState:
    state = table(2, first=1, deck=deck_with(["hydroelectric-dam", "technical-college"]))
    build(state, 0, {"B2": "university", "B3": "research-institute"})  # 5 research symbols
    end_turn_into_count(state)
    assert RULES.to_act(state) == [0]
    return state


def test_wait_outside_your_turn() -> None:
    _assert_rule(refused(table(first=0), 1, c.Income()), "PRO-WAIT")


def test_wait_while_another_seat_chooses_during_a_count() -> None:
    # Seat 0 is active, but seat 1's energy choice is pending: only seat 1 may act.
    state = table(2, first=1, deck=deck_with(["hydroelectric-dam", "gasworks"]), money=300)
    build(state, 1, {"B2": "university"})
    end_turn_into_count(state)
    assert state.active == 0 and RULES.to_act(state) == [1]
    _assert_rule(refused(state, 0, c.SettleEnergy(discs=0)), "PRO-WAIT")
    _assert_rule(refused(state, 0, c.Income()), "PRO-WAIT")


def test_wait_after_choosing_a_board() -> None:
    state = _setup_phase()
    for ev in RULES.decide(state, 0, c.ChooseBoard(side="silver"), None):  # type: ignore[arg-type, union-attr]
        RULES.evolve(state, ev)
    assert RULES.to_act(state) == [1]
    _assert_rule(refused(state, 0, c.ChooseBoard(side="black")), "PRO-WAIT")


def test_expected_in_set_up() -> None:
    _assert_rule(refused(_setup_phase(), 0, c.Income()), "PRO-EXPECTED")


def test_expected_during_a_count() -> None:
    _assert_rule(refused(_energy_pending(0), 0, c.Income()), "PRO-EXPECTED")
    _assert_rule(refused(_energy_pending(0), 0, c.SplitResearch(energy=0)), "PRO-EXPECTED")
    _assert_rule(refused(_research_pending(), 0, c.SettleEnergy(discs=0)), "PRO-EXPECTED")


def test_expected_in_the_action_phase() -> None:
    _assert_rule(refused(table(), 0, c.SettleEnergy(discs=0)), "PRO-EXPECTED")
    _assert_rule(refused(table(), 0, c.ChooseBoard(side="silver")), "PRO-EXPECTED")


def test_board() -> None:
    _assert_rule(refused(_setup_phase(), 0, c.ChooseBoard(side="gold")), "PRO-BOARD")


def test_settle_more_discs_than_levels() -> None:
    _assert_rule(refused(_energy_pending(0, money=300), 0, c.SettleEnergy(discs=3)), "PRO-SETTLE")
    _assert_rule(refused(_energy_pending(0, money=300), 0, c.SettleEnergy(discs=-1)), "PRO-SETTLE")


def test_settle_paying_money_you_do_not_have() -> None:
    # 2 levels, 100 euros: at most one level can be paid, so at least one disc.
    state = _energy_pending(0, money=100)
    assert RULES.legal_actions(state, 0) == [c.SettleEnergy(discs=1), c.SettleEnergy(discs=2)]
    _assert_rule(refused(state, 0, c.SettleEnergy(discs=0)), "PRO-SETTLE")


def test_split_out_of_range() -> None:
    _assert_rule(refused(_research_pending(), 0, c.SplitResearch(energy=6)), "PRO-SPLIT")
    _assert_rule(refused(_research_pending(), 0, c.SplitResearch(energy=-1)), "PRO-SPLIT")


def test_split_past_the_top_of_a_track() -> None:
    state = _research_pending()
    state.players[0].research = [RULES.data.research_top - 2, 1]
    assert [a.energy for a in RULES.legal_actions(state, 0)] == [0, 1, 2]  # type: ignore[attr-defined]
    _assert_rule(refused(state, 0, c.SplitResearch(energy=3)), "PRO-SPLIT")


def test_cleanup_without_discs() -> None:
    state = table()
    state.players[0].discs = 0
    _assert_rule(refused(state, 0, c.CleanUp()), "PRO-CLEANUP")


def test_research_unknown_track() -> None:
    _assert_rule(refused(table(), 0, c.Research(track="capital")), "PRO-RESEARCH")


def test_research_at_the_top() -> None:
    state = table()
    state.players[0].research = [RULES.data.research_top, 1]
    _assert_rule(refused(state, 0, c.Research(track="energy")), "PRO-RESEARCH")


def test_buy_a_tile_not_on_the_research_board() -> None:
    _assert_rule(refused(table(), 0, c.BuyTile(tile="fusion-reactor", space="P2")), "PRO-BUY")
    _assert_rule(refused(table(), 0, c.BuyTile(tile="no-such-tile", space="P2")), "PRO-BUY")


def test_funds() -> None:
    # Level 6 from marker 1: 600 euros; the player has 100.
    _assert_rule(refused(table(), 0, c.BuyTile(tile="nuclear-power-plant", space="P2")), "PRO-FUNDS")
    state = table(money=0)
    state.research_board.append("world-expo")
    _assert_rule(refused(state, 0, c.BuyTile(tile="world-expo")), "PRO-FUNDS")


def test_space_of_the_wrong_colour() -> None:
    _assert_rule(refused(table(), 0, c.BuyTile(tile="coal-power-plant", space="Y2")), "PRO-SPACE")


def test_space_missing_or_unknown() -> None:
    _assert_rule(refused(table(), 0, c.BuyTile(tile="coal-power-plant")), "PRO-SPACE")
    _assert_rule(refused(table(), 0, c.BuyTile(tile="coal-power-plant", space="P9")), "PRO-SPACE")


def test_space_named_for_a_special_tile() -> None:
    state = table(money=1000)
    state.research_board.append("reforestation")
    _assert_rule(refused(state, 0, c.BuyTile(tile="reforestation", space="B2")), "PRO-SPACE")


def test_transport() -> None:
    state = table(money=1000, sides=["black", "black"])
    # Black: B3 and B4 need G1, B5 needs G2.
    for space in ("B3", "B4", "B5"):
        _assert_rule(refused(state, 0, c.BuyTile(tile="school", space=space)), "PRO-TRANSPORT")
    build(state, 0, {"G2": "bicycle-paths"})
    assert not isinstance(RULES.decide(state, 0, c.BuyTile(tile="school", space="B5"), None), Rejected)  # type: ignore[arg-type]


def test_every_refusal_rule_has_a_test() -> None:
    # Runs last in this module (pytest keeps file order).
    assert set(REFUSAL_RULES) == TESTED
    assert set(REFUSAL_RULES) <= set(RULES_TEXT)


def test_refusals_never_change_the_state() -> None:
    state = _energy_pending(0)
    before = msgspec.to_builtins(state)
    refused(state, 0, c.SettleEnergy(discs=9))
    refused(state, 1, c.Income())
    assert msgspec.to_builtins(state) == before
