"""(b) on a Redis Cluster: referee throughput with 1, 2 and 3 referee processes sharing the shards by
leases on a 3-master + 3-replica cluster this bench starts on loopback, against one referee on a
standalone server started beside it, in the same run. See bench/README.md.

`dicestream bench --section cluster` (or `python -m bench.cluster`).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import redis.asyncio as aredis
from rich.console import Console
from rich.table import Table

from bench.harness import (
    Pool,
    Replies,
    Stats,
    Worker,
    cpu_seconds,
    free_block,
    loadavg,
    sched_ns,
    start_workers,
    stop_workers,
)
from bench.sections import quiet_gc, throughput
from dicestream.localredis import LocalCluster, LocalRedis
from dicestream.loop import run as run_loop
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis, connect

# What a referee's batch costs each node: the calls of its path (a script's own calls count in
# their rows too: XADD, HSET, XREVRANGE...).
NODE_COMMANDS = (
    "command|getkeys",
    "evalsha",
    "xreadgroup",
    "xadd",
    "xack",
    "xrange",
    "xrevrange",
    "hset",
    "hget",
    "xread",
    "wait",
)


class Node:
    """One redis-server the section started: its pid, its role and an async client to read INFO."""

    def __init__(self, server: LocalRedis) -> None:
        self.server = server
        self.name = str(server.port)
        self.pid = server.proc.pid if server.proc is not None else 0
        self.client = aredis.Redis(host="127.0.0.1", port=server.port)
        self.role = "?"

    async def refresh_role(self) -> None:
        self.role = "primary" if (await self.client.info("replication"))["role"] == "master" else "replica"

    async def sample(self) -> dict[str, Any]:
        stats = await self.client.info("commandstats")
        conns = await self.client.info("stats")
        ns = sched_ns(self.pid)
        return {
            # The scheduler's own count where the kernel keeps one, else the tick-sampled one.
            "cpu_s": ns[0] / 1e9 if ns is not None else cpu_seconds(self.pid) or 0.0,
            "commands": {k.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"])) for k, v in stats.items()},
            "connections_received": int(conns["total_connections_received"]),
            "connected_clients": int((await self.client.info("clients"))["connected_clients"]),
        }


def node_delta(before: dict[str, Any], after: dict[str, Any], commands: int, batches: float) -> dict[str, Any]:
    calls: dict[str, dict[str, float]] = {}
    for name in NODE_COMMANDS:
        c = after["commands"].get(name, (0, 0))[0] - before["commands"].get(name, (0, 0))[0]
        us = after["commands"].get(name, (0, 0))[1] - before["commands"].get(name, (0, 0))[1]
        if c:
            calls[name] = {
                "per_command": c / commands,
                "per_batch": c / batches if batches else 0.0,
                "us_per_call": us / c,
            }
    usec = sum(after["commands"][k][1] - before["commands"].get(k, (0, 0))[1] for k in after["commands"])
    return {
        "cpu_us_per_command": (after["cpu_s"] - before["cpu_s"]) / commands * 1e6,
        "served_us_per_command": usec / commands,
        "calls": calls,
        "connections_opened": after["connections_received"] - before["connections_received"],
        "connected_clients": after["connected_clients"],
    }


def batch_counts(workers: Sequence[Worker]) -> tuple[float, float]:
    """(batches handled, entries in them) so far, summed over the workers' /metrics."""
    n = total = 0.0
    for w in workers:
        m = w.metrics()
        n += m.get('dicestream_batch_entries_count{role="referee"}', 0.0)
        total += m.get('dicestream_batch_entries_sum{role="referee"}', 0.0)
    return n, total


async def measure(
    name: str,
    url: str,
    nodes: Sequence[Node],
    keys: Keys,
    shards: int,
    referees: int,
    games: int,
    waves: int,
    tag: str,
    say: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One figure: `referees` leased referee processes on `url`, a pool of `games` games (ids from
    `tag`), one warm-up wave, then `waves` timed waves."""
    r: AnyRedis = connect(url)
    replies = Replies(url, f"{keys.prefix}:reply:bench:{tag}")
    replies.start()
    workers: list[Worker] = []
    try:
        workers = await start_workers(url, keys, shards, referees, r, replies, leases=True, env=env)
        pool = Pool(r, keys, shards, replies, seed=1)
        await pool.prepare(games, workers, tag=tag)
        quiet_gc()
        await throughput(pool, workers, 1, Stats())  # warm-up wave
        for n in nodes:
            await n.refresh_role()
        before = {n.name: await n.sample() for n in nodes}
        b0, e0 = batch_counts(workers)
        stats = Stats()
        run = await throughput(pool, workers, waves, stats, redis_pid=[n.pid for n in nodes])
        b1, e1 = batch_counts(workers)
        after = {n.name: await n.sample() for n in nodes}
        batches = b1 - b0
        run["config"] = name
        run["referees"] = referees
        run["outcomes"] = stats.as_dict()
        run["batches"] = batches
        run["entries_per_batch"] = (e1 - e0) / batches if batches else None
        run["shards_per_referee"] = [len(w.own) for w in workers]
        run["nodes"] = {
            n.name: {"role": n.role, **node_delta(before[n.name], after[n.name], run["commands"], batches)}
            for n in nodes
        }
        say(
            f"    {name}: {run['commands_per_s']:,.0f} commands/s, referee CPU {run['referee_cpu_us_per_command']:.0f}"
            f" µs, redis CPU {run['redis_cpu_us_per_command']:.0f} µs per command, "
            f"{run['entries_per_batch'] or 0:.1f} commands per batch"
        )
        return run
    finally:
        stop_workers(workers)
        await replies.close()
        await r.aclose()


def _med(values: Sequence[float]) -> float:
    return float(statistics.median(values))


async def run_cluster(
    *,
    games: int = 1000,
    waves: int = 8,
    repeats: int = 3,
    shards: int = 64,
    referees: Sequence[int] = (1, 2, 3),
    console: Console,
    folder: Path | None = None,
    env: dict[str, str] | None = None,
    replicas: int = 1,
) -> dict[str, Any]:
    started = time.monotonic()

    def say(text: str) -> None:
        console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {text}")

    base = Path(folder or tempfile.mkdtemp(prefix="dicestream-bench-cluster-"))
    port = free_block(7)
    # Same persistence on every server: none (as the test cluster; AOF is measured in durability).
    standalone = LocalRedis(port, base / "standalone", "--appendonly", "no")
    cluster = LocalCluster(port + 1, base / "cluster", replicas=replicas)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix)
    configs = [("standalone", 1), *(("cluster", n) for n in referees)]
    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "games": games,
        "waves": waves,
        "repeats": repeats,
        "shards": shards,
        "replicas_per_master": replicas,
        "key_prefix": prefix,
        "loadavg_start": loadavg(),
        "runs": {f"{kind}-{n}": [] for kind, n in configs},
    }
    try:
        standalone.start()
        say(f"standalone redis on {standalone.url}; a 3-master cluster, {replicas} replica(s) each, from {cluster.url}")
        cluster.start()
        nodes = {"standalone": [Node(standalone)], "cluster": [Node(n) for n in cluster.nodes]}
        urls = {"standalone": standalone.url, "cluster": cluster.url}
        # Rounds of every configuration in turn, so drift of the machine hits them alike; each round
        # has fresh processes and a fresh pool of the same games (same ids, same shards).
        for rnd in range(repeats):
            say(f"[bold]round {rnd + 1} of {repeats}[/]")
            for kind, n in configs:
                run = await measure(
                    f"{kind}-{n}",
                    urls[kind],
                    nodes[kind],
                    keys,
                    shards,
                    n,
                    games,
                    waves,
                    f"r{rnd}x{n}",
                    say,
                    env,
                )
                out["runs"][f"{kind}-{n}"].append(run)
        for ns in nodes.values():
            for node in ns:
                await node.client.aclose()
    finally:
        cluster.stop()
        standalone.stop()
    base_runs = out["runs"]["standalone-1"]
    summary = {}
    for name, runs in out["runs"].items():
        summary[name] = {
            "commands_per_s": _med([r["commands_per_s"] for r in runs]),
            # Paired with the standalone figure of the same round, then the median of the rounds.
            "vs_standalone_1": _med(
                [r["commands_per_s"] / b["commands_per_s"] for r, b in zip(runs, base_runs, strict=True)]
            ),
            "referee_cpu_us_per_command": _med([r["referee_cpu_us_per_command"] for r in runs]),
            "redis_cpu_us_per_command": _med([r["redis_cpu_us_per_command"] for r in runs]),
            "bench_cpu_us_per_command": _med([r["bench_cpu_us_per_command"] for r in runs]),
            "others_cpu_share": _med([r["others_cpu_share"] for r in runs]),
            "entries_per_batch": _med([r["entries_per_batch"] or 0 for r in runs]),
        }
    out["summary"] = summary
    out["seconds"] = round(time.monotonic() - started, 1)
    out["loadavg_end"] = loadavg()
    report(out, console)
    return out


def report(out: dict[str, Any], console: Console) -> None:
    t = Table(
        title=f"(b) on a 3-master cluster with {out['replicas_per_master']} replica(s) each, {out['games']} games, "
        f"{out['waves']} waves, "
        f"medians of {out['repeats']} rounds, {out['shards']} shards"
    )
    for col in ("config", "commands/s", "rounds", "vs 1 standalone", "CPU µs/cmd: referees", "redis", "bench"):
        t.add_column(col, justify="left" if col == "config" else "right")
    t.add_column("cmds/batch", justify="right")
    t.add_column("others", justify="right")
    for name, s in out["summary"].items():
        t.add_row(
            name,
            f"{s['commands_per_s']:,.0f}",
            " / ".join(f"{r['commands_per_s']:,.0f}" for r in out["runs"][name]),
            f"{s['vs_standalone_1']:.2f}x",
            f"{s['referee_cpu_us_per_command']:.0f}",
            f"{s['redis_cpu_us_per_command']:.0f}",
            f"{s['bench_cpu_us_per_command']:.0f}",
            f"{s['entries_per_batch']:.1f}",
            f"{s['others_cpu_share']:.0%}",
        )
    console.print(t)
    # Per node, the last round's figures of each configuration.
    t = Table(title="per node, last round: CPU µs per command, calls per batch (server µs per call)")
    for col in ("config", "node", "role", "CPU", "served", "conns opened", "calls per batch"):
        t.add_column(col)
    for name, runs in out["runs"].items():
        for node, d in runs[-1]["nodes"].items():
            calls = ", ".join(
                f"{k} {v['per_batch']:.1f} ({v['us_per_call']:.0f})" for k, v in d["calls"].items() if v["per_batch"]
            )
            t.add_row(
                name,
                node,
                d["role"],
                f"{d['cpu_us_per_command']:.1f}",
                f"{d['served_us_per_command']:.1f}",
                str(d["connections_opened"]),
                calls,
            )
    console.print(t)
    console.print(
        f"load average {' '.join(out['loadavg_start'])} at start, {' '.join(out['loadavg_end'])} at end; "
        f"{out['seconds']} s"
    )


def main(argv: list[str] | None = None) -> int:
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--referees", default="1,2,3")
    parser.add_argument("--replicas", type=int, default=1, help="replicas per master (default 1)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "cluster.json")
    args = parser.parse_args(argv)
    console = Console(width=160)
    out = run_loop(
        run_cluster(
            games=args.games,
            waves=args.waves,
            repeats=args.repeats,
            shards=args.shards,
            referees=[int(x) for x in args.referees.split(",")],
            console=console,
            replicas=args.replicas,
        )
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    console.print(f"[dim]results written to {args.json}[/]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
