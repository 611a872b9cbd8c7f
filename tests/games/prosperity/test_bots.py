"""Seeded bot games: no illegal move ever, and the greedy bot clearly beats random play."""

from __future__ import annotations

import pytest

from games.bots import RandomBot
from games.play import play_game
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from services.bots import make_bot
from tests.games.reference_bots import assert_greedy_beats_random


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    assert_greedy_beats_random("prosperity", num_players)


def test_random_only_games_finish() -> None:
    for n in (2, 3, 4):
        played = play_game(RULES, [RandomBot(s) for s in range(n)], f"random-only-{n}", n)
        assert RULES.is_over(played.state) and played.result.winners


def test_the_bot_runner_knows_the_greedy_bot() -> None:
    assert make_bot("greedy", "prosperity").bot.__class__ is GreedyBot
