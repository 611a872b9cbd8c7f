"""The referee worker: FastStream batch subscribers on the command intake shards it owns.

FastStream reads (XREADGROUP, one batch per shard), the engine judges and acks (AckPolicy.MANUAL:
the batch's XACK rides in the engine's last pipeline). A second subscriber per shard reclaims
commands left pending by a crashed referee (XAUTOCLAIM after `reclaim_idle_ms`); a command
delivered `max_deliveries` times goes to the dead-letter stream instead of looping. A watchdog
recreates a consumer group lost on the server (FastStream stops the subscriber on NOGROUP).
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import redis.asyncio as aredis
import structlog
from faststream import AckPolicy
from faststream.redis import StreamSub
from faststream.redis.annotations import RedisBatchStreamMessage, RedisStreamMessage

from services.broker import ensure_group, make_broker, raw_decoder, raw_parser
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import connect
from services.referee.engine import Referee
from services.referee.sink import RedisSink

log = structlog.get_logger("referee")
GROUP = "referee"


async def load_secret(client: aredis.Redis, keys: Keys, configured: str | None) -> bytes:
    if configured:
        return configured.encode()
    import secrets

    await client.set(keys.secret, secrets.token_hex(32), nx=True)
    value = await client.get(keys.secret)
    assert value is not None
    return bytes(value)


class RefereeService:
    def __init__(self, settings: Settings, url: str) -> None:
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.broker = make_broker(url)
        self.client: aredis.Redis = connect(url)
        self.engine: Referee | None = None
        self.subscribers: list[Any] = []
        self._watchdog: asyncio.Task[None] | None = None
        for shard in settings.shard_list:
            self._subscribe(shard)

    def _subscribe(self, shard: int) -> None:
        s = self.settings
        stream = self.keys.intake(shard)

        judging = self.broker.subscriber(
            stream=StreamSub(
                stream, group=GROUP, consumer=s.consumer, batch=True, max_records=s.batch, polling_interval=100
            ),
            parser=raw_parser,
            decoder=raw_decoder,
            ack_policy=AckPolicy.MANUAL,
        )
        reclaiming = self.broker.subscriber(
            stream=StreamSub(stream, group=GROUP, consumer=s.consumer, min_idle_time=s.reclaim_idle_ms),
            parser=raw_parser,
            decoder=raw_decoder,
            ack_policy=AckPolicy.MANUAL,
        )
        self.subscribers += [judging, reclaiming]

        @judging
        async def judge(msg: RedisBatchStreamMessage) -> None:
            raw = msg.raw_message
            assert self.engine is not None
            await self.engine.handle(stream, list(zip(raw["message_ids"], raw["data"], strict=True)))

        @reclaiming
        async def reclaim(msg: RedisStreamMessage) -> None:
            raw = msg.raw_message
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
        )
        for shard in self.settings.shard_list:
            await ensure_group(self.client, self.keys.intake(shard), GROUP)
        await self.broker.start()
        # Everything allocated so far lives for the process: keep it out of the GC's generations
        # so full collections stay short (p99 latency).
        gc.collect()
        gc.freeze()
        self._watchdog = asyncio.create_task(self._keep_groups())
        log.info("referee_started", shards=list(self.settings.shard_list), consumer=self.settings.consumer)

    async def _keep_groups(self) -> None:
        """FastStream stops a subscriber whose group vanished (NOGROUP); start it again, which
        recreates the group (MKSTREAM) before reading."""
        while True:
            await asyncio.sleep(1.0)
            for sub in self.subscribers:
                if not sub.running:
                    log.warning("consumer_group_recreated", stream=sub.stream_sub.name)
                    try:
                        # From the stream's start, not `$` as FastStream would: commands added
                        # while the group was missing are read too (duplicates are answered, not
                        # applied twice).
                        await ensure_group(self.client, sub.stream_sub.name, GROUP)
                        await sub.start()
                    except Exception:
                        log.exception("subscriber_restart_failed", stream=sub.stream_sub.name)

    async def stop(self) -> None:
        if self._watchdog:
            self._watchdog.cancel()
        await self.broker.stop()
        await self.client.aclose()
