"""Property tests: random legal games reach the end, stay sane, and replay from their events."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import sentient as c
from games.base import Rejected
from games.rng import Rng
from games.sentient import RULES
from tests.games.gwt import replayed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), num_players=st.integers(2, 4), data=st.data())
def test_random_legal_games(seed: int, num_players: int, data: st.DataObject) -> None:
    key = str(seed)
    state = RULES.initial_state(num_players)
    log: list[msgspec.Struct] = list(RULES.setup(num_players, Rng.for_version(key, 0)))
    for ev in log:
        state = RULES.evolve(state, ev)
    turns = [0] * num_players
    passes_per_round: dict[int, list[int]] = {}
    while not RULES.is_over(state):
        seat = RULES.to_act(state)[0]
        legal = RULES.legal_actions(state, seat)
        assert legal
        cmd = legal[data.draw(st.integers(0, len(legal) - 1), label="choice")]
        snapshot = msgspec.to_builtins(state)
        out = RULES.decide(state, seat, cmd, Rng.for_version(key, len(log)))
        assert not isinstance(out, Rejected), out
        assert msgspec.to_builtins(state) == snapshot, "decide mutated the state"
        turns[seat] += 1
        for ev in out:
            if isinstance(ev, c.PlayerPassed):
                passes_per_round.setdefault(state.round, []).append(ev.seat)
            if isinstance(ev, c.RoundEnded):
                assert all(p.agents == 0 and p.passed for p in state.players)
            if isinstance(ev, c.CardsScored):
                assert len(ev.cards) == 4 and len(ev.points) == 4 and ev.total == sum(ev.points)
            before_vp = [p.vp for p in state.players]
            state = RULES.evolve(state, ev)
            assert all(p.vp >= v for p, v in zip(state.players, before_vp, strict=True))
            assert all(0 <= p.assistants <= 5 and 0 <= p.agents <= 4 for p in state.players)
            assert all(1 <= d <= 6 for p in state.players for d in p.dice)
            log.append(ev)
    assert turns == [15] * num_players
    assert sorted(passes_per_round) == [1, 2, 3]
    assert all(sorted(v) == list(range(num_players)) for v in passes_per_round.values())
    assert all(len(p.collected) == 12 for p in state.players)
    assert len(state.deck) + len(state.discard) + sum(len(p.collected) for p in state.players) == 60
    result = RULES.result(state)
    assert all(s >= 0 for s in result.scores) and result.winners
    assert all(result.scores[w] == max(result.scores) for w in result.winners)

    assert msgspec.to_builtins(replayed(RULES, num_players, log)) == msgspec.to_builtins(state)
