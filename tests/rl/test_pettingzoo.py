"""The PettingZoo AEC environments pass PettingZoo's api_test and play whole games."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

import numpy as np
from gymnasium import spaces
from pettingzoo.test import api_test

from games.catalog import SPECS
from rl.actions import GAMES
from rl.pettingzoo_env import env


@pytest.mark.parametrize("game", GAMES)
def test_api_test(game: str) -> None:
    with warnings.catch_warnings():
        # Dict observations (observation + action_mask) warn, as PettingZoo's classic games do.
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(game, seed=0), num_cycles=20, verbose_progress=False)


@pytest.mark.parametrize("game", GAMES)
def test_random_episodes_end_with_returns(game: str) -> None:
    rules = SPECS[game].rules
    for n in range(rules.min_players, rules.max_players + 1):
        e = env(game, num_players=n, seed=n)
        e.reset(seed=n)
        rng = np.random.default_rng(n)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, _ = e.last()
            totals[agent] += reward
            space = e.observation_space(agent)
            assert isinstance(space, spaces.Dict)
            assert obs["observation"].shape == space["observation"].shape
            if terminated or truncated:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert legal.size > 0
            e.step(int(rng.choice(legal)))
        assert e.agents == []
        assert sum(totals.values()) == pytest.approx(1.0)


def test_illegal_action_is_refused() -> None:
    e = env("sentient", num_players=2, seed=3)
    e.reset()
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.raises(ValueError, match="not legal"):
        e.step(int(np.flatnonzero(mask == 0)[0]))


def test_writing_into_an_observed_mask_changes_nothing() -> None:
    e = env("sentient", num_players=2, seed=4)
    e.reset()
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    mask[:] = 1
    assert e.observe(agent)["action_mask"][illegal] == 0
    with pytest.raises(ValueError, match="not legal"):
        e.step(illegal)
    # A legal step moves the game on: the next seat's mask is its own position's.
    e.step(int(np.flatnonzero(e.observe(agent)["action_mask"])[0]))
    following = e.observe(e.agent_selection)["action_mask"]
    game = e.game
    assert game is not None
    seat = e.possible_agents.index(e.agent_selection)
    assert sorted(np.flatnonzero(following)) == e.codec.legal_indices(game.legal_actions(seat))
