"""Starting the services in one process (`dicestream serve`, `up`, the demo, integration tests).

`running()` starts the named services, and their health endpoint when DICESTREAM_HEALTH_ADDR is
set, and stops them in reverse order (each first drains and releases its shard leases).
`Running.fatal()` waits until any service's supervisor gives up on a loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from services.botrunner.app import BotRunnerService
from services.config import Settings
from services.gateway.app import GatewayService
from services.health import serve_health
from services.http import EmbeddedServer
from services.projector.app import ProjectorService
from services.redis_conn import AnyRedis, connect
from services.referee.app import RefereeService
from services.service import Service
from services.turns.app import TurnService

SERVICES = ("referee", "projector", "turns", "botrunner", "gateway")
# What `running()` starts unless told (the demo, tournaments, tests): all but the gateway, which
# listens on a port (`up` and `serve` name it).
BACKEND = SERVICES[:-1]


@dataclass
class Running:
    url: str
    settings: Settings
    services: dict[str, Any] = field(default_factory=dict)
    health: EmbeddedServer | None = None

    @property
    def referee(self) -> RefereeService:
        return self.services["referee"]  # type: ignore[no-any-return]

    @property
    def bots(self) -> BotRunnerService:
        return self.services["botrunner"]  # type: ignore[no-any-return]

    @property
    def projector(self) -> ProjectorService:
        return self.services["projector"]  # type: ignore[no-any-return]

    @property
    def turns(self) -> TurnService:
        return self.services["turns"]  # type: ignore[no-any-return]

    def client(self) -> AnyRedis:
        return connect(self.url)

    async def fatal(self) -> str:
        """Wait until a service's supervisor gives up; its reason."""
        supervised = [s for s in self.services.values() if isinstance(s, Service)]
        waits = [asyncio.ensure_future(s.supervisor.fatal.wait()) for s in supervised]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        return "; ".join(s.supervisor.fatal_reason for s in supervised if s.supervisor.fatal.is_set())


def build(name: str, settings: Settings, url: str) -> Any:
    return {
        "referee": RefereeService,
        "projector": ProjectorService,
        "turns": TurnService,
        "botrunner": BotRunnerService,
        "gateway": GatewayService,
    }[name](settings, url)


@contextlib.asynccontextmanager
async def running(
    settings: Settings, url: str, names: tuple[str, ...] = BACKEND, health: bool = False
) -> AsyncIterator[Running]:
    """With `health`, also serve /livez, /readyz and /metrics on settings.health_addr."""
    run = Running(url=url, settings=settings)
    try:
        for name in names:
            svc = build(name, settings, url)
            run.services[name] = svc
            await svc.start()
        if health and settings.health_addr:
            run.health = await serve_health(settings.health_addr, list(run.services.values()))
        yield run
    finally:
        if run.health is not None:
            await run.health.stop()
        for svc in reversed(list(run.services.values())):
            await svc.stop()
