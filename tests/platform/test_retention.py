"""Retention over a real Redis (standalone and cluster): streams lose only what every consumer
group is done with, seat streams hold the latest message and expire after the game, dead letters
are capped, and a whole bot game leaves no intake, bus or turn-notice entries behind."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import redis.asyncio as aredis
import structlog

from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import HOSTED, GameOver, HostBot, SeatMessage
from dicestream.runtime import running
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.retention import Trim, trim, trim_all, trim_point
from tests.platform.helpers import entries_of, memory
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis


async def test_a_stream_loses_only_what_every_group_has_acknowledged(settings: Settings, client: aredis.Redis) -> None:
    keys = Keys(settings.prefix)
    stream = keys.bus(0)
    ids = [await client.xadd(stream, {"data": str(i)}) for i in range(10)]
    assert await trim(client, stream) == 0  # no group: nothing may go
    await client.xgroup_create(stream, "a", id="0")
    await client.xgroup_create(stream, "b", id="0")
    # a: read 6, acked the first 3 (so 3..5 pending); b: read and acked 8.
    await client.xreadgroup("a", "c", {stream: ">"}, count=6)
    await client.xack(stream, "a", *ids[:3])
    await client.xreadgroup("b", "c", {stream: ">"}, count=8)
    await client.xack(stream, "b", *ids[:8])
    assert await trim(client, stream, required=("a", "b", "c")) == 0  # group c missing: kept whole
    first_kept = ids[3]
    assert isinstance(first_kept, bytes)
    assert await trim_point(client, stream) == first_kept.decode()
    assert await trim(client, stream) == 3
    remaining = [i for i, _ in entries_of(await client.xrange(stream))]
    assert remaining == ids[3:]
    # a acks everything it read; b still has nothing pending but has read only 8.
    await client.xack(stream, "a", *ids[3:6])
    assert await trim(client, stream) == 3  # up to a's last delivered (6th entry)
    assert [i for i, _ in entries_of(await client.xrange(stream))] == ids[6:]
    # Pending entries survive whatever else is acked, and a claim still finds them.
    await client.xreadgroup("a", "c", {stream: ">"}, count=4)
    await client.xreadgroup("b", "c", {stream: ">"}, count=4)
    await client.xack(stream, "b", *ids[8:])
    assert await trim(client, stream) == 0
    _, claimed, *_ = await client.xautoclaim(stream, "a", "d", min_idle_time=0, start_id="0-0")
    assert [i for i, _ in claimed] == ids[6:]


async def test_a_retention_round_trims_many_streams_in_three_round_trips(settings: Settings, client: Any) -> None:
    """trim_all over streams in every state trims each as `trim` would, one pipeline per step:
    a stream two groups have partly read, one lacking a required group, one capped, one that
    does not exist, and one that is not a stream (logged, the rest trimmed all the same)."""
    keys = Keys(settings.prefix)
    partly, lacking, capped, absent, wrong = (keys.client_intake(s, "r") for s in range(5))
    ids = [await client.xadd(partly, {"d": str(i)}) for i in range(6)]
    for stream in (lacking, capped):
        for i in range(5):
            await client.xadd(stream, {"d": str(i)})
    for group in ("a", "b"):
        await client.xgroup_create(partly, group, id="0")
    await client.xgroup_create(lacking, "a", id="0")
    await client.xreadgroup("a", "c", {partly: ">"}, count=4)
    await client.xreadgroup("a", "c", {lacking: ">"})
    await client.xack(partly, "a", *ids[:2])
    await client.xreadgroup("b", "c", {partly: ">"}, count=5)
    await client.xack(partly, "b", *ids[:5])
    await client.xack(lacking, "a", *[i for i, _ in await client.xrange(lacking)])
    await client.set(wrong, "not a stream")
    rounds = 0
    real = client.pipeline

    def counted(*args: Any, **kw: Any) -> Any:
        nonlocal rounds
        rounds += 1
        return real(*args, **kw)

    client.pipeline = counted
    with structlog.testing.capture_logs() as logs:
        await trim_all(
            client,
            [
                Trim("t", partly),
                Trim("t", lacking, required=("a", "b")),
                Trim("t", capped, keep=2),
                Trim("t", absent),
                Trim("t", wrong),
            ],
        )
    client.pipeline = real
    assert rounds <= 3
    assert [i for i, _ in await client.xrange(partly)] == ids[2:]  # a still has 3..4 pending
    assert await client.xlen(lacking) == 5 and await client.xlen(capped) == 2
    assert not await client.exists(absent) and await client.get(wrong) == b"not a stream"
    assert [e["stream"] for e in logs if e["event"] == "trim_failed"] == [wrong]


async def test_a_whole_bot_game_leaves_no_intake_bus_or_notice_entries_and_one_message_per_seat(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    settings = msgspec.structs.replace(settings, trim_every_ms=200, seat_ttl_s=600, dead_kept=5)
    keys = Keys(settings.prefix)
    gid = "kept-small"
    shard = shard_of(gid, settings.shards)
    async with running(settings, redis_url) as run:
        cli = Client(client, keys, settings.shards)
        runner = run.bots.runner
        assert (await cli.call(gid, lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == "accepted"
        for seat in range(2):
            assert (await runner.host(HostBot(game_id=gid, seat=seat, kind="greedy", seed=seat))).status == HOSTED
        await runner.start_game(gid, 0)
        for i in range(12):  # garbage: dead-lettered, and the dead letters capped
            await client.xadd(keys.intake(shard), {"data": f"garbage {i}"})

        async def over() -> bool:
            return gid in runner.finished

        await wait_for(over, timeout=60)

        async def trimmed() -> bool:
            streams = [keys.intake(shard), keys.bus(shard), keys.turn_notices(shard)]
            return [await client.xlen(s) for s in streams] == [0, 0, 0]

        await wait_for(trimmed, timeout=20)
        for seat in range(2):
            stream = keys.seat(gid, seat)
            (entry,) = entries_of(await client.xrange(stream))
            message = msgspec.json.decode(entry[1][b"data"], type=SeatMessage)
            assert isinstance(message, GameOver) and message.game_id == gid
            assert 0 < await client.ttl(stream) <= 600
            # Written again at its size: a fresh stream's 4 KB node, or what the last requests
            # left in it, would be 3-4.7 KB.
            assert await memory(client, stream) < 1_500
        # The history is whole: every event of the log on the public stream, the audit complete.
        log = await client.xlen(keys.log(gid))
        public = [
            codec.decode_event(f[b"data"], gid, codec.entry_version(i))
            for i, f in entries_of(await client.xrange(keys.public(gid)))
        ]
        assert [e.version for e in public if e.type != "lifecycle.CommandRejected"] == list(range(1, log + 1))
        assert await client.xlen(keys.dead_letter) == 5  # the newest dead_kept of the 12
        await cli.close()


def test_retention_settings_are_read_and_checked() -> None:
    from services.config import ConfigError, from_env

    got = from_env(
        {
            "DICESTREAM_TRIM_EVERY_MS": "0",
            "DICESTREAM_BUS_GROUPS": "projector, turns,audit-copy",
            "DICESTREAM_DEAD_KEPT": "50",
            "DICESTREAM_SEAT_KEPT": "0",
            "DICESTREAM_SEAT_TTL_S": "60",
            "DICESTREAM_NOTICE_GROUPS": "botrunner,bot-audit",
        }
    )
    assert (got.trim_every_ms, got.bus_groups, got.dead_kept, got.seat_kept, got.seat_ttl_s, got.notice_groups) == (
        0,
        ("projector", "turns", "audit-copy"),
        50,
        0,
        60,
        ("botrunner", "bot-audit"),
    )
    defaults = from_env({})
    assert (defaults.trim_every_ms, defaults.bus_groups, defaults.seat_kept, defaults.notice_groups) == (
        10000,
        ("projector", "turns"),
        1,
        ("botrunner",),
    )
    for name, value in (
        ("DICESTREAM_TRIM_EVERY_MS", "soon"),
        ("DICESTREAM_DEAD_KEPT", "-1"),
        ("DICESTREAM_SEAT_TTL_S", "1h"),
        ("DICESTREAM_BUS_GROUPS", "projector;turns"),
    ):
        with pytest.raises(ConfigError, match=name):
            from_env({name: value})


async def test_a_group_past_the_last_possible_id_lets_the_stream_go_whole(
    settings: Settings, client: aredis.Redis
) -> None:
    """A client may XADD the last possible id to its own intake; the id after it does not exist,
    and the trim must neither ask Redis for it nor fail (it would stop every referee holding
    the shard)."""
    keys = Keys(settings.prefix)
    stream = keys.client_intake(0, "mallory")
    await client.xadd(stream, {"data": b"x"})
    last = "18446744073709551615-18446744073709551615"
    await client.xadd(stream, {"data": b"x"}, id=last)
    await client.xgroup_create(stream, "referee", id="0")
    await client.xreadgroup("referee", "c", {stream: ">"})
    await client.xack(stream, "referee", *[i for i, _ in entries_of(await client.xrange(stream))])
    assert await trim_point(client, stream) == "all"
    assert await trim(client, stream) == 2 and await client.xlen(stream) == 0
    # Another group still behind: only what both have done with goes.
    other = keys.client_intake(1, "mallory")
    first = await client.xadd(other, {"data": b"x"})
    assert isinstance(first, bytes)
    await client.xadd(other, {"data": b"x"}, id=f"{int(first.split(b'-')[0]) + 1}-18446744073709551615")
    for group in ("a", "b"):
        await client.xgroup_create(other, group, id="0")
    await client.xreadgroup("a", "c", {other: ">"})
    await client.xack(other, "a", *[i for i, _ in entries_of(await client.xrange(other))])
    assert await trim(client, other) == 0 and await client.xlen(other) == 2


async def test_a_group_that_acknowledged_everything_meanwhile_still_bounds_the_trim() -> None:
    """XINFO GROUPS says pending, XPENDING (a moment later) says none: the group is then bounded
    by what it was delivered, not left out (which would trim entries it has not read)."""

    class Racing:
        async def xinfo_groups(self, stream: str) -> list[dict[str, object]]:
            return [
                {"name": b"projector", "pending": 5, "last-delivered-id": b"104-0"},
                {"name": b"turns", "pending": 0, "last-delivered-id": b"500-0"},
            ]

        async def xpending(self, stream: str, group: bytes) -> dict[str, object]:
            return {"pending": 0, "min": None, "max": None, "consumers": []}

    assert await trim_point(Racing(), "bus") == "104-1"  # type: ignore[arg-type]


async def test_a_stale_seat_message_cannot_bury_a_newer_one_and_old_streams_are_upgraded(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    from contracts.protocol import Action, TurnRequest
    from services.turns.app import TurnService

    keys = Keys(settings.prefix)
    turns = TurnService(settings, redis_url)
    stream = keys.seat("g", 0)
    over = GameOver(game_id="g", version=10, scores=[1, 2], winners=[1])
    late = TurnRequest(game_id="g", seat=0, version=8, view={}, legal_actions=[Action(type="x.Pass", payload={})])

    async def post(message: TurnRequest | GameOver) -> list[object]:
        pipe = turns.client.pipeline(transaction=False)
        turns._post(pipe, stream, codec.encode(message), message)
        replies: list[object] = await pipe.execute(raise_on_error=False)
        return replies

    assert not any(isinstance(r, Exception) for r in await post(over))
    refused = await post(late)  # a turn service whose lease lapsed, writing late
    assert isinstance(refused[0], Exception)
    assert await turns._stale_or_legacy([(stream, codec.encode(late), ("n", b"x"))]) == []
    ((entry_id, fields),) = entries_of(await client.xrange(stream))
    assert entry_id == b"10-0" and isinstance(msgspec.json.decode(fields[b"data"], type=SeatMessage), GameOver)
    assert 0 < await client.ttl(stream) <= settings.seat_ttl_s
    # A stream written before ids were versions (its ids are times): replaced by the new message.
    legacy = keys.seat("old", 1)
    await client.xadd(legacy, {"data": b"old"})
    request = msgspec.structs.replace(late, game_id="old", seat=1)
    assert await turns._stale_or_legacy([(legacy, codec.encode(request), ("n", b"x"))]) == [("n", b"x")]
    ((entry_id, _),) = entries_of(await client.xrange(legacy))
    assert entry_id == b"8-0"
    await turns.client.aclose()


async def test_a_reply_stream_expires_after_its_last_reply(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """Given DICESTREAM_REPLY_TTL_S, when the referee answers (an accepted command: on a
    standalone Redis the append script writes the reply; a refusal of an unknown game, and every
    reply on a cluster: the sink), then the reply stream expires that long after; 0 keeps it."""
    keys = Keys(settings.prefix)
    for ttl in (120, 0):
        async with running(msgspec.structs.replace(settings, reply_ttl_s=ttl), redis_url):
            cli = Client(client, keys, settings.shards, name=f"ttl{ttl}")
            accepted = await cli.call(f"ttl-{ttl}", lc.CreateGame(game_type="sentient", num_players=2))
            assert accepted.outcome.status == "accepted"
            left = await client.ttl(cli.reply_to)
            assert (0 < left <= 120) if ttl else left == -1, left
            await client.persist(cli.reply_to)
            refused = await cli.call(f"no-such-{ttl}", lc.StartGame())
            assert refused.outcome.rule == "GAME-NOT-FOUND"
            left = await client.ttl(cli.reply_to)
            assert (0 < left <= 120) if ttl else left == -1, left
            await cli.close()
