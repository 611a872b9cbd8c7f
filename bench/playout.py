"""Search cost with a game's native greedy playout against the same search rolling out in Python.

    python -m bench.playout [--game prosperity] [--players 2,3,4] [--iterations 50] [--repeats 3]

Plays one seeded game per player count with the hosted search (`games.mcts.searcher`, bounded by
iterations, no clock) in every seat, as `dicestream balance --bots ismcts` seats it (game 0 of the
seed prefix `balance`), once rolling out in C and once in Python, back to back in each repeat.
Both must play the same commands (checked: the playout is for speed only). Printed per count: the
median seconds a game each way and the median of the per-repeat ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

import msgspec

from games.balance import game_seed
from games.catalog import SPECS
from games.mcts import searcher
from games.play import play_game


class Figures(msgspec.Struct, frozen=True, kw_only=True):
    game: str
    players: int
    iterations: int
    repeats: int
    native_seconds: float  # medians over the repeats
    python_seconds: float
    ratio: float  # median of python / native per repeat


def _timed(game: str, players: int, iterations: int, native: bool) -> tuple[float, list[tuple[int, object]]]:
    spec = SPECS[game]
    bots = [searcher(spec, seed=s, iterations=iterations, seconds=None) for s in range(players)]
    for bot in bots:
        if bot.playout is None:
            raise SystemExit(f"{game} has no native playout here (not built, or the game declares none)")
        if not native:
            bot.playout = None
    start = time.perf_counter()
    played = play_game(spec.rules, bots, game_seed("balance", players, 0), players)
    return time.perf_counter() - start, played.history


def measure(game: str, players: int, iterations: int, repeats: int) -> Figures:
    native: list[float] = []
    python: list[float] = []
    for _ in range(repeats):
        fast, moves = _timed(game, players, iterations, True)
        slow, same = _timed(game, players, iterations, False)
        if moves != same:
            raise SystemExit(f"{game}, {players} players: the playout's search played other commands")
        native.append(fast)
        python.append(slow)
    return Figures(
        game=game,
        players=players,
        iterations=iterations,
        repeats=repeats,
        native_seconds=statistics.median(native),
        python_seconds=statistics.median(python),
        ratio=statistics.median(p / n for p, n in zip(python, native, strict=True)),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="prosperity", choices=sorted(SPECS))
    p.add_argument("--players", default="2,3,4", help="player counts, comma-separated")
    p.add_argument("--iterations", type=int, default=50, help="determinizations a move")
    p.add_argument("--repeats", type=lambda s: max(1, int(s)), default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    for n in (int(x) for x in args.players.split(",")):
        f = measure(args.game, n, args.iterations, args.repeats)
        if args.json:
            print(msgspec.json.encode(f).decode())
        else:
            print(
                f"{f.game} {f.players} players, {f.iterations} iterations a move: {f.native_seconds:.2f} s a game "
                f"with the playout, {f.python_seconds:.1f} s rolling out in Python: {f.ratio:.1f}x "
                f"(medians of {f.repeats}; the same commands)"
            )


if __name__ == "__main__":
    main()
