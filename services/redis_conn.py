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

import asyncio
import os
import socket
import weakref
from collections.abc import Sequence
from typing import Any, TypeAlias

import hiredis
import redis
import redis.asyncio as aredis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import (
    AskError,
    AuthenticationError,
    AuthorizationError,
    ClusterDownError,
    MovedError,
    ReadOnlyError,
    SlotNotCoveredError,
    TryAgainError,
)

AnyRedis: TypeAlias = aredis.Redis | RedisCluster
# What redis-py returns for stream reads (no decode_responses): entries, and XREAD's per-stream list.
Entries: TypeAlias = list[tuple[bytes, dict[bytes, bytes]]]
StreamReads: TypeAlias = list[tuple[bytes, Entries]]
CLUSTER_ENV = "DICESTREAM_REDIS_CLUSTER"


class ReplicasBehind(redis.exceptions.RedisError):
    """A WAIT after writes returned before as many replicas as wanted had acknowledged them (a
    replica down or lagging): the writes are on the primary, not proven on the replicas."""


# Faults that pass: Redis restarting or unreachable, a cluster failing over, replicas behind. Loops wait
# them out with a backoff instead of counting them as failures; a wrong password or a refused command
# is not one.
_TRANSIENT = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
    ReadOnlyError,
    ReplicasBehind,
    OSError,
)


def stream_id(entry_id: bytes | str) -> tuple[int, int]:
    """A stream entry id as the pair Redis orders it by (`<ms>-<seq>`; a bare `<ms>` is seq 0)."""
    raw = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = raw.partition("-")
    return int(ms), int(seq or 0)


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


# Rounds of redirections (MOVED, ASK, TRYAGAIN) `node_pipelines` follows before giving up on a call.
_ROUNDS = 5


async def node_pipelines(
    client: RedisCluster,
    calls: Sequence[tuple[Any, tuple[Any, ...]]],
    tail: tuple[Any, ...] | None = None,
) -> tuple[list[Any], list[Any]]:
    """Send each call (routing key, command args) to the primary serving its key's slot: one
    pipeline per primary, on one of its connections, all primaries at once; a primary's calls in
    the order given, then `tail` (e.g. WAIT, which counts the writes of the connection it runs on).
    Returns every call's reply in order (the exception in its place for one that failed) and the
    tail's reply of every pipeline that carried it.

    What redis-py's cluster pipeline does, without its per-command routing policies (about twice
    the client CPU per call) and with EVALSHA allowed (its keys are in one slot, which redis-py
    checks when it finds the slot). Redirections are followed here, in rounds, through this same
    path, so a tail covers every call it answers for: MOVED updates the slot table and goes to the
    new owner, ASK goes to the importing node behind ASKING, TRYAGAIN waits a little. A call still
    redirected after the rounds is sent on its own by the client (which follows redirections as it
    always does) when there is no tail, and is left as its error when there is one. A dropped
    connection closes the client's connections (the next call loads the topology again) and is
    raised: whether the calls on it ran is unknown."""
    await client.initialize()
    replies: list[Any] = [None] * len(calls)
    tails: list[Any] = []
    todo: list[int] = list(range(len(calls)))
    asking: dict[int, str] = {}  # call -> node name it was told to ASK
    for attempt in range(_ROUNDS):
        per_node: dict[str, tuple[ClusterNode, list[PipelineCommand], list[int | None]]] = {}
        for i in todo:
            target = asking.get(i)
            node = client.get_node(node_name=target) if target else client.get_node_from_key(calls[i][0])
            if node is None:
                raise SlotNotCoveredError(f"no node serves the key {calls[i][0]!r}")
            _, cmds, owners = per_node.setdefault(node.name, (node, [], []))
            if target:
                cmds.append(PipelineCommand(len(cmds), "ASKING"))
                owners.append(None)
            cmds.append(PipelineCommand(len(cmds), *calls[i][1]))
            owners.append(i)
        if tail is not None:
            for _, cmds, owners in per_node.values():
                cmds.append(PipelineCommand(len(cmds), *tail))
                owners.append(None)
        sent = list(per_node.values())
        outcomes = await asyncio.gather(
            *(node.execute_pipeline(cmds) for node, cmds, _ in sent), return_exceptions=True
        )
        dropped = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if dropped is None:
            dropped = next(
                (c.result for _, cmds, _ in sent for c in cmds if isinstance(c.result, _DROPPED)),
                None,
            )
        if dropped is not None:
            await client.aclose()
            raise dropped
        redirected: list[int] = []
        asking = {}
        for _, cmds, owners in sent:
            if tail is not None:
                tails.append(cmds[-1].result)
            for cmd, owner in zip(cmds, owners, strict=True):
                if owner is None:
                    continue
                result = cmd.result
                replies[owner] = result
                if isinstance(result, MovedError):
                    await client.nodes_manager.move_slot(result)
                    redirected.append(owner)
                elif isinstance(result, AskError):
                    asking[owner] = f"{result.host}:{result.port}"
                    redirected.append(owner)
                elif isinstance(result, TryAgainError):
                    redirected.append(owner)
        if not redirected:
            return replies, tails
        todo = redirected
        if attempt:
            await asyncio.sleep(0.05 * attempt)
    if tail is None:
        for i in todo:
            try:
                replies[i] = await client.execute_command(*calls[i][1])
            except redis.exceptions.ResponseError as exc:
                replies[i] = exc
    return replies, tails


_DROPPED = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
