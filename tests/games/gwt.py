"""Given/when/then steps every game's tests share; each game's given.py binds its own rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from contracts.registry import event_type, type_name
from games.base import Rejected, Rules
from games.rng import Rng

E = TypeVar("E", bound=msgspec.Struct)


def fold(rules: Rules[Any], num_players: int, events: Sequence[msgspec.Struct]) -> Any:
    """Given: the state those events make."""
    state = rules.initial_state(num_players)
    for ev in events:
        state = rules.evolve(state, ev)
    return state


def replayed(rules: Rules[Any], num_players: int, events: Sequence[msgspec.Struct]) -> Any:
    """Then: the state a log of these events rebuilds, each event written as the log writes it
    (its registered type name and JSON payload) and read back."""
    wire = []
    for ev in events:
        cls = event_type(type_name(ev))
        assert cls is not None, type_name(ev)
        wire.append(msgspec.json.decode(msgspec.json.encode(ev), type=cls))
    return fold(rules, num_players, wire)


def act(rules: Rules[Any], state: Any, seat: int, cmd: msgspec.Struct, rng: Rng) -> list[msgspec.Struct]:
    """When: decide (it must be accepted) and fold the outcome into `state`; returns the events."""
    out = rules.decide(state, seat, cmd, rng)
    assert not isinstance(out, Rejected), out
    for ev in out:
        rules.evolve(state, ev)
    return out


def refused(rules: Rules[Any], state: Any, seat: int, cmd: msgspec.Struct) -> Rejected:
    """Then: the refusal (the caller checks its rule id)."""
    out = rules.decide(state, seat, cmd, Rng.for_version("t", 0))
    assert isinstance(out, Rejected), out
    return out


def of(events: Sequence[msgspec.Struct], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]
