"""The gateway's reply stream: every command it sends names `<prefix>:reply:gw:<instance>` as its
`reply_to`, and one task per process reads that stream and hands each outcome to the requests
waiting for it (N waiting requests cost one blocked XREAD, not N)."""

from __future__ import annotations

import asyncio
import contextlib
import time

import msgspec
import redis.exceptions
import structlog

from contracts.outcome import Reply
from services.gateway.redisio import newest, read_after
from services.redis_conn import AnyRedis
from services.supervise import Loop

log = structlog.get_logger("gateway")
_reply = msgspec.json.Decoder(Reply)
BLOCK_MS = 5000
START_RETRY_S = 1.0
TRIM_EVERY_S = 1.0


class ReplyReader:
    def __init__(self, redis: AnyRedis, stream: str) -> None:
        self.redis = redis
        self.stream = stream
        self._waiting: dict[str, list[asyncio.Future[Reply]]] = {}
        self._last = "0-0"
        self._trimmed_at = 0.0
        self.started = False

    async def start(self) -> None:
        # From what the stream holds now (a reused instance id may find old replies): a command
        # sent after this point gets its reply after it, even before the first XREAD is sent.
        last = await newest(self.redis, self.stream)
        self._last = last[0] if last else "0-0"
        self.started = True

    async def stop(self) -> None:
        for futures in self._waiting.values():
            for f in futures:
                if not f.done():
                    f.cancel()
        self._waiting.clear()
        with contextlib.suppress(Exception):
            await self.redis.delete(self.stream)

    def expect(self, command_id: str) -> asyncio.Future[Reply]:
        """Register before sending the command, so its reply cannot arrive unseen."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(command_id, []).append(future)
        return future

    def forget(self, command_id: str, future: asyncio.Future[Reply]) -> None:
        futures = self._waiting.get(command_id)
        if futures is not None:
            with contextlib.suppress(ValueError):
                futures.remove(future)
            if not futures:
                del self._waiting[command_id]

    async def wait(self, command_id: str, future: asyncio.Future[Reply], timeout_s: float) -> Reply:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        finally:
            self.forget(command_id, future)

    @property
    def waiting(self) -> int:
        return sum(len(f) for f in self._waiting.values())

    async def run(self, loop: Loop) -> None:
        """The reply reader (supervised: a fault is logged and the loop started again, from the
        last reply it dispatched)."""
        while not self.started:
            # Redis was down when the gateway started: it serves what needs none meanwhile (the
            # page, game files; /readyz says Redis is down), and starts reading once Redis answers.
            loop.beat()
            try:
                await self.start()
            except redis.exceptions.RedisError:
                await asyncio.sleep(START_RETRY_S)
        while True:
            loop.beat()
            got = await read_after(self.redis, self.stream, self._last, 500, BLOCK_MS)
            for entry_id, fields in got:
                self._last = entry_id
                self._dispatch(fields.get(b"data"))
            await self._trim()

    def _dispatch(self, data: bytes | None) -> None:
        if data is None:
            return
        try:
            reply = _reply.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.warning("reply_unreadable", stream=self.stream)
            return
        for future in self._waiting.pop(reply.outcome.command_id, ()):
            if not future.done():
                future.set_result(reply)

    async def _trim(self) -> None:
        """Drop what was read (at most once a second): the stream stays about one batch long."""
        now = time.monotonic()
        if now - self._trimmed_at < TRIM_EVERY_S or self._last == "0-0":
            return
        self._trimmed_at = now
        try:
            await self.redis.xtrim(self.stream, minid=self._last, approximate=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("reply_trim_failed", stream=self.stream, error=str(exc))
