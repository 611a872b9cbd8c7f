"""OpenSpiel Python games, one per title: "python_dicestream_<game>" (e.g. python_dicestream_sentient).

`import rl.openspiel_game` registers them; then `pyspiel.load_game("python_dicestream_sentient",
{"players": 3})`. Actions are the fixed encoding of rl.actions; observation tensors the vectors
of rl.observation (a seat's own view; no information-state tensor is provided).

Chance. The rules draw every random outcome from the game's seed (docs/fairness.md), so the one
chance event is the seed itself: the initial state is a chance node with NUM_SEEDS equally likely
outcomes, outcome k playing seed "openspiel:<k>" (EXPLICIT_STOCHASTIC). After it the game is
deterministic, with hidden information (decks, other seats' secrets): IMPERFECT_INFORMATION.
Returns are the offline API's win shares: CONSTANT_SUM, summing to 1.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pyspiel

from games.catalog import SPECS
from games.offline import OfflineGame, new_game
from rl.actions import GAMES, ActionCodec, codec_for
from rl.observation import ObservationEncoder

NUM_SEEDS = 1024
# A bound on a game's length in moves (OpenSpiel requires one; none of these games comes close).
MAX_GAME_LENGTH = 5000


@cache
def _encoder(game: str) -> ObservationEncoder:
    return ObservationEncoder(game, SPECS[game].rules.max_players)


def short_name(game: str) -> str:
    return f"python_dicestream_{game}"


def _game_type(game: str) -> Any:
    spec = SPECS[game]
    return pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"dicestream {spec.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.rules.max_players,
        min_num_players=spec.rules.min_players,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": spec.golden_players},
    )


class DicestreamGame(pyspiel.Game):  # type: ignore[misc]
    name: str = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = SPECS[self.name]
        n = int((params or {}).get("players", spec.golden_players))
        codec = codec_for(self.name)
        info = pyspiel.GameInfo(
            num_distinct_actions=codec.size,
            max_chance_outcomes=NUM_SEEDS,
            num_players=n,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_game_type(self.name), info, {"players": n})

    # No instance attributes: C++ may hand the game back through a fresh Python wrapper (the
    # one a state was built from is not kept alive), so everything derives from the class and
    # the game's parameters.
    @property
    def num_seats(self) -> int:
        return int(self.get_parameters()["players"])

    @property
    def codec(self) -> ActionCodec:
        return codec_for(self.name)

    @property
    def encoder(self) -> ObservationEncoder:
        return _encoder(self.name)

    def new_initial_state(self) -> DicestreamState:
        return DicestreamState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ViewObserver:
        return ViewObserver(self)


class DicestreamState(pyspiel.State):  # type: ignore[misc]
    def __init__(self, game: DicestreamGame) -> None:
        super().__init__(game)
        self._g = game
        self.offline: OfflineGame | None = None

    def _play(self) -> OfflineGame:
        assert self.offline is not None
        return self.offline

    def current_player(self) -> int:
        if self.offline is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.offline.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        seat = self.offline.current_player()
        assert seat is not None
        return seat

    def _legal_actions(self, player: int) -> list[int]:
        return self._g.codec.legal_indices(self._play().legal_actions(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(k, 1.0 / NUM_SEEDS) for k in range(NUM_SEEDS)]

    def _apply_action(self, action: int) -> None:
        if self.offline is None:
            rules = SPECS[self._g.name].rules
            self.offline = new_game(rules, self._g.num_seats, f"openspiel:{action}", record_events=False)
            return
        self.offline.apply(self._g.codec.decode(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed openspiel:{action}"
        return repr(self._g.codec.decode(action))

    def is_terminal(self) -> bool:
        return self.offline is not None and self.offline.is_terminal()

    def returns(self) -> list[float]:
        if self.offline is None:
            return [0.0] * self._g.num_seats
        return self.offline.returns()

    def __str__(self) -> str:
        if self.offline is None:
            return "chance: the seed"
        return f"version {self.offline.version}, to act {self.offline.to_act()}"

    def __deepcopy__(self, memo: dict[int, Any]) -> DicestreamState:
        copy = DicestreamState(self._g)
        copy.offline = None if self.offline is None else self.offline.clone(keep_events=False)
        return copy


class ViewObserver:
    """Observation tensor and string of one seat: its view (rl.observation); the string is the
    view's JSON."""

    def __init__(self, game: DicestreamGame) -> None:
        self._g = game
        self.tensor = np.zeros(game.encoder.size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: DicestreamState, player: int) -> None:
        if state.offline is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self._g.encoder.encode(state.offline.view(player))

    def string_from(self, state: DicestreamState, player: int) -> str:
        if state.offline is None:
            return "chance: the seed"
        import msgspec

        return msgspec.json.encode(state.offline.view(player)).decode()


def _register() -> dict[str, type[DicestreamGame]]:
    out: dict[str, type[DicestreamGame]] = {}
    for game in GAMES:
        cls = type(f"Dicestream_{game}", (DicestreamGame,), {"name": game})
        pyspiel.register_game(_game_type(game), cls)
        out[game] = cls
    return out


GAME_CLASSES = _register()


def load(game: str, players: int | None = None) -> Any:
    """`pyspiel.load_game` of the title (default player count: the golden playthrough's)."""
    params = {} if players is None else {"players": players}
    return pyspiel.load_game(short_name(game), params)
