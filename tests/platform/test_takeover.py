"""Referees share the shards by leases and take over a dead one's: three referee processes play a
tournament; one is SIGKILLed mid-way and its shards are owned again within the lease TTL (+2 s);
two more join mid-run and the shards rebalance; every game finishes and verifies, every command
got exactly one outcome, and no shard ever had two owners at once."""

from __future__ import annotations

import itertools
import time

import msgspec
import pytest

from dicestream.runtime import running
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import AnyRedis
from tests.platform.procs import (
    ServiceProcess,
    all_over,
    check_games,
    host_games,
    lease_holders,
    lease_intervals,
    wait_until,
)

pytestmark = pytest.mark.redis
TTL_MS = 3000


async def test_a_killed_referee_is_taken_over_and_joiners_rebalance(
    settings: Settings, redis_url: str, client: AnyRedis
) -> None:
    settings = msgspec.structs.replace(settings, shards=8, lease_ttl_ms=TTL_MS, reclaim_idle_ms=2000)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    referees = [ServiceProcess("referee", settings, redis_url, f"r{i}") for i in range(3)]
    killed: dict[str, float] = {}
    try:

        async def shared_by(n: int) -> bool:
            holders = await lease_holders(client, keys, "referee")
            return len(holders) == settings.shards and len(set(holders.values())) == n

        await wait_until(lambda: shared_by(3), 30, what="three referees holding every shard")
        async with running(settings, redis_url, ("turns", "botrunner")):
            games = await host_games(client, settings, 10)

            async def progress() -> bool:
                return sum([await client.xlen(keys.audit(g)) for g in games]) > 60

            await wait_until(progress, 60, what="the tournament under way")
            holders = await lease_holders(client, keys, "referee")
            doomed = referees[1]
            theirs = {s for s, h in holders.items() if h.startswith(f"{doomed.consumer}#")}
            assert theirs
            killed[doomed.consumer] = doomed.kill()

            async def taken_over() -> bool:
                now = await lease_holders(client, keys, "referee")
                return all(s in now and not now[s].startswith(f"{doomed.consumer}#") for s in theirs)

            await wait_until(taken_over, TTL_MS / 1000 + 2, every=0.02, what="takeover within TTL + 2 s")
            took = time.time() - killed[doomed.consumer]
            # Two more join mid-run: four live referees, two shards each.
            referees += [ServiceProcess("referee", settings, redis_url, f"r{i}") for i in (3, 4)]

            async def balanced() -> bool:
                counts: dict[str, int] = {}
                for h in (await lease_holders(client, keys, "referee")).values():
                    counts[h] = counts.get(h, 0) + 1
                return sorted(counts.values()) == [2, 2, 2, 2]  # four live referees, two shards each

            await wait_until(balanced, 30, what="the shards rebalanced over four referees")
            await wait_until(lambda: all_over(store, games), 180, every=0.2, what="every game over")
        report = await check_games(client, keys, settings.shards, games)
        assert report["commands"] > 100
        # No shard had two owners at once (from the referees' own lease logs).
        for shard, spans in lease_intervals(referees, "referee", killed).items():
            spans.sort()
            for (_, end, a), (start, _, b) in itertools.pairwise(spans):
                assert a == b or start >= end, (shard, a, end, b, start)
        assert took <= TTL_MS / 1000 + 2
    finally:
        for p in referees:
            p.stop()
        await store.close()
