"""The shard reader's reclaimer asks every owned stream at once whether it holds an entry idle long
enough, and claims only there: given streams with an idle entry, an entry just delivered, nothing
pending and no group yet, when it runs, then only the idle entry is claimed and handled, and no
other entry's delivery count moves (a claim counts a delivery toward the dead-letter limit)."""

from __future__ import annotations

import asyncio

import pytest

from services.broker import ensure_group
from services.redis_conn import AnyRedis
from services.shards import Batch, ShardReader

pytestmark = pytest.mark.redis


async def test_only_entries_idle_long_enough_are_claimed(client: AnyRedis, prefix: str) -> None:
    def stream(shard: int) -> str:
        return f"{prefix}:r:{{{shard}}}"

    idle, fresh, empty, groupless = (stream(s) for s in range(4))
    for name in (idle, fresh, empty):
        await ensure_group(client, name, "g")
    await client.xadd(groupless, {"data": b"no group yet"})
    await client.xadd(idle, {"data": b"left by a dead consumer"})
    await client.xreadgroup("g", "ghost", {idle: ">"})
    await asyncio.sleep(0.15)
    await client.xadd(fresh, {"data": b"being handled"})
    await client.xreadgroup("g", "busy", {fresh: ">"})
    handled: list[tuple[str, bytes]] = []

    async def handle(batch: Batch) -> None:
        for name, entries in batch:
            for entry_id, fields in entries:
                handled.append((name, fields[b"data"]))
                await client.xack(name, "g", entry_id)

    reader = ShardReader(
        client, role="t", streams=lambda s: [stream(s)], group="g", consumer="me", handle=handle, reclaim_idle_ms=100
    )
    reader.reading = {0, 1, 2, 3}
    await reader._reclaim_idle()
    assert handled == [(idle, b"left by a dead consumer")]
    [still] = await client.xpending_range(fresh, "g", min="-", max="+", count=10)
    assert still["consumer"] == b"busy" and still["times_delivered"] == 1
    assert (await client.xpending(idle, "g"))["pending"] == 0


async def test_a_reclaim_cut_short_by_an_outage_leaves_the_other_streams_unclaimed(
    client: AnyRedis, prefix: str
) -> None:
    """Handling the first idle stream's entries meets a Redis outage: the round ends there, and
    the other idle streams' entries keep their delivery count for the next round."""
    from redis.exceptions import ConnectionError as RedisDown

    first, second = (f"{prefix}:o:{{{s}}}" for s in range(2))
    for name in (first, second):
        await ensure_group(client, name, "g")
        await client.xadd(name, {"data": name.encode()})
        await client.xreadgroup("g", "ghost", {name: ">"})
    await asyncio.sleep(0.15)

    async def handle(batch: Batch) -> None:
        raise RedisDown("Redis went away")

    reader = ShardReader(
        client,
        role="t",
        streams=lambda s: [(first, second)[s]],
        group="g",
        consumer="me",
        handle=handle,
        reclaim_idle_ms=100,
    )
    reader.reading = {0, 1}
    with pytest.raises(RedisDown):
        await reader._reclaim_idle()
    [untouched] = await client.xpending_range(second, "g", min="-", max="+", count=10)
    assert untouched["consumer"] == b"ghost" and untouched["times_delivered"] == 1
