"""A graceful stop gives the leases back at once, even when the lease loop ticks meanwhile (it used
to hand the shards back to the readers, which took them over again: `up` and `serve` then took the
whole 15 s drain timeout to stop, reading all along)."""

from __future__ import annotations

import asyncio
import time

from services.eventstore.keys import Keys
from services.leases import Leases
from services.redis_conn import AnyRedis


class Reader:
    """A listener that drains a shard only at its next step, as the shard reader does."""

    def __init__(self) -> None:
        self.wanted: set[int] = set()
        self.reading: set[int] = set()

    def assign(self, shards: set[int]) -> None:
        self.wanted = set(shards)

    def active(self) -> set[int]:
        return self.reading

    def step(self) -> None:
        self.reading = set(self.wanted)


async def test_a_tick_during_release_all_does_not_hand_the_shards_back(client: AnyRedis, prefix: str) -> None:
    leases = Leases(client, Keys(prefix), "referee", "stopping", 4, 2000)
    reader = Reader()
    leases.listen(reader)
    await leases.tick()
    reader.step()
    assert reader.reading == {0, 1, 2, 3}

    started = time.monotonic()
    stop = asyncio.ensure_future(leases.release_all(timeout_s=10))
    await asyncio.sleep(0.01)
    assert reader.wanted == set()
    await leases.tick()  # the lease loop's tick, in flight while stopping
    assert reader.wanted == set() and leases.owned == set()
    reader.step()  # the reader drains
    await asyncio.wait_for(stop, 2)
    assert time.monotonic() - started < 2
    holders, _, members = Keys(prefix).leases("referee")
    assert await client.hlen(holders) == 0
    assert await client.zcard(members) == 0
