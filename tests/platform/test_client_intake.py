"""A registered trusted client's own intake `<prefix>:cmd:{S}:<client>`, over a real Redis
(standalone and cluster): the referee starts reading it within seconds of the registration, from
the stream's start; it knows the sender of what it reads there; a frozen own intake stops only that
client; an unregistered client's stream is not read.

The ACL side (only that client may write there) is in tests/deploy/test_acl.py.
"""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import lifecycle as lc
from contracts.outcome import CommandOutcome, decode_outcome
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from tests.platform.helpers import entries_of
from tests.platform.test_redis_integration import wait_for
from tests.platform.test_strict_redis import referee

pytestmark = pytest.mark.redis


async def test_a_client_registered_while_the_referee_runs_is_read_from_its_streams_start(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    game_id = "own-intake"
    shard = shard_of(game_id, settings.shards)
    carol = Client(client, keys, settings.shards, name="carol:a", own_intake=True)
    async with referee(settings, redis_url, game_id) as ref:
        # Sent before carol is registered: waits in her stream, unread.
        created = await carol.send(game_id, lc.CreateGame(game_type="sentient", num_players=2))
        await asyncio.sleep(0.5)
        assert not await client.exists(keys.log(game_id))
        await client.sadd(keys.clients, "carol")
        reply = await carol.wait(created, timeout_s=15)  # the referee re-reads the registry every 2 s
        assert reply.outcome.status == "accepted"
        assert reply.outcome.reply_client == "carol"
        assert ref.clients == ("carol",)
        # The SDK's default asks the registry: a registered client sends to its own intake.
        auto = Client(client, keys, settings.shards, name="carol:b")
        assert await auto.intake(game_id) == keys.client_intake(shard, "carol")
        joined = await auto.call(game_id, lc.JoinSeat(seat=0, name="c"), timeout_s=15)
        assert joined.outcome.status == "accepted" and joined.token
        assert await client.xlen(keys.intake(shard)) == 0
        await auto.close()
    await carol.close()


async def test_the_sender_of_an_own_intake_command_is_known_seat_or_no_seat(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """On her own intake Mallory may not name Alice's reply stream, even for a command that names
    no seat (on the shared intake the referee could not know who sent it), and a seat she joins
    there is hers whatever reply_to she gives."""
    keys = Keys(settings.prefix)
    game_id = "sender"
    await client.sadd(keys.clients, "mallory", "alice")
    alice = Client(client, keys, settings.shards, name="alice:x")
    mallory = Client(client, keys, settings.shards, name="mallory:x")
    store = RedisEventStore(client, keys)
    async with referee(settings, redis_url, game_id):
        assert (await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == (
            "accepted"
        )
        before = await client.xlen(alice.reply_to)
        redirected = msgspec.structs.replace(
            mallory.envelope(game_id, lc.JoinSeat(seat=1, name="m")), reply_to=alice.reply_to
        )
        await mallory.send_envelope(redirected)

        async def judged() -> list[CommandOutcome]:
            outcomes = [decode_outcome(o, game_id) for o in await store.audit(game_id)]
            return [o for o in outcomes if o.command_id == redirected.command_id]

        (outcome,) = await wait_for(judged)
        assert (outcome.status, outcome.rule, outcome.reply_client) == ("rejected", "GAME-REPLY-TO", "mallory")
        assert await client.xlen(alice.reply_to) == before
        assert not [e for _, e in await store.read(game_id) if b"SeatJoined" in e]
        # A JoinSeat with no reply_to at all: the seat is still tied to its sender.
        silent = mallory.envelope(game_id, lc.JoinSeat(seat=1, name="m"), reply=False)
        await mallory.send_envelope(silent)

        async def seated() -> bool:
            return any(b"SeatJoined" in e for _, e in await store.read(game_id))

        await wait_for(seated)
        outcomes = [decode_outcome(o, game_id) for o in await store.audit(game_id)]
        (joined,) = [o for o in outcomes if o.command_id == silent.command_id]
        assert (joined.status, joined.reply_client) == ("accepted", "mallory")
    await alice.close()


async def test_a_frozen_own_intake_stops_only_its_client(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    game_id = "frozen"
    shard = shard_of(game_id, settings.shards)
    await client.sadd(keys.clients, "mallory", "alice")
    await client.xadd(
        keys.client_intake(shard, "mallory"), {"data": b"x"}, id="18446744073709551615-18446744073709551615"
    )
    alice = Client(client, keys, settings.shards, name="alice:y")
    frozen = keys.client_intake(shard, "mallory")
    async with referee(msgspec.structs.replace(settings, trim_every_ms=200), redis_url, game_id) as ref:
        reply = await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2), timeout_s=15)
        assert reply.outcome.status == "accepted"
        assert await alice.intake(game_id) == keys.client_intake(shard, "alice")

        async def dead_lettered() -> bool:
            dead = entries_of(await client.xrange(keys.dead_letter))
            return any(f[b"stream"] == frozen.encode() for _, f in dead)

        await wait_for(dead_lettered)

        # Trimming past the last possible id (there is no id after it) neither fails nor stops
        # the referee: the stream is emptied and every loop keeps running.
        async def trimmed() -> bool:
            return int(await client.xlen(frozen)) == 0

        await wait_for(trimmed)
        assert not ref.supervisor.fatal.is_set()
        assert ref.supervisor.loops["retention"].restarts == 0
        assert (await alice.call(game_id, lc.JoinSeat(seat=0, name="a"), timeout_s=15)).outcome.status == "accepted"
    await alice.close()


async def test_an_unregistered_clients_stream_is_not_read(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    game_id = "unread"
    eve = Client(client, keys, settings.shards, name="eve:z", own_intake=True)
    async with referee(settings, redis_url, game_id) as ref:
        sent = await eve.send(game_id, lc.CreateGame(game_type="sentient", num_players=2))
        with pytest.raises(TimeoutError):
            await eve.wait(sent, timeout_s=3.0)
        assert not await client.exists(keys.log(game_id))
        assert ref.clients == ()
        assert keys.client_intake(shard_of(game_id, settings.shards), "eve") not in ref._streams(
            shard_of(game_id, settings.shards)
        )
    await eve.close()
