"""Search strength: the hosted ISMCTS configuration (`games.mcts.searcher`) against the game's
greedy bot, offline, 2 players, seats alternating (game i: the search bot in seat i % 2).

    python -m bench.search [--game G ...] [--games 20] [--seconds 1.0] [--iterations 1000] [--jobs 2]

Game i of title G is seeded `search-G-i` and the search bot gets seed i, so a run is repeatable up
to the time budget (a busier machine searches fewer iterations a move). Printed per title: the
search bot's win share (a shared win counts 1/k) with its 95% Wilson interval, the mean iterations
a move reached and the seconds a game took. Issue 21's target: at least 0.70 in every title.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import msgspec

from games.balance import wilson
from games.bots import Bot
from games.catalog import SPECS
from games.mcts import MCTSBot, searcher
from games.offline import Command, OfflineGame, SearchBot, new_game, play

TARGET = 0.70


class Played(msgspec.Struct, frozen=True, kw_only=True):
    share: float
    iterations: float  # mean per searched move
    seconds: float


class Figures(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    games: int
    seconds_per_move: float
    share: float
    low: float
    high: float
    mean_iterations: float
    seconds_per_game: float
    meets_target: bool


class _Counted:
    """The search bot, counting the iterations each searched move reached."""

    def __init__(self, bot: MCTSBot) -> None:
        self.bot = bot
        self.iterations: list[int] = []

    def choose_from(self, game: OfflineGame, seat: int) -> Command:
        choice = self.bot.choose_from(game, seat)
        if len(game.legal_actions(seat)) > 1:  # a forced move searches nothing
            self.iterations.append(self.bot.last_iterations)
        return choice


def one(game: str, i: int, seconds: float, iterations: int) -> Played:
    spec = SPECS[game]
    searching = _Counted(searcher(spec, seed=i, iterations=iterations, seconds=seconds))
    seat = i % 2
    seats: list[Bot | SearchBot] = [spec.greedy(), spec.greedy()]
    seats[seat] = searching
    start = time.perf_counter()
    done = play(new_game(spec.rules, 2, f"search-{game}-{i}"), seats)
    its = searching.iterations
    return Played(
        share=done.returns()[seat],
        iterations=sum(its) / len(its) if its else 0.0,
        seconds=time.perf_counter() - start,
    )


def measure(game: str, games: int, seconds: float, iterations: int, jobs: int) -> Figures:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        played = list(pool.map(one, [game] * games, range(games), [seconds] * games, [iterations] * games))
    wins = sum(p.share for p in played)
    low, high = wilson(wins, games)
    share = wins / games
    return Figures(
        game=game,
        games=games,
        seconds_per_move=seconds,
        share=share,
        low=low,
        high=high,
        mean_iterations=sum(p.iterations for p in played) / games,
        seconds_per_game=sum(p.seconds for p in played) / games,
        meets_target=share >= TARGET,
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", action="append", choices=sorted(SPECS), help="a title (repeatable; default: all)")
    p.add_argument("--games", type=lambda s: max(1, int(s)), default=20, help="games per title (at least 1)")
    p.add_argument("--seconds", type=float, default=1.0, help="search time a move")
    p.add_argument("--iterations", type=int, default=1000, help="determinizations a move, at most")
    p.add_argument("--jobs", type=int, default=2, help="games played at once (one process each)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    for game in args.game or sorted(SPECS):
        f = measure(game, args.games, args.seconds, args.iterations, args.jobs)
        if args.json:
            print(msgspec.json.encode(f).decode())
        else:
            print(
                f"{f.game:<11} ismcts vs greedy {f.share:.3f} ({f.low:.2f}-{f.high:.2f}) over {f.games} games, "
                f"{f.mean_iterations:.0f} iterations a move, {f.seconds_per_game:.1f} s a game"
                f"{'' if f.meets_target else '  (below ' + format(TARGET, '.2f') + ')'}"
            )


if __name__ == "__main__":
    main()
