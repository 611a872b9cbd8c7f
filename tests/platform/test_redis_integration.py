"""The services over a real Redis: the bus, consumer groups, reclaiming, dead letters, races."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import HOSTED, HostBot
from dicestream.runtime import running
from games import match as m
from services.botrunner.app import GROUP as BOTS
from services.botrunner.app import BotRunner, HostedSeat, Playing, seat_field
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import rebuild
from services.referee.app import GROUP, RefereeService
from tests.platform.helpers import entries_of, envelope, reads_of, summary_version

pytestmark = pytest.mark.redis
T = TypeVar("T")


async def wait_for(predicate: Callable[[], Awaitable[T | None]], timeout: float = 20.0, every: float = 0.05) -> T:
    """Ask `predicate` every `every` s until it answers a true value: that value (so never None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(every)
    raise AssertionError("condition not met in time")


async def test_full_bot_games_over_the_bus(settings: Settings, redis_url: str, client: aredis.Redis) -> None:
    keys = Keys(settings.prefix)
    async with running(settings, redis_url) as run:
        cli = Client(client, keys, settings.shards)
        runner = run.bots.runner
        games = {"g2": 2, "g4": 4}
        for gid, n in games.items():
            created = await cli.call(gid, lc.CreateGame(game_type="sentient", num_players=n))
            assert created.outcome.status == "accepted"
            for seat in range(n):
                kind = "greedy" if seat % 2 == 0 else "random"
                hosted = await runner.host(HostBot(game_id=gid, seat=seat, kind=kind, seed=seat))
                assert hosted.status == HOSTED
            await runner.start_game(gid, 0)

        async def all_over() -> bool:
            return len(runner.finished) == len(games)

        await wait_for(all_over, timeout=60)
        store = RedisEventStore(client, keys)
        for gid, n in games.items():
            agg = rebuild(gid, await store.read(gid))
            assert agg.status == m.OVER and len(agg.seats) == n
            assert agg.result is not None and runner.finished[gid].scores == agg.result.scores

            async def projected(gid: str = gid, version: int = agg.version) -> bool:
                state = await run.projector.projector.game(gid)
                return summary_version(state) == version

            await wait_for(projected)
            # The public stream ends with the revealed seed, and equals the log minus secrets.
            public = [codec.decode_event(d, gid, codec.entry_version(i)) for i, d in await store.read_public(gid)]
            events = [e for e in public if e.type != "lifecycle.CommandRejected"]
            assert [e.version for e in events] == list(range(1, agg.version + 1))
            assert events[-1].type == "lifecycle.SeedRevealed"
        projector = run.projector.projector
        before = {gid: await projector.game(gid) for gid in games}
        listed = {g["game_id"] for g in await projector.games()}
        assert set(games) <= listed
        await client.delete(*[projector.rm.game(shard_of(g, settings.shards), g) for g in games])
        # A model of a game whose log is gone is dropped; the others are rewritten in place.
        ghost = "ghost-game"
        await client.hset(projector.rm.games(shard_of(ghost, settings.shards)), ghost, b"{}")
        await client.set(projector.rm.game(shard_of(ghost, settings.shards), ghost), b"{}")
        told: list[int] = []
        assert await projector.rebuild_all(told.append) >= len(games)
        assert told and told[-1] >= len(games)
        assert {gid: await projector.game(gid) for gid in games} == before
        assert await projector.game(ghost) is None
        assert ghost not in {g["game_id"] for g in await projector.games()}
        await cli.close()


async def test_two_referees_racing_on_one_game_write_one_consistent_log(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    # Both read every shard (a static override of the leases), so that they do race.
    every = tuple(range(settings.shards))
    a = RefereeService(msgspec.structs.replace(settings, consumer="a", own_shards=every), redis_url)
    b = RefereeService(msgspec.structs.replace(settings, consumer="b", own_shards=every), redis_url)
    await a.start()
    await b.start()
    try:
        cli = Client(client, keys, settings.shards)
        await cli.call("race", lc.CreateGame(game_type="sentient", num_players=4))
        # 40 joins for 4 seats, with no expected version: both referees judge some of them.
        sent = [await cli.send("race", lc.JoinSeat(seat=i % 4, name=f"p{i}")) for i in range(40)]
        outcomes = [await cli.wait(c) for c in sent]
        accepted = [o for o in outcomes if o.outcome.status == "accepted"]
        assert len(accepted) == 4
        assert {o.outcome.rule for o in outcomes if o.outcome.status == "rejected"} == {"GAME-SEAT-TAKEN"}
        store = RedisEventStore(client, keys)
        log = await store.read("race")
        assert [v for v, _ in log] == list(range(1, 6))
        agg = rebuild("race", log)
        assert all(s is not None for s in agg.seats)
        assert len(await store.audit("race")) == 41
    finally:
        await a.stop()
        await b.stop()


async def test_a_duplicate_delivery_appends_nothing(settings: Settings, redis_url: str, client: aredis.Redis) -> None:
    keys = Keys(settings.prefix)
    async with running(settings, redis_url, ("referee",)):
        cli = Client(client, keys, settings.shards)
        env = cli.envelope("dup", lc.CreateGame(game_type="sentient", num_players=2))
        await cli.send_envelope(env)
        first = await cli.wait(env.command_id)
        await cli.send_envelope(env)
        again = await cli.wait(env.command_id)
        assert first.outcome == again.outcome
        assert len(await RedisEventStore(client, keys).read("dup")) == 1


async def test_commands_left_pending_by_a_dead_referee_are_reclaimed(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    stream = keys.intake(shard_of("orphan", settings.shards))
    await client.xgroup_create(stream, GROUP, id="$", mkstream=True)
    cli = Client(client, keys, settings.shards)
    ids = [await cli.send("orphan", lc.CreateGame(game_type="sentient", num_players=2))]
    ids += [await cli.send("orphan", lc.JoinSeat(seat=s, name="x")) for s in range(2)]
    # A referee reads the batch, then dies before judging or acking it.
    got = reads_of(await client.xreadgroup(GROUP, "dead-referee", {stream: ">"}, count=10))
    assert len(got[0][1]) == 3
    async with running(settings, redis_url, ("referee",)):
        outcomes = [await cli.wait(c, timeout_s=20) for c in ids]
    assert [o.outcome.status for o in outcomes] == ["accepted"] * 3
    assert (await client.xpending(stream, GROUP))["pending"] == 0
    assert len(await RedisEventStore(client, keys).read("orphan")) == 3


async def test_a_command_that_keeps_failing_is_dead_lettered_not_retried_forever(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    await client.xadd(keys.log("broken"), {"data": b"corrupt"}, id="1-0")  # a log no rules can fold
    cli = Client(client, keys, settings.shards)
    async with running(settings, redis_url, ("referee",)):
        await cli.send("broken", lc.StartGame(), seat=0, token="t")
        ok = await cli.call("fine", lc.CreateGame(game_type="sentient", num_players=2))
        assert ok.outcome.status == "accepted"  # the poisoned game does not block others

        async def dead() -> list[tuple[bytes, dict[bytes, bytes]]]:
            return entries_of(await client.xrange(keys.dead_letter))

        letters = await wait_for(dead, timeout=30)
    assert b"deliveries" in letters[0][1][b"reason"]
    stream = keys.intake(shard_of("broken", settings.shards))
    assert (await client.xpending(stream, GROUP))["pending"] == 0


async def test_garbage_on_the_intake_is_dead_lettered_and_the_referee_keeps_going(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    stream = keys.intake(shard_of("after", settings.shards))
    async with running(settings, redis_url, ("referee",)):
        await client.xadd(stream, {"data": b"\x80\x81\xfe garbage"})
        await client.xadd(stream, {"payload": b"{}"})
        unknown = envelope("after", lc.StartGame(), reply_to=cli.reply_to)
        unknown = msgspec.structs.replace(unknown, type="nope.Nothing")
        await client.xadd(stream, {"data": codec.encode(unknown)})
        rejected = await cli.wait(unknown.command_id)
        assert rejected.outcome.rule == "GAME-UNKNOWN-TYPE"
        ok = await cli.call("after", lc.CreateGame(game_type="sentient", num_players=2))
        assert ok.outcome.status == "accepted"
    letters = entries_of(await client.xrange(keys.dead_letter))
    assert len(letters) == 2  # the unknown type is refused, not also dead-lettered
    assert (await client.xpending(stream, GROUP))["pending"] == 0


async def test_a_lost_consumer_group_is_recreated(settings: Settings, redis_url: str, client: aredis.Redis) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    stream = keys.intake(shard_of("nogroup", settings.shards))
    async with running(settings, redis_url, ("referee",)):
        await cli.call("nogroup", lc.CreateGame(game_type="sentient", num_players=2))
        await client.xgroup_destroy(stream, GROUP)
        await asyncio.sleep(1.5)  # the intake hits NOGROUP and recreates the group
        reply = await cli.call("nogroup", lc.JoinSeat(seat=0, name="back"), timeout_s=15)
        assert reply.outcome.status == "accepted"


async def test_a_bot_runner_hosts_only_the_kinds_it_is_configured_for(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    settings = msgspec.structs.replace(settings, bots=("random",))
    keys = Keys(settings.prefix)
    async with running(settings, redis_url, ("referee", "botrunner")) as run:
        cli = Client(client, keys, settings.shards)
        await cli.call("hosts", lc.CreateGame(game_type="sentient", num_players=2))
        runner = run.bots.runner
        for seat, kind in ((0, "greedy"), (1, "random")):
            request = HostBot(game_id="hosts", seat=seat, kind=kind)
            await client.xadd(runner.lobby, {"data": msgspec.json.encode(request)})

        async def random_seated() -> bool:
            return ("hosts", 1) in runner.seats

        await wait_for(random_seated)
        assert ("hosts", 0) not in runner.seats  # greedy is not hosted here
        assert (await client.xpending(runner.lobby, "botrunner"))["pending"] == 0


@pytest.mark.parametrize("title", ["sentient", "prosperity", "mechanica", "artifacts"])
async def test_a_bot_game_of_every_title_plays_to_the_end_and_verifies(
    settings: Settings, redis_url: str, client: aredis.Redis, title: str
) -> None:
    """On a standalone Redis and on a Redis Cluster: every service, a whole game, every command
    answered once, the log verified (every event re-derived from its command and the seed)."""
    from tests.platform.procs import all_over, check_games, host_games

    keys = Keys(settings.prefix)
    store = RedisEventStore(client, keys)
    async with running(settings, redis_url):
        games = await host_games(client, settings, 1, game_type=title, players=3 if title != "mechanica" else 2)
        await wait_for(lambda: all_over(store, games), timeout=240, every=0.2)
    report = await check_games(client, keys, settings.shards, games)
    assert report["commands"] > 10
    await store.close()


async def test_a_refused_answer_leaves_its_seat_unanswered_and_the_rest_of_the_batch_lands(
    settings: Settings, client: aredis.Redis
) -> None:
    """A bot runner writes a batch's answers, their seat records and the notices' acks in one
    round trip: an answer Redis refuses (here its shard's intake is not a stream) is not marked
    answered, and the other answers, records and acks go through."""
    keys = Keys(settings.prefix)
    runner = BotRunner(client, keys, settings.shards)
    games = {shard_of(g, settings.shards): g for g in (f"refused-{i}" for i in range(40))}
    good, bad = list(games.values())[:2]
    await client.set(keys.intake(shard_of(bad, settings.shards)), "not a stream")
    notices = keys.turn_notices(0)
    await client.xgroup_create(notices, BOTS, id="0", mkstream=True)
    entry_id = await client.xadd(notices, {"data": b"{}"})
    assert isinstance(entry_id, bytes)
    await client.xreadgroup(BOTS, "c", {notices: ">"})
    sends = []
    for gid in (good, bad):
        playing = Playing(
            hosted=HostedSeat(game_id=gid, seat=0, token="t", kind="random", game_type="sentient"), bot=None
        )
        env = envelope(gid, lc.StartGame(), seat=0, expected_version=3)
        sends.append((playing, env))
    assert await runner._send(sends, time.monotonic(), client.pipeline(transaction=False), [(notices, [entry_id])]) == 1
    assert [p.hosted.answered for p, _ in sends] == [3, -1]
    assert await client.xlen(keys.intake(shard_of(good, settings.shards))) == 1
    record = await client.hget(runner.hosted_key(shard_of(good, settings.shards)), seat_field(good, 0))
    assert record is not None and msgspec.json.decode(record, type=HostedSeat).answered == 3
    assert (await client.xpending(notices, BOTS))["pending"] == 0
