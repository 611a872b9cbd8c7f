"""What every game's playout tests do (tests/games/<game>/test_playout.py): the hosted search twice,
rolling out in C and in Python, compared from a determinization of a position; and seeded games
walked by a mix of random and greedy moves to find positions to compare at."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from games.mcts import MCTSBot, searcher
from games.offline import OfflineGame, new_game
from games.spec import GameSpec


def searches_both_ways(spec: GameSpec, rules: Any, seed: int) -> tuple[MCTSBot, MCTSBot]:
    """The hosted search over `rules` twice, with the same seed: rolling out in C, and in Python."""
    fast = searcher(spec, seed=seed, iterations=1, seconds=None, rules=rules)
    slow = searcher(spec, seed=seed, iterations=1, seconds=None, rules=rules)
    assert fast.playout is not None, "the search over these rules has no playout"
    slow.playout = None
    return fast, slow


def rollout_both_ways(
    spec: GameSpec, rules: Any, game: OfflineGame, sample: str, seed: int
) -> tuple[OfflineGame, list[Any]]:
    """The rollout from the determinization `sample` of `game`, in C and in Python: the same returns,
    and each search's generator left in the same state (a forced move draws from it). The Python
    rollout's game at its end, and the commands it played."""
    fast, slow = searches_both_ways(spec, rules, seed)
    by_c = fast._playout(game.clone(resample=True, rng_seed=sample, keep_events=False))
    assert by_c is not None, f"{sample}: the playout declined the position"
    copy = game.clone(resample=True, rng_seed=sample, keep_events=False)
    before = len(copy.history)
    slow._rollout(copy)
    assert by_c == copy.returns(), sample
    assert fast._rng.getstate() == slow._rng.getstate(), f"{sample}: forced moves drew differently"
    return copy, [action for _, action in copy.history[before:]]


def walk(
    spec: GameSpec,
    rules: Any,
    games: int,
    every: float,
    tag: str,
    takes: Callable[[OfflineGame], bool],
    compare: Callable[[OfflineGame, str, int, Counter[str]], None],
) -> Counter[str]:
    """Games of 2-4 players played by a mix of random (3 in 10) and greedy moves; at about `every` of
    the positions `takes` accepts, `compare(game, sample, seed, seen)`. What the comparisons counted."""
    maker = spec.bots_for(rules)
    assert maker is not None
    bot = maker.greedy()
    seen: Counter[str] = Counter()
    for g in range(games):
        game = new_game(rules, 2 + g % 3, f"{tag}-{g}", record_events=False)
        pick = random.Random(g)
        while not game.is_terminal():
            seat = game.current_player()
            assert seat is not None
            legal = game.legal_actions(seat)
            if takes(game) and pick.random() < every:
                compare(game, f"{tag}-{g}-{game.version}", g, seen)
            wild = pick.random() < 0.3
            action = legal[pick.randrange(len(legal))] if wild else bot.choose(game.view(seat), legal, seat)
            game.apply(action, seat)
    return seen
