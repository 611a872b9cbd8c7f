"""The bot runner: hosts reference bots in seats and plays them through the public protocol only.

It takes `HostBot` requests from its lobby stream, joins the seat itself (so the seat token never
leaves this process), then answers every `TurnRequest` on the seat's stream with the bot's choice,
sent with the request's version as `expected_version`.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgspec
import redis.asyncio as aredis
import structlog
from faststream import AckPolicy
from faststream.redis import StreamSub

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.outcome import ACCEPTED
from contracts.protocol import GameOver, HostBot, SeatMessage, TurnRequest
from services.bots import make_bot
from services.broker import RawEntries, keep_groups, make_broker, raw_decoder, raw_parser, stop_task
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.redis_conn import connect

log = structlog.get_logger("botrunner")
_seat_message = msgspec.json.Decoder(SeatMessage)


class Seat(msgspec.Struct, kw_only=True):
    game_id: str
    seat: int
    token: str
    bot: Any
    last_id: str = "0-0"
    answered: int = -1
    moves: int = 0


class BotRunner:
    def __init__(self, client: aredis.Redis, keys: Keys, shards: int, name: str = "botrunner") -> None:
        self.redis = client
        self.keys = keys
        self.shards = shards
        # `name` is the client of its reply streams (the referee ties each seat to the client that
        # joined it), the object id keeps two runners of one process apart.
        self.commands = Client(client, keys, shards, name=f"{name}:{id(self):x}")
        self.seats: dict[str, Seat] = {}
        self.finished: dict[str, GameOver] = {}
        self._wake = asyncio.Event()

    @property
    def lobby(self) -> str:
        return f"{self.keys.prefix}:bots:lobby"

    async def host(self, req: HostBot, bot: Any = None) -> bool:
        """Join `req.seat` and play it with `bot` (anything with `choose_action(view, legal, seat)`),
        by default a reference bot of `req.kind`."""
        bot = bot if bot is not None else make_bot(req.kind, req.game_type, req.seed)
        reply = await self.commands.call(req.game_id, lc.JoinSeat(seat=req.seat, name=req.name or req.kind, kind="bot"))
        if reply.outcome.status != ACCEPTED or reply.token is None:
            log.warning("join_refused", game_id=req.game_id, seat=req.seat, rule=reply.outcome.rule)
            return False
        stream = self.keys.seat(req.game_id, req.seat)
        self.seats[stream] = Seat(game_id=req.game_id, seat=req.seat, token=reply.token, bot=bot)
        self._wake.set()
        return True

    async def start_game(self, game_id: str, seat: int) -> bool:
        stream = self.keys.seat(game_id, seat)
        reply = await self.commands.call(game_id, lc.StartGame(), seat=seat, token=self.seats[stream].token)
        return reply.outcome.status == ACCEPTED

    async def run(self) -> None:
        """Answer turn requests until cancelled; a Redis error or a bad entry costs a retry, not
        every hosted bot."""
        while True:
            if not self.seats:
                self._wake.clear()
                await self._wake.wait()
            try:
                await self._step()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bot_runner_step_failed")
                await asyncio.sleep(0.5)

    async def _step(self) -> None:
        """One read of every hosted seat's stream; answers the latest request of each."""
        streams = {k: s.last_id for k, s in self.seats.items()}
        got = await self.redis.xread(streams, count=50, block=200)  # type: ignore[arg-type]
        sends: list[CommandEnvelope] = []
        for key, entries in got:
            seat = self.seats.get(key.decode())
            if seat is None:
                continue
            latest: TurnRequest | None = None
            for entry_id, fields in entries:
                seat.last_id = entry_id.decode()
                try:
                    message = _seat_message.decode(fields[b"data"])
                except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
                    log.warning("seat_entry_skipped", game_id=seat.game_id, seat=seat.seat)
                    continue
                if isinstance(message, GameOver):
                    self.finished[seat.game_id] = message
                    self.seats.pop(key.decode(), None)
                    latest = None
                    break
                latest = message
            if latest is not None and latest.version > seat.answered:
                sends.append(self._answer(seat, latest))
        if sends:
            pipe = self.redis.pipeline(transaction=False)
            for env in sends:
                pipe.xadd(self.keys.intake(shard_of(env.game_id, self.shards)), {"data": codec.encode(env)})
            await pipe.execute()

    def _answer(self, seat: Seat, req: TurnRequest) -> CommandEnvelope:
        seat.answered = req.version
        seat.moves += 1
        choice = seat.bot.choose_action(req.view, req.legal_actions, req.seat)
        return CommandEnvelope(
            type=choice.type,
            game_id=req.game_id,
            # Random: a predictable id could be taken first by someone else (see append.lua).
            command_id=uuid.uuid4().hex,
            seat=req.seat,
            token=seat.token,
            expected_version=req.version,
            payload=msgspec.Raw(codec.encode(choice.payload)),
        )


class BotRunnerService:
    def __init__(self, settings: Settings, url: str) -> None:
        self.keys = Keys(settings.prefix)
        self.client: aredis.Redis = connect(url)
        self.runner = BotRunner(self.client, self.keys, settings.shards, name=settings.consumer)
        self.broker = make_broker(url)
        self._task: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None

        @self.broker.subscriber(
            stream=StreamSub(self.runner.lobby, group="botrunner", consumer=settings.consumer),
            parser=raw_parser,
            decoder=raw_decoder,
            ack_policy=AckPolicy.MANUAL,
        )
        async def lobby(raw: RawEntries) -> None:
            try:
                req = msgspec.json.decode(raw["data"][b"data"], type=HostBot)
            except (KeyError, msgspec.DecodeError, msgspec.ValidationError) as exc:
                log.warning("lobby_request_skipped", error=str(exc))
            else:
                if req.kind not in settings.bots:
                    log.warning("bot_kind_not_hosted", kind=req.kind, hosted=list(settings.bots))
                    await self.client.xack(self.runner.lobby, "botrunner", *raw["message_ids"])
                    return
                try:
                    await self.runner.host(req)
                except Exception:
                    log.exception("host_failed", game_id=req.game_id, seat=req.seat)
            await self.client.xack(self.runner.lobby, "botrunner", *raw["message_ids"])

    async def start(self) -> None:
        await self.broker.start()
        # A lost lobby group (NOGROUP) stops FastStream's subscriber: recreate it from the lobby's
        # start (a request hosted before is refused by the referee, the seat being taken).
        self._watchdog = keep_groups(self.client, self.broker, log)
        self._task = asyncio.create_task(self.runner.run())

    async def stop(self) -> None:
        await stop_task(self._watchdog)
        if self._task:
            self._task.cancel()
        await self.broker.stop()
        await self.client.aclose()
