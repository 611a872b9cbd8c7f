"""Given events, when a command, then Rejected with the rule id — a test per refusal rule."""

from __future__ import annotations

from contracts import artifacts as c
from games.artifacts.rule_ids import REFUSAL_RULES, rule_text
from games.base import Rejected
from tests.games.artifacts.given import DATA, START, act, fold, give, refused, roll, table, table_events


def _is(r: Rejected, rule: str) -> None:
    assert r.rule == rule, r
    assert r.text == rule_text(rule, DATA) and "{" not in r.text
    assert r.detail


def test_turn() -> None:
    r = refused(table(), 1, c.EndTurn())
    _is(r, "ART-TURN")
    assert "seat 0" in r.detail


def test_phase_arrange_before_play_and_play_before_arranging() -> None:
    setup_only = [e for e in table_events(3) if not isinstance(e, (c.StartArranged, c.TurnStarted))]
    arranging = fold(3, setup_only)
    _is(refused(arranging, 0, c.UseAction(die=3, card="S-canyon")), "ART-PHASE")
    _is(refused(arranging, 0, c.EndTurn()), "ART-PHASE")
    _is(refused(table(), 0, c.ArrangeStart(cards=START)), "ART-PHASE")


def test_arrange_must_list_the_four_starting_cards() -> None:
    setup_only = [e for e in table_events(3) if not isinstance(e, (c.StartArranged, c.TurnStarted))]
    arranging = fold(3, setup_only)
    for cards in (START[:3], [*START[:3], START[0]], [*START, "A-01"], [*START[:3], "A-01"]):
        _is(refused(arranging, 0, c.ArrangeStart(cards=cards)), "ART-ARRANGE")
    act(arranging, 0, c.ArrangeStart(cards=list(reversed(START))))
    assert [p.card for p in arranging.players[0].cards] == list(reversed(START))


def test_die_not_rolled() -> None:
    state = table(dice=[1, 3, 5])
    _is(refused(state, 0, c.UseAction(die=6, card="guide")), "ART-DIE")
    _is(refused(state, 0, c.Dive(dice=[3, 3])), "ART-DIE")
    act(state, 0, c.UseAction(die=3, card="guide"))
    _is(refused(state, 0, c.UseAction(die=3, card="S-canyon")), "ART-DIE")


def test_slot_unknown_card_missing_slot_or_already_used() -> None:
    state = table(dice=[1, 3, 5])
    _is(refused(state, 0, c.UseAction(die=3, card="A-01")), "ART-SLOT")
    _is(refused(state, 0, c.UseAction(die=3, card="S-canyon", action=2)), "ART-SLOT")
    _is(refused(state, 0, c.UseAction(die=3, card="S-canyon", action=0)), "ART-SLOT")
    act(state, 0, c.UseAction(die=3, card="S-canyon"))
    r = refused(state, 0, c.UseAction(die=5, card="S-canyon"))
    _is(r, "ART-SLOT")
    assert "already" in r.detail


def test_action_command_must_match_the_slot() -> None:
    state = table(dice=[1, 3, 5])
    _is(refused(state, 0, c.UseAction(die=3, card="S-hq")), "ART-ACTION")
    _is(refused(state, 0, c.UseAction(die=5, card="museum-fossil")), "ART-ACTION")
    _is(refused(state, 0, c.Buy(die=3, card="S-canyon", action=1, market="A-01", row=2, col=1)), "ART-ACTION")
    _is(refused(state, 0, c.SellToMuseum(die=3, museum="guide", box=1)), "ART-ACTION")


def test_requirement() -> None:
    state = table(dice=[2, 3, 4])
    r = refused(state, 0, c.UseAction(die=2, card="S-canyon"))  # Canyon: any die but a 2
    _is(r, "ART-REQUIREMENT")
    _is(refused(state, 0, c.UseAction(die=3, card="S-desert")), "ART-REQUIREMENT")  # Desert: 4 or more
    act(state, 0, c.UseAction(die=4, card="S-desert"))
    assert state.players[0].artifacts[1] == 1


def test_market_card_must_be_face_up() -> None:
    # Row A shows A-01..A-03 and the top of its pile, A-04; A-05 lies below it, unseen.
    state = table(dice=[3, 4, 5], market={"A": ["A-01", "A-02", "A-03", "A-04"]})
    give(state, 0, dollars=20)
    assert state.decks[0][0] == "A-05"
    for card in ("A-05", "S-hq", "B-99"):
        _is(refused(state, 0, c.Buy(die=3, card="S-hq", action=1, market=card, row=2, col=1)), "ART-MARKET")


def test_cost_dollars_and_scroll() -> None:
    state = table(dice=[3, 4, 5], market={"A": ["A-01", "A-02", "A-03"]})
    assert state.players[0].dollars == 2
    _is(refused(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-01", row=2, col=1)), "ART-COST")
    _is(refused(state, 0, c.Upgrade(die=3, card="S-hq", action=1, target="S-hq")), "ART-COST")
    give(state, 0, dollars=10)
    r = refused(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-02", row=2, col=1))
    _is(r, "ART-COST")
    assert "scroll" in r.detail
    give(state, 0, scroll=1)
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-02", row=2, col=1))
    assert state.players[0].artifacts[1] == 0 and state.players[0].dollars == 12 - 4


def test_layout_rows_empty_and_orthogonally_adjacent() -> None:
    state = table(dice=[3, 4, 5], market={"A": ["A-01", "A-02", "A-03"]})
    give(state, 0, dollars=10)
    for row, col in ((3, 1), (0, 1), (1, 2), (2, 0), (2, 5), (1, 7), (2, 9)):
        cmd = c.Buy(die=3, card="S-hq", action=1, market="A-03", row=row, col=col)
        _is(refused(state, 0, cmd), "ART-LAYOUT")
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market="A-03", row=2, col=4))
    assert state.players[0].cards[-1].row == 2


def test_upgrade_needs_an_own_level_1_card() -> None:
    state = table(dice=[3, 4, 5])
    give(state, 0, dollars=20)
    _is(refused(state, 0, c.Upgrade(die=3, card="S-hq", action=1, target="A-01")), "ART-UPGRADE")
    act(state, 0, c.Upgrade(die=3, card="S-hq", action=1, target="S-canyon"))
    # Headquarters Level 1 has one buy slot, now used: use a fresh turn to try again.
    roll(state, 0, [4, 5])
    r = refused(state, 0, c.Upgrade(die=4, card="S-hq", action=1, target="S-canyon"))
    _is(r, "ART-UPGRADE")
    assert "Level 2" in r.detail


def test_museum_box_must_exist_and_be_open() -> None:
    state = table(dice=[3, 4, 5])
    give(state, 0, fossil=3)
    _is(refused(state, 0, c.SellToMuseum(die=3, museum="museum-fossil", box=10)), "ART-MUSEUM")
    _is(refused(state, 0, c.SellToMuseum(die=3, museum="museum-fossil", box=0)), "ART-MUSEUM")
    act(state, 0, c.SellToMuseum(die=3, museum="museum-fossil", box=1))
    roll(state, 0, [4])
    r = refused(state, 0, c.SellToMuseum(die=4, museum="museum-fossil", box=1))
    _is(r, "ART-MUSEUM")
    assert "already filled" in r.detail


def test_artifacts_cannot_sell_more_than_held() -> None:
    state = table(dice=[3, 4, 5])
    give(state, 0, fossil=1, statue=1)
    # Box 3 of the 9-box side is a "2" order.
    _is(refused(state, 0, c.SellToMuseum(die=3, museum="museum-fossil", box=3)), "ART-ARTIFACTS")
    _is(refused(state, 0, c.SellToMuseum(die=5, museum="museum-gem", box=1)), "ART-ARTIFACTS")
    _is(refused(state, 0, c.SellToCollectors(die=3, fossil=1, statue=2)), "ART-ARTIFACTS")


def test_collectors_at_least_one_and_none_negative() -> None:
    state = table(dice=[3, 4, 5])
    give(state, 0, fossil=2)
    _is(refused(state, 0, c.SellToCollectors(die=3)), "ART-COLLECTORS")
    _is(refused(state, 0, c.SellToCollectors(die=3, fossil=2, scroll=-1)), "ART-COLLECTORS")


def test_dive_stack_empty() -> None:
    state = table(dice=[6, 6, 6], underwater=[])
    _is(refused(state, 0, c.Dive(dice=[6])), "ART-DIVE-STACK")


def test_dive_once_per_turn() -> None:
    state = table(dice=[2, 3, 5])
    act(state, 0, c.Dive(dice=[2]))
    assert state.players[0].underwater == ["U-02"]
    r = refused(state, 0, c.Dive(dice=[5]))  # U-03 would need 3
    _is(r, "ART-DIVE-ONCE")


def test_dive_sum_must_reach_the_top_card() -> None:
    state = table(dice=[1, 1, 4], underwater=list(DATA.underwater_ids[2:]))  # top: U-04
    _is(refused(state, 0, c.Dive(dice=[1, 1])), "ART-DIVE-SUM")
    _is(refused(state, 0, c.Dive(dice=[])), "ART-DIVE-SUM")
    act(state, 0, c.Dive(dice=[4]))


def test_every_refusal_rule_has_a_test_here() -> None:
    tested = {
        "ART-TURN", "ART-PHASE", "ART-ARRANGE", "ART-DIE", "ART-SLOT",
        "ART-ACTION", "ART-REQUIREMENT", "ART-MARKET", "ART-COST", "ART-LAYOUT", "ART-UPGRADE",
        "ART-MUSEUM", "ART-ARTIFACTS", "ART-COLLECTORS", "ART-DIVE-STACK", "ART-DIVE-ONCE", "ART-DIVE-SUM",
    }  # fmt: skip
    assert tested == set(REFUSAL_RULES)
