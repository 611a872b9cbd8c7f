"""The golden playthroughs: seeded games between fixed bots, recorded as export files.

Regenerate (only when a rules or data change is intended, and say so in the commit):
    python -m tests.golden.games
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from games.bots import RandomBot
from games.sentient import RULES as SENTIENT
from games.sentient.bots import GreedyBot
from services.history import History, export_lines
from services.selfplay import record_game

HERE = Path(__file__).parent


def sentient_bots() -> list[Any]:
    return [GreedyBot(SENTIENT.data), RandomBot(1), RandomBot(2)]


GOLDEN: dict[str, tuple[str, Any, str]] = {
    # file name: (game type, bots factory, seed)
    "sentient-3p.jsonl": ("sentient", sentient_bots, "golden-sentient-1"),
}


async def record(name: str) -> History:
    game_type, bots, seed = GOLDEN[name]
    return await record_game(game_type, bots(), seed, game_id=name.removesuffix(".jsonl"))


def render(history: History) -> bytes:
    return b"\n".join(export_lines(history)) + b"\n"


if __name__ == "__main__":
    for file_name in GOLDEN:
        (HERE / file_name).write_bytes(render(asyncio.run(record(file_name))))
        print("wrote", HERE / file_name)
