"""The referee worker: reads the command intake shards it owns, judges, appends, publishes.

Intake (services/referee/intake.py) is one XREADGROUP over all owned shards; with
DICESTREAM_INTAKE=faststream it is a FastStream batch subscriber per shard instead. Either way the
engine judges a batch and acks it in its last pipeline. A referee restarted under the same consumer
name first judges what it had read and not acked (direct intake, see Intake.resume). A FastStream
subscriber per shard reclaims commands left pending by any crashed referee (XAUTOCLAIM after
`reclaim_idle_ms`); a command delivered `max_deliveries` times goes to the dead-letter stream
instead of looping. A lost consumer group (NOGROUP) is recreated: by the intake loop itself, and
for FastStream subscribers (which stop on NOGROUP) by the watchdog of services.broker.keep_groups.
"""

from __future__ import annotations

import asyncio
import gc

import redis.asyncio as aredis
import structlog
from faststream import AckPolicy
from faststream.redis import StreamSub
from redis.exceptions import NoPermissionError

from services.broker import (
    RawEntries,
    ensure_group,
    keep_groups,
    make_broker,
    raw_decoder,
    raw_parser,
    reclaim_polling_ms,
    stop_task,
)
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import connect
from services.referee.engine import Referee
from services.referee.intake import Intake
from services.referee.sink import RedisSink

log = structlog.get_logger("referee")
GROUP = "referee"
GC_THRESHOLDS = (20_000, 20, 20)


async def load_secret(client: aredis.Redis, keys: Keys, configured: str | None) -> bytes:
    if configured:
        return configured.encode()
    import secrets

    await client.set(keys.secret, secrets.token_hex(32), nx=True)
    value = await client.get(keys.secret)
    assert value is not None
    return bytes(value)


async def standalone(client: aredis.Redis) -> bool:
    """A script may write keys of other hash slots only outside Redis Cluster. A user without INFO
    (it is in @dangerous; deploy/redis/users.acl grants it) gets the mode that is right on both:
    effects published after the append, one more round trip per batch."""
    try:
        info = await client.info("cluster")
    except NoPermissionError:
        log.warning("info_denied_assuming_cluster", hint="grant +info to the referee's Redis user")
        return False
    return not int(info.get("cluster_enabled", 0))


class RefereeService:
    def __init__(self, settings: Settings, url: str) -> None:
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.broker = make_broker(url)
        self.client: aredis.Redis = connect(url)
        self.engine: Referee | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._intake: asyncio.Task[None] | None = None
        for shard in settings.shard_list:
            self._subscribe(shard)

    def _subscribe(self, shard: int) -> None:
        s = self.settings
        stream = self.keys.intake(shard)

        if s.intake == "faststream":
            judging = self.broker.subscriber(
                stream=StreamSub(
                    stream, group=GROUP, consumer=s.consumer, batch=True, max_records=s.batch, polling_interval=100
                ),
                parser=raw_parser,
                decoder=raw_decoder,
                ack_policy=AckPolicy.MANUAL,
            )

            @judging
            async def judge(raw: RawEntries) -> None:
                assert self.engine is not None
                await self.engine.handle(stream, list(zip(raw["message_ids"], raw["data"], strict=True)))

        reclaiming = self.broker.subscriber(
            stream=StreamSub(
                stream,
                group=GROUP,
                consumer=s.consumer,
                min_idle_time=s.reclaim_idle_ms,
                polling_interval=reclaim_polling_ms(s.reclaim_idle_ms),
            ),
            parser=raw_parser,
            decoder=raw_decoder,
            ack_policy=AckPolicy.MANUAL,
        )

        @reclaiming
        async def reclaim(raw: RawEntries) -> None:
            entry_id: bytes = raw["message_ids"][0]
            fields: dict[bytes, bytes] = raw["data"]
            assert self.engine is not None
            info = await self.client.xpending_range(stream, GROUP, min=entry_id, max=entry_id, count=1)
            deliveries = int(info[0]["times_delivered"]) if info else 1
            log.warning("reclaimed", stream=stream, entry_id=entry_id.decode(), deliveries=deliveries)
            if deliveries > s.max_deliveries:
                await self.engine.dead_letter(stream, entry_id, fields, f"failed {deliveries - 1} deliveries")
                return
            await self.engine.handle(stream, [(entry_id, fields)])

    async def start(self) -> None:
        secret = await load_secret(self.client, self.keys, self.settings.token_secret)
        self.engine = Referee(
            RedisEventStore(self.client, self.keys),
            lambda: RedisSink(self.client),
            self.keys,
            shards=self.settings.shards,
            secret=secret,
            group=GROUP,
            cache_games=self.settings.cache_games,
            inline_effects=await standalone(self.client),
        )
        for shard in self.settings.shard_list:
            await ensure_group(self.client, self.keys.intake(shard), GROUP)
        await self.broker.start()
        if self.settings.intake == "direct":
            intake = Intake(
                self.client,
                [self.keys.intake(i) for i in self.settings.shard_list],
                GROUP,
                self.settings.consumer,
                self.settings.batch,
                self.engine.handle_many,
                dead_letter=self.engine.dead_letter,
                max_deliveries=self.settings.max_deliveries,
            )
            self._intake = asyncio.create_task(intake.run())
        # Everything allocated so far lives for the process: keep it out of the GC's generations
        # so full collections stay short (p99 latency).
        gc.collect()
        gc.freeze()
        # A batch's working set (envelopes, plans, events of up to a few thousand commands) outlives
        # the default 700-allocation young generation and was scanned again and again: with the
        # defaults the collector took ~0.11 s over a 15k-command bench run, with a 20,000 one 0.015 s
        # (about 6 µs a command; one referee 10.7k -> 11.2k commands/s, medians of 3 rounds). Full
        # collections still run, every ten thousand commands or so.
        gc.set_threshold(*GC_THRESHOLDS)
        self._watchdog = keep_groups(self.client, self.broker, log)
        log.info(
            "referee_started",
            shards=list(self.settings.shard_list),
            consumer=self.settings.consumer,
            intake=self.settings.intake,
            inline_effects=self.engine.inline_effects,
        )

    async def stop(self) -> None:
        await stop_task(self._watchdog)
        if self._intake:
            # Cancelling mid-batch is safe: what was not acked stays pending and is reclaimed.
            self._intake.cancel()
        await self.broker.stop()
        await self.client.aclose()
