"""Shard leases: any number of processes of one role share the shards, and take over a dead peer's.

A role's lease table lives in three keys of one hash slot (`Keys.leases(role)`): shard -> holder,
shard -> expiry, holder -> expiry. Every `tick_s` each holder runs one script (services/leases.lua)
that, atomically and on the server's clock, renews its membership and its leases, drops members
and leases that were not renewed within the TTL, releases what the holder has drained, and hands
it free shards up to its fair share (shard count / live members, the remainder going to the
first members by name). So when a holder dies its shards are free one TTL after its last renewal
and taken by the others at their next tick; when one joins, the others see their share shrink,
drain what is over it (stop reading, finish in-flight work) and release it, and the joiner takes it.

Leases give liveness and no double work; the log's expected-version guard stays the safety net
for the moments two holders overlap (a paused process that has not noticed its lease lapsed).

The holder is the consumer name plus a nonce: a restarted process is a new holder and waits for
its previous incarnation's leases to lapse (a clean stop releases them at once). What a shard's
consumers are is not this module's business: it tells each `Listener` which shards to read and
releases a shard once no listener reads it any more.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from importlib.resources import files
from typing import Protocol

import structlog

from services import metrics
from services.config import Settings
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis
from services.supervise import Loop

log = structlog.get_logger("leases")
_TICK = files("services").joinpath("leases.lua").read_text()


class Listener(Protocol):
    def assign(self, shards: set[int]) -> None:
        """Read exactly these shards from now on (taking over new ones, draining the others)."""

    def active(self) -> set[int]:
        """Shards still being read or drained."""


class Leases:
    def __init__(
        self,
        client: AnyRedis,
        keys: Keys,
        role: str,
        consumer: str,
        shards: int,
        ttl_ms: int = 10000,
        *,
        static: tuple[int, ...] = (),
        tick_s: float | None = None,
    ) -> None:
        self.client = client
        self.role = role
        self.keys = keys.leases(role)
        self.holder = f"{consumer}#{secrets.token_hex(4)}"
        self.shards = shards
        self.ttl_ms = ttl_ms
        self.static = static
        # Several ticks per TTL, and at most a second apart: a dead peer's shards are taken within
        # TTL + tick_s of its last renewal.
        self.tick_s = tick_s if tick_s is not None else min(1.0, ttl_ms / 5000)
        self.listeners: list[Listener] = []
        self.held: set[int] = set()  # what the lease table says this holder has
        self.share = 0
        self.live = 0
        self.last_ok: float | None = None
        self._draining: set[int] = set()
        # Set by release_all: from then on the lease loop's ticks do nothing, so that no renewal
        # re-assigns shards during the drain or takes back what the leaving tick released.
        self._leaving = False
        self._tick_lock = asyncio.Lock()
        self._script = client.register_script(_TICK)

    def listen(self, listener: Listener) -> None:
        self.listeners.append(listener)

    @property
    def owned(self) -> set[int]:
        """Shards this process reads: held and not being drained (none once it is leaving)."""
        if self._leaving:
            return set()
        return set(self.static) if self.static else self.held - self._draining

    def ready(self) -> bool:
        if self.static:
            return True
        fresh = self.last_ok is not None and time.monotonic() - self.last_ok < self.ttl_ms / 1000
        return fresh and (bool(self.held) or self.share == 0)

    async def run(self, loop: Loop) -> None:
        """The lease loop (supervised). Static shards (DICESTREAM_OWN_SHARDS) take no leases."""
        if self.static:
            self._assign(set(self.static))
            while True:
                loop.beat()
                await asyncio.sleep(1.0)
        while True:
            loop.beat()
            try:
                await self.tick()
            except Exception:
                self._expire_locally()
                raise  # the supervisor logs it and starts this loop again
            await asyncio.sleep(self.tick_s)

    async def tick(self, leaving: bool = False) -> None:
        async with self._tick_lock:  # one tick at a time: the lease loop's, or release_all's
            if self._leaving and not leaving:
                return
            await self._tick(leaving)

    async def _tick(self, leaving: bool) -> None:
        busy = set().union(*(listener.active() for listener in self.listeners)) if self.listeners else set()
        drained = {s for s in self._draining if s not in busy}
        reply = await self._script(
            keys=self.keys, args=[self.holder, self.ttl_ms, self.shards, int(leaving), *sorted(drained)]
        )
        self.last_ok = time.monotonic()
        self.share, self.live = int(reply[0]), int(reply[1])
        held = {int(s) for s in reply[2:]}
        for shard in sorted(self.held - held - drained):
            metrics.LEASE_CHANGES.labels(self.role, "lost").inc()
            log.warning("lease_lost", role=self.role, holder=self.holder, shard=shard)
        for shard in sorted(held - self.held):
            metrics.LEASE_CHANGES.labels(self.role, "acquired").inc()
            log.info("lease_acquired", role=self.role, holder=self.holder, shard=shard)
        for shard in sorted(drained):
            metrics.LEASE_CHANGES.labels(self.role, "released").inc()
            log.info("lease_released", role=self.role, holder=self.holder, shard=shard)
        self._draining &= held
        self.held = held
        over = len(held) - len(self._draining) - self.share
        if over > 0:
            # Drain the highest-numbered shards over the share; released once no listener reads them.
            self._draining |= set(sorted(held - self._draining)[-over:])
        metrics.LEASES.labels(self.role).set(len(held))
        self._assign(self.owned)

    def _assign(self, shards: set[int]) -> None:
        for listener in self.listeners:
            listener.assign(shards)

    def _expire_locally(self) -> None:
        """Redis has not answered for a TTL: the leases may be someone else's by now."""
        if self.last_ok is not None and time.monotonic() - self.last_ok >= self.ttl_ms / 1000 and self.held:
            log.warning("leases_expired_locally", role=self.role, holder=self.holder, shards=sorted(self.held))
            self.held = set()
            self._draining = set()
            metrics.LEASES.labels(self.role).set(0)
            self._assign(set())

    async def release_all(self, timeout_s: float = 15.0) -> None:
        """Graceful stop: stop reading, let in-flight work finish, give every lease back at once.
        The leases are not renewed meanwhile: a drain longer than the TTL lets them lapse (others
        then take the shards over; the log's expected-version guard covers the overlap)."""
        self._leaving = True
        self._assign(set())
        deadline = time.monotonic() + timeout_s
        while any(listener.active() for listener in self.listeners) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self.static:
            return
        self._draining = set(self.held)
        try:
            await self.tick(leaving=True)
        except Exception as exc:  # the process is stopping: the leases lapse on their own
            log.warning("lease_release_failed", role=self.role, holder=self.holder, error=str(exc))
        self.held = set()
        metrics.LEASES.labels(self.role).set(0)


def leases_for(client: AnyRedis, keys: Keys, role: str, settings: Settings) -> Leases:
    """The leases of `role` as a service's settings size them (consumer name, shards, TTL, and the
    static shards an operator may pin instead)."""
    return Leases(
        client, keys, role, settings.consumer, settings.shards, settings.lease_ttl_ms, static=settings.own_shards
    )
