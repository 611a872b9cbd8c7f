"""Takeover after a SIGKILL: three referee processes share the shards by leases under a steady load;
one is killed (SIGKILL: no drain, no release) and the bench measures how long until every shard it
held has a live owner again (polling the lease table, `<prefix>:leases:{referee}:holders`) and until
the first command of those shards is answered after the kill (a reply entry the server wrote after
the kill). A new referee then replaces the dead one (the shards rebalance) before the next kill.

At the end the load stops, every command in flight is waited for, and every intake entry is
compared with the games' audit records: each must have exactly one (none lost, none judged twice).

    python -m bench.takeover                          # 10 kills, lease TTL 10 s, then 10 at 3 s
    python -m bench.takeover --kills 50 --ttl-ms 3000 # a soak: 50 kills, then the audit table
    dicestream bench --section takeover               # the first, from the CLI

Runs against a standalone Redis this bench starts on loopback (`--cluster`: a 3-master + 3-replica
cluster; `--url`: a server of your own, written under a random `bench-<hex>` prefix only). See
bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, cast

import msgspec
from rich.console import Console
from rich.table import Table

from bench.harness import (
    Pool,
    Replies,
    Stats,
    Worker,
    delete_prefix,
    free_block,
    lease_holders,
    loadavg,
    stop_workers,
    wait_leases,
)
from contracts.outcome import ACCEPTED, Reply
from dicestream.localredis import LocalCluster, LocalRedis
from dicestream.loop import run as run_loop
from games import match as m
from services.eventstore.keys import Keys, shard_of
from services.redis_conn import AnyRedis, Entries, connect, is_cluster

GROUP = "referee"


class _Sent(msgspec.Struct):
    """What the audit comparison needs of an intake entry (the envelope's other fields ignored)."""

    command_id: str
    game_id: str


class Load:
    """A steady, closed-loop load: each game has at most one command in flight and sends its next
    move `think_s` after its previous outcome was seen, so a game whose shard is down just waits.
    Finished games are replaced by new ones (created, joined and started through the referees)."""

    def __init__(self, pool: Pool, shards: int, games: int, think_s: float) -> None:
        self.pool = pool
        self.shards = shards
        self.games = games
        self.think_s = think_s
        self.inflight: dict[str, tuple[str, float]] = {}  # command id -> (game id, sent at)
        self.busy: set[str] = set()
        self.next_at: dict[str, float] = {}
        # Every first outcome of a load command: (seen at, server ms of the reply entry, shard).
        self.answers: list[tuple[float, int, int]] = []
        self.replies_per_command: Counter[str] = Counter()
        self.stats = Stats()
        self.sent = 0
        self._stopping = False
        self.latencies: list[float] = []

    def on_reply(self, cid: str, now: float, entry_ms: int, reply: Reply) -> None:
        self.replies_per_command[cid] += 1
        flight = self.inflight.pop(cid, None)
        if flight is None:
            return  # a lifecycle command (its waiter takes it) or an outcome answered again
        self.pool.replies.seen.pop(cid, None)
        game_id, sent = flight
        self.busy.discard(game_id)
        self.answers.append((now, entry_ms, shard_of(game_id, self.shards)))
        self.latencies.append(now - sent)
        self.stats.count([reply], self.pool.expected)
        self.next_at[game_id] = now + self.think_s * (0.5 + random.random())
        if reply.outcome.status != ACCEPTED:
            # Counted in `stats`; the local copy of this game is now ahead of the referee's: drop it.
            self.pool.games.pop(game_id, None)

    def running(self) -> int:
        return sum(1 for g in self.pool.games.values() if g.agg is not None and m.to_act(g.agg))

    async def send_loop(self) -> None:
        pool = self.pool
        while not self._stopping:
            now = time.perf_counter()
            envs = []
            for g in list(pool.games.values()):
                if g.game_id in self.busy or self.next_at.get(g.game_id, 0.0) > now:
                    continue
                env = pool.next_move(g)
                if env is None:
                    continue
                envs.append(env)
                self.busy.add(g.game_id)
                self.inflight[env.command_id] = (g.game_id, now)
            if envs:
                await pool.send(pool.encode(envs))
                self.sent += len(envs)
            await asyncio.sleep(0.01)

    async def refill_loop(self) -> None:
        while not self._stopping:
            missing = self.games - self.running()
            if missing >= 20:
                finished = [gid for gid, g in self.pool.games.items() if g.agg is None or not m.to_act(g.agg)]
                for gid in finished:
                    if gid not in self.busy:
                        del self.pool.games[gid]
                # No liveness check of the workers here: the bench kills them on purpose.
                await self.pool.prepare(missing, [], players=(2, 3, 4))
            await asyncio.sleep(0.5)

    def stop(self) -> None:
        self._stopping = True


async def audit_table(r: AnyRedis, keys: Keys, shards: int) -> dict[str, Any]:
    """Every intake entry against every audit record of the games they name."""
    sent: list[_Sent] = []
    decoder = msgspec.json.Decoder(_Sent)
    for shard in range(shards):
        for stream in (keys.intake(shard), keys.timer(shard)):
            for _, fields in cast(Entries, await r.xrange(stream)):
                try:
                    sent.append(decoder.decode(fields[b"data"]))
                except msgspec.DecodeError:
                    sent.append(_Sent(command_id="<unreadable>", game_id=""))
    games = sorted({s.game_id for s in sent if s.game_id})
    audited: Counter[str] = Counter()
    for i in range(0, len(games), 200):
        pipe = r.pipeline(transaction=False)
        for g in games[i : i + 200]:
            pipe.xrange(keys.audit(g))
        for entries in await pipe.execute():
            for _, fields in entries:
                audited[msgspec.json.decode(fields[b"data"])["command_id"]] += 1
    ids = Counter(s.command_id for s in sent)
    pending = 0
    for shard in range(shards):
        with contextlib.suppress(Exception):
            pending += int((await r.xpending(keys.intake(shard), GROUP))["pending"])
    return {
        "intake_entries": len(sent),
        "distinct_command_ids": len(ids),
        "exactly_one_outcome": sum(1 for c in ids if audited[c] == 1),
        "no_outcome": sum(1 for c in ids if audited[c] == 0),
        "judged_twice_or_more": sum(1 for c in ids if audited[c] > 1),
        "outcomes_without_intake_entry": sum(1 for c in audited if c not in ids),
        "dead_letters": int(await r.xlen(keys.dead_letter)),
        "pending_after_drain": pending,
        "games": len(games),
    }


async def _explain(r: AnyRedis, keys: Keys, shards: int, cid: str, game_id: str) -> dict[str, Any]:
    """What the server holds of a command the bench never saw answered."""
    stream = keys.intake(shard_of(game_id, shards))
    pending = await r.xpending_range(stream, GROUP, min="-", max="+", count=10_000)
    entry = [i for i, f in cast(Entries, await r.xrange(stream)) if cid.encode() in f[b"data"]]
    audited = [f[b"data"] for _, f in cast(Entries, await r.xrange(keys.audit(game_id))) if cid.encode() in f[b"data"]]
    return {
        "command_id": cid,
        "game_id": game_id,
        "intake_entry": [e.decode() for e in entry],
        "still_pending": any(p["message_id"] in entry for p in pending),
        "audit_records": len(audited),
        "outcome_recorded": await r.hget(keys.commands(game_id), cid) is not None,
    }


async def kill_and_measure(
    r: AnyRedis, keys: Keys, load: Load, victim: Worker, live: list[Worker], timeout_s: float
) -> dict[str, Any]:
    holders = await lease_holders(r, keys)
    lost = {s for s, h in holders.items() if h.rsplit("#", 1)[0] == victim.consumer}
    mark = len(load.answers)
    t_kill = victim.kill()
    sec, usec = await r.time()
    server_ms = int(sec) * 1000 + int(usec) // 1000
    in_flight = sum(1 for gid, _ in load.inflight.values() if shard_of(gid, load.shards) in lost)
    held = 0  # read by the victim and not acked: what the new owners must judge first
    for shard in lost:
        for c in (await r.xpending(keys.intake(shard), GROUP))["consumers"]:
            if c["name"] in (victim.consumer, victim.consumer.encode()):
                held += int(c["pending"])
    names = {w.consumer for w in live}
    first: dict[int, float] = {}
    owned_s = None
    while True:
        # Lost shards with a game running or a command in flight: each must answer again (a shard
        # whose last game ended meanwhile has nothing left to answer).
        busy = lost & (
            {shard_of(g.game_id, load.shards) for g in load.pool.games.values() if g.agg and m.to_act(g.agg)}
            | {shard_of(gid, load.shards) for gid, _ in load.inflight.values()}
            | set(first)
        )
        if owned_s is not None and set(first) >= busy:
            break
        now = time.perf_counter()
        if now - t_kill > timeout_s:
            break
        if owned_s is None:
            holders = await lease_holders(r, keys)
            if all(holders.get(s, "").rsplit("#", 1)[0] in names for s in lost):
                owned_s = time.perf_counter() - t_kill
        end = len(load.answers)
        for seen, entry_ms, shard in load.answers[mark:end]:
            if shard in busy and shard not in first and entry_ms > server_ms:  # written after the kill
                first[shard] = seen - t_kill
        mark = end
        await asyncio.sleep(0.02)
    return {
        "victim": victim.consumer,
        "shards": len(lost),
        "in_flight_on_them": in_flight,
        "held_by_victim": held,
        "owned_again_s": owned_s,
        # The first command of those shards answered after the kill, and the moment every one of
        # them (with a game running) had answered one.
        "first_answer_s": min(first.values()) if first else None,
        "all_answering_s": max(first.values()) if first and set(first) >= busy else None,
    }


async def run_takeover(
    url: str,
    *,
    kills: int,
    ttl_ms: int,
    shards: int = 64,
    referees: int = 3,
    games: int = 300,
    think_s: float = 0.5,
    settle_s: float = 2.0,
    seed: int = 5,
    console: Console,
) -> dict[str, Any]:
    started = time.monotonic()

    def say(text: str) -> None:
        console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {text}")

    rng = random.Random(seed)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix)
    r = connect(url)
    # The audit comparison at the end reads every intake entry: keep the intake whole.
    env = {
        "DICESTREAM_LEASE_TTL_MS": str(ttl_ms),
        "DICESTREAM_RECLAIM_IDLE_MS": "15000",
        "DICESTREAM_TRIM_EVERY_MS": "0",
    }
    workers: list[Worker] = []
    load: Load | None = None
    holder: list[Load] = []
    replies = Replies(url, f"{prefix}:reply:bench:takeover", lambda *a: holder[0].on_reply(*a) if holder else None)
    replies.start()
    tasks: list[asyncio.Task[None]] = []
    results: list[dict[str, Any]] = []
    out: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cluster": is_cluster(r),
        "kills": kills,
        "lease_ttl_ms": ttl_ms,
        "shards": shards,
        "referees": referees,
        "games": games,
        "think_s": think_s,
        "key_prefix": prefix,
        "loadavg_start": loadavg(),
    }
    try:
        workers = [Worker(url, prefix, shards, None, env) for _ in range(referees)]
        await wait_leases(r, keys, workers)
        for w in workers:
            await w.wait_ready(r, keys, replies)
        pool = Pool(r, keys, shards, replies, seed=seed)
        say(f"{referees} referees hold the leases (TTL {ttl_ms} ms); preparing {games} games")
        await pool.prepare(games, workers)
        load = Load(pool, shards, games, think_s)
        holder.append(load)
        tasks = [asyncio.create_task(load.send_loop()), asyncio.create_task(load.refill_loop())]
        await asyncio.sleep(settle_s)
        for k in range(kills):
            for t in tasks:
                if t.done():
                    t.result()
            victim = workers.pop(rng.randrange(len(workers)))
            got = await kill_and_measure(r, keys, load, victim, workers, timeout_s=ttl_ms / 1000 + 30)
            victim.stop()
            results.append(got)
            say(
                f"kill {k + 1}/{kills}: {got['shards']} shards ({got['in_flight_on_them']} commands in flight on"
                f" them, {got['held_by_victim']} read and not acked by the dead referee) owned again after "
                f"{_s(got['owned_again_s'])}, first answer after {_s(got['first_answer_s'])}, every one of them "
                f"answering after {_s(got['all_answering_s'])}"
            )
            # Its replacement; answering is shown by the load itself (a probe would share the
            # reply collector with the games being created meanwhile).
            workers.append(Worker(url, prefix, shards, None, env))
            await wait_leases(r, keys, workers)
            await asyncio.sleep(settle_s)
        say("stopping the load; waiting for every command in flight")
        load.stop()
        await asyncio.gather(*tasks)
        deadline = time.monotonic() + ttl_ms / 1000 + 60
        while load.inflight and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        out["lost_in_flight"] = len(load.inflight)
        lost = list(load.inflight.items())[:10]
        out["lost_details"] = [await _explain(r, keys, shards, cid, gid) for cid, (gid, _) in lost]
        out["commands_sent"] = load.sent
        out["outcomes"] = load.stats.as_dict()
        out["answered_more_than_once"] = sum(1 for n in load.replies_per_command.values() if n > 1)
        out["latency_p50_ms"] = statistics.median(load.latencies) * 1e3 if load.latencies else None
        stop_workers(workers)
        workers = []
        out["audit"] = await audit_table(r, keys, shards)
    finally:
        if load is not None:
            load.stop()
        for t in tasks:
            t.cancel()
        stop_workers(workers)
        await replies.close()
        await delete_prefix(r, prefix)
        await r.aclose()
    out["kill_results"] = results
    out["summary"] = _summary(results, ttl_ms)
    out["seconds"] = round(time.monotonic() - started, 1)
    out["loadavg_end"] = loadavg()
    report(out, console)
    return out


def _s(v: float | None) -> str:
    return "never" if v is None else f"{v:.2f} s"


def _summary(results: list[dict[str, Any]], ttl_ms: int) -> dict[str, Any]:
    limit = ttl_ms / 1000 + 2
    out: dict[str, Any] = {"target_s": limit}
    for key in ("owned_again", "first_answer", "all_answering"):
        got = [r[f"{key}_s"] for r in results if r[f"{key}_s"] is not None]
        out[f"{key}_p50_s"] = statistics.median(got) if got else None
        out[f"{key}_max_s"] = max(got) if got else None
        out[f"{key}_never"] = len(results) - len(got)
        out[f"{key}_within_target"] = sum(1 for v in got if v <= limit)
    return out


def report(out: dict[str, Any], console: Console) -> None:
    s = out["summary"]
    t = Table(
        title=f"takeover after SIGKILL: {out['kills']} kills, {out['referees']} referees, lease TTL "
        f"{out['lease_ttl_ms']} ms, {'cluster' if out['cluster'] else 'standalone'}, {out['games']} games"
    )
    for col in ("figure", "p50", "max", "target", "met"):
        t.add_column(col, justify="left" if col == "figure" else "right")
    rows = (
        ("all its shards owned again", "owned_again"),
        ("first command of them answered", "first_answer"),
        ("every one of them answering again", "all_answering"),
    )
    for name, key in rows:
        p50, mx = s[f"{key}_p50_s"], s[f"{key}_max_s"]
        met = mx is not None and mx <= s["target_s"] and not s[f"{key}_never"]
        t.add_row(
            name,
            _s(p50),
            _s(mx),
            f"<= TTL + 2 s = {s['target_s']:.0f} s",
            "[green]yes[/]" if met else "[red]no[/]",
        )
    console.print(t)
    a = out.get("audit")
    if a:
        t = Table(title="every intake entry against the audit records")
        for col in ("intake entries", "exactly one outcome", "none (lost)", "2+ (judged twice)", "outcome w/o entry"):
            t.add_column(col, justify="right")
        t.add_column("dead letters", justify="right")
        t.add_column("pending", justify="right")
        t.add_row(
            f"{a['intake_entries']:,}",
            f"{a['exactly_one_outcome']:,}",
            str(a["no_outcome"]),
            str(a["judged_twice_or_more"]),
            str(a["outcomes_without_intake_entry"]),
            str(a["dead_letters"]),
            str(a["pending_after_drain"]),
        )
        console.print(t)
    o = out.get("outcomes") or {}
    console.print(
        f"load commands sent {out.get('commands_sent', 0):,}, in flight never answered {out.get('lost_in_flight')}, "
        f"answered more than once (redelivered after a kill) {out.get('answered_more_than_once')}, "
        f"rejected {o.get('rejected')}, version mismatches {o.get('version_mismatch')}; "
        f"load average {' '.join(out['loadavg_start'])} -> {' '.join(out['loadavg_end'])}; {out['seconds']} s"
    )


async def with_server(cluster: bool, url: str | None, fn: Any) -> Any:
    """Run `fn(url)` against `url`, else against a server started here (and stopped after)."""
    if url:
        return await fn(url)
    folder = Path(tempfile.mkdtemp(prefix="dicestream-bench-takeover-"))
    port = free_block(6)
    server: LocalCluster | LocalRedis = (
        LocalCluster(port, folder) if cluster else LocalRedis(port, folder, "--appendonly", "no")
    )
    server.start()
    try:
        return await fn(server.url)
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.takeover", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument(
        "--ttl-ms", default="10000,3000", help="lease TTLs, one run each (DICESTREAM_LEASE_TTL_MS); default 10000,3000"
    )
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--think", type=float, default=0.5, help="seconds between a game's outcome and its next move")
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--referees", type=int, default=3)
    parser.add_argument("--cluster", action="store_true", help="on a 3-master + 3-replica cluster started here")
    parser.add_argument("--url", default=None, help="on this Redis instead of one started here")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "takeover.json")
    args = parser.parse_args(argv)
    console = Console(width=160)
    return run_loop(main_async(args, console))


async def main_async(args: argparse.Namespace, console: Console) -> int:
    runs = []
    for ttl in (int(x) for x in str(args.ttl_ms).split(",")):

        async def one(url: str, ttl: int = ttl) -> dict[str, Any]:
            return await run_takeover(
                url,
                kills=args.kills,
                ttl_ms=ttl,
                shards=args.shards,
                referees=args.referees,
                games=args.games,
                think_s=args.think,
                console=console,
            )

        runs.append(await with_server(args.cluster, args.url, one))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(runs, indent=2) + "\n")
    console.print(f"[dim]results written to {args.json}[/]")
    bad = [r for r in runs if r["audit"]["no_outcome"] or r["audit"]["judged_twice_or_more"] or r["lost_in_flight"]]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
