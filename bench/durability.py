"""What durability costs: (b) throughput and (c) latency of one referee, in one run, with
* the AOF fsynced every second (`appendfsync everysec`) against fsynced on every write (`always`),
  on two standalone servers started here with the AOF on;
* the referee answering once the primary has a command's append against once a replica has it too
  (`DICESTREAM_APPEND_WAIT_REPLICAS=1`: WAIT 1 after the appends), on a primary and a replica
  started here, and (`--cluster`) on a 3-master + 3-replica cluster.

Variants alternate round by round (fresh referee and games each time) and each round's ratio is
taken against the baseline measured beside it; the medians of the rounds are reported.

    dicestream bench --section durability       # or: python -m bench.durability [--cluster]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.harness import Pool, Replies, Stats, Worker, free_block, loadavg, start_workers, stop_workers
from bench.sections import latency, quiet_gc, throughput
from dicestream.localredis import LocalCluster, LocalRedis
from dicestream.loop import run as run_loop
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis, connect


async def one(
    name: str,
    url: str,
    pids: list[int],
    env: dict[str, str],
    *,
    shards: int,
    games: int,
    waves: int,
    rate: float,
    seconds: float,
    tag: str,
) -> dict[str, Any]:
    """One referee (leases) on `url` with `env`: (b) on a pool of `games`, then (c) on another."""
    keys = Keys(f"bench-{uuid.uuid4().hex[:8]}")
    r: AnyRedis = connect(url)
    replies = Replies(url, f"{keys.prefix}:reply:bench:{tag}")
    replies.start()
    workers: list[Worker] = []
    try:
        workers = await start_workers(url, keys, shards, 1, r, replies, leases=True, env=env)
        pool = Pool(r, keys, shards, replies, seed=1)
        await pool.prepare(games, workers, tag=f"b{tag}")
        quiet_gc()
        await throughput(pool, workers, 1, Stats())
        sb = Stats()
        b = await throughput(pool, workers, waves, sb, redis_pid=pids)
        cpool = Pool(r, keys, shards, replies, seed=2)
        await cpool.prepare(games, workers, tag=f"c{tag}")
        quiet_gc()
        sc = Stats()
        c = await latency(cpool, workers, rate, seconds, sc, redis_pid=pids)
        return {
            "variant": name,
            "b": b,
            "c": c,
            "outcomes": {"b": sb.as_dict(), "c": sc.as_dict()},
        }
    finally:
        stop_workers(workers)
        await replies.close()
        await r.aclose()


async def compare(
    label: str,
    variants: list[tuple[str, str, list[int], dict[str, str]]],
    *,
    rounds: int,
    say: Callable[[str], None],
    **sizes: Any,
) -> dict[str, Any]:
    """`variants`: (name, url, redis pids, referee env); the first is the baseline."""
    runs: dict[str, list[dict[str, Any]]] = {v[0]: [] for v in variants}
    for rnd in range(rounds):
        order = variants if rnd % 2 == 0 else variants[::-1]
        for name, url, pids, env in order:
            got = await one(name, url, pids, env, tag=f"{label}{rnd}{len(runs[name])}", **sizes)
            runs[name].append(got)
            say(
                f"    {label} {name}: (b) {got['b']['commands_per_s']:,.0f} commands/s, "
                f"(c) p50 {got['c']['p50_ms']:.2f} ms p99 {got['c']['p99_ms']:.2f} ms"
            )
    base = variants[0][0]
    summary: dict[str, Any] = {}
    for name, rs in runs.items():
        summary[name] = {
            "b_commands_per_s": statistics.median(x["b"]["commands_per_s"] for x in rs),
            "c_p50_ms": statistics.median(x["c"]["p50_ms"] for x in rs),
            "c_p99_ms": statistics.median(x["c"]["p99_ms"] for x in rs),
            "b_referee_cpu_us": statistics.median(x["b"]["referee_cpu_us_per_command"] for x in rs),
            "b_redis_cpu_us": statistics.median(x["b"]["redis_cpu_us_per_command"] or 0 for x in rs),
            "others_cpu_share": statistics.median(x["b"]["others_cpu_share"] or 0 for x in rs),
            # Paired with the baseline of the same round.
            "b_ratio": statistics.median(
                x["b"]["commands_per_s"] / y["b"]["commands_per_s"] for x, y in zip(rs, runs[base], strict=True)
            ),
            "c_p50_ratio": statistics.median(
                x["c"]["p50_ms"] / y["c"]["p50_ms"] for x, y in zip(rs, runs[base], strict=True)
            ),
            "c_p99_ratio": statistics.median(
                x["c"]["p99_ms"] / y["c"]["p99_ms"] for x, y in zip(rs, runs[base], strict=True)
            ),
        }
    return {"label": label, "baseline": base, "runs": runs, "summary": summary}


def _pids(*servers: LocalRedis) -> list[int]:
    return [s.proc.pid for s in servers if s.proc is not None]


async def _replicated(primary: LocalRedis, replicas: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    c = primary.client()
    try:
        while True:
            info = c.info("replication")
            online = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
            if len([v for v in online if v.get("state") == "online"]) >= replicas:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"replicas of {primary.url} not online after {timeout_s:.0f}s")
            await asyncio.sleep(0.05)
    finally:
        c.close()


async def run_durability(
    *,
    rounds: int = 3,
    games: int = 1000,
    waves: int = 8,
    rate: float = 500.0,
    seconds: float = 5.0,
    shards: int = 64,
    cluster: bool = False,
    parts: tuple[str, ...] = ("fsync", "wait"),
    console: Console,
) -> dict[str, Any]:
    started = time.monotonic()

    def say(text: str) -> None:
        console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {text}")

    sizes = {"shards": shards, "games": games, "waves": waves, "rate": rate, "seconds": seconds}
    base = Path(tempfile.mkdtemp(prefix="dicestream-bench-durability-"))
    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rounds": rounds,
        "sizes": sizes,
        "data_dir": str(base),
        "loadavg_start": loadavg(),
        "sections": [],
    }
    servers: list[LocalRedis | LocalCluster] = []
    try:
        if "fsync" in parts:
            port = free_block(2)
            every = LocalRedis(port, base / "everysec", "--appendonly", "yes", "--appendfsync", "everysec").start()
            always = LocalRedis(port + 1, base / "always", "--appendonly", "yes", "--appendfsync", "always").start()
            servers += [every, always]
            say(f"[bold]AOF[/]: appendfsync everysec on {every.url}, always on {always.url} (files under {base})")
            out["sections"].append(
                await compare(
                    "aof",
                    [
                        ("everysec", every.url, _pids(every), {}),
                        ("always", always.url, _pids(always), {}),
                    ],
                    rounds=rounds,
                    say=say,
                    **sizes,
                )
            )
            every.stop()
            always.stop()
        if "wait" in parts:
            port = free_block(2)
            primary = LocalRedis(port, base / "primary", "--repl-diskless-sync-delay", "0").start()
            replica = LocalRedis(port + 1, base / "replica", "--replicaof", "127.0.0.1", str(port)).start()
            servers += [primary, replica]
            await _replicated(primary, 1)
            say(f"[bold]WAIT[/]: primary {primary.url} with a replica on port {replica.port}")
            pids = _pids(primary, replica)
            out["sections"].append(
                await compare(
                    "wait",
                    [
                        ("no WAIT", primary.url, pids, {}),
                        ("WAIT 1", primary.url, pids, _WAIT),
                    ],
                    rounds=rounds,
                    say=say,
                    **sizes,
                )
            )
            replica.stop()
            primary.stop()
        if cluster:
            cl = LocalCluster(free_block(6), base / "cluster").start()
            servers.append(cl)
            for node in cl.nodes[: cl.masters]:
                await _replicated(node, 1)
            say(f"[bold]WAIT on a cluster[/]: 3 masters + 3 replicas from {cl.url}")
            pids = _pids(*cl.nodes)
            out["sections"].append(
                await compare(
                    "wait-cluster",
                    [
                        ("cluster, no WAIT", cl.url, pids, {}),
                        ("cluster, WAIT 1", cl.url, pids, _WAIT),
                    ],
                    rounds=rounds,
                    say=say,
                    **sizes,
                )
            )
    finally:
        for s in servers:
            s.stop()
    out["seconds"] = round(time.monotonic() - started, 1)
    out["loadavg_end"] = loadavg()
    report(out, console)
    return out


_WAIT = {"DICESTREAM_APPEND_WAIT_REPLICAS": "1", "DICESTREAM_APPEND_WAIT_TIMEOUT_MS": "5000"}


def report(out: dict[str, Any], console: Console) -> None:
    t = Table(
        title=f"durability options, 1 referee, medians of {out['rounds']} rounds "
        f"(ratios paired with the baseline of each round)"
    )
    for col in ("variant", "(b) commands/s", "ratio", "(c) p50", "ratio", "(c) p99", "ratio", "CPU µs/cmd ref/redis"):
        t.add_column(col, justify="left" if col == "variant" else "right")
    t.add_column("others", justify="right")
    for sec in out["sections"]:
        for name, s in sec["summary"].items():
            t.add_row(
                name,
                f"{s['b_commands_per_s']:,.0f}",
                f"{s['b_ratio']:.2f}x",
                f"{s['c_p50_ms']:.2f} ms",
                f"{s['c_p50_ratio']:.2f}x",
                f"{s['c_p99_ms']:.2f} ms",
                f"{s['c_p99_ratio']:.2f}x",
                f"{s['b_referee_cpu_us']:.0f} / {s['b_redis_cpu_us']:.0f}",
                f"{s['others_cpu_share']:.0%}",
            )
    console.print(t)
    console.print(
        f"load average {' '.join(out['loadavg_start'])} at start, {' '.join(out['loadavg_end'])} at end; "
        f"{out['seconds']} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.durability", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--parts", default="fsync,wait", help="fsync, wait (comma-separated)")
    parser.add_argument("--cluster", action="store_true", help="also WAIT on a 3-master + 3-replica cluster")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "durability.json")
    args = parser.parse_args(argv)
    console = Console(width=160)
    out = run_loop(
        run_durability(
            rounds=args.rounds,
            games=args.games,
            waves=args.waves,
            rate=args.rate,
            seconds=args.seconds,
            shards=args.shards,
            cluster=args.cluster,
            parts=tuple(p.strip() for p in args.parts.split(",") if p.strip()),
            console=console,
        )
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    console.print(f"[dim]results written to {args.json}[/]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
