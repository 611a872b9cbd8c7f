"""Component data checks, rule texts built from the data, and the generated blocks of the rules doc."""

from __future__ import annotations

import tomllib
from typing import Any

import msgspec
import pytest

from contracts import artifacts as c
from games.artifacts import ArtifactsRules, cardtable
from games.artifacts.components import DATA_FILE, KINDS, parse
from games.artifacts.rule_ids import RULES_TEXT, placeholders, rule_text
from games.artifacts.state import ArtifactsState
from games.base import Rejected
from games.kit import DataError
from games.rng import Rng
from tests.games.artifacts.given import DATA, START, table_events


def _raw() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def _asset(raw: dict[str, Any], card: str) -> dict[str, Any]:
    return next(a for a in raw["assets"] if a["id"] == card)


def _index(raw: dict[str, Any], card: str) -> int:
    return next(i for i, a in enumerate(raw["assets"]) if a["id"] == card)


def _state(rules: ArtifactsRules, num_players: int = 3, **kw: Any) -> ArtifactsState:
    state = rules.initial_state(num_players)
    for ev in table_events(num_players, **kw):
        state = rules.evolve(state, ev)
    return state


def _decide(rules: ArtifactsRules, state: ArtifactsState, cmd: msgspec.Struct) -> list[msgspec.Struct] | Rejected:
    return rules.decide(state, 0, cmd, Rng.for_version("data", 0))


# ---- a cube's kind is the card it sits on ------------------------------------------------------


def test_every_artifact_card_is_an_expedition_giving_one_kind_on_both_sides() -> None:
    kinds = {
        x.id: {a.kind for face in (x.lv1, x.lv2) for a in face.actions if a.effect.startswith("artifact")}
        for x in DATA.assets.values()
    }
    producers = {card: k for card, k in kinds.items() if k}
    for card, k in producers.items():
        assert len(k) == 1 and DATA.assets[card].category == "expedition", card
    assert {next(iter(k)) for k in producers.values()} == set(KINDS)
    # Scrolls come from desert expeditions only (ART-R7).
    scrolls = [card for card, k in producers.items() if k == {"scroll"}]
    assert "S-desert" in scrolls and all("Desert" in DATA.assets[x].lv1.name for x in scrolls)


def test_loader_refuses_a_card_giving_two_kinds() -> None:
    raw = _raw()
    i = _index(raw, "C-07")
    _asset(raw, "C-07")["lv2"]["actions"][1]["kind"] = "fossil"
    with pytest.raises(DataError, match=rf"artifacts\.toml: assets\[{i}\] \(id 'C-07'\)\.lv2\.actions\[1\]\.kind"):
        parse(raw)


def test_loader_refuses_a_level_2_side_changing_the_kind() -> None:
    raw = _raw()
    for action in _asset(raw, "A-01")["lv2"]["actions"]:
        action["kind"] = "statue"  # Level 1 gives gems
    with pytest.raises(DataError, match=r"id 'A-01'\)\.lv2\.actions\[0\]\.kind: 'statue' differs from 'gem'"):
        parse(raw)


def test_loader_refuses_artifacts_from_a_card_that_is_not_an_expedition() -> None:
    raw = _raw()
    i = _index(raw, "B-08")
    _asset(raw, "B-08")["category"] = "facility"
    with pytest.raises(DataError, match=rf"artifacts\.toml: assets\[{i}\] \(id 'B-08'\)\.category: 'facility'"):
        parse(raw)


# ---- public cards and Private Collectors -------------------------------------------------------


def _public(raw: dict[str, Any], card: str) -> dict[str, Any]:
    return next(p for p in raw["public"] if p["id"] == card)


@pytest.mark.parametrize(
    "action",
    [
        {"die": "any", "effect": "dollars_adjacent", "amount": 1, "per": 1, "category": "business"},
        {"die": "any", "effect": "artifact_adjacent", "kind": "fossil", "amount": 1, "per": 1, "category": "any"},
        {"die": "any", "effect": "artifact", "kind": "fossil", "amount": 1},
        {"die": "any", "effect": "museum", "kind": "fossil"},
    ],
)
def test_loader_refuses_card_only_effects_on_public_cards(action: dict[str, Any]) -> None:
    raw = _raw()
    i = next(j for j, p in enumerate(raw["public"]) if p["id"] == "guide")
    raw["public"][i]["actions"] = [action]
    with pytest.raises(DataError, match=rf"artifacts\.toml: public\[{i}\]\.actions\[0\]\.effect"):
        parse(raw)


def test_loader_requires_exactly_one_collectors_action() -> None:
    raw = _raw()
    _public(raw, "collectors")["actions"][0]["effect"] = "dollars"
    with pytest.raises(DataError, match=r"artifacts\.toml: public\.actions\.effect: .*exactly one .*found none"):
        parse(raw)
    raw = _raw()
    card = _public(raw, "collectors")
    card["actions"].append(dict(card["actions"][0]))  # two on one card
    with pytest.raises(DataError, match=r"public\.actions\.effect: .*collectors action 1, collectors action 2"):
        parse(raw)
    raw = _raw()
    _public(raw, "guide")["actions"] = [dict(_public(raw, "collectors")["actions"][0])]  # on two cards
    with pytest.raises(DataError, match=r"public\.actions\.effect: .*collectors action 1, guide action 1"):
        parse(raw)


def test_collectors_use_the_slot_of_their_action() -> None:
    raw = _raw()
    card = _public(raw, "collectors")
    card["actions"] = [{"die": "6", "effect": "dollars", "amount": 5}, card["actions"][0]]
    rules = ArtifactsRules(parse(raw))
    assert rules.data.collectors == ("collectors", 2)
    state = _state(rules, dice=[3, 6])
    rules.evolve(state, c.ArtifactsFound(seat=0, kind="fossil", count=2))
    legal = rules.legal_actions(state, 0)
    assert c.SellToCollectors(die=3, fossil=2) in legal and c.UseAction(die=6, card="collectors", action=1) in legal
    out = _decide(rules, state, c.SellToCollectors(die=3, fossil=2))
    assert not isinstance(out, Rejected), out
    assert out[0] == c.DicePlaced(seat=0, dice=[3], card="collectors", action=2)
    assert out[1] == c.CollectorsPaid(seat=0, sold=[2, 0, 0, 0], dollars=2)
    for ev in out:
        rules.evolve(state, ev)
    assert state.used == ["collectors#2"]
    # The other slot of the card is still free; the collectors slot is not.
    refused = _decide(rules, state, c.SellToCollectors(die=6, fossil=0, scroll=0))
    assert isinstance(refused, Rejected) and refused.rule == "ART-SLOT"


# ---- rule texts name data values through placeholders --------------------------------------------


def test_rule_texts_hard_code_no_data_value() -> None:
    values = placeholders(DATA)
    for rule, text in RULES_TEXT.items():
        filled = rule_text(rule, DATA)
        assert "{" not in filled, rule
        for hard in ("2, 3, 3, 4", "7 dice", "round 60", "20 reputation", "6-box", "9-box"):
            assert hard not in text, (rule, hard)
    assert "Starting dollars by position in turn order: 2, 3, 3, 4." in rule_text("ART-FIRST", DATA)
    assert "at most the 7 dice in the box" in rule_text("ART-ROLL", DATA)
    assert "reaches 20 reputation" in rule_text("ART-END", DATA)
    assert "after round 60" in rule_text("ART-ROUND-CAP", DATA)
    assert "6-box side with 2 players and their 9-box side" in rule_text("ART-SETUP", DATA)
    assert values["market"] == "A 4, B 4, C 4, D 1, E 1"


def test_refusal_texts_follow_the_data_in_use() -> None:
    raw = _raw()
    _public(raw, "collectors")["actions"][0].update(amount=2, per=3)
    _asset(raw, "S-hq")["lv1"]["name"] = "Field Office"
    rules = ArtifactsRules(parse(raw))
    state = _state(rules, dice=[3])
    refused = _decide(rules, state, c.SellToCollectors(die=3))
    assert isinstance(refused, Rejected) and refused.rule == "ART-COLLECTORS"
    assert "2 dollar(s) per artifact plus 3 dollar(s) per kind" in refused.text
    arranging = rules.initial_state(3)
    for ev in table_events(3):
        if isinstance(ev, (c.StartArranged, c.TurnStarted)):
            break
        arranging = rules.evolve(arranging, ev)
    refused = rules.decide(arranging, 0, c.ArrangeStart(cards=START[:3]), Rng.for_version("data", 0))
    assert isinstance(refused, Rejected) and refused.rule == "ART-ARRANGE"
    assert "(Desert Expedition, Canyon Expedition, Field Office, Adventurers)" in refused.text


# ---- the generated blocks of the rules doc -------------------------------------------------------


def test_the_doc_tables_match_the_data() -> None:
    """Regenerate with `python -m games.artifacts.cardtable` after editing the data."""
    text = cardtable.DOC.read_text(encoding="utf-8")
    assert cardtable.apply(text, cardtable.blocks(DATA)) == text
    assert "| C-07 | C | expedition | 7 |" in text
    for name in placeholders(DATA):
        if any("{" + name + "}" in t for t in RULES_TEXT.values()):
            assert f"| `{{{name}}}` |" in text, name
