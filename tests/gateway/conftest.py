"""The gateway in front of the real services, on a free port, over the `redis_url` server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec
import pytest
import redis.exceptions

from dicestream.runtime import BACKEND, Running, running
from services.config import Settings
from services.gateway.app import GatewayService
from services.gateway.settings import GatewaySettings
from services.redis_conn import detect_cluster
from tests.gateway.helpers import Api

CORE = BACKEND  # every service but the gateway, which each test starts with its own settings
# Limits off unless a test asks (a whole game from one address is hundreds of requests a second).
OPEN = GatewaySettings(port=0, rate_limit="", client_rate_limit="", command_timeout_s=15.0)


@dataclass
class Stack:
    run: Running
    gateway: GatewayService
    key: str  # an API key with every scope
    settings: Settings

    @property
    def url(self) -> str:
        return self.gateway.url

    def api(self, key: str | None = None) -> Api:
        return Api(self.url, self.key if key is None else key)


@contextlib.asynccontextmanager
async def start_stack(
    settings: Settings, url: str, gateway: GatewaySettings = OPEN, names: tuple[str, ...] = CORE
) -> AsyncIterator[Stack]:
    async with contextlib.AsyncExitStack() as stack:
        try:
            run = await stack.enter_async_context(running(settings, url, names))
        except (redis.exceptions.MovedError, redis.exceptions.RedisClusterException) as exc:
            if not detect_cluster(url):
                raise
            # Before the services' shard leases (main, e21602c) they do not start on a cluster; the
            # gateway's tests that need no service run there all the same.
            pytest.skip(f"the services of this build do not run on a Redis Cluster: {exc!r}"[:300])
        gw = GatewayService(settings, url, gateway)
        await gw.start()
        stack.push_async_callback(gw.stop)
        key = await gw.deps.api_keys.add("tests", ("create", "bots", "admin"))
        yield Stack(run=run, gateway=gw, key=key, settings=settings)


@pytest.fixture
async def stack(settings: Settings, redis_url: str) -> AsyncIterator[Stack]:
    async with start_stack(msgspec.structs.replace(settings, reclaim_idle_ms=2000), redis_url) as s:
        yield s


@dataclass
class Bare:
    """A gateway with no service behind it: for what the gateway does alone."""

    gateway: GatewayService
    settings: Settings
    redis_url: str

    @property
    def url(self) -> str:
        return self.gateway.url


@pytest.fixture
async def bare(settings: Settings, redis_url: str) -> AsyncIterator[Bare]:
    gw = GatewayService(settings, redis_url, OPEN)
    await gw.start()
    try:
        yield Bare(gateway=gw, settings=settings, redis_url=redis_url)
    finally:
        await gw.stop()
