"""Following Redis streams for WebSocket and SSE subscribers, shared within the process.

One reader task per followed stream (a game's public stream, or one seat's turn requests),
however many subscribers it has: each reader holds one blocking XREAD connection. Readers are
bounded (`max_streams`) and so are subscribers (`max_subscribers`); past either a new subscriber
is refused (the client retries later). A reader ends with its last subscriber.

A subscriber never misses an entry and never gets one twice: it registers first, then reads
the backlog after its cursor with XRANGE, then takes live entries from its reader, skipping any
at or before the last id it delivered. A subscriber too slow to keep up (its queue full) is
dropped and resumes from its cursor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from services.gateway.redisio import newest, range_after, read_after
from services.redis_conn import AnyRedis, transient

log = structlog.get_logger("gateway")
Entry = tuple[str, bytes]
BLOCK_MS = 10000
QUEUE = 1000
PAGE = 500
# Yielded once by `follow` between the backlog and the first live entry.
LIVE: Entry = ("", b"")


class Busy(Exception):
    """Too many streams followed or subscribers connected in this process."""


class TooSlow(Exception):
    """A subscriber fell more than a queue behind its stream."""


def entry_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Subscriber:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.queue: asyncio.Queue[Entry | None] = asyncio.Queue(QUEUE)

    def put(self, entry: Entry) -> None:
        if self.queue.full():
            # Dropped: a None tells it (it makes room for one item: queues never block the reader).
            self.queue.get_nowait()
            self.queue.put_nowait(None)
            self.reader.subscribers.discard(self)
            return
        self.queue.put_nowait(entry)


class Reader:
    def __init__(self, hub: StreamHub, key: str) -> None:
        self.hub = hub
        self.key = key
        self.subscribers: set[Subscriber] = set()
        self.ready = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"gateway-follow:{key}")

    async def _run(self) -> None:
        last = "0-0"
        while True:
            try:
                if not self.ready.is_set():
                    start = await newest(self.hub.redis, self.key)
                    last = start[0] if start else "0-0"
                    self.ready.set()
                got = await read_after(self.hub.followers, self.key, last, PAGE, BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not transient(exc):
                    # Not a fault that passes (a refused command, a bug): end this reader and its
                    # subscribers, which resume from their cursors, rather than retry for ever.
                    log.exception("follow_failed", stream=self.key)
                    self.hub.drop(self)
                    return
                log.warning("follow_read_failed", stream=self.key, error=str(exc))
                await asyncio.sleep(0.5)
                continue
            for entry_id, fields in got:
                last = entry_id
                data = fields.get(b"data")
                if data is None:
                    continue
                for sub in list(self.subscribers):
                    sub.put((last, data))


class StreamHub:
    def __init__(self, redis: AnyRedis, followers: AnyRedis, max_streams: int, max_subscribers: int) -> None:
        self.redis = redis
        self.followers = followers
        self.max_streams = max_streams
        self.max_subscribers = max_subscribers
        self.readers: dict[str, Reader] = {}
        self.subscribers = 0

    def subscribe(self, key: str) -> Subscriber:
        if self.subscribers >= self.max_subscribers:
            raise Busy(f"{self.subscribers} subscribers already")
        reader = self.readers.get(key)
        if reader is None:
            if len(self.readers) >= self.max_streams:
                raise Busy(f"{len(self.readers)} streams followed already")
            reader = self.readers[key] = Reader(self, key)
        sub = Subscriber(reader)
        reader.subscribers.add(sub)
        self.subscribers += 1
        return sub

    def drop(self, reader: Reader) -> None:
        """A reader that failed: its subscribers are told (as if too slow: they resume)."""
        if self.readers.get(reader.key) is reader:
            del self.readers[reader.key]
        for sub in list(reader.subscribers):
            if sub.queue.full():
                sub.queue.get_nowait()
            sub.queue.put_nowait(None)

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers -= 1
        reader = sub.reader
        reader.subscribers.discard(sub)
        if not reader.subscribers and self.readers.get(reader.key) is reader:
            del self.readers[reader.key]
            reader.task.cancel()

    async def close(self) -> None:
        readers = list(self.readers.values())
        self.readers.clear()
        for reader in readers:
            reader.task.cancel()
        for reader in readers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader.task

    async def page(self, key: str, after: str, count: int = PAGE) -> list[Entry]:
        """Up to `count` entries after `after` (exclusive)."""
        return [(i, f[b"data"]) for i, f in await range_after(self.redis, key, after, count) if b"data" in f]

    async def follow(self, sub: Subscriber, after: str | None, latest_only: bool = False) -> AsyncIterator[Entry]:
        """Every entry of `sub`'s stream after `after` (exclusive), then live ones, each once and in
        order; unsubscribes when closed. Between the backlog and the live entries it yields
        ("", cursor) once: caught up at `cursor`. With `latest_only` and no cursor, start at the newest entry
        (a seat only needs its last turn request)."""
        key = sub.reader.key
        try:
            await sub.reader.ready.wait()  # the reader's start is fixed before the backlog is read
            last = after
            if last is None and latest_only:
                found = await newest(self.redis, key)
                if found is not None:
                    last = found[0]
                    if b"data" in found[1]:
                        yield last, found[1][b"data"]
            last = last or "0-0"
            while True:
                page = await self.page(key, last)
                for entry in page:
                    yield entry
                    last = entry[0]
                if len(page) < PAGE:
                    break
            yield (LIVE[0], last.encode())
            seen = entry_key(last)
            while True:
                item = await sub.queue.get()
                if item is None:
                    raise TooSlow(last)
                key_ = entry_key(item[0])
                if key_ <= seen:
                    continue
                seen = key_
                yield item
        finally:
            self.unsubscribe(sub)
