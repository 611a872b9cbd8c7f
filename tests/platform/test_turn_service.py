"""The turn service acknowledges a bus entry only once the requests it makes are written: given bus
entries for a game whose seat stream Redis refuses to write, when the turn service handles them,
then they stay pending (delivered again), and once the writes go through they are acknowledged."""

from __future__ import annotations

import pytest
import redis.asyncio as aredis

from contracts import lifecycle as lc
from dicestream.runtime import running
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.turns.app import GROUP, TurnService
from tests.platform.helpers import reads_of

pytestmark = pytest.mark.redis


async def pending(client: aredis.Redis, stream: str) -> int:
    return int((await client.xpending(stream, GROUP))["pending"])


async def test_bus_entries_whose_requests_were_refused_stay_pending_until_written(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    gid = "refused-seat"
    bus = keys.bus(shard_of(gid, settings.shards))
    cli = Client(client, keys, settings.shards)
    turns = TurnService(settings, redis_url)
    await client.xgroup_create(bus, GROUP, id="0", mkstream=True)
    try:
        async with running(settings, redis_url, ("referee",)):
            assert (
                await cli.call(gid, lc.CreateGame(game_type="sentient", num_players=2))
            ).outcome.status == "accepted"
            tokens = []
            for seat in range(2):
                joined = await cli.call(gid, lc.JoinSeat(seat=seat, name=f"p{seat}"))
                assert joined.token is not None
                tokens.append(joined.token)
            started = await cli.call(gid, lc.StartGame(), seat=0, token=tokens[0])
            assert started.outcome.status == "accepted"
        seats = [keys.seat(gid, seat) for seat in range(2)]
        for stream in seats:  # their XADDs are refused, as when Redis is out of memory
            await client.set(stream, "not a stream")
        [(_, entries)] = reads_of(await client.xreadgroup(GROUP, "t", {bus: ">"}))
        with pytest.raises(aredis.ResponseError, match="WRONGTYPE"):
            await turns._on_bus([(bus, entries)])
        await turns.ack_written()
        assert await pending(client, bus) == len(entries) > 0  # delivered again, never lost
        for stream in seats:
            await client.delete(stream)
        await turns._on_bus([(bus, entries)])
        asked = [await client.xrevrange(stream, count=1) for stream in seats]
        assert [entry[0][0] for entry in asked if entry] == [f"{started.outcome.to_version}-0".encode()]
        await turns.ack_written()  # the next round trip (the timer loop's, every 0.2 s)
        assert await pending(client, bus) == 0
    finally:
        await cli.close()
        await turns.stop()
