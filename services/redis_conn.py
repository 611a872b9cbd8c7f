"""Async Redis clients for the services: redis-py with hiredis, standalone or Redis Cluster.

`connect(url)` returns a `redis.asyncio.Redis` for a standalone server and a
`redis.asyncio.RedisCluster` when the server at `url` is a cluster node (asked once per URL with
`INFO cluster`; `DICESTREAM_REDIS_CLUSTER=1|0` decides without asking). Code that must behave
differently on a cluster (no cross-slot reads, no EVALSHA in a pipeline, SCAN per primary) asks
`is_cluster(client)`.

redis-py's asyncio connection packs commands in pure Python (~9 µs for an append's EVALSHA with
its events) even when hiredis is installed; hiredis.pack_command does it in ~1.6 µs. On the
referee's hot path that is about a tenth of a command's cost.

No socket timeout: with one (redis-py's default is 5 s) every send runs in `asyncio.wait_for` (a new
task) and every reply read in an `asyncio.timeout` (a timer), which measured 2.3x the client CPU of
a pipelined XADD here (17 vs 7 µs) and 1.6x an awaited one. A dead peer is found by TCP keepalive
instead (about 25 s), and connecting still times out.
"""

from __future__ import annotations

import os
import socket
import weakref
from typing import Any, TypeAlias

import hiredis
import redis
import redis.asyncio as aredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    ClusterDownError,
    ReadOnlyError,
    SlotNotCoveredError,
    TryAgainError,
)

AnyRedis: TypeAlias = aredis.Redis | RedisCluster
# What redis-py returns for stream reads (no decode_responses): entries, and XREAD's per-stream list.
Entries: TypeAlias = list[tuple[bytes, dict[bytes, bytes]]]
StreamReads: TypeAlias = list[tuple[bytes, Entries]]
CLUSTER_ENV = "DICESTREAM_REDIS_CLUSTER"


# Faults that pass: Redis restarting or unreachable, a cluster failing over. Loops wait them out with a
# backoff instead of counting them as failures; a wrong password or a refused command is not one.
_TRANSIENT = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
    ReadOnlyError,
    OSError,
)


def transient(exc: BaseException) -> bool:
    return isinstance(exc, _TRANSIENT) and not isinstance(exc, AuthenticationError | AuthorizationError)


class HiredisPackingConnection(Connection):
    def pack_command(self, *args: Any) -> list[bytes]:
        # redis-py splits multi-word command names ("SCRIPT LOAD"); hiredis would not.
        if isinstance(args[0], str) and " " in args[0]:
            return super().pack_command(*args)
        return [hiredis.pack_command(args)]


_KEEPALIVE = {
    opt: value
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3))
    if (opt := getattr(socket, name, None)) is not None
}
_OPTIONS: dict[str, Any] = {
    "socket_timeout": None,
    "socket_connect_timeout": 5.0,
    "socket_keepalive": True,
    "socket_keepalive_options": _KEEPALIVE,
}
_detected: dict[str, bool] = {}
# The URL each client was made from, so that a second client of the same kind can be made for it.
_origin: weakref.WeakKeyDictionary[Any, tuple[str, bool]] = weakref.WeakKeyDictionary()


def cluster_mode(env: dict[str, str] | None = None) -> bool | None:
    """What DICESTREAM_REDIS_CLUSTER forces: True, False, or None (ask the server)."""
    value = (os.environ if env is None else env).get(CLUSTER_ENV, "auto").strip().lower()
    if value in ("1", "yes", "true", "on"):
        return True
    if value in ("0", "no", "false", "off"):
        return False
    if value in ("", "auto"):
        return None
    raise ValueError(f"{CLUSTER_ENV}={value!r}: expected 1, 0 or auto")


def detect_cluster(url: str) -> bool:
    """Is the server at `url` a Redis Cluster node? Asked once per URL (a short blocking call, at
    start-up) with CLUSTER INFO, which every cluster client's user may run (the client needs its
    neighbours, CLUSTER SLOTS, anyway) and which a standalone server refuses."""
    if url not in _detected:
        probe = redis.Redis.from_url(url, socket_connect_timeout=5.0, socket_timeout=5.0)
        try:
            _detected[url] = probe.execute_command("CLUSTER INFO")["cluster_state"] is not None  # type: ignore[no-untyped-call]
        except redis.exceptions.NoPermissionError:
            _detected[url] = _cluster_by_info(probe)
        except redis.exceptions.ResponseError:
            _detected[url] = False  # "This instance has cluster support disabled"
        finally:
            probe.close()
    return _detected[url]


def _cluster_by_info(probe: redis.Redis) -> bool:
    try:
        return bool(int(probe.info("cluster").get("cluster_enabled", 0)))
    except redis.exceptions.NoPermissionError:
        return False  # say so with DICESTREAM_REDIS_CLUSTER=1


def connect(url: str, cluster: bool | None = None) -> AnyRedis:
    """A client for `url`: a cluster client when `cluster` (default: DICESTREAM_REDIS_CLUSTER, else
    what the server says), else a standalone one."""
    if cluster is None:
        cluster = cluster_mode()
    if cluster is None:
        cluster = detect_cluster(url)
    client: AnyRedis
    if cluster:
        client = RedisCluster.from_url(url, **_OPTIONS)
        # from_url offers no way to choose the connection class; every node's pool is built from
        # these keyword arguments when the client first connects.
        client.connection_kwargs["connection_class"] = HiredisPackingConnection
    else:
        pool = aredis.ConnectionPool.from_url(url, connection_class=HiredisPackingConnection, **_OPTIONS)
        client = aredis.Redis.from_pool(pool)
    _origin[client] = (url, cluster)
    return client


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)


def sibling(client: AnyRedis) -> AnyRedis:
    """A second client to the same server with its own response callbacks (a standalone one shares
    `client`'s connections; a cluster client has no shared pool, so it gets connections of its own)."""
    if isinstance(client, aredis.Redis):
        return aredis.Redis(connection_pool=client.connection_pool)
    origin = _origin.get(client)
    if origin is None:
        raise ValueError("a cluster client not made by services.redis_conn.connect")
    return connect(origin[0], cluster=True)
