"""The Python bot SDK: subclass `Bot`, implement `choose_action`, call `play_seat`.

A bot sees exactly what the protocol gives any bot in any language (docs/bots.md): its seat's
view and the legal actions, each a ready command payload. `play_seat` joins the seat (the token
stays in this process), answers every turn request with the request's version, and returns the
final scores.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from contracts.protocol import Action, GameOver, HostBot
from services.botrunner.app import BotRunner
from services.eventstore.keys import Keys
from services.redis_conn import connect

__all__ = ["Action", "Bot", "GameOver", "play_seat"]


class Bot(ABC):
    name = "sdk-bot"

    @abstractmethod
    def choose_action(self, view: dict[str, Any], legal: list[Action], seat: int) -> Action:
        """One of `legal`. `view` is what this seat may see (never hidden information)."""


async def play_seat(
    bot: Bot,
    game_id: str,
    seat: int,
    *,
    redis_url: str = "redis://127.0.0.1:6379/0",
    prefix: str = "ds",
    shards: int = 8,
    start: bool = False,
    game_type: str = "sentient",
    timeout_s: float = 600.0,
    client_name: str = "sdk",
) -> GameOver:
    """Join `seat` of `game_id` and play it to the end; `start=True` also starts the game (once
    every seat is joined). Outcomes come back on `<prefix>:reply:<client_name>:<game>-<seat>-…`:
    behind Redis ACLs, use the name your user may read (`gw` in deploy/redis/users.acl), since
    that stream carries the seat token."""
    client = connect(redis_url)
    runner = BotRunner(client, Keys(prefix), shards, name=f"{client_name}:{game_id}-{seat}")
    task = asyncio.create_task(runner.run())
    try:
        if not await runner.host(
            HostBot(game_id=game_id, seat=seat, kind="sdk", game_type=game_type, name=bot.name), bot=bot
        ):
            raise RuntimeError(f"seat {seat} of {game_id} could not be joined")
        if start:
            while not await runner.start_game(game_id, seat):
                await asyncio.sleep(0.2)  # other seats still joining
        async with asyncio.timeout(timeout_s):
            while game_id not in runner.finished:
                await asyncio.sleep(0.05)
        return runner.finished[game_id]
    finally:
        task.cancel()
        await runner.commands.close()
        await client.aclose()
