"""Every game answers any well-typed command with events or a refusal: never an exception.

Commands come off the wire, so their fields can hold anything their types allow: negative or huge
numbers, unknown ids, empty strings, long lists. `decide` must refuse them with a rule id (an
exception would leave the command pending until it is dead-lettered, with no answer to the
player). Commands are built from the legal ones of states reached by random play, with one or
more fields replaced, plus commands built from scratch.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.base import Rejected, Rules
from games.bots import RandomBot
from games.catalog import GAMES
from games.rng import Rng

STATES_PER_GAME = 6


@cache
def reachable(name: str) -> list[tuple[Any, int, list[msgspec.Struct]]]:
    """(state, seat to act, its legal commands) at a few points of a seeded random game."""
    rules = GAMES[name]
    players = max(rules.min_players, 2)
    state = rules.initial_state(players)
    version = 0
    for ev in rules.setup(players, Rng.for_version("bad-commands", version)):
        state = rules.evolve(state, ev)
        version += 1
    bot = RandomBot("bad-commands")
    seen: list[tuple[Any, int, list[msgspec.Struct]]] = []
    step = 0
    while not rules.is_over(state) and len(seen) < STATES_PER_GAME:
        seat = rules.to_act(state)[0]
        legal = rules.legal_actions(state, seat)
        if step % 7 == 0:
            seen.append((rules.clone(state), seat, legal))
        cmd = bot.choose({}, legal, seat)
        out = rules.decide(state, seat, cmd, Rng.for_version("bad-commands", version))
        assert not isinstance(out, Rejected), out
        for ev in out:
            state = rules.evolve(state, ev)
            version += 1
        step += 1
    return seen


def _strings(legal: list[msgspec.Struct]) -> list[str]:
    found = {v for cmd in legal for v in msgspec.structs.astuple(cmd) if isinstance(v, str)}
    return [*sorted(found), "", "x", "?" * 300, "None", "-1"]


def _value(tp: Any, strings: list[str]) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_value(t, strings) for t in typing.get_args(tp)))
    if tp is type(None):
        return st.none()
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.one_of(st.integers(-3, 40), st.integers(-(2**63), 2**63 - 1))
    if tp is str:
        return st.one_of(st.sampled_from(strings), st.text(max_size=12))
    if origin is list:
        (item,) = typing.get_args(tp)
        return st.lists(_value(item, strings), max_size=12)
    if origin is dict:
        key, val = typing.get_args(tp)
        return st.dictionaries(_value(key, strings), _value(val, strings), max_size=6)
    raise AssertionError(f"no strategy for field type {tp!r}")


@st.composite
def bad_command(draw: st.DrawFn, rules: Rules[Any], legal: list[msgspec.Struct]) -> msgspec.Struct:
    strings = _strings(legal)
    cls = draw(st.sampled_from(list(rules.command_types)))
    base = [c for c in legal if type(c) is cls]
    hints = typing.get_type_hints(cls)
    fields = msgspec.structs.fields(cls)
    values = {}
    for f in fields:
        keep = bool(base) and draw(st.booleans())
        values[f.name] = getattr(base[0], f.name) if keep else draw(_value(hints[f.name], strings))
    return cls(**values)


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decide_refuses_bad_commands_instead_of_raising(name: str, data: st.DataObject) -> None:
    rules = GAMES[name]
    state, seat, legal = data.draw(st.sampled_from(reachable(name)))
    cmd = data.draw(bad_command(rules, legal))
    acting = data.draw(st.sampled_from([seat, seat, -1, 0, 1, 99]))
    out = rules.decide(state, acting, cmd, Rng.for_version("bad-commands", 1))
    assert isinstance(out, (list, Rejected))
    if isinstance(out, Rejected):
        assert out.rule and out.text
