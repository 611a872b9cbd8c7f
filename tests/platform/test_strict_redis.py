"""Strict, bounded input where Redis behaviour matters, over a real Redis (standalone and cluster):
a poison entry in the same batch as valid commands (and in a restarted referee's pending entries),
an entry over the size limit, and what refused spam costs a game's public stream and audit.

The referee is the real service, holding the one shard a test uses (`referee()`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

import msgspec
import pytest
import redis.asyncio as aredis

from contracts import codec
from contracts import lifecycle as lc
from contracts.limits import MAX_DATA_BYTES
from services.broker import ensure_group
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.referee.app import GROUP, RefereeService
from tests.platform.helpers import entries_of, envelope, memory, reads_of
from tests.platform.test_redis_integration import wait_for

pytestmark = pytest.mark.redis

DEEP = b"[" * 10_000 + b"]" * 10_000


async def _nothing_pending(client: aredis.Redis, stream: str) -> bool:
    return int((await client.xpending(stream, GROUP))["pending"]) == 0


def nested_command(game_id: str) -> bytes:
    """About 20 KB, 10,000 levels deep: the issue-16 entry that stalled a batch and a resume."""
    return b'{"type":"lifecycle.JoinSeat","game_id":"%s","command_id":"deep","payload":%s}' % (
        game_id.encode(),
        DEEP,
    )


@contextlib.asynccontextmanager
async def referee(
    settings: Settings, url: str, game_id: str, consumer: str = "referee-0"
) -> AsyncIterator[RefereeService]:
    """The referee service judging the intake shard of `game_id` under `consumer` (held
    statically, no lease to wait for). Its reclaimer waits ten minutes: only first sight (or
    taking over its own pending entries) can deal with an entry."""
    shard = shard_of(game_id, settings.shards)
    ref = RefereeService(
        msgspec.structs.replace(settings, consumer=consumer, own_shards=(shard,), reclaim_idle_ms=600_000), url
    )
    await ref.start()
    try:
        yield ref
    finally:
        await ref.stop()


async def test_a_deep_entry_is_dead_lettered_on_first_sight_and_its_batch_is_answered_at_once(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    stream = keys.intake(shard_of("poisoned", settings.shards))
    await ensure_group(client, stream, GROUP)
    cli = Client(client, keys, settings.shards)
    # Queued before the referee starts, so that its first read takes all three in one batch.
    create = await cli.send("poisoned", lc.CreateGame(game_type="sentient", num_players=2))
    poison = await client.xadd(stream, {"data": nested_command("poisoned")})
    join = await cli.send("poisoned", lc.JoinSeat(seat=0, name="a"))
    started = time.monotonic()
    async with referee(settings, redis_url, "poisoned"):
        replies = [await cli.wait(c, timeout_s=10) for c in (create, join)]
        answered_in = time.monotonic() - started
        assert [r.outcome.status for r in replies] == ["accepted", "accepted"]
        # The batch's last pipeline (after the appends, which answered) writes the dead letter and
        # the acks.
        letters = entries_of(await wait_for(lambda: client.xrange(keys.dead_letter)))
        assert [f[b"entry_id"] for _, f in letters] == [poison]
        assert b"recursion" in letters[0][1][b"reason"]
        await wait_for(lambda: _nothing_pending(client, stream), timeout=2)  # acked after one delivery
    assert answered_in < 5, answered_in  # not after the reclaimer's 60 s
    await cli.close()


async def test_a_referee_restarted_under_its_name_resumes_past_poison_it_held(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    stream = keys.intake(shard_of("held", settings.shards))
    await ensure_group(client, stream, GROUP)
    cli = Client(client, keys, settings.shards)
    create = await cli.send("held", lc.CreateGame(game_type="sentient", num_players=2))
    poison = await client.xadd(stream, {"data": nested_command("held")})
    binary = await client.xadd(stream, {"data": bytes(range(256))})
    join = await cli.send("held", lc.JoinSeat(seat=0, name="a"))
    # referee-0 read them and died before acking anything.
    got = reads_of(await client.xreadgroup(GROUP, "referee-0", {stream: ">"}, count=100))
    assert len(got[0][1]) == 4
    async with referee(settings, redis_url, "held"):  # restarted under the same name: resumes first
        replies = [await cli.wait(c, timeout_s=10) for c in (create, join)]
        assert [r.outcome.judged_at_version for r in replies] == [0, 1]
        # The intake task survived resuming: a new command is judged too.
        later = await cli.call("held", lc.JoinSeat(seat=1, name="b"), timeout_s=10)
        assert later.outcome.status == "accepted"
        await wait_for(lambda: _nothing_pending(client, stream))  # the acks may follow the reply
    letters = {f[b"entry_id"]: f for _, f in entries_of(await client.xrange(keys.dead_letter))}
    assert set(letters) == {poison, binary}
    assert all(f[b"reason"] for f in letters.values())
    assert (await client.xpending(stream, GROUP))["pending"] == 0
    await cli.close()


async def test_an_entry_over_the_data_limit_is_dead_lettered_bounded_and_kept_nowhere_else(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    stream = keys.intake(shard_of("big", settings.shards))
    async with referee(settings, redis_url, "big"):
        await cli.call("big", lc.CreateGame(game_type="sentient", num_players=2))
        audit_before = await client.xlen(keys.audit("big"))
        huge = envelope("big", lc.JoinSeat(seat=0, name="n" * (2 * MAX_DATA_BYTES)), reply_to=cli.reply_to)
        entry_id = await client.xadd(stream, {"data": codec.encode(huge)})
        after = await cli.call("big", lc.JoinSeat(seat=0, name="fits"))  # answered after it: it was handled
        assert after.outcome.status == "accepted"
        await wait_for(lambda: _nothing_pending(client, stream))
    [(_, letter)] = entries_of(await client.xrange(keys.dead_letter))
    assert letter[b"entry_id"] == entry_id and letter[b"reason"].startswith(b"data is ")
    assert await memory(client, keys.dead_letter) < 8_192
    assert await client.xrange(stream, min=entry_id, max=entry_id) == []  # deleted from the intake
    assert await client.xlen(keys.audit("big")) == audit_before + 1  # only the join that fits
    assert huge.command_id not in {
        msgspec.json.decode(f[b"data"])["outcome"]["command_id"]
        for _, f in entries_of(await client.xrange(cli.reply_to))
    }
    await cli.close()


async def test_refused_spam_no_longer_grows_the_public_stream_and_only_boundedly_the_audit(
    settings: Settings, redis_url: str, client: aredis.Redis
) -> None:
    """The issue-17 attack, scaled down: 200 refused JoinSeat names of 60 KiB (12 MB) and 200 of
    1 KiB on a running game. Before this change each cost its whole size in the public stream, the
    audit and the reply stream (see bench/refusal_growth.py for the full 24 MiB figures)."""
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards)
    spammer = Client(client, keys, settings.shards, name="spam")
    async with referee(settings, redis_url, "victim"):
        await cli.call("victim", lc.CreateGame(game_type="sentient", num_players=2))
        tokens = [(await cli.call("victim", lc.JoinSeat(seat=s, name=f"p{s}"))).token for s in range(2)]
        await cli.call("victim", lc.StartGame(), seat=0, token=tokens[0])
        public_before = await client.xlen(keys.public("victim"))
        audit_before = await memory(client, keys.audit("victim"))
        sent = []
        for size in (61_440, 1_024):
            for _ in range(200):
                sent.append(await spammer.send("victim", lc.JoinSeat(seat=1, name="n" * size)))
        replies = [await spammer.wait(c, timeout_s=30) for c in sent]
    assert {r.outcome.rule for r in replies} == {"GAME-MALFORMED"}  # names over 64 characters
    assert await client.xlen(keys.public("victim")) == public_before
    grown = await memory(client, keys.audit("victim")) - audit_before
    assert grown < 400 * 1_500, grown  # about 1 KB a refusal, whatever its size
    assert await memory(client, spammer.reply_to) < 400 * 1_500
    await cli.close()
    await spammer.close()
