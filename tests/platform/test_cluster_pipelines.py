"""`services.redis_conn.node_pipelines`, what the referee sends its appends and effects with on a Redis
Cluster: one pipeline per primary, in order, a tail (WAIT) behind each, and redirections followed
through the same path. On a 3-master + 3-replica cluster of its own (slot migrations are staged)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis as sync_redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ResponseError

from bench.harness import free_block
from dicestream.localredis import LocalCluster
from services.redis_conn import connect, node_pipelines
from services.referee import sink as sink_module
from services.referee.sink import RedisSink
from tests.platform.helpers import command

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(free_block(6), Path(tempfile.mkdtemp(prefix="dicestream-pipelines-"))).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def rc(own_cluster: LocalCluster) -> AsyncIterator[RedisCluster]:
    client = connect(own_cluster.url, cluster=True)
    assert isinstance(client, RedisCluster)
    await client.initialize()
    yield client
    await client.aclose()


def _keys(n: int) -> list[str]:
    tag = uuid.uuid4().hex[:6]
    return [f"np-{tag}:{{k{i}}}" for i in range(n)]


def _owner(rc: RedisCluster, key: str) -> ClusterNode:
    """The primary this client sends `key` to (it has read the slot table: every slot has one)."""
    node = rc.get_node_from_key(key)
    assert node is not None, key
    return node


async def test_calls_are_answered_in_order_with_a_tail_behind_each_primary(rc: RedisCluster) -> None:
    keys = _keys(30)
    nodes = {_owner(rc, k).name for k in keys}
    assert len(nodes) == 3  # the keys spread over every primary
    replies, tails = await node_pipelines(rc, [(k, ("INCRBY", k, i)) for i, k in enumerate(keys)], tail=("WAIT", 0, 0))
    assert replies == list(range(30))
    assert len(tails) == 3 and all(isinstance(t, int) for t in tails)  # one WAIT per primary, counting replicas
    again, none = await node_pipelines(rc, [(k, ("GET", k)) for k in keys])
    assert again == [str(i).encode() for i in range(30)] and none == []


async def test_a_failed_call_is_its_error_and_the_others_run(rc: RedisCluster) -> None:
    a, b = _keys(2)
    await rc.set(a, "not a stream")
    replies, _ = await node_pipelines(rc, [(a, ("XADD", a, "*", "f", "v")), (b, ("XADD", b, "*", "f", "v"))])
    assert isinstance(replies[0], ResponseError) and "WRONGTYPE" in str(replies[0])
    assert isinstance(replies[1], bytes) and await rc.xlen(b) == 1


async def test_a_stale_slot_table_is_corrected_by_moved(rc: RedisCluster) -> None:
    (key,) = _keys(1)
    slot = rc.keyslot(key)
    owner = _owner(rc, key)
    other = next(n for n in rc.get_primaries() if n.name != owner.name)
    rc.nodes_manager.slots_cache[slot] = [other]  # as after a failover this client has not seen
    replies, tails = await node_pipelines(rc, [(key, ("SET", key, "v"))], tail=("WAIT", 0, 0))
    assert replies in ([True], [b"OK"])
    assert _owner(rc, key).name == owner.name  # MOVED put the table right
    assert len(tails) == 2  # the refused round's and the one that ran, each behind its own calls
    assert await rc.get(key) == b"v"


async def test_ask_during_a_slot_migration_is_followed_with_asking(rc: RedisCluster) -> None:
    (key,) = _keys(1)
    slot = rc.keyslot(key)
    source = _owner(rc, key)
    target = next(n for n in rc.get_primaries() if n.name != source.name)
    src = sync_redis.Redis(port=int(source.port))
    dst = sync_redis.Redis(port=int(target.port))
    try:
        src_id, dst_id = command(src, "CLUSTER MYID"), command(dst, "CLUSTER MYID")
        command(dst, "CLUSTER SETSLOT", slot, "IMPORTING", src_id)
        command(src, "CLUSTER SETSLOT", slot, "MIGRATING", dst_id)
        # The key is not on the source: the source answers ASK, the target takes it after ASKING.
        replies, _ = await node_pipelines(rc, [(key, ("SET", key, "moved"))], tail=("WAIT", 0, 0))
        assert replies in ([True], [b"OK"])
        assert command(dst, "ASKING") and dst.get(key) == b"moved"
    finally:
        for c in (src, dst):
            command(c, "CLUSTER SETSLOT", slot, "STABLE")
            c.close()


async def test_the_referee_acks_on_a_cluster_only_once_its_replies_are_written(
    rc: RedisCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reply and intake streams are on different primaries: written together, a referee killed
    half-way could leave a command acked and never answered. The sink sends the XACKs only once
    every XADD has been answered: when the XADDs fail, nothing is acked (the command stays pending
    and is judged again, a duplicate answered with its first outcome)."""
    tag = uuid.uuid4().hex[:6]
    intake = f"np-{tag}:cmd:{{0}}"
    reply = next(
        k for k in (f"np-{tag}:reply:c:{{r{i}}}" for i in range(100)) if _owner(rc, k).name != _owner(rc, intake).name
    )
    await rc.xgroup_create(intake, "g", id="0", mkstream=True)
    entry = await rc.xadd(intake, {"data": "cmd"})
    assert isinstance(entry, bytes)
    await rc.xreadgroup("g", "c", {intake: ">"})
    sent: list[list[str]] = []

    Calls = list[tuple[object, tuple[object, ...]]]

    async def dropped_first(client: object, calls: Calls, tail: object = None) -> None:
        sent.append([str(c[1][0]) for c in calls])
        raise ConnectionError("dropped")

    monkeypatch.setattr(sink_module, "node_pipelines", dropped_first)
    sink = RedisSink(rc)
    sink.add(reply, {"data": b"answer"})
    sink.ack(intake, "g", [entry])
    with pytest.raises(ConnectionError):
        await sink.flush()
    assert sent == [["XADD"]]  # the XACK was never sent
    assert (await rc.xpending(intake, "g"))["pending"] == 1
    monkeypatch.undo()
    sink.add(reply, {"data": b"answer"})
    sink.ack(intake, "g", [entry])
    await sink.flush()
    assert (await rc.xpending(intake, "g"))["pending"] == 0 and await rc.xlen(reply) == 1
