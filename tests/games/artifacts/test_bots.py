"""Seeded bot games: no illegal move ever, games end in a sensible number of rounds, and the greedy
bot clearly beats random play."""

from __future__ import annotations

from collections import Counter

import pytest

from games.artifacts import ArtifactsRules
from games.artifacts.bots import GreedyBot
from games.artifacts.state import ArtifactsState
from games.base import Result
from games.bots import RandomBot
from games.play import Standing, play_game, tournament

GAMES = 200


class _CountingRules(ArtifactsRules):
    """The real rules, noting how many rounds each finished game lasted (tournament reports wins only)."""

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[int] = []

    def result(self, state: ArtifactsState) -> Result:
        if state.over:
            self.rounds.append(state.round)
        return super().result(state)


def greedy_vs_random(num_players: int, games: int = GAMES) -> tuple[dict[str, Standing], list[int]]:
    """The figures to report: every game checks each chosen command is accepted (IllegalMove)."""
    rules = _CountingRules()
    table = tournament(
        rules,
        {"greedy": lambda _seed: GreedyBot(rules.data), "random": lambda seed: RandomBot(seed)},
        num_players,
        games,
        seed_prefix="artifacts-bots",
    )
    return table, rules.rounds


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    table, rounds = greedy_vs_random(num_players)
    greedy, rand = table["greedy"], table["random"]
    spread = sorted(Counter(rounds).items())
    print(
        f"\nartifacts {num_players}p over {GAMES} games: greedy win rate {greedy.rate:.3f} "
        f"({greedy.wins:.1f}/{greedy.seats} seats), random {rand.rate:.3f} ({rand.wins:.1f}/{rand.seats}); "
        f"rounds min {min(rounds)} median {sorted(rounds)[len(rounds) // 2]} max {max(rounds)}: {spread}"
    )
    assert len(rounds) == GAMES
    # A sensible length: greedy self-play takes 10-15 rounds; far from the round cap of 60.
    assert min(rounds) >= 8 and max(rounds) <= 40
    fair = 1 / num_players
    assert greedy.rate > 1.5 * fair
    assert rand.rate < 0.5 * fair
    assert greedy.rate > 3 * rand.rate


def test_random_only_games_end_well_before_the_cap() -> None:
    for n in (2, 3, 4):
        rules = _CountingRules()
        for i in range(5):
            play_game(rules, [RandomBot(10 * i + s) for s in range(n)], f"random-only-{n}-{i}", n)
        # 200 random-only games per player count lasted 16-34 rounds (see the rules doc, ART-R14).
        assert max(rules.rounds) <= 40 < rules.data.table.max_rounds, rules.rounds
