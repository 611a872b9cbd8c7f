"""The golden playthroughs: seeded games between fixed bots, recorded as export files.

Regenerate (only when a rules or data change is intended, and say so in the commit):
    python -m tests.golden.games                       # every file
    python -m tests.golden.games prosperity-3p.jsonl   # only the games whose rules changed
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from games.bots import RandomBot
from games.catalog import BUILT_IN, GREEDY, SPECS
from services.history import History, export_lines
from services.selfplay import record_game

HERE = Path(__file__).parent


def greedy_then_random(game_type: str, players: int) -> Callable[[], list[Any]]:
    return lambda: [GREEDY[game_type](), *(RandomBot(seat) for seat in range(1, players))]


# file name: (game type, bots factory, seed); one per registered game, at its spec's player count.
GOLDEN: dict[str, tuple[str, Any, str]] = {
    f"{name}-{spec.golden_players}p.jsonl": (name, greedy_then_random(name, spec.golden_players), f"golden-{name}-1")
    for name, spec in SPECS.items()
    if name in BUILT_IN
}


async def record(name: str) -> History:
    game_type, bots, seed = GOLDEN[name]
    return await record_game(game_type, bots(), seed, game_id=name.removesuffix(".jsonl"))


def render(history: History) -> bytes:
    return b"\n".join(export_lines(history)) + b"\n"


if __name__ == "__main__":
    import sys

    for file_name in sys.argv[1:] or GOLDEN:
        (HERE / file_name).write_bytes(render(asyncio.run(record(file_name))))
        print("wrote", HERE / file_name)
