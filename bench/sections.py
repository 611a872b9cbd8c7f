"""The measured sections (a)-(e); each returns plain dicts that go into the JSON results."""

from __future__ import annotations

import asyncio
import gc
import math
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any, cast

from bench.harness import BenchError, CpuMeter, Pool, Stats, Worker, command_stats
from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.sentient import Acquire
from games import match as m
from games.sentient import RULES
from services import tokens
from services.client import Client
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.redis_conn import AnyRedis, StreamReads, connect
from services.referee.engine import Referee
from services.referee.sink import MemorySink


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    if not s:
        return math.nan
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def sample_command(keys: Keys) -> bytes:
    """A command envelope of the size the timed sections send (a Sentient move with a token)."""
    c = Client(None, keys, 8, name="sample")  # type: ignore[arg-type]
    env = c.envelope(
        "g000000-00000",
        Acquire(factory_slot=2, network_slot=3, assistants=1),
        seat=1,
        token="f" * 64,
        expected_version=42,
    )
    return codec.encode(env)


# ---- (a) raw XADD baselines ----------------------------------------------------------------


async def xadd_baseline(
    r: AnyRedis,
    keys: Keys,
    awaited_ops: int,
    pipelined_ops: int,
    paced_rate: float = 500.0,
    paced_ops: int = 500,
) -> dict[str, float]:
    stream = f"{keys.prefix}:baseline:{uuid.uuid4().hex[:6]}"
    data = sample_command(keys)
    try:
        for _ in range(200):  # warm the connection and the server's stream
            await r.xadd(stream, {"data": data})
        rtts = []
        clock = time.perf_counter
        start = clock()
        for _ in range(awaited_ops):
            t = clock()
            await r.xadd(stream, {"data": data})
            rtts.append(clock() - t)
        awaited_s = clock() - start
        batch = 100
        batches = max(1, pipelined_ops // batch)
        start = clock()
        for _ in range(batches):
            pipe = r.pipeline(transaction=False)
            for _ in range(batch):
                pipe.xadd(stream, {"data": data})
            await pipe.execute()
        pipelined_s = clock() - start
        # The same awaited XADD at the pace of (c): between sends the CPUs idle, and waking them
        # (client, server) is part of every hop of a paced command. Context for (c), not a target.
        paced = []
        period = 1.0 / paced_rate
        start = clock()
        for k in range(paced_ops):
            delay = start + k * period - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            t = clock()
            await r.xadd(stream, {"data": data})
            paced.append(clock() - t)
    finally:
        await r.delete(stream)
    return {
        "awaited_xadd_per_s": awaited_ops / awaited_s,
        "awaited_xadd_rtt_p50_us": statistics.median(rtts) * 1e6,
        "awaited_xadd_rtt_p99_us": percentile(rtts, 99) * 1e6,
        "pipelined_xadd_per_s": batches * batch / pipelined_s,
        "paced_xadd_rtt_p50_us": statistics.median(paced) * 1e6,
        "paced_xadd_rtt_p99_us": percentile(paced, 99) * 1e6,
        "command_bytes": len(data),
    }


# ---- (b) throughput --------------------------------------------------------------------------


async def throughput(
    pool: Pool,
    workers: Sequence[Worker],
    waves: int,
    stats: Stats,
    timeout_s: float = 120.0,
    redis_pid: int | Sequence[int] | None = None,
) -> dict[str, Any]:
    """`waves` waves of one move per running game: each wave XADDed in one pipeline, timed from
    just before that pipeline until the last outcome is seen on the reply stream. Building the
    next wave (local decide, encoding) happens between waves, outside the timer."""
    commands = 0
    elapsed = 0.0
    per_wave = []
    meter = CpuMeter([w.pid for w in workers], redis_pid)
    meter.start()
    for _ in range(waves):
        envs = pool.wave()
        if not envs:
            break
        wire = pool.encode(envs)
        ids = [e.command_id for e in envs]
        pool.replies.expect(ids)
        t0 = time.perf_counter()
        await pool.send(wire)
        done = await pool.replies.wait(timeout_s, workers)
        dt = done - t0
        stats.count((rep for _, rep in pool.replies.take(ids)), pool.expected)
        commands += len(envs)
        elapsed += dt
        per_wave.append(len(envs) / dt)
    cpu = meter.stop()
    if not commands:
        raise BenchError("every game of the pool is over: no moves left to send")
    # CPU is counted over the whole loop, building the waves included (the workers idle then).
    return {
        "commands": commands,
        "seconds": elapsed,
        "commands_per_s": commands / elapsed,
        "per_wave_commands_per_s": per_wave,
        "referee_cpu_us_per_command": cpu["referee"] / commands * 1e6,
        "redis_cpu_us_per_command": cpu["redis"] / commands * 1e6 if redis_pid else None,
        "bench_cpu_us_per_command": cpu["bench"] / commands * 1e6,
        "others_cpu_share": cpu["others"] / cpu["machine_total"] if cpu["machine_total"] else None,
        "sched_us_per_command": meter.per_command(commands),
        "cpu_seconds": cpu,
    }


# ---- (c) latency -----------------------------------------------------------------------------


async def latency(
    pool: Pool,
    workers: Sequence[Worker],
    rate: float,
    seconds: float,
    stats: Stats,
    redis_pid: int | Sequence[int] | None = None,
) -> dict[str, Any]:
    """Commands paced at `rate`/s, round-robin over the pool's games, each awaited XADD alone;
    latency = when the reply reader saw the outcome minus just before that command's XADD."""
    n = int(rate * seconds)
    games = [g for g in pool.games.values() if g.agg is not None and m.to_act(g.agg)]
    if not games:
        raise BenchError("every game of the pool is over")
    # Precompute the schedule (game k-th move only depends on its previous one, already judged
    # by the time the round-robin comes back to it: len(games)/rate seconds later).
    schedule: list[tuple[str, bytes, str]] = []
    i = 0
    idle = 0
    while len(schedule) < n and idle < len(games):
        g = games[i % len(games)]
        i += 1
        env = pool.next_move(g)
        if env is None:
            idle += 1
            continue
        idle = 0
        stream, data = pool.encode([env])[0]
        schedule.append((stream, data, env.command_id))
    if len(schedule) < n:
        raise BenchError(f"the pool has only {len(schedule)} moves left, {n} needed")
    period = 1.0 / rate
    sent: dict[str, float] = {}
    r = pool.redis
    pool.replies.expect(cid for _, _, cid in schedule)
    clock = time.perf_counter
    meter = CpuMeter([w.pid for w in workers], redis_pid)
    meter.start()
    served = await command_stats(r)
    start = clock() + 0.01
    late = 0
    for k, (stream, data, cid) in enumerate(schedule):
        target = start + k * period
        delay = target - clock()
        if delay > 0:
            await asyncio.sleep(delay)
        elif delay < -period:
            late += 1
        sent[cid] = clock()
        await r.xadd(stream, {"data": data})
    send_end = clock()
    await pool.replies.wait(30.0, workers)
    cpu = meter.stop()
    served_after = await command_stats(r)
    got = pool.replies.take(sent)
    stats.count((rep for _, rep in got), pool.expected)
    lat = [seen - sent[rep.outcome.command_id] for seen, rep in got]
    return {
        "commands": len(schedule),
        "offered_per_s": len(schedule) / (send_end - start),
        "late_sends": late,
        "p50_ms": percentile(lat, 50) * 1e3,
        "p90_ms": percentile(lat, 90) * 1e3,
        "p99_ms": percentile(lat, 99) * 1e3,
        "max_ms": max(lat) * 1e3,
        "others_cpu_share": cpu["others"] / cpu["machine_total"] if cpu["machine_total"] else None,
        "referee_cpu_share": cpu["referee"] / (cpu["machine_total"] / (os.cpu_count() or 1)),
        "sched_us_per_command": meter.per_command(len(schedule)),
        "redis_service": served_per_command(served, served_after, len(schedule)),
    }


async def relay_floor(r: AnyRedis, url: str, keys: Keys, rate: float, seconds: float) -> dict[str, Any]:
    """(c0): (c)'s paced sends and reply reading, through bench.relay, a worker that judges nothing.
    What is left between (c) and this is the referee's own work; what is left between this and an
    awaited XADD is the two extra hops and wake-ups that any worker between two streams adds."""
    intake, out = f"{keys.prefix}:relay:in", f"{keys.prefix}:relay:out"
    proc = subprocess.Popen([sys.executable, "-m", "bench.relay", url, intake, out], stdin=subprocess.DEVNULL)
    reader = connect(url)
    try:
        data = sample_command(keys)
        n = int(rate * seconds)
        warm = 200
        seen: dict[int, float] = {}

        async def read() -> None:
            last: bytes | str = "0-0"
            while len(seen) < warm + n:
                if proc.poll() is not None:
                    raise BenchError(f"bench.relay exited with {proc.returncode}")
                got = cast(StreamReads, await reader.xread({out: last}, count=5000, block=1000))
                now = time.perf_counter()
                for _, entries in got or ():
                    for _, fields in entries:
                        seen[int(fields[b"data"].split(b":", 1)[0])] = now
                    last = entries[-1][0]

        reading = asyncio.create_task(read())
        for k in range(warm):  # the relay's group, connection and loop, before timing
            await r.xadd(intake, {"data": b"%d:" % k + data})
        while len(seen) < warm and not reading.done():
            await asyncio.sleep(0.01)
        sent: dict[int, float] = {}
        period = 1.0 / rate
        clock = time.perf_counter
        start = clock() + 0.01
        for k in range(warm, warm + n):
            delay = start + (k - warm) * period - clock()
            if delay > 0:
                await asyncio.sleep(delay)
            sent[k] = clock()
            await r.xadd(intake, {"data": b"%d:" % k + data})
        await asyncio.wait_for(reading, 30.0)
        lat = [seen[k] - t for k, t in sent.items()]
    finally:
        proc.kill()
        proc.wait(5)
        await reader.aclose()
        await r.delete(intake, out)
    return {"commands": n, "p50_ms": percentile(lat, 50) * 1e3, "p99_ms": percentile(lat, 99) * 1e3}


# What a command costs Redis on (c)'s path: the client's XADD, the referee's blocked read being
# served, the append script, the reply reader's blocked read being served.
_SERVED = ("xadd", "xreadgroup", "evalsha", "xread")


def served_per_command(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]], commands: int
) -> dict[str, dict[str, float]]:
    """Per Redis command type: calls per bench command and server µs per call, between two
    INFO commandstats readings. The server times each command itself; a blocked read counts once,
    when it is served; the calls a script makes count in their own rows and in the script's time."""
    out = {}
    for name in _SERVED:
        calls = after.get(name, (0, 0))[0] - before.get(name, (0, 0))[0]
        usec = after.get(name, (0, 0))[1] - before.get(name, (0, 0))[1]
        if calls > 0:
            out[name] = {"calls_per_command": calls / commands, "us_per_call": usec / calls}
    return out


# ---- (d) replay ------------------------------------------------------------------------------


async def build_replay_logs(r: AnyRedis, keys: Keys, min_events: int, seed: int = 7) -> list[str]:
    """Play complete 4-player Sentient games through an in-process `Referee` (real Redis store,
    Lua appends; effects into a MemorySink) until their logs hold >= `min_events` events together.
    One handle() call per step carries one command for every game still running."""
    secret = b"bench-replay-secret"
    store = RedisEventStore(r, keys)
    sink = MemorySink()
    ref = Referee(store, lambda: sink, keys, shards=1, secret=secret)
    rng = random.Random(seed)
    client = Client(r, keys, 1, name="replay")
    ids: list[str] = []
    seq = 0

    async def step(envs: list[CommandEnvelope]) -> None:
        nonlocal seq
        entries = []
        for env in envs:
            seq += 1
            entries.append((f"{seq}-0".encode(), {b"data": codec.encode(env)}))
        await ref.handle(f"{keys.prefix}:replay-intake", entries)

    total = 0
    while total < min_events:
        batch = [f"replay-{uuid.uuid4().hex[:8]}" for _ in range(max(1, math.ceil((min_events - total) / 260)))]
        await step([client.envelope(g, lc.CreateGame(game_type="sentient", num_players=4), reply=False) for g in batch])
        joins = [
            client.envelope(g, lc.JoinSeat(seat=s, name=f"r{s}", kind="bot"), seat=s, reply=False)
            for g in batch
            for s in range(4)
        ]
        await step(joins)
        toks = {(j.game_id, j.seat): tokens.seat_token(secret, j.game_id, j.seat or 0, j.command_id) for j in joins}
        await step([client.envelope(g, lc.StartGame(), seat=0, token=toks[(g, 0)], reply=False) for g in batch])
        while True:
            envs = []
            for g in batch:
                agg = ref.cache.get(g)  # a finished game leaves the referee's cache
                acting = m.to_act(agg) if agg is not None else []
                if agg is not None and acting:
                    seat = acting[0]
                    legal = RULES.legal_actions(agg.game, seat)
                    envs.append(
                        client.envelope(
                            g, legal[rng.randrange(len(legal))], seat=seat, token=toks[(g, seat)], reply=False
                        )
                    )
            if not envs:
                break
            await step(envs)
        if ref.stats["rejected"] or ref.stats["dead"]:
            raise BenchError(f"building the replay logs: {ref.stats}")
        ids += batch
        total += sum(len(entries) for entries in (await store.read_many({g: 0 for g in batch})).values())
    return ids


async def replay(r: AnyRedis, keys: Keys, game_ids: list[str], passes: int) -> dict[str, float]:
    """Read every log (one pipeline of XRANGEs, as the referee's cache loader does), decode and
    fold each with `rebuild`; `passes` times. Also the decode+fold part alone, from memory."""
    store = RedisEventStore(r, keys)
    clock = time.perf_counter
    total_s = 0.0
    events = 0
    logs: dict[str, list[tuple[int, bytes]]] = {}
    for _ in range(passes):
        t = clock()
        logs = await store.read_many({g: 0 for g in game_ids})
        aggs = [rebuild(g, entries) for g, entries in logs.items()]
        total_s += clock() - t
        n = sum(a.version for a in aggs)
        if any(a.status != m.OVER for a in aggs):
            raise BenchError("a replayed game is not over")
        events += n
    t = clock()
    for _ in range(passes):
        for g, entries in logs.items():
            rebuild(g, entries)
    fold_s = clock() - t
    return {
        "games": len(game_ids),
        "events": events // passes,
        "events_per_s": events / total_s,
        "ms_per_pass": total_s / passes * 1e3,
        "fold_only_events_per_s": events / fold_s,
    }


def quiet_gc() -> None:
    """The bench process's own garbage (prepared games) moved out of the collector's way, so that
    its pauses do not land in the client-side timings."""
    gc.collect()
    gc.freeze()


# ---- (f) memory over a long run ---------------------------------------------------------------


async def soak(
    pool: Pool, workers: Sequence[Worker], commands: int, live_games: int, timeout_s: float = 120.0
) -> dict[str, Any]:
    """Keep `live_games` games running (finished ones are replaced by new ones, whose lifecycle
    commands count too) until the referee has judged `commands` commands; sample its RSS about
    every tenth of the way."""
    worker = workers[0]
    sent = 0
    samples: list[tuple[int, float]] = []
    step = max(commands // 10, 1)
    next_sample = 0
    while sent < commands:
        running = [g for g in pool.games.values() if g.agg is not None and m.to_act(g.agg)]
        missing = live_games - len(running)
        if missing > 0:
            before = len(pool.games)
            await pool.prepare(missing, workers, players=(2,))
            sent += (len(pool.games) - before) * 4  # create, two joins, start
        pool.games = {gid: g for gid, g in pool.games.items() if g.agg is not None and m.to_act(g.agg)}
        envs = pool.wave()
        ids = [e.command_id for e in envs]
        pool.replies.expect(ids)
        await pool.send(pool.encode(envs))
        await pool.replies.wait(timeout_s, workers)
        pool.replies.take(ids)
        pool.expected.clear()
        sent += len(envs)
        if sent >= next_sample:
            rss = worker.rss_kib()
            samples.append((sent, round((rss or 0) / 1024, 1)))
            next_sample += step
    first_after_warmup = samples[min(2, len(samples) - 1)][1]
    return {
        "commands": sent,
        "live_games": live_games,
        "rss_mib_samples": samples,
        "rss_growth_after_warmup_mib": round(samples[-1][1] - first_after_warmup, 1),
    }
