"""Given events, when a command, then Rejected with the rule id — one test per refusal rule."""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica import RULES
from games.mechanica.rule_ids import REFUSAL_RULES, RULES_TEXT
from games.mechanica.state import MechanicaState
from tests.games.mechanica.given import (
    BLUEPRINTS,
    TILES,
    act,
    bots_at,
    given,
    refused,
    table,
    tile,
)


def _shop(first: str, second: str, n: int = 2, **kw: object) -> MechanicaState:
    rest = [t for t in TILES if t not in (first, second)]
    return table(n, stack=[first, second, *rest[:19]], extras=rest[19:], **kw)


def legal_actions(state: MechanicaState, seat: int) -> list[object]:
    return list(RULES.legal_actions(state, seat))


def _assert_rule(state: MechanicaState, seat: int, cmd: object, rule: str) -> str:
    r = refused(state, seat, cmd)  # type: ignore[arg-type]
    assert r.rule == rule, r
    assert r.text == RULES_TEXT[rule]
    return r.detail


def test_turn() -> None:
    detail = _assert_rule(table(), 1, c.EndTurn(), "MEC-TURN")
    assert "seat 0" in detail


def test_command() -> None:
    # A command built in code (not decoded from the wire) with a field of the wrong type
    _assert_rule(table(), 0, c.Sell(row="3", model="basic"), "MEC-COMMAND")  # type: ignore[arg-type]
    _assert_rule(table(), 0, c.EndTurn(rows=[1, "2"]), "MEC-COMMAND")  # type: ignore[list-item]


def test_sell_needs_a_bot_of_that_model_in_that_truck() -> None:
    state = table()
    _assert_rule(state, 0, c.Sell(row=1, model="basic"), "MEC-SELL")  # row 1 has no truck
    _assert_rule(state, 0, c.Sell(row=2, model="basic"), "MEC-SELL")  # empty truck
    _assert_rule(state, 0, c.Sell(row=3, model="plus"), "MEC-SELL")  # a basic bot, not a plus
    act(state, 0, c.Sell(row=3, model="basic"))


def test_sell_names_a_known_bot_model() -> None:
    # Given an empty truck on dock row 2 (its one hole holds "", the engine's mark for a free hole)
    state = table()
    # When seat 0 sells a "bot" of model "" (or any name that is no bot model) from it
    # Then it is refused under MEC-SELL, naming the model, instead of crashing on the sale value
    for model in ("", "golden", "?"):
        detail = _assert_rule(state, 0, c.Sell(row=2, model=model), "MEC-SELL")
        assert repr(model) in detail


def test_sell_first_then_buy() -> None:
    state = _shop(tile("upgrader"), tile("duplicator"))
    act(state, 0, c.Install(price=5, row=3, col=2))
    _assert_rule(state, 0, c.Sell(row=3, model="basic"), "MEC-SELL-FIRST")


def test_shop_space_must_hold_an_improvement() -> None:
    state = table()
    _assert_rule(state, 0, c.Install(price=3, row=3, col=2), "MEC-SHOP")  # empty space at set-up
    _assert_rule(state, 0, c.Recycle(price=4, rows=[1]), "MEC-SHOP")  # no 4 space on the wheel


def test_money() -> None:
    state = _shop(tile("upgrader"), tile("duplicator"), money=4)
    _assert_rule(state, 0, c.Install(price=7, row=3, col=2), "MEC-MONEY")
    _assert_rule(state, 0, c.BuyTruck(row=2, size="huge"), "MEC-MONEY")
    act(state, 0, c.BuyTruck(row=2, size="big"))
    _assert_rule(state, 0, c.UpgradeTruck(row=2), "MEC-MONEY")


def test_install_place() -> None:
    state = _shop(tile("advanced_fabricator"), tile("upgrader"))
    _assert_rule(state, 0, c.Install(price=7, row=3, col=2), "MEC-INSTALL-PLACE")  # fabricator on the floor
    _assert_rule(state, 0, c.Install(price=5, row=2, col=1), "MEC-INSTALL-PLACE")  # upgrader in the start zone
    _assert_rule(state, 0, c.Install(price=5, row=3, col=5), "MEC-INSTALL-PLACE")  # upgrader on the dock
    _assert_rule(state, 0, c.Install(price=5, row=1, col=5), "MEC-INSTALL-PLACE")  # no square there
    _assert_rule(state, 0, c.Install(price=5, row=9, col=2), "MEC-INSTALL-PLACE")
    act(state, 0, c.Install(price=7, row=1, col=1))


def test_recycle_rows() -> None:
    state = _shop(tile("assembler"), tile("upgrader"))  # assembler recycles into 3 basic bots
    given(state, bots_at(0, ("basic", 1, 1, 1)))
    _assert_rule(state, 0, c.Recycle(price=7, rows=[2, 4]), "MEC-RECYCLE-ROWS")  # too few
    _assert_rule(state, 0, c.Recycle(price=7, rows=[1, 2, 4]), "MEC-RECYCLE-ROWS")  # row 1 is taken
    _assert_rule(state, 0, c.Recycle(price=7, rows=[2, 2, 4]), "MEC-RECYCLE-ROWS")  # not distinct
    _assert_rule(state, 0, c.Recycle(price=7, rows=[2, 4, 9]), "MEC-RECYCLE-ROWS")
    _assert_rule(state, 0, c.EndTurn(rows=[2]), "MEC-RECYCLE-ROWS")  # nothing falls this turn
    act(state, 0, c.Recycle(price=7, rows=[5, 2, 4]))


def test_blueprint() -> None:
    piles = [["BP-03", *[b for b in BLUEPRINTS if b != "BP-03"][:6]], [b for b in BLUEPRINTS if b != "BP-03"][6:]]
    state = table(piles=piles)  # BP-03 wants one plus bot; the central truck holds a basic
    _assert_rule(state, 0, c.CompleteBlueprint(pile=3, rows=[3]), "MEC-BLUEPRINT")
    _assert_rule(state, 0, c.CompleteBlueprint(pile=1, rows=[3]), "MEC-BLUEPRINT")
    _assert_rule(state, 0, c.CompleteBlueprint(pile=1, rows=[]), "MEC-BLUEPRINT")
    given(state, bots_at(0, ("plus", 2, 5, 1)))
    _assert_rule(state, 0, c.CompleteBlueprint(pile=1, rows=[3]), "MEC-BLUEPRINT")
    act(state, 0, c.CompleteBlueprint(pile=1, rows=[2]))


def test_blueprint_once() -> None:
    piles = [["BP-03", *[b for b in BLUEPRINTS if b != "BP-03"][:6]], [b for b in BLUEPRINTS if b != "BP-03"][6:]]
    state = table(piles=piles)
    given(state, bots_at(0, ("plus", 2, 5, 1), ("plus", 4, 5, 1)))
    act(state, 0, c.CompleteBlueprint(pile=1, rows=[2]))
    _assert_rule(state, 0, c.CompleteBlueprint(pile=1, rows=[4]), "MEC-BLUEPRINT-ONCE")


def test_blueprint_once_in_the_whole_game() -> None:
    # Given pile 1 holds only BP-03, so the card comes back face up when it is replaced, and
    # seat 0 completed it on workday 1
    rest = [b for b in BLUEPRINTS if b != "BP-03"]
    state = table(piles=[["BP-03"], rest])
    given(state, bots_at(0, ("plus", 2, 5, 1)))
    act(state, 0, c.CompleteBlueprint(pile=1, rows=[2]))
    act(state, 0, RULES.default_action(state, 0))
    act(state, 1, RULES.default_action(state, 1))
    assert state.piles[0] == ["BP-03"] and not state.sideways  # replaced: BP-03 is up again
    # When seat 0 has a plus bot in a truck again and hands BP-03 in a second time
    given(state, bots_at(0, ("plus", 4, 5, 1)))
    # Then it is refused: "no puede completar ningún plano más de una vez"
    detail = _assert_rule(state, 0, c.CompleteBlueprint(pile=1, rows=[4]), "MEC-BLUEPRINT-ONCE")
    assert "BP-03" in detail
    assert not any(isinstance(a, c.CompleteBlueprint) and a.pile == 1 for a in legal_actions(state, 0))
    # while seat 1, who never completed it, still may
    act(state, 0, RULES.default_action(state, 0))
    given(state, bots_at(1, ("plus", 2, 5, 1)))
    act(state, 1, c.CompleteBlueprint(pile=1, rows=[2]))


def test_truck() -> None:
    state = table()
    _assert_rule(state, 0, c.BuyTruck(row=2, size="giant"), "MEC-TRUCK")
    _assert_rule(state, 0, c.BuyTruck(row=1, size="big"), "MEC-TRUCK")
    _assert_rule(state, 0, c.UpgradeTruck(row=2), "MEC-TRUCK")  # still a small truck
    act(state, 0, c.BuyTruck(row=2, size="big"))
    _assert_rule(state, 0, c.BuyTruck(row=2, size="huge"), "MEC-TRUCK")  # only over a small truck


def test_fork_square() -> None:
    state = table()
    _assert_rule(state, 0, c.BuyFork(row=3, col=1, direction="up"), "MEC-FORK-SQUARE")  # start zone
    _assert_rule(state, 0, c.BuyFork(row=3, col=5, direction="up"), "MEC-FORK-SQUARE")  # dock
    _assert_rule(state, 0, c.SetFork(row=2, col=3, direction="right"), "MEC-FORK-SQUARE")  # no fork there
    act(state, 0, c.BuyFork(row=2, col=3, direction="right"))
    _assert_rule(state, 0, c.BuyFork(row=2, col=3, direction="down"), "MEC-FORK-SQUARE")  # one per square


def test_fork_arrow() -> None:
    state = table()
    _assert_rule(state, 0, c.BuyFork(row=3, col=2, direction="left"), "MEC-FORK-ARROW")
    _assert_rule(state, 0, c.BuyFork(row=1, col=2, direction="up"), "MEC-FORK-ARROW")  # off the board
    _assert_rule(state, 0, c.BuyFork(row=1, col=4, direction="right"), "MEC-FORK-ARROW")  # onto no square
    # (2,3) leads down and (4,3) up into (3,3): pointing (3,3) up or down would run in a circle.
    _assert_rule(state, 0, c.BuyFork(row=3, col=3, direction="up"), "MEC-FORK-ARROW")
    _assert_rule(state, 0, c.BuyFork(row=3, col=3, direction="down"), "MEC-FORK-ARROW")
    act(state, 0, c.BuyFork(row=3, col=2, direction="down"))


def test_fork_once() -> None:
    state = table()
    act(state, 0, c.BuyFork(row=2, col=3, direction="right"))
    _assert_rule(state, 0, c.SetFork(row=2, col=3, direction="down"), "MEC-FORK-ONCE")  # set when bought
    act(state, 0, c.EndTurn())
    act(state, 1, c.EndTurn())
    _assert_rule(state, 0, c.SetFork(row=2, col=3, direction="right"), "MEC-FORK-ONCE")  # already right
    act(state, 0, c.SetFork(row=2, col=3, direction="down"))
    _assert_rule(state, 0, c.SetFork(row=2, col=3, direction="right"), "MEC-FORK-ONCE")  # twice a turn


def test_every_refusal_rule_has_a_test_here() -> None:
    tested = {
        "MEC-TURN", "MEC-COMMAND", "MEC-SELL", "MEC-SELL-FIRST", "MEC-SHOP", "MEC-MONEY",
        "MEC-INSTALL-PLACE", "MEC-RECYCLE-ROWS", "MEC-BLUEPRINT", "MEC-BLUEPRINT-ONCE", "MEC-TRUCK",
        "MEC-FORK-SQUARE", "MEC-FORK-ARROW", "MEC-FORK-ONCE",
    }  # fmt: skip
    assert tested == set(REFUSAL_RULES)
    names = " ".join(n for n in globals() if n.startswith("test_"))
    for rule in tested - {"MEC-SELL-FIRST", "MEC-BLUEPRINT-ONCE", "MEC-FORK-ONCE"}:
        assert rule.removeprefix("MEC-").split("-")[0].lower() in names
