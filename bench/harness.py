"""Pieces the benchmark sections share: referee worker processes, a reply collector, a pool of
running Sentient games whose state the bench keeps locally, and key clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.outcome import ACCEPTED, Reply
from games import match as m
from games.base import Rejected
from games.sentient import RULES
from services import tokens
from services.client import Client
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.redis_conn import AnyRedis, connect, is_cluster

GROUP = "referee"  # services.referee.app.GROUP (not imported: that pulls in FastStream)


class BenchError(RuntimeError):
    """Something the benchmark needs did not happen (a worker died, outcomes never came)."""


# ---- worker processes ----------------------------------------------------------------------


def loadavg() -> list[str]:
    """The 1, 5 and 15 minute load averages, as /proc/loadavg prints them (every report carries them)."""
    return Path("/proc/loadavg").read_text().split()[:3]


def rss_kib(pid: int) -> int | None:
    """VmRSS of a live process in KiB (None when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time a process has used so far (None when it is gone or not local)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def sched_ns(pid: int) -> tuple[int, int] | None:
    """(on a CPU, runnable but waiting for one) nanoseconds of all of a process's threads so far,
    from /proc/PID/task/*/schedstat: the scheduler's own clock, exact where /proc/PID/stat is
    sampled at each tick. None when the process is gone or the kernel keeps no such counts."""
    run = wait = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            fields = (task / "schedstat").read_text().split()
            run += int(fields[0])
            wait += int(fields[1])
    except (OSError, IndexError, ValueError):
        return None
    return run, wait


async def command_stats(r: AnyRedis) -> dict[str, tuple[int, int]]:
    """{command: (calls, µs)} so far, from INFO commandstats (the whole server's, all clients; on a
    cluster, summed over the primaries)."""
    if is_cluster(r):
        per_node = await r.info("commandstats", target_nodes=RedisCluster.PRIMARIES)
        infos = list(per_node.values())
    else:
        infos = [await r.info("commandstats")]
    out: dict[str, tuple[int, int]] = {}
    for info in infos:
        for k, v in info.items():
            calls, usec = out.get(k.removeprefix("cmdstat_"), (0, 0))
            out[k.removeprefix("cmdstat_")] = (calls + int(v["calls"]), usec + int(v["usec"]))
    return out


def machine_busy_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = parts[3] + parts[4]
    total = sum(parts)
    return (total - idle) / _TICK, total / _TICK


async def local_redis_pid(r: AnyRedis) -> int | None:
    """The server's pid when it runs on this machine (its /proc entry is a redis-server)."""
    try:
        pid = int((await r.info("server"))["process_id"])
        comm = Path(f"/proc/{pid}/comm").read_text()
    except (OSError, KeyError, ValueError):
        return None
    return pid if "redis" in comm else None


class CpuMeter:
    """CPU used by the referee workers, the Redis server and this process between start and stop,
    and by everything else on the machine (other load skews every figure on a shared machine).
    Where the kernel keeps schedstats, also each one's exact time on a CPU (`<name>_run_s`) and
    time spent runnable but waiting for a CPU (`<name>_wait_s`)."""

    def __init__(
        self,
        worker_pids: Sequence[int] = (),
        redis_pid: int | Sequence[int] | None = None,
        groups: dict[str, list[int]] | None = None,
    ) -> None:
        # Several Redis pids: a cluster's nodes, primaries and replicas (summed as "redis").
        redis_pids = [redis_pid] if isinstance(redis_pid, int) else list(redis_pid or ())
        # `groups` instead: any processes by name (bench (e): every service, and Redis).
        self.pids = groups if groups is not None else {"referee": list(worker_pids), "redis": redis_pids}
        self._start: dict[str, float] = {}
        self.used: dict[str, float] = {}

    def _sample(self) -> dict[str, float]:
        out = {name: sum(cpu_seconds(p) or 0.0 for p in pids) for name, pids in self.pids.items()}
        out["bench"] = time.process_time()
        for name, pids in (*self.pids.items(), ("bench", [os.getpid()])):
            counts = [c for c in (sched_ns(p) for p in pids) if c is not None]
            if counts and len(counts) == len(pids):
                out[f"{name}_run_s"] = sum(c[0] for c in counts) / 1e9
                out[f"{name}_wait_s"] = sum(c[1] for c in counts) / 1e9
        out["machine_busy"], out["machine_total"] = machine_busy_seconds()
        return out

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> dict[str, float]:
        end = self._sample()
        d = {k: end[k] - self._start[k] for k in end if k in self._start}
        d["others"] = max(0.0, d["machine_busy"] - sum(d[name] for name in self.pids) - d["bench"])
        self.used = d
        return d

    def per_command(self, commands: int) -> dict[str, list[float]]:
        """{process: [µs on a CPU, µs waiting for one]} per command, from the last start/stop."""
        d = self.used
        return {
            name: [d[f"{name}_run_s"] / commands * 1e6, d[f"{name}_wait_s"] / commands * 1e6]
            for name in (*self.pids, "bench")
            if f"{name}_run_s" in d
        }


class Worker:
    """One `dicestream serve referee` process (or another `role`: bench/pipeline.py runs every
    service): on a static subset of the intake shards (`own`, DICESTREAM_OWN_SHARDS), or with
    `own=None` on whatever its shard leases give it (then `own` is filled in by `wait_leases`)."""

    def __init__(
        self,
        url: str,
        prefix: str,
        shards: int,
        own: Sequence[int] | None,
        env: dict[str, str] | None = None,
        consumer: str | None = None,
        role: str = "referee",
    ) -> None:
        self.role = role
        self.own = list(own or ())
        self.leased = own is None
        self.total_shards = shards
        self.health_port = free_port()
        self.consumer = consumer or f"{prefix}-{role}-{uuid.uuid4().hex[:6]}"
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix=f"dicestream-bench-{role}-", suffix=".log", delete=False
        )
        environ = dict(os.environ)
        environ.pop("DICESTREAM_OWN_SHARDS", None)
        environ.update(
            REDIS_URL=url,
            DICESTREAM_PREFIX=prefix,
            DICESTREAM_SHARDS=str(shards),
            DICESTREAM_CONSUMER=self.consumer,
            DICESTREAM_LOG_LEVEL="warning",
            # Each worker serves its own health endpoint (its /metrics are read by some sections).
            DICESTREAM_HEALTH_ADDR=f"127.0.0.1:{self.health_port}",
        )
        if own is not None:
            environ["DICESTREAM_OWN_SHARDS"] = ",".join(map(str, self.own))
        environ.update(env or {})
        env = environ
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dicestream.cli", "serve", role],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kib(self) -> int | None:
        return rss_kib(self.proc.pid)

    def metrics(self) -> dict[str, float]:
        """This worker's Prometheus samples ("name{labels}" -> value), from its /metrics."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                with contextlib.suppress(ValueError):
                    out[name] = float(value)
        return out

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise BenchError(f"{self.role} worker {self.pid} exited with {self.proc.returncode}:\n{self.log_tail()}")

    async def wait_ready(self, r: AnyRedis, keys: Keys, replies: Replies, timeout_s: float = 60.0) -> None:
        """Until this worker answers a probe command on every shard it owns. (Its consumer group
        may already exist, left by an earlier worker, and Redis 7.0 does not list a consumer
        before it has read something, so neither proves that this process is consuming.)"""
        deadline = time.monotonic() + timeout_s
        waiting = set(self.own)
        while waiting:  # FastStream creates the group at "$": anything sent before is never read
            self.check_alive()
            for shard in sorted(waiting):
                with contextlib.suppress(ResponseError):
                    groups = await r.xinfo_groups(keys.intake(shard))
                    if any(_s(g["name"]) == GROUP for g in groups):
                        waiting.discard(shard)
            if waiting:
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"referee worker {self.pid}: no consumer group on shards {sorted(waiting)} "
                        f"after {timeout_s:.0f}s:\n{self.log_tail()}"
                    )
                await asyncio.sleep(0.05)
        total = int(self.total_shards)
        probes = []
        for shard in self.own:
            i = 0
            while shard_of(f"probe-{self.consumer}-{shard}-{i}", total) != shard:
                i += 1
            probes.append(f"probe-{self.consumer}-{shard}-{i}")
        client = Client(r, keys, total)
        client.reply_to = replies.stream
        envs = [client.envelope(g, lc.CreateGame(game_type="sentient", num_players=2)) for g in probes]
        replies.expect(e.command_id for e in envs)
        for env in envs:
            await client.send_envelope(env)
        try:
            await replies.wait(timeout_s, [self])
        except BenchError as exc:
            raise BenchError(
                f"referee worker {self.pid} not answering on shards {self.own}: {exc}\n{self.log_tail()}"
            ) from exc
        replies.take(e.command_id for e in envs)

    def kill(self) -> float:
        """SIGKILL (no lease release, no drain); the perf_counter time it was sent."""
        t = time.perf_counter()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        return t

    def stop(self, timeout_s: float = 15.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_block(size: int) -> int:
    """A first port of `size` consecutive free ports whose cluster bus ports (+10000) are free too,
    all below the kernel's ephemeral range (32768-60999 by default: a bench's many short
    connections leave thousands of those in TIME_WAIT, and could take a port between this check
    and the server's bind)."""
    for _ in range(500):
        base = random.randrange(21000, 22700 - size)
        try:
            for port in (p for i in range(size) for p in (base + i, base + i + 10000)):
                with socket.socket() as sock:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as redis-server binds
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise BenchError("no block of free ports for a cluster")


def _s(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v


def split_shards(shards: int, workers: int) -> list[list[int]]:
    """Contiguous ranges, as one would set DICESTREAM_OWN_SHARDS (0-3, 4-7)."""
    out: list[list[int]] = []
    for w in range(workers):
        lo, hi = shards * w // workers, shards * (w + 1) // workers
        out.append(list(range(lo, hi)))
    return out


async def start_workers(
    url: str,
    keys: Keys,
    shards: int,
    count: int,
    r: AnyRedis,
    replies: Replies,
    *,
    leases: bool = False,
    env: dict[str, str] | None = None,
) -> list[Worker]:
    """`count` referee processes, on static shard splits or (`leases`) sharing the shards by leases;
    returned once each answers a probe on every shard it reads."""
    owns: list[list[int] | None] = [None] * count if leases else list(split_shards(shards, count))
    workers = [Worker(url, keys.prefix, shards, own, env) for own in owns]
    try:
        if leases:
            await wait_leases(r, keys, workers)
        for w in workers:  # one at a time: the reply collector waits for one set of ids
            await w.wait_ready(r, keys, replies)
    except BaseException:
        stop_workers(workers)
        raise
    return workers


async def lease_holders(r: AnyRedis, keys: Keys, role: str = GROUP) -> dict[int, str]:
    """shard -> holder ("consumer#nonce") from the role's lease table."""
    raw = await r.hgetall(keys.leases(role)[0])
    return {int(k): _s(v) for k, v in raw.items()}


async def wait_leases(r: AnyRedis, keys: Keys, workers: Sequence[Worker], timeout_s: float = 90.0) -> None:
    """Until the lease table gives every shard to one of `workers`, each holding its fair share
    (so nothing is left to rebalance), then set each worker's `own` to what it holds."""
    deadline = time.monotonic() + timeout_s
    total = workers[0].total_shards
    lo, hi = total // len(workers), -(-total // len(workers))
    while True:
        for w in workers:
            w.check_alive()
        holders = await lease_holders(r, keys)
        per = {w.consumer: sorted(s for s, h in holders.items() if h.rsplit("#", 1)[0] == w.consumer) for w in workers}
        held = sum(len(v) for v in per.values())
        if held == total and all(lo <= len(v) <= hi for v in per.values()):
            for w in workers:
                w.own = per[w.consumer]
            return
        if time.monotonic() > deadline:
            raise BenchError(f"leases not settled after {timeout_s:.0f}s: {[len(v) for v in per.values()]} of {total}")
        await asyncio.sleep(0.1)


def stop_workers(workers: Iterable[Worker]) -> None:
    for w in workers:
        w.stop()


# ---- replies -------------------------------------------------------------------------------


class Replies:
    """One task reading one reply stream with XREAD BLOCK; records when each outcome was seen."""

    def __init__(self, url: str, stream: str, on_reply: Callable[[str, float, int, Reply], None] | None = None) -> None:
        self.redis = connect(url)
        self.stream = stream
        # Called for every reply read: (command id, when seen, the reply entry's server time in ms, reply).
        self.on_reply = on_reply
        self.seen: dict[str, tuple[float, Reply]] = {}
        self._pending: set[str] = set()
        self._done = asyncio.Event()
        self.done_at = 0.0
        self._last: bytes | str = "0-0"
        self._task: asyncio.Task[None] | None = None
        self._decoder = msgspec.json.Decoder(Reply)
        self._stopping = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _read(self) -> Any:
        if not is_cluster(self.redis):
            return await self.redis.xread({self.stream: self._last}, count=5000, block=1000)
        # Sent to the stream's primary: routed by redis-py, every XREAD would first cost a
        # COMMAND GETKEYS round trip (as the referee's reads did, see services/shards.py).
        rc: RedisCluster = self.redis  # type: ignore[assignment]
        await rc.initialize()
        node = rc.get_node_from_key(self.stream)
        args = ("COUNT", 5000, "BLOCK", 1000, "STREAMS", self.stream, self._last)
        return await rc.execute_command("XREAD", *args, target_nodes=node)

    async def _run(self) -> None:
        while not self._stopping:
            got = await self._read()
            now = time.perf_counter()
            for _, entries in got or ():
                for entry_id, fields in entries:
                    reply = self._decoder.decode(fields[b"data"])
                    cid = reply.outcome.command_id
                    self.seen[cid] = (now, reply)
                    if self.on_reply is not None:
                        self.on_reply(cid, now, int(entry_id.split(b"-", 1)[0]), reply)
                    if cid in self._pending:
                        self._pending.discard(cid)
                        if not self._pending:
                            self.done_at = now
                            self._done.set()
                self._last = entries[-1][0]

    def expect(self, command_ids: Iterable[str]) -> None:
        """Call before sending: `wait` then returns once every one of them has an outcome."""
        self._pending = {c for c in command_ids if c not in self.seen}
        self._done = asyncio.Event()
        if not self._pending:
            self.done_at = time.perf_counter()
            self._done.set()

    async def wait(self, timeout_s: float, workers: Sequence[Worker] = ()) -> float:
        """Wait for every expected outcome; the time the last one was seen."""
        deadline = time.monotonic() + timeout_s
        while not self._done.is_set():
            if self._task is not None and self._task.done():
                self._task.result()  # re-raise the reader's error
                raise BenchError("reply reader stopped")
            for w in workers:
                w.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"{len(self._pending)} commands without an outcome after {timeout_s:.0f}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._done.wait(), 0.5)
        return self.done_at

    def take(self, command_ids: Iterable[str]) -> list[tuple[float, Reply]]:
        return [self.seen.pop(c) for c in command_ids]

    async def close(self) -> None:
        # A cancel landing inside redis-py's blocking XREAD was seen to be swallowed (the loop
        # went on reading): stop by flag, the BLOCK timeout bounds the wait; cancel only as a
        # fallback, and never await the task unbounded.
        self._stopping = True
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=3.0)
            if not self._task.done():
                self._task.cancel()
                await asyncio.wait({self._task}, timeout=3.0)
            if self._task.done() and not self._task.cancelled():
                self._task.exception()  # mark retrieved
        await self.redis.aclose()


# ---- a pool of running games ---------------------------------------------------------------


@dataclass
class Game:
    game_id: str
    players: int
    tokens: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    agg: m.Match | None = None


@dataclass
class Stats:
    accepted: int = 0
    rejected: int = 0
    version_mismatch: int = 0
    rules: dict[str, int] = field(default_factory=dict)

    def count(self, replies: Iterable[Reply], expected: dict[str, int]) -> None:
        """`expected`: command id -> the version its events should bring the game to (popped)."""
        for rep in replies:
            o = rep.outcome
            want = expected.pop(o.command_id, None)
            if o.status == ACCEPTED:
                self.accepted += 1
                if o.to_version != want:
                    self.version_mismatch += 1
            else:
                self.rejected += 1
                key = o.rule or "?"
                self.rules[key] = self.rules.get(key, 0) + 1

    def as_dict(self) -> dict[str, object]:
        return {
            "accepted": self.accepted,
            "rejected": self.rejected,
            "version_mismatch": self.version_mismatch,
            "rejection_rules": self.rules,
        }


class Pool:
    """N Sentient games created, joined and started through the referee workers; the bench keeps
    each game's aggregate locally (rebuilt from its log after StartGame, then advanced with the
    same pure `decide`/`evolve` the referee runs; the seed is in the private log) so that each
    move it sends is legal for the seat to act, carries that seat's token and the expected version."""

    def __init__(self, r: AnyRedis, keys: Keys, shards: int, replies: Replies, seed: int) -> None:
        self.redis = r
        self.keys = keys
        self.shards = shards
        self.replies = replies
        self.client = Client(r, keys, shards, name=replies.stream.rsplit(":", 1)[-1])
        self.client.reply_to = replies.stream
        self.rng = random.Random(seed)
        self.games: dict[str, Game] = {}
        # command id -> the version the referee should report for it (checked on each outcome)
        self.expected: dict[str, int] = {}

    def encode(self, envs: Sequence[CommandEnvelope]) -> list[tuple[str, bytes]]:
        return [(self.keys.intake(shard_of(e.game_id, self.shards)), codec.encode(e)) for e in envs]

    async def send(self, wire: Sequence[tuple[str, bytes]]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        for stream, data in wire:
            pipe.xadd(stream, {"data": data})
        await pipe.execute()

    async def call_many(
        self, envs: Sequence[CommandEnvelope], workers: Sequence[Worker], timeout_s: float = 120.0
    ) -> list[Reply]:
        ids = [e.command_id for e in envs]
        self.replies.expect(ids)
        await self.send(self.encode(envs))
        await self.replies.wait(timeout_s, workers)
        return [rep for _, rep in self.replies.take(ids)]

    async def prepare(
        self, n: int, workers: Sequence[Worker], players: Sequence[int] = (2, 3, 4), tag: str | None = None
    ) -> None:
        """Create, join every seat, start; not timed. Player counts cycle over `players`. Game ids
        are `g<tag>-<i>` (`tag` random unless given: the same tag on two servers, the same games
        on the same shards)."""
        tag = tag or uuid.uuid4().hex[:6]
        games = [Game(f"g{tag}-{i:05d}", players[i % len(players)]) for i in range(n)]
        c = self.client

        def need(replies: list[Reply], what: str) -> None:
            bad = [r.outcome for r in replies if r.outcome.status != ACCEPTED]
            if bad:
                o = bad[0]
                raise BenchError(f"{len(bad)} {what} refused, e.g. {o.game_id}: {o.rule} {o.detail}")

        creates = [c.envelope(g.game_id, lc.CreateGame(game_type="sentient", num_players=g.players)) for g in games]
        need(await self.call_many(creates, workers), "CreateGame")
        joins = [
            c.envelope(g.game_id, lc.JoinSeat(seat=s, name=f"bench-{s}", kind="bot"), seat=s)
            for g in games
            for s in range(g.players)
        ]
        replies = await self.call_many(joins, workers)
        need(replies, "JoinSeat")
        by_game = {g.game_id: g for g in games}
        for g in games:
            g.tokens = [""] * g.players
        for env, rep in zip(joins, replies, strict=True):
            assert rep.token is not None
            by_game[env.game_id].tokens[env.seat or 0] = rep.token
        for g in games:
            g.hashes = [tokens.token_hash(t) for t in g.tokens]
        starts = [c.envelope(g.game_id, lc.StartGame(), seat=0, token=g.tokens[0]) for g in games]
        need(await self.call_many(starts, workers), "StartGame")
        store = RedisEventStore(self.redis, self.keys)
        try:
            logs = await store.read_many({g.game_id: 0 for g in games})
        finally:
            await store.close()  # a cluster store's own reader
        for g in games:
            g.agg = rebuild(g.game_id, logs[g.game_id])
            if g.agg.status != m.RUNNING:
                raise BenchError(f"{g.game_id} is {g.agg.status} after StartGame")
        self.games.update(by_game)

    def next_move(self, g: Game) -> CommandEnvelope | None:
        """A legal move for the seat to act (random among the legal ones), applied to the local
        aggregate; None once the game is over."""
        agg = g.agg
        assert agg is not None
        acting = m.to_act(agg)
        if not acting:
            return None
        seat = acting[0]
        legal = RULES.legal_actions(agg.game, seat)
        action = legal[self.rng.randrange(len(legal))]
        before = agg.version
        req = m.Request(payload=action, seat=seat, token_hash=g.hashes[seat], expected_version=before)
        events = m.decide(agg, req)
        if isinstance(events, Rejected):
            raise BenchError(f"{g.game_id}: local decide refused {action!r}: {events.rule} {events.detail}")
        for ev in events:
            m.evolve(agg, ev)
        env = self.client.envelope(g.game_id, action, seat=seat, token=g.tokens[seat], expected_version=before)
        self.expected[env.command_id] = agg.version
        return env

    def wave(self) -> list[CommandEnvelope]:
        """One move for every game still running."""
        out = []
        for g in self.games.values():
            env = self.next_move(g)
            if env is not None:
                out.append(env)
        return out


# ---- clean-up ------------------------------------------------------------------------------


async def delete_prefix(r: AnyRedis, prefix: str) -> int:
    """UNLINK every key under `prefix:` (SCAN, never KEYS or FLUSH)."""
    deleted = 0
    batch: list[bytes] = []
    async for key in r.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            deleted += await r.unlink(*batch)
            batch = []
    if batch:
        deleted += await r.unlink(*batch)
    return deleted
