"""Offline speed: random-against-random steps per second on the offline API (games/offline.py), and
OpenSpiel's C++ backgammon played the same way in the same run, as the peer (the `rl` extra).

    python -m bench.offline [--seconds 3] [--repeats 3] [--game sentient] [--players 2]

A step is one `apply` (ours) or one `apply_action` (OpenSpiel's, its chance moves included: both
sides count every transition a game loop makes). New games are set up inside the timed loop, as a
self-play run does. Ours is the offline API as a user gets it: on the game's native core when it
has one (Sentient's, games/sentient/native.pyx), and then the Python rules are measured too, in the
same run. Printed: per repeat, then the medians and their ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import msgspec

from games.catalog import SPECS
from games.offline import new_game


class Figures(msgspec.Struct, kw_only=True):
    game: str
    players: int
    steps_per_s: float
    peer: str | None
    peer_steps_per_s: float | None
    ratio: float | None
    # With a native core: `steps_per_s` is the core's, and these the Python rules'.
    python_steps_per_s: float | None = None
    python_ratio: float | None = None


def has_native(game: str, players: int) -> bool:
    return new_game(SPECS[game].rules, players, "offline-probe", record_events=False).native


def ours(game: str, players: int, seconds: float, native: bool | None = None) -> float:
    rules = SPECS[game].rules
    rng = random.Random(0)
    steps, i = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        g = new_game(rules, players, f"offline-{i}", record_events=False, native=native)
        i += 1
        while not g.is_terminal():
            seat = g.current_player()
            legal = g.legal_actions(seat)
            g.apply(legal[rng.randrange(len(legal))], seat)
            steps += 1
    return steps / (time.perf_counter() - start)


def peer(name: str, seconds: float) -> float:
    import pyspiel  # type: ignore[import-not-found,unused-ignore]

    game = pyspiel.load_game(name)
    rng = random.Random(0)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
    return steps / (time.perf_counter() - start)


def run(game: str, players: int, seconds: float, repeats: int, peer_name: str = "backgammon") -> Figures:
    mine, theirs, python = [], [], []
    native = has_native(game, players)
    try:
        import pyspiel  # type: ignore[import-not-found,unused-ignore]  # noqa: F401

        has_peer = True
    except ImportError:
        has_peer = False
    for r in range(repeats):
        # Alternated, so a slow spell of the machine hits both.
        mine.append(ours(game, players, seconds))
        line = f"repeat {r + 1}: {game} {players}p {mine[-1]:,.0f} steps/s"
        if native:
            python.append(ours(game, players, seconds, native=False))
            line = f"repeat {r + 1}: {game} {players}p native {mine[-1]:,.0f}, Python {python[-1]:,.0f} steps/s"
        if has_peer:
            theirs.append(peer(peer_name, seconds))
            line += f", OpenSpiel {peer_name} {theirs[-1]:,.0f} steps/s"
        print(line, flush=True)
    a = statistics.median(mine)
    b = statistics.median(theirs) if theirs else None
    py = statistics.median(python) if python else None
    return Figures(
        game=game,
        players=players,
        steps_per_s=round(a),
        peer=peer_name if b else None,
        peer_steps_per_s=round(b) if b else None,
        ratio=round(a / b, 3) if b else None,
        python_steps_per_s=round(py) if py else None,
        python_ratio=round(py / b, 3) if py and b else None,
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--game", default="sentient", choices=sorted(SPECS))
    p.add_argument("--players", type=int, default=2)
    args = p.parse_args()
    print(msgspec.json.encode(run(args.game, args.players, args.seconds, args.repeats)).decode())


if __name__ == "__main__":
    main()
