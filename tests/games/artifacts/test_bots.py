"""Seeded bot games: no illegal move ever, games end in a sensible number of rounds, and the greedy
bot clearly beats random play."""

from __future__ import annotations

from collections import Counter

import pytest

from games.artifacts import ArtifactsRules
from games.artifacts.state import ArtifactsState
from games.base import Result
from games.bots import RandomBot
from games.play import play_game
from tests.games.reference_bots import GAMES_PER_COUNT as GAMES
from tests.games.reference_bots import assert_greedy_beats_random


class _CountingRules(ArtifactsRules):
    """The real rules, noting how many rounds each finished game lasted (tournament reports wins only)."""

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[int] = []

    def result(self, state: ArtifactsState) -> Result:
        if state.over:
            self.rounds.append(state.round)
        return super().result(state)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_beats_random(num_players: int) -> None:
    rules = _CountingRules()
    assert_greedy_beats_random("artifacts", num_players, rules=rules)
    rounds = rules.rounds
    print(
        f"rounds min {min(rounds)} median {sorted(rounds)[len(rounds) // 2]} max {max(rounds)}: "
        f"{sorted(Counter(rounds).items())}"
    )
    assert len(rounds) == GAMES
    # A sensible length: greedy self-play takes 8-15 rounds; far from the round cap of 60.
    assert min(rounds) >= 8 and max(rounds) <= 40


def test_random_only_games_end_well_before_the_cap() -> None:
    for n in (2, 3, 4):
        rules = _CountingRules()
        for i in range(5):
            play_game(rules, [RandomBot(10 * i + s) for s in range(n)], f"random-only-{n}-{i}", n)
        # 200 random-only games per player count lasted 13-32 rounds (see the rules doc, ART-R14).
        assert max(rules.rounds) <= 40 < rules.data.table.max_rounds, rules.rounds
