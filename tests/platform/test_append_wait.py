"""DICESTREAM_APPEND_WAIT_REPLICAS: a command is answered only once that many replicas have its
append. Over real replication, a standalone primary with a replica and a 3-master + 3-replica
cluster, each started here (`dicestream.localredis`): the replica that serves a game's slot is
paused (SIGSTOP) while its command is judged. With the option the reply waits for the replica and
the replica holds the append when the reply arrives; without it the reply arrives while the replica
is still paused (the window the option closes). A WAIT that times out leaves the command pending:
it is answered once the replica is back, and judged once."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
import redis as sync_redis
from redis.cluster import RedisCluster as SyncRedisCluster

from bench.harness import free_block
from contracts import lifecycle as lc
from contracts.outcome import Reply
from dicestream.localredis import LocalCluster, LocalRedis
from dicestream.runtime import running
from services.client import Client
from services.config import Settings
from services.eventstore.base import DUPLICATE, OK, AppendRequest
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import connect
from tests.platform.helpers import command, entries_of

pytestmark = pytest.mark.redis


@dataclass
class Topology:
    url: str
    servers: list[LocalRedis]
    cluster: bool

    def replica_of(self, key: str) -> LocalRedis:
        """The replica that serves `key`'s slot."""
        primary = primary_port(self, key)
        for server in self.servers:
            c = server.client()
            try:
                info = c.info("replication")
            finally:
                c.close()
            if info["role"] == "slave" and int(info["master_port"]) == primary:
                return server
        raise AssertionError(f"no replica of the primary on port {primary}")

    def read_replica(self, replica: LocalRedis, key: str) -> list[bytes]:
        """XRANGE of `key` on the replica itself (READONLY: a cluster replica serves reads of its
        primary's slots only when asked to)."""
        c = sync_redis.Redis(port=replica.port, single_connection_client=True, socket_timeout=5)
        try:
            if self.cluster:
                command(c, "READONLY")
            return [fields[b"data"] for _, fields in entries_of(c.xrange(key))]
        finally:
            c.close()


def _replicated(primary: sync_redis.Redis) -> bool:
    info = primary.info("replication")
    return int(info["connected_slaves"]) >= 1 and all(
        v.get("state") == "online" for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
    )


@pytest.fixture(scope="module")
def standalone_pair() -> Iterator[Topology]:
    port = free_block(2)
    folder = Path(tempfile.mkdtemp(prefix="dicestream-wait-"))
    primary = LocalRedis(port, folder / "primary", "--repl-diskless-sync-delay", "0").start()
    replica = LocalRedis(port + 1, folder / "replica", "--replicaof", "127.0.0.1", str(port)).start()
    try:
        c = primary.client()
        deadline = time.monotonic() + 20
        while not _replicated(c):
            assert time.monotonic() < deadline, "the replica never came online"
            time.sleep(0.05)
        c.close()
        yield Topology(primary.url, [primary, replica], cluster=False)
    finally:
        replica.stop()
        primary.stop()


@pytest.fixture(scope="module")
def replicated_cluster() -> Iterator[Topology]:
    cluster = LocalCluster(free_block(6), Path(tempfile.mkdtemp(prefix="dicestream-wait-cluster-"))).start()
    try:
        rc = SyncRedisCluster.from_url(cluster.url)
        deadline = time.monotonic() + 20
        # Every primary with an online replica before a WAIT can count one.
        while not all(_replicated(sync_redis.Redis(port=n.port)) for n in cluster.nodes[: cluster.masters]):
            assert time.monotonic() < deadline, "the replicas never came online"
            time.sleep(0.05)
        rc.close()
        yield Topology(cluster.url, cluster.nodes, cluster=True)
    finally:
        cluster.stop()


@pytest.fixture(params=["standalone", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    chosen = request.getfixturevalue("standalone_pair" if request.param == "standalone" else "replicated_cluster")
    assert isinstance(chosen, Topology)
    return chosen


def _settings(wait: int, timeout_ms: int = 5000) -> Settings:
    return Settings(
        prefix=f"wait-{uuid.uuid4().hex[:8]}",
        shards=2,
        consumer=f"w-{uuid.uuid4().hex[:6]}",
        batch=50,
        reclaim_idle_ms=60_000,
        token_secret="wait-secret",
        log_level="warning",
        lease_ttl_ms=3000,
        append_wait_replicas=wait,
        append_wait_timeout_ms=timeout_ms,
    )


@contextlib.contextmanager
def paused(server: LocalRedis) -> Iterator[None]:
    """SIGSTOP: the server neither applies the replication stream nor acknowledges it."""
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


@contextlib.asynccontextmanager
async def referee(settings: Settings, url: str) -> AsyncIterator[Client]:
    async with running(settings, url, ("referee",)):
        client = connect(url)
        cli = Client(client, Keys(settings.prefix), settings.shards)
        try:
            yield cli
        finally:
            await cli.close()
            await client.aclose()


async def answered_within(cli: Client, command_id: str, seconds: float) -> Reply | None:
    try:
        return await cli.wait(command_id, timeout_s=seconds)
    except TimeoutError:
        return None


def audited(topology: Topology, keys: Keys, game_id: str) -> list[str]:
    primary = topology.servers[0]
    if topology.cluster:
        c: sync_redis.Redis | SyncRedisCluster = SyncRedisCluster.from_url(topology.url)
    else:
        c = primary.client()
    try:
        return [msgspec.json.decode(f[b"data"])["command_id"] for _, f in entries_of(c.xrange(keys.audit(game_id)))]
    finally:
        c.close()


async def test_with_the_option_a_reply_waits_until_the_replica_has_the_append(topology: Topology) -> None:
    settings = _settings(wait=1)
    keys = Keys(settings.prefix)
    game = f"g-{uuid.uuid4().hex[:8]}"
    replica = topology.replica_of(keys.log(game))
    async with referee(settings, topology.url) as cli:
        created = await cli.wait(await cli.send(game, lc.CreateGame(game_type="sentient", num_players=2)), 20)
        assert created.outcome.status == "accepted"
        assert len(topology.read_replica(replica, keys.log(game))) == 1  # on the replica as it is answered
        with paused(replica):
            join = await cli.send(game, lc.JoinSeat(seat=0, name="a"))
            assert await answered_within(cli, join, 0.6) is None, "answered before the replica had the append"
        reply = await answered_within(cli, join, 10)
        assert reply is not None and reply.outcome.status == "accepted"
        log = topology.read_replica(replica, keys.log(game))  # read as soon as the reply is seen
        assert len(log) == reply.outcome.to_version == 2
        assert join.encode() in topology.read_replica(replica, keys.audit(game))[-1]


async def test_without_the_option_a_reply_may_come_before_the_replica_has_the_append(topology: Topology) -> None:
    settings = _settings(wait=0)
    keys = Keys(settings.prefix)
    game = f"g-{uuid.uuid4().hex[:8]}"
    replica = topology.replica_of(keys.log(game))
    async with referee(settings, topology.url) as cli:
        await cli.wait(await cli.send(game, lc.CreateGame(game_type="sentient", num_players=2)), 20)
        with paused(replica):
            reply = await answered_within(cli, await cli.send(game, lc.JoinSeat(seat=0, name="a")), 5)
            # Answered while the replica could not have it: a failover now would lose an answered command.
            assert reply is not None and reply.outcome.to_version == 2


async def test_a_wait_that_times_out_leaves_the_command_pending_until_the_replica_is_back(topology: Topology) -> None:
    settings = _settings(wait=1, timeout_ms=200)
    keys = Keys(settings.prefix)
    game = f"g-{uuid.uuid4().hex[:8]}"
    replica = topology.replica_of(keys.log(game))
    async with referee(settings, topology.url) as cli:
        await cli.wait(await cli.send(game, lc.CreateGame(game_type="sentient", num_players=2)), 20)
        with paused(replica):  # shorter than the cluster's node timeout (2 s): no failover
            join = await cli.send(game, lc.JoinSeat(seat=0, name="a"))
            assert await answered_within(cli, join, 1.2) is None
        # Appended on the primary by the first attempt; answered by a later one (a duplicate, whose
        # WAIT covers the first append) once the replica acknowledges.
        reply = await answered_within(cli, join, 20)
        assert reply is not None and reply.outcome.status == "accepted" and reply.outcome.to_version == 2
        assert reply.token is not None  # the very same message again: its seat token comes back
        assert len(topology.read_replica(replica, keys.log(game))) == 2
    assert audited(topology, keys, game).count(join) == 1  # judged once


async def test_a_duplicate_is_written_again_so_that_a_wait_behind_it_covers_the_first_append(
    topology: Topology,
) -> None:
    """WAIT counts the writes of its own connection: a duplicate's script writes its recorded
    outcome again (the same bytes), so a WAIT behind it waits for a point of the replication stream
    after the first append, whichever connection made that one."""
    keys = Keys(f"wait-{uuid.uuid4().hex[:8]}")
    game = f"g-{uuid.uuid4().hex[:8]}"
    client = connect(topology.url)
    store = RedisEventStore(client, keys, wait_replicas=1, wait_timeout_ms=5000)
    request = AppendRequest(game_id=game, expected_version=0, command_id="c1", outcome=b'{"o":1}', events=[b"e1"])
    request = msgspec.structs.replace(request, public=[b"e1"])
    primary = next(s for s in topology.servers if s.port == primary_port(topology, keys.log(game))).client()
    try:
        assert [r.status for r in await store.append_many([request])] == [OK]
        before = primary.info("commandstats").get("cmdstat_hset", {"calls": 0})["calls"]
        again = await store.append_many([request])
        assert [r.status for r in again] == [DUPLICATE] and again[0].prior_outcome == b'{"o":1}'
        assert primary.info("commandstats")["cmdstat_hset"]["calls"] == before + 1
        assert await store.outcome(game, "c1") == b'{"o":1}'  # unchanged
    finally:
        primary.close()
        await store.close()
        await client.aclose()


def primary_port(topology: Topology, key: str) -> int:
    if not topology.cluster:
        return topology.servers[0].port
    rc = SyncRedisCluster.from_url(topology.url)
    try:
        # redis-py leaves its synchronous cluster client unannotated.
        return int(rc.get_node_from_key(key).port)  # type: ignore[no-untyped-call]
    finally:
        rc.close()
