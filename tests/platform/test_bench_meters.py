"""The bench's meters report what happened: the kernel's scheduler counts and Redis's own timings."""

from __future__ import annotations

import os
import time

import pytest
import redis.asyncio as aredis

from bench.harness import CpuMeter, command_stats, sched_ns
from bench.sections import relay_floor, served_per_command
from services.eventstore.keys import Keys


def _spin(seconds: float) -> None:
    """Burn `seconds` of this thread's CPU time: however busy the machine, the kernel must then
    have counted at least that much time on a CPU (a wall-clock spin gets less on a loaded one)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_sched_ns_counts_time_on_a_cpu() -> None:
    before = sched_ns(os.getpid())
    if before is None:
        pytest.skip("this kernel keeps no schedstats")
    _spin(0.05)
    after = sched_ns(os.getpid())
    assert after is not None
    assert after[0] - before[0] >= 40_000_000  # 50 ms of spinning, at least 40 ms of it on a CPU
    assert after[1] >= before[1]


def test_sched_ns_of_a_process_that_is_gone() -> None:
    assert sched_ns(2**22 + 7) is None  # above the kernel's largest pid


def test_cpu_meter_reports_per_command_time_of_the_processes_it_watches() -> None:
    meter = CpuMeter([], None)
    meter.start()
    _spin(0.05)
    meter.stop()
    per = meter.per_command(10)
    if sched_ns(os.getpid()) is None:
        assert per == {}
        return
    assert set(per) == {"bench"}  # no referee or Redis pids given: nothing invented for them
    on_cpu, waiting = per["bench"]
    assert on_cpu >= 4_000  # 50 ms over 10 commands
    assert waiting >= 0


def test_served_per_command_is_the_difference_between_two_readings() -> None:
    before = {"evalsha": (10, 1_000), "xadd": (5, 50), "get": (1, 1)}
    after = {"evalsha": (14, 1_400), "xadd": (13, 90), "xread": (2, 30), "get": (9, 9)}
    out = served_per_command(before, after, 4)
    assert out == {
        "evalsha": {"calls_per_command": 1.0, "us_per_call": 100.0},
        "xadd": {"calls_per_command": 2.0, "us_per_call": 5.0},
        "xread": {"calls_per_command": 0.5, "us_per_call": 15.0},
    }  # xreadgroup never ran; GET is not on a command's path


async def test_command_stats_reads_the_servers_counts(client: aredis.Redis, prefix: str) -> None:
    before = await command_stats(client)
    for i in range(3):
        await client.xadd(f"{prefix}:meter", {"i": i})
    after = await command_stats(client)
    assert after["xadd"][0] - before.get("xadd", (0, 0))[0] >= 3
    assert after["xadd"][1] >= before.get("xadd", (0, 0))[1]


@pytest.mark.redis
async def test_the_null_relay_floor_relays_every_command_and_cleans_up(
    client: aredis.Redis, prefix: str, redis_url: str
) -> None:
    keys = Keys(prefix)
    got = await relay_floor(client, redis_url, keys, rate=400.0, seconds=0.5)
    assert got["commands"] == 200
    assert 0 < got["p50_ms"] <= got["p99_ms"] < 1000
    assert [k async for k in client.scan_iter(match=f"{prefix}:relay:*")] == []
