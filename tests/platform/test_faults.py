"""Tournaments through faults, every service a separate process as deployed: a bot runner SIGKILLed
mid-game, a Redis SIGKILLed (no clean SHUTDOWN) and restarted from its append-only file with
referee and bot runner kills too, and a Redis Cluster master SIGKILLed with its replica taking
over. Every game finishes and verifies; where Redis keeps what it acknowledged, every command got
exactly one outcome and no move was forced by a timeout."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from dicestream.localredis import LocalCluster, LocalRedis, free_ports
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import AnyRedis, connect
from tests.platform.helpers import command, entries_of
from tests.platform.procs import ServiceProcess, all_over, check_games, host_games, stall_report, wait_until

pytestmark = pytest.mark.redis


def fault_settings(settings: Settings) -> Settings:
    return msgspec.structs.replace(settings, shards=4, lease_ttl_ms=3000, reclaim_idle_ms=2000)


async def forced_by_timeout(store: RedisEventStore, games: list[str]) -> int:
    n = 0
    for gid in games:
        for version, data in await store.read(gid):
            env = codec.decode_event(data, gid, version)
            if env.type == "lifecycle.DefaultActionForced":
                forced = codec.event_payload(env)
                assert isinstance(forced, lc.DefaultActionForced)
                n += forced.reason == "timeout"
    return n


async def under_way(client: AnyRedis, keys: Keys, games: list[str], commands: int) -> bool:
    return sum([await client.xlen(keys.audit(g)) for g in games]) >= commands


def start_all(settings: Settings, url: str, **env: str) -> dict[str, ServiceProcess]:
    return {
        name: ServiceProcess(name, settings, url, f"{name}-0", **env)
        for name in ("referee", "projector", "turns", "botrunner")
    }


async def test_a_killed_bot_runner_resumes_its_seats_and_no_move_is_forced(
    settings: Settings, redis_url: str, client: AnyRedis
) -> None:
    settings = fault_settings(settings)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    procs = start_all(settings, redis_url)
    try:
        # A generous move timeout: a seat the runner abandoned would be played by the timer.
        games = await host_games(client, settings, 6, move_timeout_s=20.0)
        await wait_until(lambda: under_way(client, keys, games, 40), 60, what="games under way")
        procs["botrunner"].kill()
        await asyncio.sleep(0.5)
        procs["botrunner"].start()  # the same consumer name, a new lease holder
        await wait_until(lambda: all_over(store, games), 120, every=0.2, what="every game over")
        assert await forced_by_timeout(store, games) == 0
        await check_games(client, keys, settings.shards, games)
    finally:
        for p in procs.values():
            p.stop()
        await store.close()


@pytest.mark.standalone_only("kills the Redis server it runs on")
async def test_redis_killed_and_restarted_from_its_aof_loses_nothing(
    settings: Settings, redis_url: str, tmp_path: Path
) -> None:
    settings = fault_settings(settings)
    keys = Keys(settings.prefix)
    server = LocalRedis(free_ports(1), tmp_path / "redis", "--appendonly", "yes", "--appendfsync", "everysec")
    server.start()
    client = connect(server.url)
    store = RedisEventStore(client, keys)
    procs = start_all(settings, server.url)
    try:
        games = await host_games(client, settings, 8, move_timeout_s=30.0)
        for victim in ("redis", "referee", "redis", "botrunner"):
            await asyncio.sleep(1.0)
            if victim == "redis":
                server.kill()  # no SHUTDOWN, no last fsync
                await asyncio.sleep(0.5)
                server.start()  # loads the append-only file
            else:
                procs[victim].kill()
                procs[victim].start()
        try:
            await wait_until(lambda: all_over(store, games), 60, every=0.2, what="every game over")
        except AssertionError:
            raise AssertionError(await stall_report(client, keys, settings.shards, games)) from None
        assert await forced_by_timeout(store, games) == 0
        report = await check_games(client, keys, settings.shards, games)
        assert report["commands"] > 100
        for p in procs.values():
            assert p.alive(), p.tail()
    finally:
        for p in procs.values():
            p.stop()
        await store.close()
        await client.aclose()
        server.stop()


@pytest.mark.standalone_only("starts a cluster of its own, so as not to fail over the session's")
async def test_a_cluster_master_killed_mid_tournament_fails_over_and_every_game_finishes(
    settings: Settings, tmp_path: Path
) -> None:
    settings = fault_settings(settings)
    keys = Keys(settings.prefix)
    cluster = LocalCluster(free_ports(6), tmp_path / "cluster", node_timeout_ms=2000).start()
    client = connect(cluster.url)
    store = RedisEventStore(client, keys)
    procs = start_all(settings, cluster.url)
    try:
        games = await host_games(client, settings, 8, move_timeout_s=30.0)
        await wait_until(lambda: under_way(client, keys, games, 60), 60, what="games under way")
        master = cluster.nodes[1]
        master.kill()

        async def promoted() -> bool:
            info: dict[str, str] = command(cluster.nodes[0].client(), "CLUSTER INFO")
            return info["cluster_state"] == "ok"

        await wait_until(promoted, 30, every=0.2, what="the replica promoted")
        try:
            await wait_until(lambda: all_over(store, games), 90, every=0.2, what="every game over")
        except AssertionError:
            tails = "\n".join(f"--- {n}\n{p.tail(15)}" for n, p in procs.items())
            raise AssertionError(await stall_report(client, keys, settings.shards, games) + "\n" + tails) from None
        for gid in games:
            from services import history

            verdict = history.verify(await history.load(store, gid))
            assert verdict.ok and verdict.seed_verified, (gid, verdict.findings)
        for p in procs.values():
            assert p.alive(), p.tail()
    finally:
        for p in procs.values():
            p.stop()
        await store.close()
        await client.aclose()
        cluster.stop()


async def test_requests_and_answers_lost_in_a_failover_are_repaired(
    settings: Settings, redis_url: str, client: AnyRedis
) -> None:
    """What a failover can lose of acknowledged writes, done by hand: a bot's answer that never
    reached the intake is sent again once the game has not moved past it, and a turn request
    missing from a seat stream is posted again."""
    from dicestream.runtime import running
    from services.eventstore.keys import shard_of

    settings = fault_settings(settings)
    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url, ("projector", "turns", "botrunner")) as run:
        run.bots.runner.resend_s = 1.0
        run.turns.repair_s = 1.0
        async with running(settings, redis_url, ("referee",)):
            [gid] = await host_games(client, settings, 1)
        # No referee now: the bots' next answers wait in the intake. Drop them, as a failover
        # that lost them would.
        intake = keys.intake(shard_of(gid, settings.shards))
        judged = entries_of(await client.xrevrange(intake, count=1))[0][0].decode()

        async def answers() -> list[bytes]:
            return [i for i, _ in entries_of(await client.xrange(intake, min=f"({judged}"))]

        await client.xdel(intake, *await wait_until(answers, 10, what="an answer in the intake"))
        seat_streams = [keys.seat(gid, s) for s in range(2)]
        # And lose the turn requests too: the seats' streams are emptied.
        for stream in seat_streams:
            await client.delete(stream)
        with_requests = await wait_until(lambda: _any_len(client, seat_streams), 10, what="turn requests posted again")
        assert with_requests
        async with running(settings, redis_url, ("referee",)):
            await wait_until(lambda: all_over(store, [gid]), 120, every=0.2, what="the game over")
    await check_games(client, keys, settings.shards, [gid])
    await store.close()


async def _any_len(client: AnyRedis, streams: list[str]) -> int:
    return sum([await client.xlen(s) for s in streams])


@pytest.mark.standalone_only("starts the Redis server it runs on")
async def test_a_service_started_while_redis_is_down_waits_for_it(settings: Settings, tmp_path: Path) -> None:
    """The fault run above restarts a referee one second before Redis is killed: the new process
    must wait for Redis (DICESTREAM_START_WAIT_S) rather than exit, and then judge commands."""
    settings = fault_settings(settings)
    server = LocalRedis(free_ports(1), tmp_path / "redis")
    proc = ServiceProcess("referee", settings, server.url, "late-referee")
    try:
        # However long the process takes to import on a loaded machine, it says it waits, and lives.
        async def waiting() -> bool:
            return any(e.get("event") == "start_waiting_for_redis" for e in proc.events())

        await wait_until(waiting, 20, what="the referee saying it waits for Redis")
        assert proc.alive(), proc.tail()
        server.start()
        await wait_until(lambda: _started(proc), 20, what="the referee started once Redis answered")
        client = connect(server.url)
        cli = Client(client, Keys(settings.prefix), settings.shards)
        reply = await cli.call("late", lc.CreateGame(game_type="sentient", num_players=2), timeout_s=15)
        assert reply.outcome.status == "accepted"
        await cli.close()
        await client.aclose()
    finally:
        proc.stop()
        server.stop()


async def _started(proc: ServiceProcess) -> bool:
    return any(e.get("event") == "referee_started" for e in proc.events())
