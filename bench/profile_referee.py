"""Profile one referee worker process under the throughput load of `dicestream bench` (b).

    REDIS_URL=redis://127.0.0.1:6379/0 python -m bench.profile_referee [--games 1000] [--waves 20]

Needs py-spy (PY_SPY=/path/to/py-spy or on PATH; `pip install py-spy` anywhere, it is a static
binary). It samples the worker only while the timed waves run, then prints the functions with the
most samples on-CPU by themselves ("self") and including what they call ("total"). Keys are
written under a random `bench-<hex>` prefix and deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import signal
import subprocess
import tempfile
import uuid

from bench.harness import Pool, Replies, Stats, delete_prefix, start_workers, stop_workers
from bench.sections import latency, quiet_gc, throughput
from dicestream.loop import run as run_loop
from services.config import from_env
from services.eventstore.keys import Keys
from services.redis_conn import connect

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^:()]*)(?::\d+)?\)$")


def _short(frame: str) -> str:
    m = _FRAME.match(frame)
    if not m:
        return frame
    path = m["file"]
    for marker in ("site-packages/", "/work/main/", "python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{m['func']} ({path})"


def summarise(raw: str, top: int) -> str:
    selfs: collections.Counter[str] = collections.Counter()
    totals: collections.Counter[str] = collections.Counter()
    samples = 0
    idle = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_short(f) for f in stack.split(";")]
        # the thread name comes first in py-spy's collapsed output
        frames = [f for f in frames if not f.startswith("thread (")][:]
        samples += n
        if frames and frames[-1].startswith(("select (", "EpollSelector.select", "poll (")):
            idle += n
        if frames:
            selfs[frames[-1]] += n
        for f in set(frames):
            totals[f] += n
    out = [f"{samples} samples, {idle} ({idle / max(samples, 1):.0%}) waiting in the event loop's select"]
    out.append("\ntop self:")
    out += [f"  {n / samples:6.1%}  {f}" for f, n in selfs.most_common(top)]
    out.append("\ntop total (inclusive):")
    out += [f"  {n / samples:6.1%}  {f}" for f, n in totals.most_common(top * 2)]
    return "\n".join(out)


async def run(games: int, waves: int, py_spy: str, top: int, rate: int, paced: float) -> None:
    settings = from_env()
    url = settings.redis_url or "redis://127.0.0.1:6379/0"
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix)
    r = connect(url)
    replies = Replies(url, f"{prefix}:reply:profile:run")
    replies.start()
    workers = []
    out = tempfile.NamedTemporaryFile(prefix="referee-profile-", suffix=".txt", delete=False)  # noqa: SIM115
    out.close()
    try:
        workers = await start_workers(url, keys, settings.shards, 1, r, replies)
        pool = Pool(r, keys, settings.shards, replies, seed=11)
        await pool.prepare(games, workers)
        quiet_gc()
        await throughput(pool, workers, 1, Stats())
        spy = subprocess.Popen(
            [
                py_spy,
                "record",
                "--pid",
                str(workers[0].pid),
                "--format",
                "raw",
                "--rate",
                str(rate),
                "--output",
                out.name,
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        await asyncio.sleep(1.0)  # let py-spy attach
        stats = Stats()
        if paced:
            res = await latency(pool, workers, paced, waves, stats)
            print(
                f"{res['commands']} commands at {paced:.0f}/s: p50 {res['p50_ms']:.2f} ms, "
                f"p99 {res['p99_ms']:.2f} ms, referee CPU {res['referee_cpu_share']:.0%} of a core"
            )
        else:
            res = await throughput(pool, workers, waves, stats)
            print(f"{res['commands']} commands in {res['seconds']:.2f} s: {res['commands_per_s']:,.0f}/s")
        spy.send_signal(signal.SIGINT)
        _, err = spy.communicate(timeout=30)
        print(f"outcomes {stats.as_dict()}")
        with open(out.name) as f:
            raw = f.read()
        if not raw.strip():
            print(f"py-spy wrote nothing: {err.decode(errors='replace')[-2000:]}")
        else:
            print(summarise(raw, top))
            print(f"\ncollapsed stacks: {out.name}")
    finally:
        stop_workers(workers)
        await replies.close()
        await delete_prefix(r, prefix)
        await r.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--waves", type=int, default=20)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    ap.add_argument(
        "--paced",
        type=float,
        default=0.0,
        help="profile the latency load instead: commands/s (then --waves is seconds)",
    )
    args = ap.parse_args()
    py_spy = os.environ.get("PY_SPY") or shutil.which("py-spy")
    if not py_spy:
        raise SystemExit("py-spy not found: pip install py-spy, or set PY_SPY")
    run_loop(run(args.games, args.waves, py_spy, args.top, args.rate, args.paced))


if __name__ == "__main__":
    main()
