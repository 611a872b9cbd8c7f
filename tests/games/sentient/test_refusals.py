"""Given events, when a command, then Rejected with the rule id — one test per refusal rule."""

from __future__ import annotations

import msgspec

from contracts import sentient as c
from games.sentient.rule_ids import REFUSAL_RULES, RULES_TEXT
from games.sentient.state import SentientState
from tests.games.sentient.given import DATA, act, card_where, fold, refused, table_events


def _two_players() -> SentientState:
    return fold(2, table_events(2, order=[0, 1]))


def _assert_rule(out_rule: str, text: str, rule: str) -> None:
    assert out_rule == rule
    assert text == RULES_TEXT[rule]


def test_turn() -> None:
    r = refused(_two_players(), 1, c.Pass())
    _assert_rule(r.rule, r.text, "SEN-TURN")
    assert "seat 0" in r.detail


def test_acquire_without_agents() -> None:
    state = _two_players()
    for _ in range(4):
        for seat in (0, 1):
            free = next(i + 1 for i, cid in enumerate(state.players[seat].network) if cid is None)
            act(state, seat, c.Acquire(factory_slot=1, network_slot=free))
    r = refused(state, 0, c.Acquire(factory_slot=1, network_slot=1))
    _assert_rule(r.rule, r.text, "SEN-ACQUIRE-AGENT")


def test_acquire_factory_slot_out_of_range() -> None:
    for slot in (0, 5):
        r = refused(_two_players(), 0, c.Acquire(factory_slot=slot, network_slot=1))
        _assert_rule(r.rule, r.text, "SEN-ACQUIRE-FACTORY")


def test_acquire_empty_factory_slot() -> None:
    state = _two_players()
    state.factory[2] = None
    r = refused(state, 0, c.Acquire(factory_slot=3, network_slot=1))
    _assert_rule(r.rule, r.text, "SEN-ACQUIRE-FACTORY")


def test_connect_slot_out_of_range() -> None:
    for slot in (0, 5):
        r = refused(_two_players(), 0, c.Acquire(factory_slot=1, network_slot=slot))
        _assert_rule(r.rule, r.text, "SEN-CONNECT-SLOT")


def test_connect_slot_already_used_this_round() -> None:
    state = _two_players()
    act(state, 0, c.Acquire(factory_slot=1, network_slot=2))
    act(state, 1, c.Acquire(factory_slot=1, network_slot=2))
    r = refused(state, 0, c.Acquire(factory_slot=1, network_slot=2))
    _assert_rule(r.rule, r.text, "SEN-CONNECT-SLOT")


def test_assistants_more_than_in_hand() -> None:
    r = refused(_two_players(), 0, c.Acquire(factory_slot=1, network_slot=1, assistants=6))
    _assert_rule(r.rule, r.text, "SEN-ASSISTANTS")


def test_assistants_blocks_count_against_the_five() -> None:
    plus_minus = card_where(left="+", right="-")
    state = fold(2, table_events(2, factory=[plus_minus, *[x for x in DATA.card_ids if x != plus_minus][:3]]))
    cmd = c.Acquire(factory_slot=1, network_slot=1, assistants=4, block_left=True, block_right=True)
    r = refused(state, 0, cmd)
    _assert_rule(r.rule, r.text, "SEN-ASSISTANTS")
    act(state, 0, msgspec.structs.replace(cmd, assistants=3))
    assert state.players[0].assistants == 0


def test_assistants_negative() -> None:
    r = refused(_two_players(), 0, c.Acquire(factory_slot=1, network_slot=1, assistants=-1))
    _assert_rule(r.rule, r.text, "SEN-ASSISTANTS")


def test_block_equal_corner() -> None:
    real = card_where(type="transport", left="-", right="=", kind="equal", vp=5)
    state = fold(2, table_events(2, factory=[real, *[x for x in DATA.card_ids if x != real][:3]]))
    r = refused(state, 0, c.Acquire(factory_slot=1, network_slot=1, block_right=True))
    _assert_rule(r.rule, r.text, "SEN-BLOCK")
    act(state, 0, c.Acquire(factory_slot=1, network_slot=1, block_left=True))


def test_pass_twice_in_a_round() -> None:
    state = _two_players()
    act(state, 0, c.Pass())
    act(state, 1, c.Acquire(factory_slot=1, network_slot=1))
    r = refused(state, 0, c.Pass())
    _assert_rule(r.rule, r.text, "SEN-PASS-ONCE")


def test_every_refusal_rule_has_a_test_here() -> None:
    names = " ".join(n for n in globals() if n.startswith("test_"))
    tested = {
        "SEN-TURN", "SEN-ACQUIRE-AGENT", "SEN-ACQUIRE-FACTORY",
        "SEN-CONNECT-SLOT", "SEN-ASSISTANTS", "SEN-BLOCK", "SEN-PASS-ONCE",
    }  # fmt: skip
    assert tested == set(REFUSAL_RULES)
    assert names
