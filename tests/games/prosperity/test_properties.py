"""Property tests: random legal games reach the end, stay sane, and replay from their events."""

from __future__ import annotations

import random

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import prosperity as c
from games.base import Rejected
from games.prosperity import RULES
from games.prosperity.components import START_DISCS
from games.prosperity.state import ProsperityState
from games.rng import Rng
from tests.games.gwt import replayed

DATA = RULES.data
SPACE_IDS = sorted({s.id for b in DATA.boards.values() for s in b.spaces})


def _candidates(state: ProsperityState) -> list[msgspec.Struct]:
    """A superset of what a seat could send now: every command shape over every id in play."""
    out: list[msgspec.Struct] = [c.Income(), c.CleanUp(), c.Research(track="energy"), c.Research(track="ecology")]
    out += [c.SettleEnergy(discs=k) for k in range(-1, 12)] + [c.SplitResearch(energy=k) for k in range(-1, 12)]
    out += [c.ChooseBoard(side=s) for s in (*DATA.board_ids, "gold")]
    for tile in [*state.research_board, *state.deck[:2]]:
        out += [c.BuyTile(tile=tile, space=s) for s in (*SPACE_IDS, None)]
    return out


def _disc_delta(ev: msgspec.Struct) -> tuple[int, int] | None:
    if isinstance(ev, c.Counted):
        return ev.seat, ev.discs
    if isinstance(ev, c.CleanedUp):
        return ev.seat, -1
    if isinstance(ev, c.SpecialApplied):
        return ev.seat, -ev.discs_removed
    return None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), num_players=st.integers(2, 4), choices=st.integers(0, 2**32))
def test_random_legal_games(seed: int, num_players: int, choices: int) -> None:
    # Choices come from a seeded stdlib RNG (one draw per game keeps hypothesis overhead low).
    pick = random.Random(choices)
    key = str(seed)
    state = RULES.initial_state(num_players)
    log: list[msgspec.Struct] = list(RULES.setup(num_players, Rng.for_version(key, 0)))
    for ev in log:
        state = RULES.evolve(state, ev)
    ledger = [START_DISCS] * num_players
    exact_checks = 0
    while not RULES.is_over(state):
        waiting = RULES.to_act(state)
        assert waiting
        seat = pick.choice(waiting)
        legal = RULES.legal_actions(state, seat)
        assert legal
        assert all(RULES.legal_actions(state, s) == [] for s in range(num_players) if s not in waiting)
        if exact_checks < 3 and pick.random() < 0.03:
            # legal_actions is exact: every candidate is accepted iff it is listed.
            exact_checks += 1
            for cand in _candidates(state):
                accepted = not isinstance(RULES.decide(state, seat, cand, Rng.for_version(key, len(log))), Rejected)
                assert accepted == (cand in legal), cand
        cmd = pick.choice(legal)
        snapshot = msgspec.to_builtins(state)
        out = RULES.decide(state, seat, cmd, Rng.for_version(key, len(log)))
        assert not isinstance(out, Rejected), out
        assert msgspec.to_builtins(state) == snapshot, "decide mutated the state"
        for ev in out:
            delta = _disc_delta(ev)
            if delta is not None:
                ledger[delta[0]] += delta[1]
            state = RULES.evolve(state, ev)
            log.append(ev)
            assert all(p.money >= 0 for p in state.players), ev
            assert all(p.discs >= 0 for p in state.players), ev
            assert [p.discs for p in state.players] == ledger, ev
            assert all(1 <= r <= DATA.research_top for p in state.players for r in p.research)
    assert RULES.to_act(state) == []
    assert sum(isinstance(e, c.TileDrawn) for e in log) == 36
    assert sorted(state.drawn) == sorted(t for _, ids in DATA.decade_tiles for t in ids)
    # Every tile is somewhere: research board, a player's board, or discarded after its effect.
    placed = [t for p in state.players for stack in p.stacks for t in stack]
    specials = [e.tile for e in log if isinstance(e, c.SpecialApplied)]
    assert sorted(state.research_board + placed + specials) == sorted(DATA.tiles)
    result = RULES.result(state)
    assert result.winners and all(s >= 0 for s in result.scores)
    assert all(result.scores[w] == max(result.scores) for w in result.winners)
    assert all(0 <= m < 300 for m in state.final_money)

    assert msgspec.to_builtins(replayed(RULES, num_players, log)) == msgspec.to_builtins(state)
    # The public log (deck order withheld) rebuilds the same table.
    public = RULES.initial_state(num_players)
    for ev in log:
        shown = RULES.public_event(ev)
        assert shown is not None
        public = RULES.evolve(public, shown)
    assert RULES.view(public, None) == RULES.view(state, None)
