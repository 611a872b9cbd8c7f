"""Seeded bot games: no illegal move ever, and the greedy bot clearly beats random play."""

from __future__ import annotations

import statistics

import pytest

from games.bots import RandomBot
from games.mechanica import RULES
from games.mechanica.bots import GreedyBot
from games.play import play_game
from tests.games.reference_bots import GAMES_PER_COUNT as GAMES
from tests.games.reference_bots import assert_greedy_beats_random


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    assert_greedy_beats_random("mechanica", num_players)


def test_solo_greedy_scores_above_random() -> None:
    """Solo games have one winner each; compare the scores instead: 200 seeded games, seeded the
    same way as a tournament (game i gets greedy when i is even, random when odd)."""
    scores: dict[str, list[int]] = {"greedy": [], "random": []}
    for i in range(GAMES):
        kind = "greedy" if i % 2 == 0 else "random"
        bot = GreedyBot(RULES.data) if kind == "greedy" else RandomBot(i)
        played = play_game(RULES, [bot], f"mechanica-bots-1-{i}", 1)
        assert played.result.winners == [0]
        scores[kind].append(played.result.scores[0])
    g, r = statistics.mean(scores["greedy"]), statistics.mean(scores["random"])
    print(f"\nmechanica 1p over {GAMES} games: greedy mean score {g:.1f}, random mean score {r:.1f}")
    assert g > 2 * r
    assert statistics.median(scores["greedy"]) > max(scores["random"]) / 2
