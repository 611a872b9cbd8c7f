"""The OpenSpiel games pass OpenSpiel's own random simulation checks."""

from __future__ import annotations

import pytest

pyspiel = pytest.importorskip("pyspiel")

from rl.actions import GAMES  # noqa: E402
from rl.openspiel_game import load, short_name  # noqa: E402


@pytest.mark.parametrize("game", GAMES)
def test_random_sim_test(game: str) -> None:
    loaded = load(game)
    assert loaded.get_type().short_name == short_name(game)
    pyspiel.random_sim_test(loaded, num_sims=1, serialize=False, verbose=False)


def test_registered_and_player_counts() -> None:
    names = pyspiel.registered_names()
    assert all(short_name(g) in names for g in GAMES)
    state = load("sentient", players=3).new_initial_state()
    assert state.is_chance_node()
    state.apply_action(7)
    assert len(state.legal_actions()) > 0
    assert len(state.observation_tensor(state.current_player())) == load("sentient").observation_tensor_size()
