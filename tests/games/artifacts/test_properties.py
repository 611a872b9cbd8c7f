"""Property tests: random legal games reach the end, keep the invariants, and replay from their events."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import artifacts as c
from games.artifacts import RULES
from games.artifacts.flow import visible
from games.base import Rejected
from games.rng import Rng
from tests.games.gwt import replayed

DATA = RULES.data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), num_players=st.integers(2, 4), end_bias=st.integers(0, 3), data=st.data())
def test_random_legal_games(seed: int, num_players: int, end_bias: int, data: st.DataObject) -> None:
    key = str(seed)
    state = RULES.initial_state(num_players)
    log: list[msgspec.Struct] = list(RULES.setup(num_players, Rng.for_version(key, 0)))
    for ev in log:
        state = RULES.evolve(state, ev)
    turns = [0] * num_players
    while not RULES.is_over(state):
        seat = RULES.to_act(state)[0]
        legal = RULES.legal_actions(state, seat)
        assert legal
        # Sometimes favour ending the turn, so that games of very different shapes are drawn.
        cmd: msgspec.Struct
        if end_bias and isinstance(legal[0], c.EndTurn) and data.draw(st.integers(0, 9), label="end?") < end_bias:
            cmd = legal[0]
        else:
            cmd = legal[data.draw(st.integers(0, len(legal) - 1), label="choice")]
        snapshot = msgspec.to_builtins(state)
        out = RULES.decide(state, seat, cmd, Rng.for_version(key, len(log)))
        assert not isinstance(out, Rejected), out
        assert msgspec.to_builtins(state) == snapshot, "decide mutated the state"
        for ev in out:
            if isinstance(ev, c.TurnEnded):
                turns[ev.seat] += 1
            state = RULES.evolve(state, ev)
            log.append(ev)
            assert all(p.dollars >= 0 and min(p.artifacts) >= 0 for p in state.players)
            assert all(1 <= d <= 6 for d in state.dice)
            assert len(state.dice) <= DATA.table.dice_in_box
        if state.phase != "arrange":
            # The track always shows what the table shows.
            assert [p.reputation for p in state.players] == [visible(DATA, state, s) for s in range(num_players)]
    assert len(set(turns)) == 1, f"unequal turns {turns}"
    assert state.round <= DATA.table.max_rounds
    result = RULES.result(state)
    if state.round < DATA.table.max_rounds:
        assert max(result.scores) >= DATA.table.end_reputation
    assert result.winners and all(result.scores[w] == max(result.scores) for w in result.winners)
    # Cards are conserved: market, decks and tables hold every asset card once (S once per player).
    held = [p.card for pl in state.players for p in pl.cards if not p.card.startswith("S-")]
    shown = [x for m in state.market for x in m if x is not None] + [x for d in state.decks for x in d]
    assert sorted(held + shown) == sorted(x for d in DATA.decks.values() for x in d)
    assert sorted(state.underwater + [u for p in state.players for u in p.underwater]) == sorted(DATA.underwater_ids)

    assert msgspec.to_builtins(replayed(RULES, num_players, log)) == msgspec.to_builtins(state)
