"""The turn service: tells each seat when it must act, and enforces move deadlines.

For every game that moved (a bus entry), it catches its aggregate up from the log and posts a
`TurnRequest` (view, legal actions, version, deadline) on the stream of each seat the game waits
for, or `GameOver` when it ended. Deadlines live in a Redis sorted set, so a restarted timer still
fires them: a due one becomes a `ForceDefault` command carrying the service's admin token, which
the referee accepts only if the seat is still waited on at that version.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import msgspec
import redis.asyncio as aredis
import structlog
from faststream import AckPolicy
from faststream.redis import StreamSub

from contracts import codec
from contracts import lifecycle as lc
from contracts.bus import notice_game_id
from contracts.envelope import CommandEnvelope
from contracts.protocol import Action, GameOver, TurnRequest
from contracts.registry import type_name
from games import match as m
from services import tokens
from services.broker import (
    RawEntries,
    ensure_group,
    keep_groups,
    make_broker,
    raw_decoder,
    raw_parser,
    reclaim_bus_entries,
    stop_task,
)
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.projector.app import Projector
from services.redis_conn import connect
from services.referee.app import load_secret

log = structlog.get_logger("turns")
GROUP = "turns"


def turn_requests(agg: m.Match, now_ms: int) -> list[tuple[int, TurnRequest | GameOver]]:
    if agg.status == m.OVER and agg.result is not None:
        over = GameOver(game_id=agg.game_id, version=agg.version, scores=agg.result.scores, winners=agg.result.winners)
        return [(seat, over) for seat in range(agg.num_players)]
    out: list[tuple[int, TurnRequest | GameOver]] = []
    deadline = int(now_ms + agg.move_timeout_s * 1000) if agg.move_timeout_s else None
    for seat in m.to_act(agg):
        legal = [
            Action(type=type_name(a), payload=msgspec.to_builtins(a)) for a in agg.rules.legal_actions(agg.game, seat)
        ]
        out.append(
            (
                seat,
                TurnRequest(
                    game_id=agg.game_id,
                    seat=seat,
                    version=agg.version,
                    view=agg.rules.view(agg.game, seat),
                    legal_actions=legal,
                    deadline_ms=deadline,
                ),
            )
        )
    return out


class TurnService:
    def __init__(self, settings: Settings, url: str) -> None:
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.client: aredis.Redis = connect(url)
        self.follower = Projector(self.client, self.keys, settings.shards, settings.cache_games)
        self.broker = make_broker(url)
        self.admin = ""
        self._timer: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        for shard in range(settings.shards):
            self._subscribe(shard)

    @property
    def deadlines(self) -> str:
        return f"{self.keys.prefix}:deadlines"

    def _subscribe(self, shard: int) -> None:
        @self.broker.subscriber(
            stream=StreamSub(
                self.keys.bus(shard),
                group=GROUP,
                consumer=self.settings.consumer,
                batch=True,
                max_records=500,
                polling_interval=100,
            ),
            parser=raw_parser,
            decoder=raw_decoder,
            ack_policy=AckPolicy.MANUAL,
        )
        async def on_bus(raw: RawEntries) -> None:
            await self.notify([g for g in map(notice_game_id, raw["data"]) if g is not None])
            await self.client.xack(self.keys.bus(shard), GROUP, *raw["message_ids"])

        async def refresh(game_id: str) -> None:
            await self.notify([game_id])

        reclaim_bus_entries(
            self.broker,
            self.client,
            self.keys.bus(shard),
            GROUP,
            self.settings.consumer,
            self.settings.reclaim_idle_ms,
            refresh,
        )

    async def notify(self, game_ids: list[str]) -> None:
        aggs = await self.follower.catch_up(game_ids)
        now_ms = int(time.time() * 1000)
        pipe = self.client.pipeline(transaction=False)
        for agg in aggs:
            for seat, message in turn_requests(agg, now_ms):
                pipe.xadd(self.keys.seat(agg.game_id, seat), {"data": codec.encode(message)})
                if isinstance(message, TurnRequest) and message.deadline_ms is not None:
                    pipe.zadd(self.deadlines, {f"{agg.game_id}|{seat}|{agg.version}": message.deadline_ms})
        await pipe.execute()

    async def fire_due(self) -> int:
        now_ms = int(time.time() * 1000)
        due = await self.client.zrangebyscore(self.deadlines, 0, now_ms)
        for member in due:
            # ZREM first: whichever timer removes it sends the command; the others skip it.
            if not await self.client.zrem(self.deadlines, member):
                continue
            game_id, seat, version = member.decode().rsplit("|", 2)
            last = await self.client.xrevrange(self.keys.log(game_id), count=1)
            if last and int(last[0][0].split(b"-")[0]) != int(version):
                continue  # the game moved on before the deadline: nothing to force
            payload = lc.ForceDefault(seat=int(seat), at_version=int(version))
            env = CommandEnvelope(
                type=type_name(payload),
                game_id=game_id,
                command_id=f"timeout:{uuid.uuid4().hex}",
                token=self.admin,
                payload=msgspec.Raw(codec.encode(payload)),
            )
            await self.client.xadd(
                self.keys.intake(shard_of(game_id, self.settings.shards)), {"data": codec.encode(env)}
            )
            log.info("deadline_passed", game_id=game_id, seat=int(seat), version=int(version))
        return len(due)

    async def _timer_loop(self) -> None:
        while True:
            try:
                await self.fire_due()
            except aredis.ConnectionError:
                log.warning("timer_redis_unavailable")
            await asyncio.sleep(0.2)

    async def start(self) -> None:
        self.admin = tokens.admin_token(await load_secret(self.client, self.keys, self.settings.token_secret))
        # New turn services start from now: requests for moves made before are not re-sent.
        for shard in range(self.settings.shards):
            await ensure_group(self.client, self.keys.bus(shard), GROUP, start="$")
        await self.broker.start()
        # A lost group (NOGROUP) stops FastStream's subscribers: recreate it from the bus's start
        # (requests already sent are sent again; bots answer a version once, stale deadlines skip).
        self._watchdog = keep_groups(self.client, self.broker, log)
        self._timer = asyncio.create_task(self._timer_loop())
        log.info("turns_started", shards=self.settings.shards)

    async def stop(self) -> None:
        await stop_task(self._watchdog)
        if self._timer:
            self._timer.cancel()
        await self.broker.stop()
        await self.client.aclose()
