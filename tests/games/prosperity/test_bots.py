"""Seeded bot games: no illegal move ever, and the greedy bot clearly beats random play."""

from __future__ import annotations

import pytest

from games.bots import RandomBot
from games.play import Standing, play_game, tournament
from games.prosperity import RULES
from games.prosperity.bots import GreedyBot
from services.bots import make_bot

GAMES = 200


def greedy_vs_random(num_players: int, games: int = GAMES) -> dict[str, Standing]:
    """The figures to report: every game checks each chosen command is accepted (IllegalMove)."""
    return tournament(
        RULES,
        {"greedy": lambda _seed: GreedyBot(RULES.data), "random": lambda seed: RandomBot(seed)},
        num_players,
        games,
        seed_prefix="prosperity-bots",
    )


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    table = greedy_vs_random(num_players)
    greedy, rand = table["greedy"], table["random"]
    print(
        f"\nprosperity {num_players}p over {GAMES} games: greedy win rate {greedy.rate:.3f} "
        f"({greedy.wins:.1f}/{greedy.seats} seats), random {rand.rate:.3f} ({rand.wins:.1f}/{rand.seats})"
    )
    # A seat's fair share of wins is 1/n; greedy must take far more of them than random does.
    fair = 1 / num_players
    assert greedy.rate > 1.5 * fair
    assert rand.rate < 0.5 * fair
    assert greedy.rate > 3 * rand.rate


def test_random_only_games_finish() -> None:
    for n in (2, 3, 4):
        played = play_game(RULES, [RandomBot(s) for s in range(n)], f"random-only-{n}", n)
        assert RULES.is_over(played.state) and played.result.winners


def test_the_bot_runner_knows_the_greedy_bot() -> None:
    assert make_bot("greedy", "prosperity").bot.__class__ is GreedyBot
