"""What every game's native greedy playout (GameSpec.greedy_playout, built by games.spec.greedy_playout)
shares: it serves only the game's own rules class over its own data with the greedy bot over that
data, it steps aside once the rules' data is replaced, and a search game is the same game with it
as without it. Each game's own tests (tests/games/<game>/test_playout.py) compare the rollouts."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from contracts.lifecycle import Resign
from games.bots import RandomBot
from games.catalog import SPECS
from games.mcts import MCTSBot, searcher
from games.offline import OfflineGame, new_game
from games.play import play_game
from games.spec import GameSpec, Playout
from tests.games.compiled import why_not_built

PLAYOUTS = sorted(name for name, spec in SPECS.items() if spec.greedy_playout is not None)
# Iterations a move of the search games compared both ways: as many as the Python half affords.
ITERATIONS = {"prosperity": 20, "artifacts": 10}


def _spec(name: str) -> GameSpec:
    reason = why_not_built(f"games.{name}.playout")
    if reason is not None:
        pytest.skip(reason)
    return SPECS[name]


def _taken(play: Playout, game: OfflineGame) -> OfflineGame:
    """`game` played on by its first legal commands (set-up) to the first position `play` takes."""
    for _ in range(50):
        if play(game) is not None:
            return game
        seat = game.current_player()
        assert seat is not None
        game.apply(game.legal_actions(seat)[0], seat)
    raise AssertionError("the playout took no position of the set-up's first 50 commands")


def test_the_games_with_a_playout() -> None:
    assert PLAYOUTS == ["artifacts", "prosperity"]


@pytest.mark.parametrize("name", PLAYOUTS)
def test_only_the_games_own_rules_and_greedy_bot_get_a_playout(name: str) -> None:
    spec = _spec(name)
    assert spec.greedy_playout is not None and spec.with_data is not None
    rules: Any = spec.rules
    rules_type = type(rules)

    class Variant(rules_type):  # type: ignore[misc,valid-type]
        def legal_actions(self, state: Any, seat: int) -> list[msgspec.Struct]:
            return list(super().legal_actions(state, seat)[:1])

    greedy = spec.greedy()
    assert spec.greedy_playout(Variant(rules.data), greedy) is None
    patched = rules_type(rules.data)
    patched.legal_actions = Variant(rules.data).legal_actions
    assert spec.greedy_playout(patched, greedy) is None
    # Only the greedy bot over the rules' own data: another bot, or the greedy bot over other data.
    assert spec.greedy_playout(rules, RandomBot(0)) is None
    earlier = spec.with_data(spec.package_dir / next(iter(spec.earlier_data.values())))
    other = spec.bots_for(earlier)
    assert other is not None
    assert spec.greedy_playout(rules, other.greedy()) is None
    assert spec.greedy_playout(rules_type(rules.data), greedy) is not None
    # The search takes a playout only with the rollout it plays: its greedy bot over every command.
    with pytest.raises(ValueError, match="rollout_sample=None"):
        MCTSBot(rules, rollout_policy=greedy, playout=spec.greedy_playout(rules, greedy))
    with pytest.raises(ValueError, match="rollout_policy"):
        MCTSBot(rules, rollout_sample=None, playout=spec.greedy_playout(rules, greedy))


@pytest.mark.parametrize("name", PLAYOUTS)
def test_the_playout_steps_aside_once_the_rules_data_is_replaced(name: str) -> None:
    """The search's bot still values with the data it was given, which the rules no longer play."""
    spec = _spec(name)
    assert spec.greedy_playout is not None
    rules: Any = spec.rules
    swapped = type(rules)(rules.data)
    play = spec.greedy_playout(swapped, spec.greedy())
    assert play is not None
    game = _taken(play, new_game(swapped, 2, f"playout-swapped-{name}", record_events=False))
    swapped.data = msgspec.structs.replace(rules.data, data_version="playout-swapped")
    assert play(game) is None


@pytest.mark.parametrize("name", PLAYOUTS)
def test_a_game_with_a_resigned_seat_is_rolled_out_in_python(name: str) -> None:
    """The referee plays a resigned seat's default actions, which a playout does not model: the
    search rolls out in Python there, and still chooses."""
    spec = _spec(name)
    assert spec.greedy_playout is not None
    play = spec.greedy_playout(spec.rules, spec.greedy())
    assert play is not None
    game = _taken(play, new_game(spec.rules, 3, f"playout-resigned-{name}", record_events=False))
    resigned = game.clone(keep_events=False)
    resigned.apply(Resign(), 2)
    assert play(resigned) is None
    bot = searcher(spec, seed=1, iterations=3, seconds=None)
    seat = resigned.current_player()
    assert seat is not None
    assert bot.choose_from(resigned, seat) in resigned.legal_actions(seat)


@pytest.mark.parametrize(("name", "players"), [(name, n) for name in PLAYOUTS for n in (2, 3, 4)])
def test_a_search_game_is_the_same_game_with_and_without_the_playout(name: str, players: int) -> None:
    """Every seat the hosted search: the same commands, scores and winners."""
    spec = _spec(name)
    played = []
    for native in (True, False):
        bots = [
            searcher(spec, seed=players * 10 + s, iterations=ITERATIONS[name], seconds=None) for s in range(players)
        ]
        for bot in bots:
            assert bot.playout is not None
            if not native:
                bot.playout = None
        played.append(play_game(spec.rules, bots, f"playout-search-{players}", players))
    fast, slow = played
    assert fast.history == slow.history
    assert fast.result.scores == slow.result.scores and fast.result.winners == slow.result.winners
