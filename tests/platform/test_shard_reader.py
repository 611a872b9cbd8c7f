"""The shard reader on a standalone Redis, where shards are read in units of several streams: a
unit whose read is cut short (a neighbouring shard joined it) is taken over again at once, so what
that read had taken is handled before anything newer on its stream, not left to the reclaimer."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from services.broker import ensure_group
from services.redis_conn import AnyRedis
from services.shards import READ_STREAMS, Batch, ShardReader
from services.supervise import Loop
from tests.platform.test_redis_integration import wait_for

pytestmark = [pytest.mark.redis, pytest.mark.standalone_only("a cluster reads one shard per call: no unit to cut")]


async def test_a_unit_cut_short_by_a_joining_shard_loses_nothing_and_keeps_order(client: AnyRedis, prefix: str) -> None:
    assert READ_STREAMS >= 2  # shards 0 and 1 share a unit

    def stream(shard: int) -> str:
        return f"{prefix}:s:{{{shard}}}"

    for shard in (0, 1):
        await ensure_group(client, stream(shard), "g")
    # Shard 1 holds an entry a dead consumer took: taking it over handles it first, slowly.
    await client.xadd(stream(1), {"data": "slow"})
    await client.xreadgroup("g", "ghost", {stream(1): ">"})
    seen: list[tuple[str, bytes]] = []
    slow = asyncio.Event()

    async def handle(batch: Batch) -> None:
        for name, entries in batch:
            for entry_id, fields in entries:
                seen.append((name, fields[b"data"]))
                await client.xack(name, "g", entry_id)
                if fields[b"data"] == b"slow":
                    slow.set()
                    await asyncio.sleep(0.5)

    # A reclaimer slower than the test: only the take-over can find what a cut read took.
    reader = ShardReader(
        client,
        role="t",
        streams=lambda s: [stream(s)],
        group="g",
        consumer="me",
        handle=handle,
        block_ms=200,
        reclaim_idle_ms=60_000,
    )
    reader.assign({0})
    task = asyncio.ensure_future(reader.run(Loop("test", "reader", 60.0)))
    try:

        async def reading() -> bool:
            return reader.reading == {0} and reader.active() == {0}

        await wait_for(reading)
        await asyncio.sleep(0.1)  # its read is blocked in Redis
        reader.assign({0, 1})
        await asyncio.wait_for(slow.wait(), 5)
        # Shard 0's read in flight returns "a" while shard 1 is being taken over; then its unit
        # becomes (0, 1) and that read is cut short. "b" comes after.
        await client.xadd(stream(0), {"data": "a"})
        await asyncio.sleep(0.1)
        await client.xadd(stream(0), {"data": "b"})

        async def both() -> bool:
            return len([d for s, d in seen if s == stream(0)]) >= 2

        await wait_for(both, timeout=5.0)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert [d for s, d in seen if s == stream(0)] == [b"a", b"b"]
    assert [d for s, d in seen if s == stream(1)] == [b"slow"]
    assert await client.xpending(stream(0), "g") == {"pending": 0, "min": None, "max": None, "consumers": []}
