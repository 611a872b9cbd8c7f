"""Starting the services in one process (`dicestream up`, the demo, integration tests)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aredis

from services.botrunner.app import BotRunnerService
from services.config import Settings
from services.gateway.app import GatewayService
from services.projector.app import ProjectorService
from services.redis_conn import connect
from services.referee.app import RefereeService
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

    @property
    def referee(self) -> RefereeService:
        return self.services["referee"]  # type: ignore[no-any-return]

    @property
    def bots(self) -> BotRunnerService:
        return self.services["botrunner"]  # type: ignore[no-any-return]

    @property
    def projector(self) -> ProjectorService:
        return self.services["projector"]  # type: ignore[no-any-return]

    def client(self) -> aredis.Redis:
        return connect(self.url)


def build(name: str, settings: Settings, url: str) -> Any:
    return {
        "referee": RefereeService,
        "projector": ProjectorService,
        "turns": TurnService,
        "botrunner": BotRunnerService,
        "gateway": GatewayService,
    }[name](settings, url)


@contextlib.asynccontextmanager
async def running(settings: Settings, url: str, names: tuple[str, ...] = BACKEND) -> AsyncIterator[Running]:
    run = Running(url=url, settings=settings)
    try:
        for name in names:
            svc = build(name, settings, url)
            await svc.start()
            run.services[name] = svc
        yield run
    finally:
        for svc in reversed(list(run.services.values())):
            await svc.stop()
