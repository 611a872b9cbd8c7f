"""A consumer group destroyed on the server (NOGROUP): every service recreates its own group and reads
on (the shard readers when a read hits NOGROUP, the bot runner's lobby watchdog for the FastStream
subscriber, which stops on NOGROUP)."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import lifecycle as lc
from contracts.protocol import HostBot, SeatMessage, TurnRequest
from dicestream.runtime import running
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.projector.app import GROUP as PROJECTOR
from services.turns.app import GROUP as TURNS
from tests.platform.helpers import entries_of, summary_version
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis


async def test_the_projector_recreates_a_lost_bus_group_and_catches_up(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    bus = keys.bus(shard_of("lost-proj", settings.shards))
    async with running(settings, redis_url, ("referee", "projector")) as run:
        projector = run.projector.projector

        async def at(version: int) -> bool:
            state = await projector.game("lost-proj")
            return summary_version(state) == version

        created = await cli.call("lost-proj", lc.CreateGame(game_type="sentient", num_players=2))
        await wait_for(lambda: at(created.outcome.to_version), timeout=5)
        await client.xgroup_destroy(bus, PROJECTOR)
        await asyncio.sleep(0.5)  # the subscribers hit NOGROUP and stop
        reply = await cli.call("lost-proj", lc.JoinSeat(seat=0, name="back"), timeout_s=15)
        assert reply.outcome.status == "accepted"
        await wait_for(lambda: at(reply.outcome.to_version), timeout=5)
        groups = {g["name"].decode() for g in await client.xinfo_groups(bus)}
        assert PROJECTOR in groups
    await cli.close()


async def test_the_turn_service_recreates_a_lost_bus_group_and_sends_turn_requests(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    gid = "lost-turns"
    bus = keys.bus(shard_of(gid, settings.shards))
    async with running(settings, redis_url, ("referee", "turns")):
        await cli.call(gid, lc.CreateGame(game_type="sentient", num_players=2))
        tokens = [(await cli.call(gid, lc.JoinSeat(seat=s, name=f"p{s}"))).token for s in range(2)]
        await client.xgroup_destroy(bus, TURNS)
        await asyncio.sleep(0.5)  # the subscribers hit NOGROUP and stop
        started = await cli.call(gid, lc.StartGame(), seat=0, token=tokens[0], timeout_s=15)
        assert started.outcome.status == "accepted"
        version = started.outcome.to_version

        async def turn_requested() -> bool:
            for seat in range(2):
                for _, fields in entries_of(await client.xrange(keys.seat(gid, seat))):
                    message = msgspec.json.decode(fields[b"data"], type=SeatMessage)
                    if isinstance(message, TurnRequest) and message.version == version:
                        return True
            return False

        await wait_for(turn_requested, timeout=5)
    await cli.close()


async def test_the_bot_runner_recreates_a_lost_lobby_group_and_hosts_again(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    async with running(settings, redis_url, ("referee", "botrunner")) as run:
        runner = run.bots.runner
        await cli.call("lost-lobby", lc.CreateGame(game_type="sentient", num_players=2))
        await client.xgroup_destroy(runner.lobby, "botrunner")
        await asyncio.sleep(0.5)  # the subscriber hits NOGROUP and stops
        request = HostBot(game_id="lost-lobby", seat=1, kind="random")
        await client.xadd(runner.lobby, {"data": msgspec.json.encode(request)})

        async def seated() -> bool:
            return ("lost-lobby", 1) in runner.seats

        await wait_for(seated, timeout=5)
        assert (await client.xpending(runner.lobby, "botrunner"))["pending"] == 0
    await cli.close()
