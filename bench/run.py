"""`dicestream bench`: raw Redis baselines, referee throughput with 1 and 2 worker processes,
command->outcome latency at a fixed load, replay speed and worker memory, in one run.

Everything is written under a random key prefix `bench-<hex>` on the configured Redis and deleted
(SCAN + UNLINK of that prefix only) at the end, also on error. See bench/README.md.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis.utils
from rich.console import Console
from rich.table import Table

from bench import gateway
from bench.harness import (
    Pool,
    Replies,
    Stats,
    Worker,
    delete_prefix,
    loadavg,
    local_redis_pid,
    start_workers,
    stop_workers,
)
from bench.sections import (
    build_replay_logs,
    latency,
    quiet_gc,
    relay_floor,
    replay,
    soak,
    throughput,
    xadd_baseline,
)
from dicestream.loop import run as run_loop
from services.config import Settings
from services.eventstore.keys import Keys
from services.redis_conn import connect

RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"

TARGETS = {
    "one_referee_vs_awaited_xadd": 1.0,  # >=
    "latency_p50_vs_xadd_rtt": 3.0,  # <=
    "latency_p99_vs_xadd_rtt": 10.0,  # <=
    "replay_events_per_s": 250_000.0,  # >=
}


@dataclass(frozen=True)
class Sizes:
    games: int  # concurrent games per throughput pool
    waves: int  # timed waves per repeat (one move per game per wave)
    latency_games: int
    latency_rate: float  # offered commands/s
    latency_seconds: float  # per repeat
    awaited_ops: int
    pipelined_ops: int
    replay_events: int  # minimum events over all replayed logs
    replay_passes: int  # per repeat
    soak_commands: int  # (f) commands judged while watching the referee's memory
    soak_games: int  # (f) games kept running at once


FULL = Sizes(
    games=1000,
    waves=8,
    latency_games=1000,
    latency_rate=500.0,
    latency_seconds=5.0,
    awaited_ops=3000,
    pipelined_ops=30000,
    replay_events=2000,
    replay_passes=5,
    soak_commands=100_000,
    soak_games=1000,
)
QUICK = Sizes(
    games=400,
    waves=3,
    latency_games=400,
    latency_rate=500.0,
    latency_seconds=3.0,
    awaited_ops=1000,
    pipelined_ops=10000,
    replay_events=2000,
    replay_passes=3,
    soak_commands=20_000,
    soak_games=400,
)


def main(url: str, settings: Settings, *, quick: bool = False, repeats: int = 3, console: Console) -> dict[str, Any]:
    sizes = QUICK if quick else FULL
    repeats = max(1, repeats)
    results = run_loop(_main(url, settings, sizes, repeats, console, quick))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    _report(results, console)
    console.print(f"[dim]results written to {RESULTS}[/]")
    return results


def _med(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def _cpu(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("referee_cpu_us_per_command", "redis_cpu_us_per_command", "bench_cpu_us_per_command", "others_cpu_share")
    out: dict[str, Any] = {k: (_med(runs, k) if runs[0][k] is not None else None) for k in keys}
    out["sched_us_per_command"] = _med_sched(runs)
    return out


def _med_sched(runs: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Medians over repeats of each process's [µs on a CPU, µs waiting for one] per command."""
    names = set.intersection(*(set(r.get("sched_us_per_command") or {}) for r in runs))
    return {
        n: [statistics.median(r["sched_us_per_command"][n][i] for r in runs) for i in (0, 1)] for n in sorted(names)
    }


def _med_served(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    names = set.intersection(*(set(r.get("redis_service") or {}) for r in runs))
    return {
        n: {k: statistics.median(r["redis_service"][n][k] for r in runs) for k in ("calls_per_command", "us_per_call")}
        for n in sorted(names)
    }


def _kib(v: int | None) -> float | None:
    return None if v is None else round(v / 1024, 1)


async def _main(
    url: str, settings: Settings, sizes: Sizes, repeats: int, console: Console, quick: bool
) -> dict[str, Any]:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix)
    shards = settings.shards
    r = connect(url)
    info = await r.info("server")
    redis_pid = await local_redis_pid(r)
    workers: list[Worker] = []
    replies: Replies | None = None
    started = time.monotonic()

    def say(text: str) -> None:
        console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {text}")

    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "quick": quick,
        "repeats": repeats,
        "sizes": asdict(sizes),
        "env": {
            "redis_version": info.get("redis_version"),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "hiredis": redis.utils.HIREDIS_AVAILABLE,
            "shards": shards,
            "referee_batch": settings.batch,
            "key_prefix": prefix,
            # Other load on the machine skews every figure: compare with the cpus.
            "loadavg_start": loadavg(),
        },
    }
    try:
        replies = Replies(url, f"{prefix}:reply:bench:run")
        replies.start()
        # (a) baselines, nothing else running.
        say(f"[bold](a)[/] raw XADD baselines on {url} (prefix {prefix})")
        a_runs = [
            await xadd_baseline(r, keys, sizes.awaited_ops, sizes.pipelined_ops, sizes.latency_rate)
            for _ in range(repeats)
        ]
        out["a_xadd"] = {
            "runs": a_runs,
            "awaited_xadd_per_s": _med(a_runs, "awaited_xadd_per_s"),
            "awaited_xadd_rtt_p50_us": _med(a_runs, "awaited_xadd_rtt_p50_us"),
            "awaited_xadd_rtt_p99_us": _med(a_runs, "awaited_xadd_rtt_p99_us"),
            "pipelined_xadd_per_s": _med(a_runs, "pipelined_xadd_per_s"),
            "paced_xadd_rtt_p50_us": _med(a_runs, "paced_xadd_rtt_p50_us"),
            "paced_xadd_rtt_p99_us": _med(a_runs, "paced_xadd_rtt_p99_us"),
        }

        # (d) replay, in this process, nothing else running.
        say(f"[bold](d)[/] replay: playing 4-player games in-process until >= {sizes.replay_events} events")
        replay_ids = await build_replay_logs(r, keys, sizes.replay_events)
        await replay(r, keys, replay_ids, 1)  # warm-up
        d_runs = [await replay(r, keys, replay_ids, sizes.replay_passes) for _ in range(repeats)]
        out["d_replay"] = {
            "runs": d_runs,
            "games": d_runs[0]["games"],
            "events": d_runs[0]["events"],
            "events_per_s": _med(d_runs, "events_per_s"),
            "fold_only_events_per_s": _med(d_runs, "fold_only_events_per_s"),
        }

        # (b) one referee process, with (m) its memory; then (c) on the same process.
        say("[bold](b)[/] starting 1 referee process")
        workers = await start_workers(url, keys, shards, 1, r, replies)
        rss_idle = workers[0].rss_kib()
        say(f"    preparing {sizes.games} games (create, join every seat, start)")
        pool = Pool(r, keys, shards, replies, seed=1)
        await pool.prepare(sizes.games, workers)
        quiet_gc()
        rss_before = workers[0].rss_kib()
        await throughput(pool, workers, 1, Stats())  # warm-up wave, not counted
        stats1 = Stats()
        say(f"    timing {repeats} x {sizes.waves} waves of one move per game")
        b1 = [await throughput(pool, workers, sizes.waves, stats1, redis_pid=redis_pid) for _ in range(repeats)]
        rss_after = workers[0].rss_kib()
        out["b_throughput_1"] = {
            "processes": 1,
            "runs": b1,
            "commands_per_s": _med(b1, "commands_per_s"),
            "outcomes": stats1.as_dict(),
            **_cpu(b1),
        }
        out["m_memory"] = {
            "pid": workers[0].pid,
            "rss_idle_mib": _kib(rss_idle),
            "rss_before_mib": _kib(rss_before),
            "rss_after_mib": _kib(rss_after),
            "games_cached": sizes.games,
        }

        say(f"[bold](c)[/] latency at {sizes.latency_rate:.0f} commands/s, preparing {sizes.latency_games} games")
        cpool = Pool(r, keys, shards, replies, seed=2)
        await cpool.prepare(sizes.latency_games, workers)
        quiet_gc()
        stats_c = Stats()
        # (c0) alternates with (c): the same pace through a worker that judges nothing.
        c_runs, c0_runs = [], []
        for _ in range(repeats):
            c_runs.append(await latency(cpool, workers, sizes.latency_rate, sizes.latency_seconds, stats_c, redis_pid))
            c0_runs.append(await relay_floor(r, url, keys, sizes.latency_rate, sizes.latency_seconds))
        out["c0_relay"] = {"runs": c0_runs, "p50_ms": _med(c0_runs, "p50_ms"), "p99_ms": _med(c0_runs, "p99_ms")}
        out["c_latency"] = {
            "runs": c_runs,
            "p50_ms": _med(c_runs, "p50_ms"),
            "p99_ms": _med(c_runs, "p99_ms"),
            "offered_per_s": _med(c_runs, "offered_per_s"),
            "outcomes": stats_c.as_dict(),
            "others_cpu_share": _med(c_runs, "others_cpu_share"),
            "sched_us_per_command": _med_sched(c_runs),
            "redis_service": _med_served(c_runs),
        }
        out["m_memory"]["rss_after_latency_mib"] = _kib(workers[0].rss_kib())
        out["m_memory"]["games_cached"] = sizes.games + sizes.latency_games
        stop_workers(workers)
        workers = []

        # (b) two referee processes, shards split between them.
        say("[bold](b)[/] starting 2 referee processes (shards split)")
        workers = await start_workers(url, keys, shards, 2, r, replies)
        pool2 = Pool(r, keys, shards, replies, seed=3)
        await pool2.prepare(sizes.games, workers)
        quiet_gc()
        await throughput(pool2, workers, 1, Stats())
        stats2 = Stats()
        b2 = [await throughput(pool2, workers, sizes.waves, stats2, redis_pid=redis_pid) for _ in range(repeats)]
        out["b_throughput_2"] = {
            "processes": 2,
            "runs": b2,
            "commands_per_s": _med(b2, "commands_per_s"),
            "outcomes": stats2.as_dict(),
            **_cpu(b2),
            "shards": [w.own for w in workers],
            "rss_after_mib": [_kib(w.rss_kib()) for w in workers],
        }
        stop_workers(workers)
        workers = []

        # (f) memory of one referee over a long run with games starting and ending.
        say(
            f"[bold](f)[/] memory over a {sizes.soak_commands:,}-command run (1 referee, {sizes.soak_games} live games)"
        )
        workers = await start_workers(url, keys, shards, 1, r, replies)
        spool = Pool(r, keys, shards, replies, seed=4)
        out["f_soak"] = await soak(spool, workers, sizes.soak_commands, sizes.soak_games)
        stop_workers(workers)
        workers = []

        # (g) the gateway against direct Redis (its own referee and gateway processes).
        say("[bold](g)[/] the HTTP/WebSocket gateway: 1 referee process and 1 gateway process")
        g_sizes = gateway.QUICK if quick else gateway.FULL
        out["g_gateway"] = await gateway.gateway_section(url, r, keys, shards, g_sizes, repeats, say)
    finally:
        stop_workers(workers)
        if replies is not None:
            await replies.close()
        deleted = await delete_prefix(r, prefix)
        await r.aclose()
        gc.unfreeze()
        say(f"deleted {deleted} keys under {prefix}:")
    out["seconds"] = round(time.monotonic() - started, 1)
    out["env"]["loadavg_end"] = loadavg()
    out["ratios"] = _ratios(out)
    return out


def _ratios(out: dict[str, Any]) -> dict[str, Any]:
    a = out["a_xadd"]
    rtt_ms = a["awaited_xadd_rtt_p50_us"] / 1e3
    b1 = out["b_throughput_1"]["commands_per_s"]
    b2 = out["b_throughput_2"]["commands_per_s"]
    c = out["c_latency"]
    ratios = {
        "one_referee_vs_awaited_xadd": b1 / a["awaited_xadd_per_s"],
        "two_referees_vs_awaited_xadd": b2 / a["awaited_xadd_per_s"],
        "two_vs_one_referee": b2 / b1,
        "latency_p50_vs_xadd_rtt": c["p50_ms"] / rtt_ms,
        "latency_p99_vs_xadd_rtt": c["p99_ms"] / rtt_ms,
        # Context, not targets: the same percentiles of an awaited XADD sent at (c)'s pace.
        "latency_p50_vs_paced_xadd_rtt": c["p50_ms"] * 1e3 / a["paced_xadd_rtt_p50_us"],
        "latency_p99_vs_paced_xadd_rtt": c["p99_ms"] * 1e3 / a["paced_xadd_rtt_p99_us"],
        "replay_events_per_s": out["d_replay"]["events_per_s"],
    }
    c0 = out.get("c0_relay")
    if c0:
        # Context, not targets: the floor any worker between two streams has here, and what the
        # referee adds to it.
        ratios |= {
            "relay_p50_vs_xadd_rtt": c0["p50_ms"] / rtt_ms,
            "relay_p99_vs_xadd_rtt": c0["p99_ms"] / rtt_ms,
            "latency_p50_vs_relay": c["p50_ms"] / c0["p50_ms"],
            "latency_p99_vs_relay": c["p99_ms"] / c0["p99_ms"],
        }
    g = out.get("g_gateway")
    if g:
        # Context, not targets: the gateway against direct Redis, same run.
        ratios |= {f"gateway_{k}": v for k, v in g["ratios"].items()}
    met = {
        "one_referee_vs_awaited_xadd": ratios["one_referee_vs_awaited_xadd"] >= TARGETS["one_referee_vs_awaited_xadd"],
        "latency_p50_vs_xadd_rtt": ratios["latency_p50_vs_xadd_rtt"] <= TARGETS["latency_p50_vs_xadd_rtt"],
        "latency_p99_vs_xadd_rtt": ratios["latency_p99_vs_xadd_rtt"] <= TARGETS["latency_p99_vs_xadd_rtt"],
        "replay_events_per_s": ratios["replay_events_per_s"] >= TARGETS["replay_events_per_s"],
    }
    return {"values": ratios, "targets": TARGETS, "met": met}


def _fmt(v: float, unit: str = "") -> str:
    if v >= 1000:
        return f"{v:,.0f}{unit}"
    if v >= 100:
        return f"{v:.0f}{unit}"
    return f"{v:.2f}{unit}"


def _report(out: dict[str, Any], console: Console) -> None:
    a, d, c = out["a_xadd"], out["d_replay"], out["c_latency"]
    b1, b2, e = out["b_throughput_1"], out["b_throughput_2"], out["m_memory"]
    ratios, met = out["ratios"]["values"], out["ratios"]["met"]

    def runs(section: dict[str, Any], key: str, unit: str = "") -> str:
        return " / ".join(_fmt(r[key], unit) for r in section["runs"])

    def ok(name: str) -> str:
        return "[green]yes[/]" if met[name] else "[red]no[/]"

    sz = out["sizes"]
    t = Table(
        title=f"dicestream bench ({'quick' if out['quick'] else 'full'}, medians of {out['repeats']} repeats, "
        f"redis {out['env']['redis_version']}, {out['env']['cpus']} CPUs)"
    )
    for col in ("figure", "median", "repeats", "ratio", "target", "met"):
        t.add_column(col, justify="right" if col not in ("figure",) else "left")
    t.add_row("(a) awaited XADD /s", _fmt(a["awaited_xadd_per_s"]), runs(a, "awaited_xadd_per_s"), "", "", "")
    t.add_row(
        "(a) awaited XADD round trip p50",
        _fmt(a["awaited_xadd_rtt_p50_us"], " µs"),
        runs(a, "awaited_xadd_rtt_p50_us"),
        "",
        "",
        "",
    )
    t.add_row(
        "(a) pipelined XADD /s (batches of 100)",
        _fmt(a["pipelined_xadd_per_s"]),
        runs(a, "pipelined_xadd_per_s"),
        "",
        "",
        "",
    )
    t.add_row(
        f"(a) awaited XADD round trip sent at {sz['latency_rate']:.0f}/s, p50 / p99",
        f"{_fmt(a['paced_xadd_rtt_p50_us'])} / {_fmt(a['paced_xadd_rtt_p99_us'], ' µs')}",
        runs(a, "paced_xadd_rtt_p50_us"),
        "",
        "",
        "",
    )
    t.add_row(
        f"(b) 1 referee, commands/s ({sz['games']} games)",
        _fmt(b1["commands_per_s"]),
        runs(b1, "commands_per_s"),
        f"{ratios['one_referee_vs_awaited_xadd']:.2f}x XADD",
        f">= {TARGETS['one_referee_vs_awaited_xadd']:.1f}x",
        ok("one_referee_vs_awaited_xadd"),
    )
    t.add_row(
        f"(b) 2 referees, commands/s ({sz['games']} games)",
        _fmt(b2["commands_per_s"]),
        runs(b2, "commands_per_s"),
        f"{ratios['two_referees_vs_awaited_xadd']:.2f}x XADD, {ratios['two_vs_one_referee']:.2f}x one",
        "",
        "",
    )
    for label, sec in (("1 referee", b1), ("2 referees", b2)):
        redis_us = sec["redis_cpu_us_per_command"]
        t.add_row(
            f"(b) CPU per command, {label}",
            f"{sec['referee_cpu_us_per_command']:.0f} µs referee",
            f"{redis_us:.0f} µs redis" if redis_us is not None else "redis not local",
            f"bench {sec['bench_cpu_us_per_command']:.0f} µs",
            "others used",
            f"{sec['others_cpu_share']:.0%} of CPUs",
        )
    t.add_row(
        f"(c) latency p50 at {c['offered_per_s']:.0f}/s",
        _fmt(c["p50_ms"], " ms"),
        runs(c, "p50_ms"),
        f"{ratios['latency_p50_vs_xadd_rtt']:.1f}x RTT ({ratios['latency_p50_vs_paced_xadd_rtt']:.1f}x paced)",
        f"<= {TARGETS['latency_p50_vs_xadd_rtt']:.0f}x",
        ok("latency_p50_vs_xadd_rtt"),
    )
    t.add_row(
        f"(c) latency p99 at {c['offered_per_s']:.0f}/s",
        _fmt(c["p99_ms"], " ms"),
        runs(c, "p99_ms"),
        f"{ratios['latency_p99_vs_xadd_rtt']:.1f}x RTT ({ratios['latency_p99_vs_paced_xadd_rtt']:.1f}x paced)",
        f"<= {TARGETS['latency_p99_vs_xadd_rtt']:.0f}x",
        ok("latency_p99_vs_xadd_rtt"),
    )
    c0 = out.get("c0_relay")
    if c0:
        t.add_row(
            "(c0) null relay p50 / p99 at the same pace",
            f"{_fmt(c0['p50_ms'])} / {_fmt(c0['p99_ms'], ' ms')}",
            runs(c0, "p50_ms"),
            f"{ratios['relay_p50_vs_xadd_rtt']:.1f}x / {ratios['relay_p99_vs_xadd_rtt']:.1f}x RTT",
            f"(c) is {ratios['latency_p50_vs_relay']:.1f}x / {ratios['latency_p99_vs_relay']:.1f}x",
            "",
        )
    sched = c.get("sched_us_per_command") or {}
    if sched:
        procs = [n for n in ("referee", "redis", "bench") if n in sched]
        for i, what in ((0, "on a CPU"), (1, "waiting for a CPU")):
            cells = [f"{sched[n][i]:.0f} µs {n}" for n in procs]
            t.add_row(f"(c) per command, {what}", *cells, *[""] * (5 - len(cells)))
    served = c.get("redis_service") or {}
    if served:
        cells = [
            f"{name.upper()} {v['us_per_call']:.0f} µs x{v['calls_per_command']:.1f}" for name, v in served.items()
        ]
        t.add_row("(c) Redis time per call (x calls per command)", *cells[:4], *[""] * (5 - len(cells[:4])))
    t.add_row(
        f"(d) replay events/s ({d['events']} events, {d['games']} logs)",
        _fmt(d["events_per_s"]),
        runs(d, "events_per_s"),
        f"fold only: {_fmt(d['fold_only_events_per_s'])}/s",
        f">= {TARGETS['replay_events_per_s']:,.0f}",
        ok("replay_events_per_s"),
    )
    t.add_row(
        "(m) referee RSS before -> after (b)",
        f"{e['rss_before_mib']} -> {e['rss_after_mib']} MiB",
        f"idle {e['rss_idle_mib']} MiB",
        f"after (c): {e.get('rss_after_latency_mib')} MiB",
        "",
        "",
    )
    f = out.get("f_soak")
    if f:
        samples = f["rss_mib_samples"]
        t.add_row(
            f"(f) referee RSS over {f['commands']:,} commands",
            f"+{f['rss_growth_after_warmup_mib']} MiB",
            f"{samples[0][1]} -> {samples[-1][1]} MiB",
            f"{len(samples)} samples, {f['live_games']} live games",
            "flat",
            "",
        )
    g = out.get("g_gateway")
    if g:
        gateway.report(g, console, t)
    console.print(t)
    for name, sec in (("(b) 1 referee", b1), ("(b) 2 referees", b2), ("(c)", c)):
        o = sec["outcomes"]
        if o["rejected"] or o["version_mismatch"]:
            console.print(
                f"[yellow]{name}: {o['rejected']} rejected {o['rejection_rules']}, "
                f"{o['version_mismatch']} outcomes at an unexpected version[/]"
            )
    env = out["env"]
    console.print(
        f"load average at start {' '.join(env['loadavg_start'])}, at end {' '.join(env['loadavg_end'])} "
        f"on {env['cpus']} CPUs (other processes skew every figure)"
    )
    floor = (
        f", null relay p50 {ratios['relay_p50_vs_xadd_rtt']:.1f}x p99 {ratios['relay_p99_vs_xadd_rtt']:.1f}x"
        if c0
        else ""
    )
    console.print(
        f"ratios: (b) {ratios['one_referee_vs_awaited_xadd']:.2f}x (1 proc), "
        f"{ratios['two_referees_vs_awaited_xadd']:.2f}x (2 procs) of awaited XADD/s; "
        f"(c) p50 {ratios['latency_p50_vs_xadd_rtt']:.1f}x, p99 {ratios['latency_p99_vs_xadd_rtt']:.1f}x "
        f"one XADD round trip ({a['awaited_xadd_rtt_p50_us']:.0f} µs){floor}; "
        f"(d) {d['events_per_s']:,.0f} events/s; total {out['seconds']} s"
    )
