"""The one way services build their FastStream broker and read raw stream entries through it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import redis.asyncio as aredis
from faststream import AckPolicy
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.message import FAKE_CONSUMER, RedisBatchStreamMessage, RedisStreamMessage

from contracts.bus import notice_game_id
from services.logs import faststream_logger

# What every handler receives: FastStream's raw read, {"message_ids": [...], "data": fields or a
# list of fields}. Handlers take it as their only argument, with no dependency injection.
RawEntries = dict[str, Any]


def make_broker(url: str) -> RedisBroker:
    # apply_types=False: FastDepends would resolve a Context-annotated message argument for every
    # message in a worker thread (anyio.to_thread), which measured ~1 ms per message here.
    return RedisBroker(
        url, logger=faststream_logger(), log_level=logging.DEBUG, graceful_timeout=10.0, apply_types=False
    )


async def raw_parser(msg: Mapping[str, Any], original: Any = None) -> Any:
    """Hand handlers the raw entries (`raw_message["data"]`, `["message_ids"]`) and FastStream no
    body at all: our services decode the fields themselves, so bytes that are not UTF-8 or not
    JSON can never make FastStream's parser fail and leave a batch pending, and no time is spent
    on a decode attempt per message. Services ack explicitly (AckPolicy.MANUAL)."""
    cls = RedisBatchStreamMessage if msg.get("type") == "bstream" else RedisStreamMessage
    return cls(raw_message=msg, body=b"", consumer=FAKE_CONSUMER, group=None)


async def raw_decoder(msg: Any, original: Any = None) -> RawEntries:
    raw: RawEntries = msg.raw_message
    return raw


async def ensure_group(client: aredis.Redis, stream: str, group: str, start: str = "0") -> None:
    """Create `group` reading from `start` before FastStream does: FastStream creates groups at
    `$`, so an entry added before the first consumer started would never be read."""
    try:
        await client.xgroup_create(stream, group, id=start, mkstream=True)
    except aredis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def keep_groups(client: aredis.Redis, broker: RedisBroker, log: Any, every_s: float = 1.0) -> asyncio.Task[None]:
    """Watch every consumer-group stream subscriber of `broker` (a started one) and return the
    watchdog task; cancel it before stopping the broker, or it would restart what stop() stopped.

    FastStream stops a stream subscriber for good when its group vanished (NOGROUP). The watchdog
    recreates the subscriber's own group from the stream's start, not `$` as FastStream would (so
    entries added while the group was missing are read too: our readers are idempotent), logs
    `consumer_group_recreated` on `log` (the service's logger), and starts the subscriber again."""
    subscribers = [
        sub
        for sub in broker.subscribers
        if (stream := getattr(sub, "stream_sub", None)) is not None and stream.group and stream.consumer
    ]
    return asyncio.create_task(_keep_groups(client, subscribers, log, every_s))


async def _keep_groups(client: aredis.Redis, subscribers: list[Any], log: Any, every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        for sub in subscribers:
            if sub.running:
                continue
            stream = sub.stream_sub
            log.warning("consumer_group_recreated", stream=stream.name, group=stream.group)
            try:
                await ensure_group(client, stream.name, stream.group)
                await sub.start()
            except Exception:
                log.exception("subscriber_restart_failed", stream=stream.name, group=stream.group)


async def stop_task(task: asyncio.Task[None] | None) -> None:
    """Cancel a service's background task and wait until it is done."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the caller itself is being cancelled, not just the task


def reclaim_polling_ms(idle_ms: int) -> int:
    """Look for idle entries a few times per idle period, not FastStream's default ten times a
    second per stream: each poll is a round trip and a deep copy of the subscription."""
    return max(50, min(1000, idle_ms // 5))


def reclaim_bus_entries(
    broker: RedisBroker,
    client: aredis.Redis,
    stream: str,
    group: str,
    consumer: str,
    idle_ms: int,
    refresh: Callable[[str], Awaitable[None]],
) -> None:
    """Bus entries a crashed reader took but never acked: claim them after `idle_ms` and refresh
    their game (bus readers rebuild from the log, so handling an entry twice is harmless)."""

    @broker.subscriber(
        stream=StreamSub(
            stream,
            group=group,
            consumer=consumer,
            min_idle_time=idle_ms,
            polling_interval=reclaim_polling_ms(idle_ms),
        ),
        parser=raw_parser,
        decoder=raw_decoder,
        ack_policy=AckPolicy.MANUAL,
    )
    async def reclaim(raw: RawEntries) -> None:
        game_id = notice_game_id(raw["data"])
        if game_id is not None:
            await refresh(game_id)
        await client.xack(stream, group, *raw["message_ids"])
