"""Property tests: random legal games reach the end; bots appear and vanish only through the
events that say so (an improvement, a fabricator, a recycle, a sale, a blueprint, a demolition);
money is never negative; every legal command is accepted; replay equals the live state."""

from __future__ import annotations

from collections import Counter

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import mechanica as c
from games.base import Rejected
from games.mechanica import RULES
from games.mechanica.state import MechanicaState, bot_count
from games.rng import Rng
from tests.games.gwt import replayed


def _bots(state: MechanicaState) -> Counter[str]:
    return Counter(m for p in state.players for holes in p.holes for m in holes if m)


def _expected_change(ev: msgspec.Struct, num_players: int) -> int | None:
    """Bots this event adds (negative: removes); None for events that must not change them."""
    if isinstance(ev, c.GameSetUp):
        return num_players
    if isinstance(ev, c.ImprovementActivated):
        return len(ev.made) - len(ev.consumed)
    if isinstance(ev, c.BotSold):
        return -1
    if isinstance(ev, c.BlueprintCompleted):
        return -len(ev.spots)
    if isinstance(ev, c.BotsMade):
        return len(ev.bots)
    if isinstance(ev, c.ImprovementRecycled):
        return len(ev.placed)
    if isinstance(ev, c.ImprovementInstalled):
        return -len(ev.lost)
    return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), num_players=st.integers(1, 4), data=st.data())
def test_random_legal_games(seed: int, num_players: int, data: st.DataObject) -> None:
    key = str(seed)
    state = RULES.initial_state(num_players)
    log: list[msgspec.Struct] = []
    for ev in RULES.setup(num_players, Rng.for_version(key, 0)):
        state = RULES.evolve(state, ev)
        log.append(ev)
    checked_all = 0
    while not RULES.is_over(state):
        seat = RULES.to_act(state)[0]
        legal = RULES.legal_actions(state, seat)
        assert legal and all(RULES.legal_actions(state, s) == [] for s in range(num_players) if s != seat)
        if checked_all < 3:  # every listed command is accepted (a few full sweeps per game)
            checked_all += 1
            for cmd in legal:
                assert not isinstance(RULES.decide(state, seat, cmd, Rng.for_version(key, len(log))), Rejected)
        cmd = legal[data.draw(st.integers(0, len(legal) - 1), label="choice")]
        snapshot = msgspec.to_builtins(state)
        out = RULES.decide(state, seat, cmd, Rng.for_version(key, len(log)))
        assert not isinstance(out, Rejected), out
        assert msgspec.to_builtins(state) == snapshot, "decide mutated the state"
        for ev in out:
            before = _bots(state)
            state = RULES.evolve(state, ev)
            after = _bots(state)
            change = _expected_change(ev, num_players)
            if change is None:
                assert after == before, f"{type(ev).__name__} changed the bots"
            else:
                assert sum(after.values()) - sum(before.values()) == change, ev
            assert all(p.wallet >= 0 and p.vault >= 0 for p in state.players), ev
            log.append(ev)
    result = RULES.result(state)
    assert result.winners and all(result.scores[w] == max(result.scores) for w in result.winners)
    assert not state.stack and not any(state.shop)
    assert sum(bot_count(p) for p in state.players) == sum(_bots(state).values())

    assert msgspec.to_builtins(replayed(RULES, num_players, log)) == msgspec.to_builtins(state)

    # The public log (stack, Extras and blueprint order withheld) rebuilds the same table.
    public = RULES.initial_state(num_players)
    for ev in log:
        shown = RULES.public_event(ev)
        assert shown is not None
        public = RULES.evolve(public, shown)
    assert public.players == state.players and public.shop == state.shop
    assert [p[0] for p in public.piles] == [p[0] for p in state.piles]
    assert RULES.view(public, None) == RULES.view(state, None)
