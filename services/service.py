"""What every service process has in common: a supervisor for its loops, its Redis client, and the
liveness and readiness reports the health endpoint serves."""

from __future__ import annotations

import time
from typing import Any

from services.leases import Leases
from services.redis_conn import AnyRedis, transient
from services.supervise import Supervisor


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
