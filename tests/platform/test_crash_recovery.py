"""Services that die holding messages: a real referee process killed with SIGKILL mid-batch (its
shards are taken over, by a restarted process under the same name or by another referee, and its
pending commands judged first, in order), a restarted referee's own pending commands, and bus
notices a dead projector held."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import Reply, decode_outcome
from dicestream.runtime import running
from games import match as m
from services.broker import ensure_group
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.projector.app import GROUP as PROJECTOR_GROUP
from services.redis_conn import AnyRedis
from services.referee.app import GROUP
from tests.platform.helpers import entries_of, reads_of, summary_version

pytestmark = pytest.mark.redis


class RefereeProcess:
    """`dicestream serve referee` in its own process, as deployed."""

    def __init__(self, settings: Settings, url: str, consumer: str, reclaim_idle_ms: int) -> None:
        self.log = Path(tempfile.mkstemp(prefix="referee-", suffix=".log")[1])
        env = dict(
            os.environ,
            REDIS_URL=url,
            DICESTREAM_PREFIX=settings.prefix,
            DICESTREAM_SHARDS=str(settings.shards),
            DICESTREAM_CONSUMER=consumer,
            DICESTREAM_BATCH=str(settings.batch),
            DICESTREAM_RECLAIM_IDLE_MS=str(reclaim_idle_ms),
            DICESTREAM_TOKEN_SECRET=settings.token_secret or "",
            DICESTREAM_LOG_LEVEL="warning",
            DICESTREAM_HEALTH_ADDR="127.0.0.1:0",
        )
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dicestream.cli", "serve", "referee"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.unlink(missing_ok=True)


@pytest.fixture
def processes() -> Iterator[list[RefereeProcess]]:
    started: list[RefereeProcess] = []
    yield started
    for p in started:
        p.stop()


async def pending_of(client: AnyRedis, streams: list[str], consumer: str) -> int:
    total = 0
    for stream in streams:
        for c in (await client.xpending(stream, GROUP))["consumers"]:
            if c["name"] in (consumer, consumer.encode()):
                total += int(c["pending"])
    return total


async def queue_games(cli: Client, games: list[str]) -> list[tuple[str, str]]:
    """Create a 2-seat game and join both seats, for every game, all queued in one pipeline: each
    command is only legal after the one before it of the same game."""
    envs = []
    for g in games:
        envs.append(cli.envelope(g, lc.CreateGame(game_type="sentient", num_players=2)))
        envs += [cli.envelope(g, lc.JoinSeat(seat=s, name=f"p{s}")) for s in range(2)]
    pipe = cli.redis.pipeline(transaction=False)
    for env in envs:
        pipe.xadd(cli.keys.intake(shard_of(env.game_id, cli.shards)), {"data": codec.encode(env)})
    await pipe.execute()
    return [(env.game_id, env.command_id) for env in envs]


async def kill_mid_batch(cli: Client, doomed: RefereeProcess, streams: list[str], consumer: str) -> int:
    """SIGKILL the referee once it has answered some commands and still holds others it read;
    how many it left pending."""
    deadline = time.monotonic() + 60
    while not (await cli.redis.xlen(cli.reply_to) and await pending_of(cli.redis, streams, consumer)):
        assert doomed.proc.poll() is None, doomed.log.read_text()
        assert time.monotonic() < deadline, "the referee never answered a command"
    doomed.kill()
    return await pending_of(cli.redis, streams, consumer)


async def outcomes(cli: Client, sent: list[tuple[str, str]]) -> dict[str, Reply]:
    return {cid: await cli.wait(cid, timeout_s=60) for _, cid in sent}


@pytest.mark.parametrize("rescue", ["restart-same-name", "another-referee"])
async def test_a_referee_killed_mid_batch_loses_no_command(
    settings: Settings, redis_url: str, client: aredis.Redis, processes: list[RefereeProcess], rescue: str
) -> None:
    keys = Keys(settings.prefix)
    streams = [keys.intake(s) for s in range(settings.shards)]
    for stream in streams:
        await ensure_group(client, stream, GROUP)
    cli = Client(client, keys, settings.shards)
    games = [f"crash-{i}" for i in range(150)]
    sent = await queue_games(cli, games)

    doomed = RefereeProcess(settings, redis_url, "doomed", reclaim_idle_ms=60_000)
    processes.append(doomed)
    left = await kill_mid_batch(cli, doomed, streams, "doomed")
    answered = await client.xlen(cli.reply_to)
    assert left > 0 and answered > 0, "not killed mid-batch"

    if rescue == "restart-same-name":
        # No reclaiming within the test: only resuming its own pending entries can recover them.
        processes.append(RefereeProcess(settings, redis_url, "doomed", reclaim_idle_ms=60_000))
        got = await outcomes(cli, sent)
    else:
        async with running(msgspec.structs.replace(settings, consumer="rescuer"), redis_url, ("referee",)):
            got = await outcomes(cli, sent)

    assert set(got) == {cid for _, cid in sent}
    # On a cluster a batch's XACKs follow its replies (services/referee/sink.py): an outcome can be
    # read a moment before its entry is acknowledged. Every one must be, shortly.
    deadline = time.monotonic() + 10
    while await pending_of(client, streams, "doomed") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert await pending_of(client, streams, "doomed") == 0
    store = RedisEventStore(client, keys)
    for game_id in games:
        log = await store.read(game_id)
        agg = rebuild(game_id, log)  # refuses a log with a gap or a repeated version
        mine = [cid for g, cid in sent if g == game_id]
        # At most one recorded outcome per command, whoever judged it and however often it was
        # delivered; every accepted command among them.
        audited = [decode_outcome(o, game_id).command_id for o in await store.audit(game_id)]
        accepted = [cid for cid in mine if got[cid].outcome.status == "accepted"]
        assert len(audited) == len(set(audited)) and set(accepted) <= set(audited) <= set(mine)
        assert agg.version == len(accepted)  # create and join each append one event
        # Whoever takes the shard over judges what the dead referee held before anything newer, so
        # every game's commands kept their order: nothing refused, nothing lost.
        assert sorted(audited) == sorted(mine)
        assert len(accepted) == 3 and agg.status == m.OPEN, (game_id, agg.status)
    await cli.close()


async def held_by_referee_0(
    settings: Settings,
    client: aredis.Redis,
    game_id: str,
    payloads: list[msgspec.Struct],
    deliveries: int = 1,
) -> tuple[Settings, str, Client, list[str]]:
    """`payloads` sent to `game_id`, then read `deliveries` times by consumer referee-0 and never
    acked (it crashed); the settings of a referee-0 that will not reclaim within a test."""
    keys = Keys(settings.prefix)
    stream = keys.intake(shard_of(game_id, settings.shards))
    await ensure_group(client, stream, GROUP)
    cli = Client(client, keys, settings.shards)
    sent = [await cli.send(game_id, p) for p in payloads]
    for i in range(deliveries):
        await client.xreadgroup(GROUP, "referee-0", {stream: "0" if i else ">"}, count=100)
    return msgspec.structs.replace(settings, consumer="referee-0", reclaim_idle_ms=60_000), stream, cli, sent


async def test_a_restarted_referee_judges_its_own_pending_commands_before_newer_ones(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    settings, stream, cli, first = await held_by_referee_0(
        settings, client, "ordered", [lc.CreateGame(game_type="sentient", num_players=2), lc.JoinSeat(seat=0, name="a")]
    )
    later = await cli.send("ordered", lc.JoinSeat(seat=1, name="b"))  # arrives while it is down
    async with running(settings, redis_url, ("referee",)):
        replies = [await cli.wait(c, timeout_s=10) for c in [*first, later]]
    assert [r.outcome.status for r in replies] == ["accepted"] * 3
    assert [r.outcome.judged_at_version for r in replies] == [0, 1, 2]
    assert (await client.xpending(stream, GROUP))["pending"] == 0


async def test_a_pending_command_delivered_too_often_is_dead_lettered_on_restart(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """A command that crashed the referee each time it was judged must not crash it forever."""
    keys = Keys(settings.prefix)
    settings, stream, cli, (poison,) = await held_by_referee_0(
        settings, client, "poison", [lc.CreateGame(game_type="sentient", num_players=2)], settings.max_deliveries
    )
    async with running(settings, redis_url, ("referee",)):
        fine = await cli.call("fine", lc.CreateGame(game_type="sentient", num_players=2), timeout_s=10)
        assert fine.outcome.status == "accepted"
    letters = entries_of(await client.xrange(keys.dead_letter))
    assert [f[b"reason"] for _, f in letters] == [f"failed {settings.max_deliveries} deliveries".encode()]
    assert poison.encode() in letters[0][1][b"field:data"]
    assert (await client.xpending(stream, GROUP))["pending"] == 0
    assert await RedisEventStore(client, keys).read("poison") == []


async def test_bus_entries_a_dead_projector_held_are_reclaimed_and_projected(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    bus = keys.bus(shard_of("seen-late", settings.shards))
    for shard in range(settings.shards):
        await ensure_group(client, keys.bus(shard), PROJECTOR_GROUP)
    cli = Client(client, keys, settings.shards)
    async with running(settings, redis_url, ("referee",)):
        created = await cli.call("seen-late", lc.CreateGame(game_type="sentient", num_players=2))
    # A projector read the game's notice, then died before projecting and acking it.
    got = reads_of(await client.xreadgroup(PROJECTOR_GROUP, "dead-projector", {bus: ">"}, count=10))
    assert len(got[0][1]) == 1
    async with running(settings, redis_url, ("projector",)) as run:

        async def projected() -> bool:
            state = await run.projector.projector.game("seen-late")
            return summary_version(state) == created.outcome.to_version

        deadline = time.monotonic() + 20
        while not await projected():
            assert time.monotonic() < deadline, "the held notice was never reclaimed"
            await asyncio.sleep(0.05)
    assert (await client.xpending(bus, PROJECTOR_GROUP))["pending"] == 0
    await cli.close()
