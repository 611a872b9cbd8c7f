"""A PettingZoo AEC environment per game: `env("sentient", num_players=3, seed=0)`.

Agents are "player_0".."player_<n-1>" (seat i). The agent to act is the game's current player.
Observations: `{"observation": float32 vector (rl.observation), "action_mask": int8 vector}`
over the game's fixed action encoding (rl.actions); the action space is Discrete(encoding size).
Rewards are the game's returns (a win share, rl docs) given once, when the game ends; then every
agent is terminated. An action outside the mask raises ValueError (wrap the env in PettingZoo's
TerminateIllegalWrapper for the usual "illegal move loses" rule).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv

from games.catalog import SPECS
from games.offline import OfflineGame, new_game
from rl.actions import codec_for
from rl.observation import ObservationEncoder

Obs = dict[str, npt.NDArray[Any]]


class DicestreamAEC(AECEnv[str, Obs, int]):  # type: ignore[misc]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "name": "dicestream_v0", "is_parallelizable": False}

    def __init__(self, game: str, num_players: int | None = None, seed: int | None = None) -> None:
        super().__init__()
        spec = SPECS[game]
        self.rules = spec.rules
        n = num_players if num_players is not None else spec.golden_players
        if not self.rules.min_players <= n <= self.rules.max_players:
            raise ValueError(f"{game} takes {self.rules.min_players}..{self.rules.max_players} players, not {n}")
        self.game_name = game
        self.num_players = n
        self.render_mode = None
        self.codec = codec_for(game)
        self.encoder = ObservationEncoder(game, self.rules.max_players)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, shape=(self.encoder.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.codec.size,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(self.codec.size) for a in self.possible_agents}
        self._seed = seed
        self._episode = 0
        self.game: OfflineGame | None = None
        # Legal masks of `_masked`'s positions seen so far, by (version, seat).
        self._masked: OfflineGame | None = None
        self._masks: dict[tuple[int, int], npt.NDArray[np.int8]] = {}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def _game(self) -> OfflineGame:
        assert self.game is not None, "call reset() first"
        return self.game

    def _mask(self, seat: int) -> npt.NDArray[np.int8]:
        """The seat's legal mask, kept for the position: an agent's step asks for the mask its
        observation held (callers get copies, so a caller writing into one changes nothing)."""
        game = self._game()
        key = (game.version, seat)
        if self._masked is game and key in self._masks:
            return self._masks[key]
        if self._masked is not game:
            self._masked, self._masks = game, {}
        mask = np.zeros(self.codec.size, dtype=np.int8)
        if not game.is_terminal():
            mask[self.codec.legal_indices(game.legal_actions(seat))] = 1
        self._masks[key] = mask
        return mask

    def observe(self, agent: str) -> Obs:
        seat = self.possible_agents.index(agent)
        return {"observation": self.encoder.encode(self._game().view(seat)), "action_mask": self._mask(seat).copy()}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed = seed
            self._episode = 0
        base = self._seed if self._seed is not None else 0
        self.game = new_game(self.rules, self.num_players, f"rl:{base}:{self._episode}", record_events=False)
        self._episode += 1
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _select(self) -> None:
        seat = self._game().current_player()
        self.agent_selection = self.possible_agents[seat if seat is not None else 0]

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game()
        seat = self.possible_agents.index(agent)
        assert action is not None
        index = int(action)
        if not 0 <= index < self.codec.size or not self._mask(seat)[index]:
            raise ValueError(f"{self.game_name}: action {index} is not legal for {agent}")
        game.apply(self.codec.decode(index), seat)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if game.is_terminal():
            returns = game.returns()
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = returns[i]
                self.terminations[a] = True
        else:
            self._select()
        self._accumulate_rewards()

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


def env(game: str, num_players: int | None = None, seed: int | None = None) -> DicestreamAEC:
    """The AEC environment of `game` (default player count: the game's golden playthrough's)."""
    return DicestreamAEC(game, num_players=num_players, seed=seed)
