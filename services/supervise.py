"""Supervised loops: nothing a service runs in the background may die silently.

Every long-running loop of a service runs under its `Supervisor`. An exception of any type is
logged with the loop's name and the service's context; the loop backs off (exponentially, up to
`max_backoff_s`) and starts again. When a loop fails more than `max_failures` times within
`window_s`, the supervisor gives up: it logs `supervisor_giving_up` and sets `fatal`, which
`dicestream serve` waits on to exit non-zero, so that the orchestrator restarts the process.

A Redis outage or a cluster failover (`services.redis_conn.transient`) is not a failure of the
loop: it is logged as `loop_waiting_for_redis`, the loop starts again after the same backoff, and
it counts neither towards giving up nor against liveness (restarting the process would not bring
Redis back; readiness says Redis is not answering).

Loops report progress with `beat()`; liveness (`/livez`) is false while a loop is down (between a
failure and its restart) or has not beaten within its `silence_s`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog

from services import metrics
from services.redis_conn import transient

log = structlog.get_logger("supervisor")
T = TypeVar("T")


class Loop:
    """One supervised loop's state, handed to the loop so it can report progress."""

    def __init__(self, service: str, name: str, silence_s: float) -> None:
        self.service = service
        self.name = name
        self.silence_s = silence_s
        self.up = False
        self.last_beat = time.monotonic()
        self.restarts = 0
        self.last_error: str | None = None
        self.failures: deque[float] = deque()

    def beat(self) -> None:
        self.last_beat = time.monotonic()

    def live(self, now: float) -> bool:
        return self.up and now - self.last_beat <= self.silence_s

    def report(self, now: float) -> dict[str, Any]:
        return {
            "up": self.up,
            "live": self.live(now),
            "since_beat_s": round(now - self.last_beat, 3),
            "restarts": self.restarts,
            "last_error": self.last_error,
        }


LoopFn = Callable[[Loop], Awaitable[None]]


class Supervisor:
    def __init__(
        self,
        service: str,
        *,
        max_failures: int = 10,
        window_s: float = 60.0,
        first_backoff_s: float = 0.1,
        max_backoff_s: float = 5.0,
        silence_s: float = 30.0,
    ) -> None:
        self.service = service
        self.max_failures = max_failures
        self.window_s = window_s
        self.first_backoff_s = first_backoff_s
        self.max_backoff_s = max_backoff_s
        self.silence_s = silence_s
        self.loops: dict[str, Loop] = {}
        self.fatal = asyncio.Event()
        self.fatal_reason = ""
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def spawn(self, name: str, fn: LoopFn, silence_s: float | None = None) -> Loop:
        """Run `fn(loop)` for ever, restarting it after any failure (see the module docstring)."""
        if name in self.loops:
            raise ValueError(f"{self.service}: a loop named {name!r} runs already")
        loop = Loop(self.service, name, self.silence_s if silence_s is None else silence_s)
        self.loops[name] = loop
        self._tasks[name] = asyncio.create_task(self._run(loop, fn), name=f"{self.service}:{name}")
        return loop

    async def cancel(self, name: str) -> None:
        """Stop one loop for good (e.g. a shard's reader when its lease is released)."""
        task = self._tasks.pop(name, None)
        self.loops.pop(name, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def stop(self) -> None:
        for name in list(self._tasks):
            await self.cancel(name)

    def live(self) -> bool:
        now = time.monotonic()
        return not self.fatal.is_set() and all(loop.live(now) for loop in self.loops.values())

    def report(self) -> dict[str, Any]:
        now = time.monotonic()
        return {name: loop.report(now) for name, loop in self.loops.items()}

    async def _run(self, loop: Loop, fn: LoopFn) -> None:
        backoff = self.first_backoff_s
        while True:
            loop.up = True
            loop.beat()
            metrics.LOOP_UP.labels(self.service, loop.name).set(1)
            started = time.monotonic()
            try:
                await fn(loop)
                error = "returned"  # a loop is not meant to end: treated as a failure
                log.error("loop_returned", service=self.service, loop=loop.name)
            except asyncio.CancelledError:
                loop.up = False
                metrics.LOOP_UP.labels(self.service, loop.name).set(0)
                raise
            except Exception as exc:
                if transient(exc):
                    log.warning(
                        "loop_waiting_for_redis",
                        service=self.service,
                        loop=loop.name,
                        error=str(exc),
                        retry_in_s=backoff,
                    )
                    loop.beat()
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, self.max_backoff_s)
                    continue
                error = f"{type(exc).__name__}: {exc}"
                log.exception("loop_failed", service=self.service, loop=loop.name, retry_in_s=backoff)
            loop.up = False
            loop.last_error = error[:500]
            loop.restarts += 1
            metrics.LOOP_UP.labels(self.service, loop.name).set(0)
            metrics.RESTARTS.labels(self.service, loop.name).inc()
            now = time.monotonic()
            if now - started > self.window_s:
                backoff = self.first_backoff_s  # it ran fine for a while: a fresh fault
            loop.failures.append(now)
            while loop.failures and now - loop.failures[0] > self.window_s:
                loop.failures.popleft()
            if len(loop.failures) > self.max_failures:
                failures = len(loop.failures)
                self.fatal_reason = f"{self.service}/{loop.name} failed {failures} times in {self.window_s:g} s"
                log.critical(
                    "supervisor_giving_up",
                    service=self.service,
                    loop=loop.name,
                    error=loop.last_error,
                    failures=len(loop.failures),
                    window_s=self.window_s,
                )
                self.fatal.set()
                return
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff_s)


async def patiently(call: Callable[[], Awaitable[T]], what: str, timeout_s: float = 60.0) -> T:
    """`call()`, tried again after a transient Redis error until `timeout_s`: a service starting
    while Redis restarts or fails over waits for it, as its loops do, instead of exiting (what is
    not transient, or lasts longer, is raised: `dicestream serve` then exits with its line)."""
    deadline = time.monotonic() + timeout_s
    delay = 0.1
    while True:
        try:
            return await call()
        except Exception as exc:
            if not transient(exc) or time.monotonic() + delay > deadline:
                raise
            log.warning("start_waiting_for_redis", what=what, error=str(exc), retry_in_s=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
