"""The greedy-against-random check every game's bot tests make: seeded games, no illegal move
(games.play raises IllegalMove), and greedy taking far more than its fair share of wins."""

from __future__ import annotations

from typing import Any

from games.base import Rules
from games.bots import RandomBot
from games.catalog import GAMES, GREEDY
from games.play import WinTally, tournament

GAMES_PER_COUNT = 200


def greedy_vs_random(
    game: str, num_players: int, games: int = GAMES_PER_COUNT, rules: Rules[Any] | None = None
) -> dict[str, WinTally]:
    """`rules`: the game's rules or a wrapper of them that records more (e.g. game lengths)."""
    return tournament(
        rules or GAMES[game],
        {"greedy": lambda _seed: GREEDY[game](), "random": lambda seed: RandomBot(seed)},
        num_players,
        games,
        seed_prefix=f"{game}-bots",
    )


def assert_greedy_beats_random(
    game: str, num_players: int, games: int = GAMES_PER_COUNT, rules: Rules[Any] | None = None
) -> dict[str, WinTally]:
    table = greedy_vs_random(game, num_players, games, rules)
    greedy, rand = table["greedy"], table["random"]
    print(
        f"\n{game} {num_players}p over {games} games: greedy win rate {greedy.rate:.3f} "
        f"({greedy.wins:.1f}/{greedy.seats} seats), random {rand.rate:.3f} ({rand.wins:.1f}/{rand.seats})"
    )
    # A seat's fair share of wins is 1/n; greedy must take far more of them than random does.
    fair = 1 / num_players
    assert greedy.rate > 1.5 * fair
    assert rand.rate < 0.5 * fair
    assert greedy.rate > 3 * rand.rate
    return table
