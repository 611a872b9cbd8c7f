"""The referee's command intake: one XREADGROUP over every intake shard the referee owns.

Why not a FastStream subscriber per shard (still available: DICESTREAM_INTAKE=faststream)? At low
load every command arrives alone, and FastStream's per-message machinery (middlewares, context,
logging scope, a deep copy of the subscription per read) cost about 0.5 ms of CPU per message on
these machines, more than judging the command; eight subscribers also wake eight times where one
read wakes once. Reclaiming stays a FastStream subscriber (XAUTOCLAIM with `min_idle_time`).

Before its first new read, the intake resumes what this consumer name read and never acked (a
restart after a crash, with a stable name: `referee-0`, a StatefulSet pod). Those commands are
older than anything still unread, so judging them first keeps each game's commands in arrival
order, and they are judged at once instead of after DICESTREAM_RECLAIM_IDLE_MS.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import redis.asyncio as aredis
import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.broker import ensure_group

log = structlog.get_logger("referee")

Entries = list[tuple[bytes, dict[bytes, bytes]]]
Handler = Callable[[list[tuple[str, Entries]]], Awaitable[None]]
DeadLetter = Callable[[str, bytes, dict[bytes, bytes], str], Awaitable[None]]


class Intake:
    def __init__(
        self,
        client: aredis.Redis,
        streams: Sequence[str],
        group: str,
        consumer: str,
        batch: int,
        handle: Handler,
        block_ms: int = 1000,
        dead_letter: DeadLetter | None = None,
        max_deliveries: int = 5,
    ) -> None:
        self.client = client
        self.streams = list(streams)
        self.group = group
        self.consumer = consumer
        self.batch = batch
        self.handle = handle
        self.block_ms = block_ms
        self.dead_letter = dead_letter
        self.max_deliveries = max_deliveries
        self.reads = 0
        self._backoff = 0.1

    async def run(self) -> None:
        while True:
            try:
                await self.resume()
                break
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                # Not skipped: judging newer commands first is what resuming exists to prevent.
                log.warning("resume_failed", error=str(exc), retry_in_s=self._backoff)
                await asyncio.sleep(self._backoff)
                self._backoff = min(self._backoff * 2, 5.0)
        self._backoff = 0.1
        # The next read is sent as soon as a batch arrives, so that Redis gathers the next batch
        # while this one is judged; batches are still handled one after the other, in order.
        reading = asyncio.ensure_future(self._read())
        try:
            while True:
                got = await reading
                reading = asyncio.ensure_future(self._read())
                if not got:
                    continue
                batches = [(_text(stream), list(entries)) for stream, entries in got if entries]
                try:
                    await self.handle(batches)
                except Exception:
                    # The batch stays pending: the reclaimer redelivers it, and dead-letters it
                    # after DICESTREAM_MAX_DELIVERIES.
                    log.exception("batch_failed", streams=[s for s, _ in batches])
        finally:
            reading.cancel()

    async def resume(self) -> None:
        """Judge this consumer's own pending commands, oldest first, one stream at a time (a game
        lives on one stream, so that keeps its order). Reading them again counts a delivery: one
        that has now been delivered more than `max_deliveries` times (it may be what crashed the
        last run) is dead-lettered instead of judged."""
        for stream in self.streams:
            after = "0"
            while True:
                try:
                    got: list[tuple[bytes, Entries]] = await self.client.xreadgroup(  # type: ignore[assignment]
                        self.group,
                        self.consumer,
                        {stream: after},
                        count=self.batch,
                    )
                except ResponseError as exc:
                    if "NOGROUP" not in str(exc):
                        raise
                    break  # nothing can be pending in a group that does not exist; _read recreates it
                entries: Entries = [(i, f or {}) for i, f in (got[0][1] if got else [])]
                if not entries:
                    break
                after = _text(entries[-1][0])
                log.warning("resuming_pending", stream=stream, consumer=self.consumer, commands=len(entries))
                entries = await self._without_poison(stream, entries)
                if entries:
                    try:
                        await self.handle([(stream, entries)])
                    except Exception:
                        log.exception("batch_failed", streams=[stream])  # left pending for the reclaimer

    async def _without_poison(self, stream: str, entries: Entries) -> Entries:
        if self.dead_letter is None:
            return entries
        info = await self.client.xpending_range(
            stream,
            self.group,
            min=entries[0][0],
            max=entries[-1][0],
            count=len(entries),
            consumername=self.consumer,
        )
        deliveries = {i["message_id"]: int(i["times_delivered"]) for i in info}
        kept: Entries = []
        for entry_id, fields in entries:
            n = deliveries.get(entry_id, 1)
            if n > self.max_deliveries:
                await self.dead_letter(stream, entry_id, fields, f"failed {n - 1} deliveries")
            else:
                kept.append((entry_id, fields))
        return kept

    async def _read(self) -> list[tuple[bytes, Entries]] | None:
        """One XREADGROUP; None when it failed (after recreating a lost group or backing off)."""
        try:
            got = await self.client.xreadgroup(
                self.group,
                self.consumer,
                {s: ">" for s in self.streams},  # type: ignore[arg-type]
                count=self.batch,
                block=self.block_ms,
            )
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            # The group (or the stream) vanished on the server: recreate it from the stream's
            # start so commands added meanwhile are read (a duplicate is answered, not applied).
            log.warning("consumer_group_recreated", streams=self.streams)
            for stream in self.streams:
                await ensure_group(self.client, stream, self.group)
            return None
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            log.warning("intake_read_failed", error=str(exc), retry_in_s=self._backoff)
            await asyncio.sleep(self._backoff)
            self._backoff = min(self._backoff * 2, 5.0)
            return None
        self._backoff = 0.1
        self.reads += 1
        return got  # type: ignore[no-any-return]


def _text(stream: bytes | str) -> str:
    return stream.decode() if isinstance(stream, bytes) else stream
