"""Seeded bot games: no illegal move ever, and the greedy bot clearly beats random play."""

from __future__ import annotations

import pytest

from games.bots import RandomBot
from games.play import play_game
from games.sentient import RULES
from tests.games.reference_bots import assert_greedy_beats_random


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    assert_greedy_beats_random("sentient", num_players)


def test_random_only_games_finish() -> None:
    for n in (2, 3, 4):
        played = play_game(RULES, [RandomBot(s) for s in range(n)], f"random-only-{n}", n)
        assert played.commands == 15 * n
