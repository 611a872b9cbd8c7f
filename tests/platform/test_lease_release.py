"""A graceful stop gives every lease back and keeps it given back: the lease loop, still running
while `release_all` drains, must not renew or re-acquire what the leaving tick released (found by
tests/deploy/test_redis_auth.py: a bot runner stopped by SIGTERM under load exited 0 holding all
64 leases, so its shards waited a TTL for a new holder)."""

from __future__ import annotations

import asyncio

from services.eventstore.keys import Keys
from services.leases import Leases
from services.redis_conn import AnyRedis
from services.supervise import Loop


class Reader:
    """A listener that is busy for a while after losing its shards (a batch still in flight)."""

    def __init__(self, busy_s: float) -> None:
        self.busy_s = busy_s
        self.shards: set[int] = set()
        self.busy_until = 0.0

    def assign(self, shards: set[int]) -> None:
        loop = asyncio.get_running_loop()
        if self.shards - shards:
            self.busy_until = loop.time() + self.busy_s
        self.shards = set(shards)

    def active(self) -> set[int]:
        return {0} if asyncio.get_running_loop().time() < self.busy_until else set()


async def test_release_all_leaves_no_lease_while_the_lease_loop_runs(client: AnyRedis, prefix: str) -> None:
    keys = Keys(prefix)
    leases = Leases(client, keys, "referee", "stopping-referee", 4, ttl_ms=10000, tick_s=0.01)
    reader = Reader(busy_s=0.2)  # ticks run every 10 ms during the 200 ms drain
    leases.listen(reader)
    loop_task = asyncio.create_task(leases.run(Loop("referee", "leases", 30.0)))
    try:
        for _ in range(200):
            if len(leases.held) == 4:
                break
            await asyncio.sleep(0.01)
        assert leases.held == {0, 1, 2, 3}
        await leases.release_all()
        assert reader.shards == set(), "a tick re-assigned shards during the drain"
        await asyncio.sleep(0.2)  # twenty more ticks of the still-running loop
        holders, _, members = keys.leases("referee")
        assert await client.hgetall(holders) == {}, "leases taken back after release_all"
        assert await client.zcard(members) == 0, "the stopped holder is still a member"
        assert leases.held == set()
    finally:
        loop_task.cancel()
        await asyncio.gather(loop_task, return_exceptions=True)
