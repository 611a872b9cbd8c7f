"""Given a reachable state, when any command carries arbitrary field values, then decide answers
with events or a Rejected and never raises (no KeyError, IndexError or TypeError on odd input)."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import mechanica as c
from games.base import Rejected
from games.mechanica import RULES
from games.mechanica.state import MechanicaState
from games.rng import Rng

# Names the engine knows (so that some drawn commands get past the first checks) and a few it does not.
NAMES = ["", "?", "basic", "plus", "deluxe", "golden", "small", "big", "huge", "up", "down", "right", "left"]
INTS = st.one_of(st.integers(-3, 12), st.integers(-(2**70), 2**70))
STRINGS = st.one_of(st.sampled_from(NAMES), st.text(max_size=6))
SCALARS = st.one_of(INTS, STRINGS)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=5), st.lists(st.lists(SCALARS, max_size=2), max_size=2))


@cache
def reachable_states() -> tuple[MechanicaState, ...]:
    """Snapshots of seeded random legal games (1 to 4 players): fresh tables, mid-turn after a
    purchase, later workdays with improvements, trucks, forks and completed blueprints."""
    out: list[MechanicaState] = []
    for num_players in (1, 2, 3, 4):
        rng = random.Random(f"robust-{num_players}")
        state = RULES.initial_state(num_players)
        for ev in RULES.setup(num_players, Rng.for_version(f"robust-{num_players}", 0)):
            state = RULES.evolve(state, ev)
        out.append(RULES.clone(state))
        step = 0
        while not RULES.is_over(state) and step < 400:
            seat = RULES.to_act(state)[0]
            legal = RULES.legal_actions(state, seat)
            # Prefer buying and building over ending the turn, so the factories fill up.
            busy = [a for a in legal if not isinstance(a, c.EndTurn)]
            cmd = rng.choice(busy) if busy and rng.random() < 0.8 else rng.choice(legal)
            events = RULES.decide(state, seat, cmd, Rng.for_version(f"robust-{num_players}", step + 1))
            assert not isinstance(events, Rejected), events
            for ev in events:
                state = RULES.evolve(state, ev)
            step += 1
            if step % 37 == 0 and not RULES.is_over(state):
                out.append(RULES.clone(state))
    return tuple(out)


def _typed(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a field's declared type (what the wire decoder lets through)."""
    if annotation is int:
        return INTS
    if annotation is str:
        return STRINGS
    return st.lists(INTS, max_size=5)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, 10**6),
    cls=st.sampled_from(c.COMMANDS),
    well_typed=st.booleans(),
    data=st.data(),
)
def test_decide_never_raises_on_arbitrary_fields(
    which: int, cls: type[msgspec.Struct], well_typed: bool, data: st.DataObject
) -> None:
    # Given a reachable state and the seat to act
    states = reachable_states()
    state = states[which % len(states)]
    seat = state.current
    assert seat is not None
    snapshot = msgspec.to_builtins(state)
    # When a command carries arbitrary values: of each field's declared type or of any type (the
    # constructor checks no types; the wire decoder would, but decide must not rely on it)
    fields = {
        f.name: data.draw(_typed(f.type) if well_typed else VALUES, label=f.name) for f in msgspec.structs.fields(cls)
    }
    cmd = cls(**fields)
    out = RULES.decide(state, seat, cmd, Rng.for_version("robust", 1))
    # Then decide answers with events or a refusal, leaves the state alone, and accepted events fold
    assert isinstance(out, (list, Rejected)), out
    assert msgspec.to_builtins(state) == snapshot, "decide mutated the state"
    if isinstance(out, list):
        scratch = RULES.clone(state)
        for ev in out:
            scratch = RULES.evolve(scratch, ev)


def test_the_reachable_states_cover_the_game() -> None:
    states = reachable_states()
    assert len(states) >= 8
    assert any(s.bought for s in states)
    assert any(any(p.forks) for s in states for p in s.players)
    assert any(any(t not in ("", "small", "basic_fabricator") for t in p.tiles) for s in states for p in s.players)
    assert any(s.workday > 2 for s in states)
