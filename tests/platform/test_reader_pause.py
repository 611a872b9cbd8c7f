"""A shard reader with a pause (the projector's: it is off the command's path) reads again only that
long after a read that found entries: what arrives meanwhile is handled as one batch."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from services.broker import ensure_group
from services.redis_conn import AnyRedis
from services.shards import Batch, ShardReader
from services.supervise import Loop
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis


async def test_entries_arriving_during_the_pause_are_one_batch(client: AnyRedis, prefix: str) -> None:
    stream = f"{prefix}:p:{{0}}"
    await ensure_group(client, stream, "g")
    batches: list[tuple[float, list[bytes]]] = []

    async def handle(batch: Batch) -> None:
        for name, entries in batch:
            batches.append((time.monotonic(), [f[b"data"] for _, f in entries]))
            await client.xack(name, "g", *[i for i, _ in entries])

    reader = ShardReader(
        client,
        role="t",
        streams=lambda s: [stream],
        group="g",
        consumer="me",
        handle=handle,
        block_ms=200,
        pause_ms=400,
    )
    reader.assign({0})
    task = asyncio.ensure_future(reader.run(Loop("test", "reader", 60.0)))
    try:
        await wait_for(lambda: asyncio.sleep(0, reader.reading == {0}), timeout=10)
        await client.xadd(stream, {"data": b"first"})
        await wait_for(lambda: asyncio.sleep(0, len(batches) == 1), timeout=10)
        for data in (b"second", b"third"):
            await client.xadd(stream, {"data": data})
            await asyncio.sleep(0.05)
        await wait_for(lambda: asyncio.sleep(0, len(batches) == 2), timeout=10)
        assert [data for _, data in batches] == [[b"first"], [b"second", b"third"]]
        assert batches[1][0] - batches[0][0] >= 0.4  # the pause, then one read took both
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
