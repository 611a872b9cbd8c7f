"""MCTS on Sentient: only legal moves, only public information, and stronger than the greedy bot."""

from __future__ import annotations

import time

import pytest

from games.bots import Bot, RandomBot
from games.mcts import MCTSBot, NotBound
from games.offline import Command, OfflineGame, SearchBot, new_game, play
from games.sentient import RULES
from games.sentient.bots import GreedyBot

GAMES = 20
ITERATIONS = 200


def mcts(seed: int, iterations: int = ITERATIONS) -> MCTSBot:
    # The configuration reported in the module docstring of games/mcts.py: greedy prior, random rollouts.
    return MCTSBot(RULES, iterations=iterations, seed=seed, prior=GreedyBot(RULES.data))


class _Checked:
    """Wraps a search bot: every choice must be one of the legal commands, and its time is summed."""

    def __init__(self, bot: SearchBot) -> None:
        self.bot = bot
        self.moves = 0
        self.seconds = 0.0

    def choose_from(self, game: OfflineGame, seat: int) -> Command:
        legal = game.legal_actions(seat)
        start = time.perf_counter()
        cmd = self.bot.choose_from(game, seat)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        assert cmd in legal, f"{cmd!r} is not legal"
        return cmd


@pytest.mark.parametrize("num_players", [2, 3])
def test_mcts_only_plays_legal_moves(num_players: int) -> None:
    for i in range(2):
        seats: list[Bot | SearchBot] = [RandomBot(i * 10 + s) for s in range(num_players)]
        seats[i % num_players] = _Checked(mcts(i, iterations=30))
        # play() raises IllegalAction on any refusal; _Checked also checks membership in legal.
        game = play(new_game(RULES, num_players, f"mcts-legal-{num_players}-{i}"), seats)
        assert game.is_terminal()
        assert sum(game.returns()) == pytest.approx(1.0)


def test_choose_needs_a_bound_game() -> None:
    game = new_game(RULES, 2, "mcts-bound")
    seat = game.current_player()
    assert seat is not None
    view, legal = game.view(seat), game.legal_actions(seat)
    bot = mcts(0, iterations=20)
    # A view is not a game: without one to determinize there is nothing to search.
    with pytest.raises(NotBound):
        bot.choose(view, legal, seat)
    # Bound (the caller keeps the game in step with the real one), it is a plain Bot.
    bot.bind(game)
    assert bot.choose(view, legal, seat) == mcts(0, iterations=20).choose_from(game, seat)
    with pytest.raises(ValueError, match="not to act"):
        bot.choose_from(game, 1 - seat)


def test_mcts_reads_only_public_information() -> None:
    # Two games with the same table but another true deck order and another seed: identical choices.
    game = new_game(RULES, 2, "mcts-honest")
    twin = game.with_seed("a-different-secret-seed")
    twin.state.deck.reverse()
    assert twin.view(None) == game.view(None) and twin.state.deck != game.state.deck
    seat = game.current_player()
    assert seat is not None
    a, b = mcts(5, iterations=60), mcts(5, iterations=60)
    assert a.choose_from(game, seat) == b.choose_from(twin, seat)


def test_a_time_budget_bounds_the_search() -> None:
    game = new_game(RULES, 2, "mcts-time")
    seat = game.current_player()
    assert seat is not None
    bot = MCTSBot(RULES, iterations=10**6, time_limit=0.05, seed=1, prior=GreedyBot(RULES.data))
    bot.choose_from(game, seat)
    assert bot.last_seconds < 0.5
    assert 0 < bot.last_iterations < 10**6


@pytest.mark.slow
def test_mcts_beats_greedy() -> None:
    """GAMES 2-player games, MCTS alternating seats 0 and 1 against the greedy bot."""
    share = 0.0
    checked: list[_Checked] = []
    for i in range(GAMES):
        me = i % 2
        bot = _Checked(mcts(i))
        checked.append(bot)
        seats: list[Bot | SearchBot] = [GreedyBot(RULES.data), GreedyBot(RULES.data)]
        seats[me] = bot
        game = play(new_game(RULES, 2, f"mcts-vs-greedy-{i}"), seats)
        share += game.returns()[me]
    moves = sum(c.moves for c in checked)
    per_move = sum(c.seconds for c in checked) / moves
    rate = share / GAMES
    print(
        f"\nsentient 2p, MCTS ({ITERATIONS} iterations, greedy prior, random rollouts) vs greedy over {GAMES} "
        f"games: MCTS win share {rate:.3f} ({share:.1f}/{GAMES}); {per_move * 1000:.0f} ms per MCTS move"
    )
    # A fair share is 0.5. Measured on these seeds: 0.675 (13.5/20; the search is seeded and counts
    # iterations, so the figure is reproducible) since offline games number versions as the
    # referee does (the same seeds gave other games before: 0.825, and 0.742 on seeds 20-79).
    # 0.6 leaves room for changes to the rules or the greedy bot without hiding a broken search.
    assert rate > 0.6
