"""Oracles from the rulebook's worked examples, scoring helpers, component data and the rules doc."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from contracts import artifacts as c
from games.artifacts.components import DATA_FILE, faces_meeting, load, parse
from games.artifacts.rule_ids import RULES_TEXT
from games.artifacts.scoring import collectors_sale, museum_sale, museum_winner, rank
from games.kit import DataError
from tests.games.artifacts.given import DATA, act, give, of, roll, table

KIND = {"fossil": 0, "scroll": 1, "gem": 2, "statue": 3}


def test_tom_sells_two_gems_to_the_gem_museum_for_5() -> None:
    # Rulebook: "Tom has 2 gems. He places a 5 on the Gem Museum. He could sell only 1 gem for a
    # '1' order, but fills a '2' order with both. He discards the two cubes of his Mountain
    # Expedition, earns 1 dollar per cube plus the museum's 3-dollar bonus: 5 dollars in all."
    state = table(dice=[5, 1, 1])
    give(state, 0, gem=2)
    before = state.players[0].dollars
    orders = DATA.museums["museum-gem"].boxes_3p
    box = orders.index(2) + 1
    events = act(state, 0, c.SellToMuseum(die=5, museum="museum-gem", box=box))
    sale = of(events, c.MuseumOrderFilled)[0]
    assert isinstance(sale, c.MuseumOrderFilled)
    assert (sale.count, sale.dollars) == (2, 5)
    assert state.players[0].dollars == before + 5
    assert state.players[0].artifacts[KIND["gem"]] == 0
    assert state.boxes[state.museum_ids.index("museum-gem")][box - 1] == 0
    assert museum_sale(2, DATA.museums["museum-gem"].bonus) == 5
    assert museum_sale(1, DATA.museums["museum-gem"].bonus) == 4  # "he could sell only 1"


def test_private_collectors_pay_6_for_a_fossil_a_scroll_and_two_statues() -> None:
    # Rulebook: "Tom sells 1 fossil, 1 scroll and 2 statues to the Private Collectors. He earns
    # 4 dollars (1 per cube) plus 2 dollars for the 2 extra kinds."
    assert collectors_sale([1, 1, 0, 2]) == 6
    state = table(dice=[2, 1, 1])
    give(state, 0, fossil=1, scroll=1, statue=2)
    before = state.players[0].dollars
    events = act(state, 0, c.SellToCollectors(die=2, fossil=1, scroll=1, statue=2))
    paid = of(events, c.CollectorsPaid)[0]
    assert isinstance(paid, c.CollectorsPaid) and paid.dollars == 6 and paid.sold == [1, 1, 0, 2]
    assert state.players[0].dollars == before + 6
    assert state.players[0].artifacts == [0, 0, 0, 0]


def test_museum_tie_goes_to_the_cube_in_the_later_box() -> None:
    # Rulebook: "Tom and Wendy each have 1 cube on the Fossil Museum. Wendy's is in the first '1'
    # box, top left; Tom's in the second '1' box, to its right. Tom wins the tie and gains 3
    # bonus reputation."
    tom, wendy = 0, 1
    assert museum_winner([wendy, tom, None, None, None, None, None, None, None], 3) == (tom, [1, 1, 0])
    assert museum_winner([tom, wendy, None, None, None, None, None, None, None], 3) == (wendy, [1, 1, 0])
    assert museum_winner([None] * 9, 3) == (None, [0, 0, 0])
    assert museum_winner([tom, tom, wendy, None, None, None, None, None, wendy], 2) == (wendy, [2, 2])
    assert museum_winner([tom, tom, wendy], 2) == (tom, [2, 1])


def test_museum_tie_break_through_the_end_of_the_game() -> None:
    tom, wendy = 0, 1
    state = table(3, dice=[3])
    give(state, tom, fossil=1)
    give(state, wendy, fossil=1)
    roll(state, wendy, [3])
    act(state, wendy, c.SellToMuseum(die=3, museum="museum-fossil", box=1))
    roll(state, tom, [3])
    act(state, tom, c.SellToMuseum(die=3, museum="museum-fossil", box=2))
    state.triggered = True  # someone reached 20 earlier this round
    roll(state, 2, [6])
    events = act(state, 2, c.EndTurn())
    majorities = [e for e in events if isinstance(e, c.MuseumMajority)]
    fossil = next(e for e in majorities if e.museum == "museum-fossil")
    assert isinstance(fossil, c.MuseumMajority)
    assert (fossil.seat, fossil.reputation, fossil.cubes) == (tom, 3, [1, 1, 0])
    assert DATA.museums["museum-fossil"].majority == 3
    assert state.players[tom].reputation == 3 and state.players[wendy].reputation == 0
    assert state.over and state.winners == [tom]


def test_upgrading_the_dive_suite_gives_1_reputation_in_total_not_3() -> None:
    # Rulebook: "If a player upgraded the Dive Suite, they would gain 1 reputation in total (not 3)."
    suite = next(a for a in DATA.assets.values() if a.lv1.name == "Dive Suite")
    state = table(dice=[3, 4, 5], market={suite.deck: [suite.id]})
    give(state, 0, dollars=2 * suite.cost)
    act(state, 0, c.Buy(die=3, card="S-hq", action=1, market=suite.id, row=2, col=1))
    assert state.players[0].reputation == suite.lv1.reputation == 2
    roll(state, 0, [4])
    events = act(state, 0, c.Upgrade(die=4, card="S-hq", action=1, target=suite.id))
    marks = [e for e in events if isinstance(e, c.ReputationMarked)]
    assert [m.reputation for m in marks] == [3]
    assert suite.lv2.reputation == 3


def _rich_with_finds(state: Any, seat: int, finds: int) -> None:
    """Given: plenty of dollars and scrolls, and `finds` underwater cards taken in earlier turns."""
    give(state, seat, dollars=100, scroll=5)
    taken = list(DATA.underwater_ids[:finds])
    state.players[seat].underwater = taken
    state.underwater = [u for u in state.underwater if u not in taken]


def _buy_e(state: Any, seat: int, card: str, col: int) -> list[Any]:
    state.market[4] = [card]  # given: `card` is the face-up top of stack E
    roll(state, seat, [3])
    return act(state, seat, c.Buy(die=3, card="S-hq", action=1, market=card, row=2, col=col))


def test_the_game_ends_at_once_when_the_last_player_reaches_20() -> None:
    # Rulebook: "Tom was last in turn order. He reaches 20 on his turn; being last, the game ends
    # (nobody has more turns)."
    tom = 0
    state = table(2, order=[1, 0], dice=[3])
    _rich_with_finds(state, tom, 4)
    _buy_e(state, tom, "E-03", 1)  # 6 reputation
    _buy_e(state, tom, "E-05", 2)  # 5
    assert state.players[tom].reputation == 6 + 5 + 4 and not state.triggered
    events = _buy_e(state, tom, "E-02", 3)  # 5: 20 in all
    assert [e.reputation for e in events if isinstance(e, c.EndTriggered)] == [20]
    assert not [e for e in events if isinstance(e, c.TurnStarted)]
    assert state.over and state.winners == [tom]


def test_the_round_is_finished_when_the_first_player_triggers_the_end() -> None:
    state = table(3, dice=[3])
    _rich_with_finds(state, 0, 5)
    for i, card in enumerate(["E-03", "E-05", "E-02"]):
        events = _buy_e(state, 0, card, 1 + i)
    assert state.triggered and not state.over
    assert [e.seat for e in events if isinstance(e, c.TurnStarted)] == [1]
    act(state, 1, c.EndTurn())
    assert not state.over
    act(state, 2, c.EndTurn())
    assert state.over and state.winners == [0]


def test_ties_on_reputation_go_to_money_then_share() -> None:
    assert rank([20, 20, 12], [3, 5, 40]) == [1]
    assert rank([20, 20, 12], [5, 5, 40]) == [0, 1]
    assert rank([21, 20], [0, 99]) == [0]


@pytest.mark.parametrize(
    ("need", "faces"),
    [("any", {1, 2, 3, 4, 5, 6}), ("odd", {1, 3, 5}), ("even", {2, 4, 6}), ("1", {1}), ("4+", {4, 5, 6}),
     ("2-", {1, 2}), ("!2", {1, 3, 4, 5, 6})],
)  # fmt: skip
def test_die_requirements(need: str, faces: set[int]) -> None:
    assert faces_meeting(need) == faces


def test_known_component_facts() -> None:
    a = DATA.assets
    assert a["S-canyon"].lv1.actions[0].die == "!2" and a["S-canyon"].lv1.actions[0].kind == "fossil"
    assert a["S-desert"].lv1.actions[0].die == "4+" and a["S-desert"].lv1.actions[0].kind == "scroll"
    assert a["S-adventurers"].lv1.adventurers == 3
    assert {a[x].lv1.name for x in DATA.starting_ids} == {
        "Desert Expedition", "Canyon Expedition", "Headquarters", "Adventurers",
    }  # fmt: skip
    assert any(x.lv1.name == "Mountain Expedition" and x.lv1.actions[0].kind == "gem" for x in a.values())
    assert all(len(m.boxes_3p) == 9 and len(m.boxes_2p) == 6 for m in DATA.museums.values())
    assert DATA.museums["museum-fossil"].boxes_3p[:2] == [1, 1]
    assert DATA.museums["museum-gem"].bonus == 3
    assert DATA.underwater[DATA.underwater_ids[0]].number == 2
    assert {u.find for u in DATA.underwater.values()} == {"pottery", "doubloons", "sunken_city"}
    assert DATA.table.starting_money == [2, 3, 3, 4] and DATA.table.end_reputation == 20
    total = 6 + len(DATA.underwater) + sum(len(d) for d in DATA.decks.values()) + 4 * len(DATA.starting_ids)
    assert total == 72


def _raw() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def test_loader_names_file_and_field_on_bad_data(tmp_path: Path) -> None:
    raw = _raw()
    raw["assets"][0]["lv1"]["actions"][0]["die"] = "7+"
    with pytest.raises(DataError, match=r"assets\[0\].*die"):
        parse(raw)
    raw = _raw()
    raw["assets"][0]["category"] = "spaceship"
    with pytest.raises(DataError, match="category"):
        parse(raw)
    raw = _raw()
    del raw["assets"][5]
    with pytest.raises(DataError, match="72"):
        parse(raw)
    raw = _raw()
    raw["underwater"][0]["find"] = "treasure"
    with pytest.raises(DataError, match="find"):
        parse(raw)
    raw = _raw()
    raw["table"]["bogus"] = 1
    with pytest.raises(DataError, match="bogus"):
        parse(raw)
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    with pytest.raises(DataError, match=r"bad\.toml"):
        load(bad)


def test_rules_doc_quotes_every_rule_verbatim() -> None:
    doc = " ".join((Path(__file__).parents[3] / "docs" / "rules" / "artifacts.md").read_text().split())
    for rule, text in RULES_TEXT.items():
        assert f"**{rule}** — {' '.join(text.split())}" in doc, rule
    assert "reconstructed" in doc
