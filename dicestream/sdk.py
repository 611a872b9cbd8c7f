"""The Python bot SDK: subclass `Bot`, implement `choose_action`, call `play_seat`.

A bot sees exactly what the protocol gives any bot in any language (docs/bots.md): its seat's
view and the legal actions, each a ready command payload. `play_seat` joins the seat (the token
stays in this process), answers every turn request with the request's version, and returns the
final scores. It talks to Redis directly, as a trusted bot with its own Redis user does
(`dicestream acl add-client NAME`); untrusted bots use the HTTP gateway instead (docs/http.md).
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from typing import Any, cast

import msgspec

from contracts import lifecycle as lc
from contracts.outcome import ACCEPTED
from contracts.protocol import Action, GameOver, SeatMessage, TurnRequest
from contracts.registry import command_type
from services.client import Client
from services.eventstore.keys import Keys
from services.redis_conn import StreamReads, connect

__all__ = ["Action", "Bot", "GameOver", "play_seat"]
_seat_message = msgspec.json.Decoder(SeatMessage)


class Bot(ABC):
    name = "sdk-bot"
    # The component data the game being played was created under (the request's `data_version`),
    # set before each `choose_action`: a bot valuing tiles or cards reads them from that file.
    data_version = ""

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
    shards: int = 64,
    start: bool = False,
    timeout_s: float = 600.0,
    client_name: str = "sdk",
) -> GameOver:
    """Join `seat` of `game_id` and play it to the end; `start=True` also starts the game (once
    every seat is joined). Outcomes come back on `<prefix>:reply:<client_name>:<game>-<seat>-…`:
    behind Redis ACLs, use your user's client name, since that stream carries the seat token."""
    redis = connect(redis_url)
    keys = Keys(prefix)
    client = Client(redis, keys, shards, name=f"{client_name}:{game_id}-{seat}-{time.monotonic_ns():x}")
    try:
        joined = await client.call(game_id, lc.JoinSeat(seat=seat, name=bot.name, kind="bot"))
        if joined.outcome.status != ACCEPTED or joined.token is None:
            o = joined.outcome
            raise RuntimeError(f"seat {seat} of {game_id} could not be joined: {o.rule} {o.detail}")
        token = joined.token
        if start:
            await _start(client, game_id, seat, token)
        async with asyncio.timeout(timeout_s):
            return await _play(bot, client, keys.seat(game_id, seat), token)
    finally:
        await client.close()
        await redis.aclose()


async def _start(client: Client, game_id: str, seat: int, token: str) -> None:
    """StartGame until every seat is joined (GAME-SEATS-EMPTY until then; each try a new command
    id); GAME-NOT-OPEN means another seat started it. Any other refusal is raised."""
    while True:
        o = (await client.call(game_id, lc.StartGame(), seat=seat, token=token)).outcome
        if o.status == ACCEPTED or o.rule == "GAME-NOT-OPEN":
            return
        if o.rule != "GAME-SEATS-EMPTY":
            raise RuntimeError(f"{game_id} could not be started: {o.rule} {o.detail}")
        await asyncio.sleep(0.2)  # other seats still joining


async def _play(bot: Bot, client: Client, stream: str, token: str) -> GameOver:
    last, answered = "0-0", -1
    while True:
        got = cast(StreamReads, await client.redis.xread({stream: last}, count=100, block=1000))
        latest: TurnRequest | None = None
        for _, entries in got or []:
            for entry_id, fields in entries:
                last = entry_id.decode()
                message = _seat_message.decode(fields[b"data"])
                if isinstance(message, GameOver):
                    return message
                latest = message
        if latest is not None and latest.version > answered:
            bot.data_version = latest.data_version
            choice = bot.choose_action(latest.view, latest.legal_actions, latest.seat)
            cls = command_type(choice.type)
            if cls is None:
                raise ValueError(f"the bot chose an unknown command type {choice.type!r}")
            payload = msgspec.convert(choice.payload, cls)
            env = client.envelope(
                latest.game_id, payload, seat=latest.seat, token=token, expected_version=latest.version, reply=False
            )
            await client.send_envelope(env)
            answered = latest.version
