"""Oracles for blueprints: completion into the vault, both sideways, once per player in the whole
game, replaced at the end of the workday."""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica import RULES
from tests.games.mechanica.given import BLUEPRINTS, act, bots_at, given, holes, of, table

ONE = [b for b in BLUEPRINTS if b not in ("BP-03", "BP-04")]
PILES = [["BP-03", *ONE[:6]], ["BP-04", *ONE[6:]]]  # BP-03: plus -> 5; BP-04: plus + basic -> 8


def test_completing_puts_the_money_into_the_vault_and_turns_both_sideways() -> None:
    # Rulebook: the bots go back to the supply "como si los hubiera vendido", the card's money goes
    # into the vault instead of the wallet, and both blueprints are turned sideways.
    state = table(2, piles=PILES)
    given(state, bots_at(0, ("plus", 2, 5, 1)))
    events = act(state, 0, c.CompleteBlueprint(pile=2, rows=[2, 3]))
    assert events == [
        c.BlueprintCompleted(
            seat=0, pile=2, blueprint="BP-04", spots=[c.Spot(row=2, col=5, hole=1), c.Spot(row=3, col=5, hole=1)],
            models=["plus", "basic"], money=8,
        )
    ]  # fmt: skip
    p = state.players[0]
    assert (p.wallet, p.vault) == (8, 8)
    assert holes(state, 0, 2, 5) == [""] and holes(state, 0, 3, 5) == [""]
    assert state.sideways


def test_both_in_one_turn_and_others_may_still_complete_them() -> None:
    state = table(2, piles=PILES)
    given(state, bots_at(0, ("plus", 2, 5, 1), ("plus", 4, 5, 1)))
    act(state, 0, c.CompleteBlueprint(pile=1, rows=[2]))
    act(state, 0, c.CompleteBlueprint(pile=2, rows=[4, 3]))  # any time in the turn, even after buying
    assert state.players[0].vault == 13
    act(state, 0, c.EndTurn())
    given(state, bots_at(1, ("plus", 2, 5, 1)))
    assert c.CompleteBlueprint(pile=2, rows=[2, 3]) in RULES.legal_actions(state, 1)
    act(state, 1, c.CompleteBlueprint(pile=2, rows=[2, 3]))
    assert [p.blueprints_done for p in state.players] == [["BP-03", "BP-04"], ["BP-04"]]


def test_sideways_blueprints_are_replaced_at_the_end_of_the_workday() -> None:
    state = table(2, piles=PILES)
    given(state, bots_at(0, ("plus", 2, 5, 1)))
    act(state, 0, c.CompleteBlueprint(pile=1, rows=[2]))
    act(state, 0, c.EndTurn())
    events = act(state, 1, c.EndTurn())
    assert of(events, c.BlueprintsReplaced) == [c.BlueprintsReplaced(face_up=[ONE[0], ONE[6]])]
    assert [p[0] for p in state.piles] == [ONE[0], ONE[6]]
    assert state.piles[0][-1] == "BP-03" and state.piles[1][-1] == "BP-04"
    assert not state.sideways
    # Completed blueprints stay on the seat's record for the whole game (MEC-BLUEPRINT-ONCE).
    assert [p.blueprints_done for p in state.players] == [["BP-03"], []]
    # Nobody completed anything on workday 2: the same cards stay up.
    act(state, 0, RULES.default_action(state, 0))
    assert of(act(state, 1, RULES.default_action(state, 1)), c.BlueprintsReplaced) == []


def test_legal_blueprint_choices_are_the_distinct_ways_to_take_the_bots() -> None:
    state = table(2, piles=[["BP-02", *ONE[:6]], ["BP-04", *ONE[6:]]])  # BP-02: three basic bots
    given(state, bots_at(0, ("basic", 2, 5, 1), ("basic", 4, 5, 1)))
    act(state, 0, c.BuyTruck(row=4, size="big"))
    given(state, bots_at(0, ("basic", 4, 5, 2)))
    choices = [a.rows for a in RULES.legal_actions(state, 0) if isinstance(a, c.CompleteBlueprint)]
    # Four basic bots (rows 2, 3, 4, 4): leave out the one of row 2, of row 3, or one of row 4.
    assert sorted(sorted(r) for r in choices) == [[2, 3, 4], [2, 4, 4], [3, 4, 4]]
