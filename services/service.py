"""What every service process has in common: a supervisor for its loops, its Redis client, and the
liveness and readiness reports the health endpoint serves."""

from __future__ import annotations

import gc
import time
from typing import Any

from services.leases import Leases
from services.redis_conn import AnyRedis, transient
from services.supervise import Supervisor

# A batch's working set (envelopes, plans, events, seat messages of up to a few thousand entries)
# outlives the default 700-allocation young generation and was scanned again and again: with the
# defaults the referee's collector took ~0.11 s over a 15k-command bench run, with a 20,000 one
# 0.015 s (about 6 µs a command; one referee 10.7k -> 11.2k commands/s, medians of 3 rounds).
# Full collections still run, every ten thousand batches' worth of allocations or so.
GC_THRESHOLDS = (20_000, 20, 20)


def settle_gc() -> None:
    """Once a service has started: everything allocated so far lives for the process, so keep it
    out of the collector's generations (full collections stay short, for p99 latency), and
    collect the young generation less often (see GC_THRESHOLDS)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class Service:
    def __init__(self, name: str, client: AnyRedis) -> None:
        self.name = name
        self.client = client
        self.supervisor = Supervisor(name)
        self.leases: Leases | None = None
        self.started_at = time.monotonic()

    def live(self) -> tuple[bool, dict[str, Any]]:
        report: dict[str, Any] = {"loops": self.supervisor.report()}
        if self.supervisor.fatal.is_set():
            report["fatal"] = self.supervisor.fatal_reason
        return self.supervisor.live(), report

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        report: dict[str, Any] = {}
        try:
            report["redis"] = bool(await self.client.ping())
        except Exception as exc:
            if not transient(exc):
                raise
            report["redis"] = False
            report["redis_error"] = str(exc)
        ok = report["redis"] and self.supervisor.live()
        if self.leases is not None:
            leases = self.leases
            held = leases.ready()
            report["leases"] = {"ready": held, "held": sorted(leases.held), "share": leases.share, "live": leases.live}
            ok = ok and held
        return ok, report
