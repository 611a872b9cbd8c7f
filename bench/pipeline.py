"""(e) The whole pipeline: every service as its own process, reference bots playing N concurrent
games in a closed loop, against (b) (one referee, the bench sending the moves) in the same run.

    dicestream bench --section pipeline      (or: python -m bench.pipeline [--quick] [--levels 16,64])

A private `redis-server` (the system binary, no persistence) on a free loopback port, so that its
CPU and memory are this section's alone. See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import msgspec
from rich.console import Console
from rich.table import Table

from bench.harness import (
    BenchError,
    CpuMeter,
    Pool,
    Replies,
    Stats,
    Worker,
    command_stats,
    loadavg,
    start_workers,
    stop_workers,
)
from bench.memory import weigh
from bench.sections import percentile, quiet_gc, throughput
from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import HOSTED, HostBot
from dicestream.localredis import LocalRedis, free_ports, server_binary
from dicestream.loop import run as run_loop
from services import logs
from services.archive import ArchiveFolder, archive_game
from services.botrunner.app import BotRunner
from services.eventstore.keys import Keys, shard_of
from services.readmodel import ReadModelKeys
from services.redis_conn import AnyRedis, Entries, connect

SHARDS = 8
ROLES = ("referee", "projector", "turns", "botrunner")
PLAYERS = (2, 3, 4)
FILLERS = 16  # games created at once when the loop tops the pool up (a thousand games need many)


class Sizes(msgspec.Struct, frozen=True):
    b_games: int
    b_waves: int
    levels: tuple[int, ...]
    seconds: float
    repeats: int


FULL = Sizes(b_games=1000, b_waves=8, levels=(16, 64, 256), seconds=10.0, repeats=3)
QUICK = Sizes(b_games=400, b_waves=3, levels=(16, 64), seconds=4.0, repeats=1)


def batch_sums(worker: Worker) -> tuple[float, float]:
    """(entries, batches) its shard readers have handled so far (its /metrics)."""
    samples = worker.metrics()
    total = sum(v for k, v in samples.items() if k.startswith("dicestream_batch_entries_sum"))
    count = sum(v for k, v in samples.items() if k.startswith("dicestream_batch_entries_count"))
    return total, count


def accepted(worker: Worker) -> float:
    """Commands the referee accepted so far (its /metrics, every game type)."""
    samples = worker.metrics().items()
    return sum(v for k, v in samples if k.startswith("dicestream_commands_total{") and 'outcome="accepted"' in k)


class Loop:
    """Keeps `n` games running: bots seated through a bot runner object of this process (as
    `dicestream tournament` does: JoinSeat through the referee, the seat recorded for whichever
    bot runner process plays the shard), started, and replaced once over."""

    def __init__(self, r: AnyRedis, keys: Keys, kinds: Sequence[str], game_type: str = "sentient") -> None:
        self.redis = r
        self.keys = keys
        self.kinds = list(kinds)
        self.game_type = game_type
        self.running: set[str] = set()
        self.finished: list[str] = []
        self.warmup: list[str] = []
        self.target = 0
        self._made = 0
        self._busy = 0  # games being created and started
        self._hosts = [BotRunner(r, keys, SHARDS, name=f"bench-host-{i}") for i in range(FILLERS)]
        self._task: asyncio.Task[None] | None = None

    async def _new_game(self, host: BotRunner) -> None:
        i = self._made
        self._made += 1
        n = PLAYERS[i % len(PLAYERS)]
        game_id = f"pipe-{uuid.uuid4().hex[:10]}"
        reply = await host.commands.call(game_id, lc.CreateGame(game_type=self.game_type, num_players=n))
        if reply.outcome.status != "accepted":
            raise BenchError(f"CreateGame refused: {reply.outcome.rule} {reply.outcome.detail}")
        for seat in range(n):
            kind = self.kinds[(i + seat) % len(self.kinds)]
            req = HostBot(game_id=game_id, seat=seat, kind=kind, game_type=self.game_type, seed=i * 31 + seat)
            hosted = await host.host(req)
            if hosted.status != HOSTED:
                raise BenchError(f"could not seat {kind} in {game_id}: {hosted.reason}")
        if not await host.start_game(game_id, 0):
            raise BenchError(f"StartGame refused in {game_id}")
        self.running.add(game_id)

    async def _fill(self, host: BotRunner) -> None:
        while True:
            if len(self.running) + self._busy < self.target:
                self._busy += 1
                try:
                    await self._new_game(host)
                finally:
                    self._busy -= 1
            else:
                await asyncio.sleep(0.05)

    async def _reap(self) -> None:
        """Every 0.25 s, which running games are over, from the read models' summaries: one HMGET
        per shard (few calls, so that the Redis calls per command stay the pipeline's)."""
        rm = ReadModelKeys(self.keys)
        while True:
            by_shard: dict[int, list[str]] = {}
            for g in self.running:
                by_shard.setdefault(shard_of(g, SHARDS), []).append(g)
            pipe = self.redis.pipeline(transaction=False)
            for shard, ids in by_shard.items():
                pipe.hmget(rm.games(shard), ids)
            for ids, summaries in zip(by_shard.values(), await pipe.execute(), strict=True):
                for g, raw in zip(ids, summaries, strict=True):
                    if raw is not None and b'"status":"over"' in raw:
                        self.running.discard(g)
                        self.finished.append(g)
            await asyncio.sleep(0.25)

    async def _run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._reap())
            for host in self._hosts:
                tg.create_task(self._fill(host))

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def check(self) -> None:
        if self._task is not None and self._task.done():
            self._task.result()  # raises what stopped it
            raise BenchError("the game loop stopped")

    async def wait_full(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.running) < self.target:
            self.check()
            if time.monotonic() > deadline:
                raise BenchError(f"only {len(self.running)} of {self.target} games running after {timeout_s:.0f} s")
            await asyncio.sleep(0.05)

    async def drain(self, timeout_s: float = 300.0) -> None:
        self.target = 0
        deadline = time.monotonic() + timeout_s
        while self.running or self._busy:
            self.check()
            if time.monotonic() > deadline:
                raise BenchError(f"{len(self.running)} games unfinished after {timeout_s:.0f} s")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        for host in self._hosts:
            await host.commands.close()  # deletes its reply stream, as every client does
        self._hosts = []


async def turn_latencies(r: AnyRedis, keys: Keys, game_ids: Sequence[str], since_ms: int, until_ms: int) -> list[int]:
    """For each bot move recorded in [since_ms, until_ms]: ms from the command whose events made
    the seat due (the previous command's) to this one's, both as the referee recorded them. That
    is one whole turn: judge, append, bus, turn service, notice, bot runner, intake, judge."""
    out: list[int] = []
    pipe = r.pipeline(transaction=False)
    for g in game_ids:
        pipe.xrange(keys.log(g))
    for g, entries in zip(game_ids, await pipe.execute(), strict=True):
        times: list[tuple[str, int]] = []
        for entry_id, fields in cast(Entries, entries):
            env = codec.decode_event(fields[b"data"], g, codec.entry_version(entry_id))
            if env.command_id and (not times or times[-1][0] != env.command_id):
                times.append((env.command_id, env.recorded_at_ms))
        for (_, before), (command_id, at) in itertools.pairwise(times):
            if command_id.startswith("bot-") and since_ms <= at <= until_ms:
                out.append(at - before)
    return out


async def pipeline_level(
    r: AnyRedis, keys: Keys, loop: Loop, procs: dict[str, Worker], redis_pid: int, n: int, seconds: float
) -> dict[str, Any]:
    loop.target = n
    await loop.wait_full(120.0 + n / 5)
    await asyncio.sleep(1.0)  # the pool's first turns settle
    referee = procs["referee"]
    meter = CpuMeter(groups={**{name: [w.pid] for name, w in procs.items()}, "redis": [redis_pid]})
    before = accepted(referee)
    batches_before = {name: batch_sums(w) for name, w in procs.items()}
    stats_before = await command_stats(r)
    since_ms = int(time.time() * 1000)
    meter.start()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        loop.check()
        for w in procs.values():
            w.check_alive()
        await asyncio.sleep(0.2)
    cpu = meter.stop()
    elapsed = time.perf_counter() - t0
    until_ms = int(time.time() * 1000)
    commands = accepted(referee) - before
    stats_after = await command_stats(r)
    batches = {name: batch_sums(w) for name, w in procs.items()}
    if commands <= 0:
        raise BenchError(f"no command accepted in {seconds} s at {n} games")
    moved = list(loop.running) + loop.finished[-4 * n :]
    lat = await turn_latencies(r, keys, moved, since_ms, until_ms)
    # The scheduler's count where the kernel keeps one, else the tick-sampled one.
    per = {name: cpu.get(f"{name}_run_s", cpu[name]) / commands * 1e6 for name in (*procs, "redis", "bench")}
    return {
        "games": n,
        "seconds": elapsed,
        "commands": commands,
        "commands_per_s": commands / elapsed,
        "cpu_us_per_command": per,
        "services_and_redis_us": sum(per[name] for name in (*procs, "redis")),
        "without_bots_us": sum(per[name] for name in (*procs, "redis") if name != "botrunner"),
        "turn_p50_ms": percentile(lat, 50),
        "turn_p99_ms": percentile(lat, 99),
        "turns_measured": len(lat),
        # Entries each process's shard reader handed over per batch, on average over the window.
        "entries_per_batch": {
            name: (batches[name][0] - batches_before[name][0]) / max(1.0, batches[name][1] - batches_before[name][1])
            for name in procs
        },
        # Redis calls per accepted command, by command (a script's own calls in their rows too,
        # as INFO commandstats counts them; the bench's INFO calls left out).
        "redis_calls_per_command": {
            name: (calls - stats_before.get(name, (0, 0))[0]) / commands
            for name, (calls, _) in sorted(stats_after.items())
            if name != "info" and calls > stats_before.get(name, (0, 0))[0]
        },
        "others_cpu_share": cpu["others"] / cpu["machine_total"] if cpu["machine_total"] else None,
    }


def _med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(run[key]) for run in runs)


async def baseline(url: str, r: AnyRedis, keys: Keys, redis_pid: int, sizes: Sizes, say: Any) -> dict[str, Any]:
    """(b) with one referee process on this section's Redis, as `dicestream bench` measures it."""
    replies = Replies(url, keys.reply("bench", uuid.uuid4().hex))
    replies.start()
    workers: list[Worker] = []
    try:
        workers = await start_workers(url, keys, SHARDS, 1, r, replies)
        say(f"(b) preparing {sizes.b_games} games for one referee")
        pool = Pool(r, keys, SHARDS, replies, seed=1)
        await pool.prepare(sizes.b_games, workers)
        quiet_gc()
        await throughput(pool, workers, 1, Stats())
        runs = [
            await throughput(pool, workers, sizes.b_waves, Stats(), redis_pid=redis_pid) for _ in range(sizes.repeats)
        ]
    finally:
        stop_workers(workers)
        await replies.close()
    return {
        "runs": runs,
        "commands_per_s": _med(runs, "commands_per_s"),
        "referee_cpu_us_per_command": _med(runs, "referee_cpu_us_per_command"),
        "redis_cpu_us_per_command": _med(runs, "redis_cpu_us_per_command"),
    }


def start_services(url: str, prefix: str, bots: str) -> dict[str, Worker]:
    env = {
        "DICESTREAM_BOTS": bots,
        "DICESTREAM_TRIM_EVERY_MS": "500",
    }
    every = list(range(SHARDS))  # one process per role, owning every shard: no lease traffic
    return {role: Worker(url, prefix, SHARDS, every, env, role=role) for role in ROLES}


async def run_pipeline(
    sizes: Sizes, kinds: Sequence[str] = ("random",), console: Console | None = None
) -> dict[str, Any]:
    console = console or Console()

    def say(text: str) -> None:
        console.print(f"[dim]{text}[/]")

    out: dict[str, Any] = {"loadavg_before": loadavg(), "kinds": list(kinds), "shards": SHARDS}
    with tempfile.TemporaryDirectory() as tmp:
        node = LocalRedis(free_ports(1), Path(tmp), binary=server_binary()).start()
        r = connect(node.url)
        try:
            assert node.proc is not None
            redis_pid = int((await r.info("server"))["process_id"])
            out["b"] = await baseline(node.url, r, Keys(f"bench-{uuid.uuid4().hex[:6]}"), redis_pid, sizes, say)
            keys = Keys(f"pipe-{uuid.uuid4().hex[:6]}")
            procs = start_services(node.url, keys.prefix, ",".join(sorted(set(kinds))))
            loop = Loop(r, keys, kinds)
            replies = Replies(node.url, keys.reply("bench", uuid.uuid4().hex))
            replies.start()
            try:
                await procs["referee"].wait_ready(r, keys, replies)
                loop.start()
                say("(e) one game through every service first (all processes up and serving)")
                loop.target = 1
                await loop.wait_full(120.0)
                await loop.drain(120.0)
                loop.warmup, loop.finished = loop.finished, []
                used_before = int((await r.info("memory"))["used_memory"])
                levels = []
                for n in sizes.levels:
                    say(f"(e) {n} concurrent games, {sizes.repeats} x {sizes.seconds:.0f} s")
                    runs = [
                        await pipeline_level(r, keys, loop, procs, redis_pid, n, sizes.seconds)
                        for _ in range(sizes.repeats)
                    ]
                    levels.append(_summarise(runs))
                out["e"] = levels
                say("(e) letting every game finish, then weighing what finished games keep in Redis")
                await loop.drain()
                await loop.stop()
                await asyncio.sleep(2.0)  # a few retention rounds (DICESTREAM_TRIM_EVERY_MS 500)
                classes = await weigh(r, keys.prefix)
                games = len(loop.finished) + len(loop.warmup)
                used = int((await r.info("memory"))["used_memory"]) - used_before
                say(f"(e) archiving the {games} finished games")
                folder = ArchiveFolder(Path(tmp) / "archive")
                ids = [*loop.finished, *loop.warmup]
                archived = [await archive_game(r, keys, SHARDS, folder, g) for g in ids]
                if bad := [a for a in archived if a.status != "archived"]:
                    raise BenchError(f"{len(bad)} games not archived, e.g. {bad[0]}")
                after = await weigh(r, keys.prefix)
                out["memory"] = {
                    "games": games,
                    "bytes_per_game": sum(classes.values()) / games,
                    "by_key": {k: v / games for k, v in sorted(classes.items())},
                    "used_memory_growth_per_game": used / games,
                    "archived_bytes_per_game": sum(after.values()) / games,
                    "archived_by_key": {k: v / games for k, v in sorted(after.items())},
                    "archive_file_bytes_per_game": sum(a.file_bytes for a in archived) / games,
                }
            finally:
                await loop.stop()
                await replies.close()
                stop_workers(procs.values())
        finally:
            await r.aclose()
            node.stop()
    out["loadavg_after"] = loadavg()
    return out


def _summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    names = runs[0]["cpu_us_per_command"].keys()
    return {
        "games": runs[0]["games"],
        "runs": runs,
        "commands_per_s": _med(runs, "commands_per_s"),
        "cpu_us_per_command": {n: statistics.median(r["cpu_us_per_command"][n] for r in runs) for n in names},
        "services_and_redis_us": _med(runs, "services_and_redis_us"),
        "without_bots_us": _med(runs, "without_bots_us"),
        "turn_p50_ms": _med(runs, "turn_p50_ms"),
        "turn_p99_ms": _med(runs, "turn_p99_ms"),
        "others_cpu_share": _med(runs, "others_cpu_share") if runs[0]["others_cpu_share"] is not None else None,
        "entries_per_batch": {
            n: statistics.median(r["entries_per_batch"][n] for r in runs) for n in runs[0]["entries_per_batch"]
        },
        "redis_calls_per_command": {
            n: statistics.median(r["redis_calls_per_command"].get(n, 0.0) for r in runs)
            for n in sorted({n for r in runs for n in r["redis_calls_per_command"]})
        },
    }


def report(out: dict[str, Any], console: Console) -> None:
    b = out["b"]
    ref = b["referee_cpu_us_per_command"]
    table = Table(
        title=f"(e) the whole pipeline against (b) in one run ({', '.join(out['kinds'])} bots; "
        f"(b): {b['commands_per_s']:,.0f} commands/s, referee {ref:.0f} µs and Redis "
        f"{b['redis_cpu_us_per_command']:.0f} µs per command)"
    )
    # games, accepted/s, its ratio to (b), turn latency, CPU µs of each process, their sum, and
    # the sum (without the bot runner) over (b)'s referee.
    cols = ("N", "cmd/s", "x(b)", "p50/p99 ms", "ref", "proj", "turns", "bots", "redis", "all", "/ref", "-bots/ref")
    for col in cols:
        table.add_column(col, justify="right", no_wrap=True)
    for lvl in out["e"]:
        cpu = lvl["cpu_us_per_command"]
        table.add_row(
            str(lvl["games"]),
            f"{lvl['commands_per_s']:,.0f}",
            f"{lvl['commands_per_s'] / b['commands_per_s']:.2f}x",
            f"{lvl['turn_p50_ms']:.0f}/{lvl['turn_p99_ms']:.0f}",
            *(f"{cpu[name]:.0f}" for name in (*ROLES, "redis")),
            f"{lvl['services_and_redis_us']:.0f}",
            f"{lvl['services_and_redis_us'] / ref:.1f}x",
            f"{lvl['without_bots_us'] / ref:.1f}x",
        )
    console.print(table)
    for lvl in out["e"]:
        calls = lvl["redis_calls_per_command"]
        top = ", ".join(f"{n} {c:.2f}" for n, c in sorted(calls.items(), key=lambda kv: -kv[1])[:8])
        console.print(f"Redis calls per accepted command at N={lvl['games']}: {sum(calls.values()):.1f} ({top})")
        sizes = ", ".join(f"{n} {v:.1f}" for n, v in lvl["entries_per_batch"].items())
        console.print(f"Entries per batch at N={lvl['games']}: {sizes}")
    mem = out["memory"]
    parts = ", ".join(f"{k} {v / 1024:.1f}" for k, v in mem["by_key"].items())
    console.print(
        f"Redis per finished game ({mem['games']} games, MEMORY USAGE): "
        f"[bold]{mem['bytes_per_game'] / 1024:.1f} KB[/] ({parts} KB); used_memory growth "
        f"{mem['used_memory_growth_per_game'] / 1024:.1f} KB; after archiving "
        f"[bold]{mem['archived_bytes_per_game'] / 1024:.2f} KB[/], of which turn notices (trimmed once the bot "
        f"runner has them) {mem['archived_by_key'].get('turn notices', 0) / 1024:.2f} KB (files "
        f"{mem['archive_file_bytes_per_game'] / 1024:.1f} KB a game). CPU columns: µs per accepted command."
    )
    before, after = " ".join(out["loadavg_before"]), " ".join(out["loadavg_after"])
    console.print(f"[dim]load average before {before}, after {after}[/]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--levels", help="concurrent games, comma-separated (default 16,64,256; quick 16,64)")
    parser.add_argument("--seconds", type=float, help="seconds per measured window")
    parser.add_argument("--bots", default="random", help="bot kinds, comma-separated (seats rotate over them)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the table")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.levels:
        sizes = msgspec.structs.replace(sizes, levels=tuple(int(x) for x in args.levels.split(",")))
    if args.seconds:
        sizes = msgspec.structs.replace(sizes, seconds=args.seconds)
    logs.configure("warning")
    console = Console(stderr=args.json)
    out = run_loop(run_pipeline(sizes, [k for k in args.bots.split(",") if k], console))
    if args.json:
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        report(out, console)


if __name__ == "__main__":
    main()
