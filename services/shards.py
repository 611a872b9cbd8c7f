"""Reading a consumer group on the per-shard streams of the shards a process holds leases on.

The referee reads the intake this way, the projector and the turn service the bus. One
`ShardReader` per role and process, told by the lease loop which shards are its own
(`assign`, see services/leases.py), in one supervised loop:

* **Take over** a new shard before reading anything new on it: claim every entry its stream has
  pending in the group, whoever read it (XAUTOCLAIM from 0 with no idle time, which counts a
  delivery), and handle them in arrival order, dead-lettering (or skipping) any delivered more than
  `max_deliveries` times. So a dead owner's commands are judged first, in order, by whoever takes
  its shard; the same path resumes a restarted process's own pending entries.
* **Read** new entries: on a standalone Redis one XREADGROUP per unit of consecutive shards naming
  at most `READ_STREAMS` streams together (a shard naming more is a unit alone); on a Redis
  Cluster one per shard (keys of different slots cannot share a call); all in flight at once.
  The next read of a unit is sent as soon as its last one returned, so Redis gathers the next
  batch while this one is handled; what the reads that have returned hold is handled as one
  batch, in order.
* **Reclaim** this consumer's entries left pending by a failed batch once they are
  `reclaim_idle_ms` old (XAUTOCLAIM), with the same delivery limit.
* **Re-stream**: when the list of a shard's streams changes (the referee's registered clients,
  `restream`), every owned shard is taken over again, which creates the new streams' groups and
  claims what reads cut short had delivered.
* **Drain** a shard that is no longer its own: stop reading it, cancel its read in flight (what
  that read took stays pending: the next owner claims it for that shard, and this reader takes the
  other shards of the unit over again at once) and report it inactive once no batch of it is
  being handled, so the lease loop can release it. A unit that changes because a shard joins it
  is cut short and taken over again the same way.

A failed batch stays pending (reclaimed later). Any other fault, a Redis outage included, ends the
loop; its supervisor logs it and starts it again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import structlog
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from services import metrics
from services.broker import ensure_group
from services.config import Settings
from services.redis_conn import AnyRedis, Entries, StreamReads, is_cluster, transient
from services.supervise import Loop

log = structlog.get_logger("shards")

Batch = list[tuple[str, Entries]]
Handler = Callable[[Batch], Awaitable[None]]
# (stream, entry id, fields, reason): must record the entry and ack it.
DeadLetter = Callable[[str, bytes, dict[bytes, bytes], str], Awaitable[None]]
Unit = tuple[int, ...]

# Streams named by one blocking XREADGROUP on a standalone server. Redis pays for every stream a
# blocked read names each time it is served (registering and unregistering the client on each
# key): ~13 µs a wake-up with 2 streams, 26 with 16, 93 with 128 on this machine, and a command
# sent at low load wakes the reader once. So the owned shards are read in units of this many
# streams, all in flight at once; fewer would split a busy reader's batches (bench/README.md).
READ_STREAMS = 8


class ShardReader:
    def __init__(
        self,
        client: AnyRedis,
        *,
        role: str,
        streams: Callable[[int], list[str]],
        group: str,
        consumer: str,
        handle: Handler,
        batch: int = 200,
        block_ms: int = 1000,
        reclaim_idle_ms: int = 15000,
        max_deliveries: int = 5,
        dead_letter: DeadLetter | None = None,
        group_start: str = "0",
        pause_ms: int = 0,
    ) -> None:
        self.client = client
        self.role = role
        self.streams = streams
        self.group = group
        self.consumer = consumer
        self.handle = handle
        self.batch = batch
        self.block_ms = block_ms
        self.reclaim_idle_ms = reclaim_idle_ms
        self.max_deliveries = max_deliveries
        self.dead_letter = dead_letter
        self.group_start = group_start
        # After a read that found entries, the unit's next read waits this long: a reader off the
        # command's path (the projector) trades that much staleness for larger batches.
        self.pause_s = pause_ms / 1000
        self.cluster = is_cluster(client)
        self.wanted: set[int] = set()
        self.reading: set[int] = set()
        self._reads: dict[Unit, asyncio.Future[list[tuple[bytes, Entries]]]] = {}
        # Reads that finished, in the order they did: a step handles these, not every read in flight.
        self._ready: collections.deque[tuple[Unit, asyncio.Future[Any]]] = collections.deque()
        self._handling: set[int] = set()
        # Shards whose read was cancelled: what it took is pending under this consumer, so a shard
        # still read is taken over again (claimed at once, in order) before its unit reads anew.
        self._cut_short: set[int] = set()
        self._wake = asyncio.Event()  # a read finished, or the shards or their streams changed
        # The units of the owned shards with the streams each one's read names, kept until the
        # owned shards or their streams (restream) change: a step at low load handles one entry.
        self._epoch = 0
        self._plan_key: tuple[frozenset[int], int] = (frozenset(), -1)
        self._plan: dict[Unit, dict[str, str]] = {}
        self._retake = False
        self._next_reclaim = 0.0
        self.handled = 0  # entries handed to `handle`, for tests and status

    # ---- what the lease loop sees ---------------------------------------------------------------

    def assign(self, shards: set[int]) -> None:
        if shards != self.wanted:
            self.wanted = set(shards)
            self._wake.set()

    def restream(self) -> None:
        """`streams` now answers differently: take every owned shard over again."""
        self._retake = True
        self._epoch += 1
        self._wake.set()

    def active(self) -> set[int]:
        in_flight = {s for unit in self._reads for s in unit}
        return self.reading | in_flight | self._handling

    # ---- the loop ---------------------------------------------------------------------------------

    async def run(self, loop: Loop) -> None:
        """The reader loop (supervised). Started again after any fault, it takes every shard over
        afresh, which is how it finds what a lost read had delivered."""
        self.reading.clear()
        try:
            while True:
                loop.beat()
                await self._step(loop)
        finally:
            self._cancel_reads(set(self._reads))
            self._cut_short.clear()
            self.reading.clear()
            self._handling.clear()

    async def _step(self, loop: Loop) -> None:
        gone = self.reading - self.wanted
        if gone:
            self.reading -= gone
            self._cancel_reads({u for u in self._reads if set(u) & gone})
            log.info("shards_drained", role=self.role, shards=sorted(gone))
        if self._retake:
            self._retake = False
            self._cancel_reads(set(self._reads))  # what they took is claimed by the take-overs
            log.info("shards_restreamed", role=self.role, shards=sorted(self.reading))
            self.reading.clear()
        for shard in sorted(self.wanted - self.reading):
            await self._take_over(shard)
            loop.beat()
        await self._reclaim_idle()
        units = self._units()
        self._cancel_reads({u for u in self._reads if u not in units})
        for shard in sorted(self._cut_short & self.reading & self.wanted):
            await self._take_over(shard)  # a neighbour's change of owner cut its unit's read short
            loop.beat()
        self._cut_short.clear()
        for unit in units:
            if unit not in self._reads:
                self._start_read(unit)
        if not self._ready:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.block_ms / 1000 + 1.0 if units else 1.0)
        if not self._ready:
            return
        units = self._units()  # as they are now: the shards may have changed meanwhile
        got: list[tuple[bytes, Entries]] = []
        mine: set[int] = set()
        while self._ready:
            unit, read = self._ready.popleft()
            if self._reads.get(unit) is not read:
                continue  # cancelled after it finished, or before (a cancelled read reports too)
            del self._reads[unit]
            found = read.result()  # raises what the read raised
            got += found
            mine.update(unit)
            if unit in units:
                self._start_read(unit, self.pause_s if found else 0.0)
        batch = [(_text(stream), list(entries)) for stream, entries in got if entries]
        if batch:
            await self._handle(batch, mine)

    def _units(self) -> dict[Unit, dict[str, str]]:
        """The shards read together, each unit with its read's streams: one shard per unit on a
        cluster (one slot each); on a standalone server, consecutive shards naming at most
        READ_STREAMS streams together, so that a change of one shard's owner re-sends only its
        unit's read."""
        owned = frozenset(self.reading & self.wanted)
        if self._plan_key != (owned, self._epoch):
            shards = sorted(owned)
            per = 1 if self.cluster or not shards else max(1, READ_STREAMS // max(1, len(self.streams(shards[0]))))
            grouped: dict[int, list[int]] = {}
            for s in shards:
                grouped.setdefault(s // per, []).append(s)
            self._plan = {tuple(u): {s: ">" for shard in u for s in self.streams(shard)} for u in grouped.values()}
            self._plan_key = (owned, self._epoch)
        return self._plan

    def _start_read(self, unit: Unit, pause_s: float = 0.0) -> None:
        read = asyncio.ensure_future(self._read_new(unit, pause_s))
        read.add_done_callback(lambda done: self._finished(unit, done))
        self._reads[unit] = read

    def _finished(self, unit: Unit, read: asyncio.Future[Any]) -> None:
        if not read.cancelled():
            read.exception()  # retrieved: a step raises it; a read dropped or left at a fault is not logged
        self._ready.append((unit, read))
        self._wake.set()

    def _cancel_reads(self, units: set[Unit]) -> None:
        for unit in units:
            read = self._reads.pop(unit, None)
            if read is not None:
                self._cut_short.update(unit)
                if not read.done():
                    read.cancel()  # redis-py drops that connection; what the read took stays pending

    async def _read_new(self, unit: Unit, pause_s: float = 0.0) -> list[tuple[bytes, Entries]]:
        if pause_s:
            await asyncio.sleep(pause_s)
        streams = self._plan.get(unit) or {s: ">" for shard in unit for s in self.streams(shard)}
        try:
            if self.cluster:
                got = await self._read_on_node(streams)
            else:
                got = await self.client.xreadgroup(
                    self.group,
                    self.consumer,
                    streams,  # type: ignore[arg-type]
                    count=self.batch,
                    block=self.block_ms,
                )
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            # The group (or the stream) vanished: recreate it from the stream's start, so entries
            # added meanwhile are read too (readers are idempotent: a duplicate is answered).
            log.warning("consumer_group_recreated", role=self.role, streams=list(streams))
            for stream in streams:
                await ensure_group(self.client, stream, self.group, self.group_start)
            return []
        return cast(StreamReads, got or [])

    async def _read_on_node(self, streams: dict[str, str]) -> object:
        """XREADGROUP of one shard's streams (one hash tag, one slot) sent to the primary serving
        it. Routed by the client, every XREADGROUP cost a `COMMAND GETKEYS` round trip first (redis-py
        asks the server where the keys of a command with movable keys are): ~13% of a referee's CPU
        on a cluster, and as many calls again on a primary. A dropped connection or a moved slot is
        raised (the loop starts again on the reloaded topology; a MOVED reply is followed by the
        client itself)."""
        client: RedisCluster = self.client  # type: ignore[assignment]
        await client.initialize()
        node = client.get_node_from_key(next(iter(streams)))
        args: list[str | int] = ["GROUP", self.group, self.consumer, "COUNT", self.batch, "BLOCK", self.block_ms]
        args += ["STREAMS", *streams, *streams.values()]
        return await client.execute_command("XREADGROUP", *args, target_nodes=node)

    async def _handle(self, batch: Batch, mine: set[int]) -> None:
        self._handling |= mine
        size = sum(len(entries) for _, entries in batch)
        started = time.perf_counter()
        try:
            await self.handle(batch)
            self.handled += size
            metrics.BATCH_SIZE.labels(self.role).observe(size)
            metrics.BATCH_SECONDS.labels(self.role).observe(time.perf_counter() - started)
        except Exception as exc:
            if transient(exc):
                raise
            # Left pending: reclaimed after reclaim_idle_ms and dead-lettered past max_deliveries.
            log.exception("batch_failed", role=self.role, streams=[s for s, _ in batch])
        finally:
            self._handling -= mine

    # ---- taking over and reclaiming -----------------------------------------------------------------

    async def _take_over(self, shard: int) -> None:
        """Claim and handle, oldest first, every entry pending in the group on this shard's streams,
        whoever read it: a dead owner's, and this consumer's own from before a restart."""
        handled = 0
        for stream in self.streams(shard):
            await ensure_group(self.client, stream, self.group, self.group_start)
            handled += await self._claim(shard, stream, min_idle_ms=0)
        self.reading.add(shard)
        self._cut_short.discard(shard)
        log.info("shard_taken_over", role=self.role, shard=shard, pending=handled)

    async def _claim(self, shard: int, stream: str, min_idle_ms: int) -> int:
        """XAUTOCLAIM pages of entries idle at least `min_idle_ms` (a claim counts a delivery) and
        handle each page in arrival order; returns how many were claimed."""
        start = "0-0"
        total = 0
        while True:
            try:
                reply = await self.client.xautoclaim(
                    stream, self.group, self.consumer, min_idle_time=min_idle_ms, start_id=start, count=self.batch
                )
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                # A stream new since this shard was taken over (a client registered meanwhile):
                # the re-take-over that follows creates its group; nothing is pending there yet.
                return total
            start = _text(reply[0])
            # Redis 6.2 lists entries deleted from the stream with no fields; 7.x apart.
            entries: Entries = [(i, f) for i, f in reply[1] if f is not None]
            total += len(entries)
            kept = await self._without_poison(stream, entries) if entries else []
            if kept:
                await self._handle([(stream, kept)], {shard})
            if start == "0-0":
                return total

    async def _reclaim_idle(self) -> None:
        """Every owned stream is asked in one round trip whether it has an entry idle long enough
        (XPENDING IDLE, which claims nothing: a claim counts a delivery); only those are claimed
        (a referee owning 64 shards asked 128 XAUTOCLAIMs a second, one after another)."""
        now = time.monotonic()
        if now < self._next_reclaim:
            return
        self._next_reclaim = now + max(0.05, min(1.0, self.reclaim_idle_ms / 5000))
        owned = [(shard, stream) for shard in sorted(self.reading) for stream in self.streams(shard)]
        if not owned:
            return
        pipe = self.client.pipeline(transaction=False)
        for _, stream in owned:
            pipe.xpending_range(stream, self.group, min="-", max="+", count=1, idle=self.reclaim_idle_ms)
        for (shard, stream), idle in zip(owned, await pipe.execute(raise_on_error=False), strict=True):
            if isinstance(idle, Exception):
                if transient(idle) or "NOGROUP" not in str(idle):
                    raise idle
                continue  # a stream new since the take-over: nothing is pending there yet
            if idle and (n := await self._claim(shard, stream, min_idle_ms=self.reclaim_idle_ms)):
                log.warning("reclaimed", role=self.role, stream=stream, entries=n)

    async def _without_poison(self, stream: str, entries: Entries) -> Entries:
        info = await self.client.xpending_range(
            stream,
            self.group,
            min=entries[0][0],
            max=entries[-1][0],
            count=len(entries),
            consumername=self.consumer,
        )
        deliveries = {i["message_id"]: int(i["times_delivered"]) for i in info}
        kept: Entries = []
        for entry_id, fields in entries:
            n = deliveries.get(entry_id, 1)
            if n <= self.max_deliveries:
                kept.append((entry_id, fields))
            elif self.dead_letter is not None:
                await self.dead_letter(stream, entry_id, fields, f"failed {n - 1} deliveries")
            else:
                log.error("entry_skipped", role=self.role, stream=stream, entry_id=_text(entry_id), deliveries=n)
                await self.client.xack(stream, self.group, entry_id)
        return kept

    async def measure_lag(self) -> None:
        """Set the lag and pending gauges of every owned shard, summed over its streams (XINFO
        GROUPS, every stream in one round trip)."""
        shards = sorted(self.reading)
        streams = {shard: self.streams(shard) for shard in shards}
        pipe = self.client.pipeline(transaction=False)
        for shard in shards:
            for stream in streams[shard]:
                pipe.xinfo_groups(stream)
        infos = iter(await pipe.execute(raise_on_error=False) if shards else [])
        for shard in shards:
            pending = lag = 0
            for _ in streams[shard]:
                groups = next(infos)
                if isinstance(groups, Exception):
                    if transient(groups) or not isinstance(groups, ResponseError):
                        raise groups
                    continue  # the stream is gone; the next take-over recreates it
                for group in groups:
                    if _text(group["name"]) == self.group:
                        pending += int(group["pending"])
                        lag += int(group.get("lag") or 0)  # Redis >= 7.0; None after some trims
            metrics.PENDING.labels(self.role, str(shard)).set(pending)
            metrics.LAG.labels(self.role, str(shard)).set(lag)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def reader_for(
    client: AnyRedis,
    role: str,
    settings: Settings,
    streams: Callable[[int], list[str]],
    handle: Handler,
    **options: Any,
) -> ShardReader:
    """A ShardReader whose group and role are `role`, with the service's consumer name, reclaim
    and delivery limits; `options` as ShardReader's (batch, dead_letter, group_start)."""
    return ShardReader(
        client,
        role=role,
        streams=streams,
        group=role,
        consumer=settings.consumer,
        handle=handle,
        reclaim_idle_ms=settings.reclaim_idle_ms,
        max_deliveries=settings.max_deliveries,
        **options,
    )
