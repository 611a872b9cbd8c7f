"""Both event stores honour the same contract: guarded, idempotent, chained appends."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import msgspec
import pytest

from services.eventstore.base import CONFLICT, DUPLICATE, OK, SKIPPED, AppendRequest, EventStore
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import connect
from tests.conftest import delete_prefix
from tests.platform.helpers import entries_of


@pytest.fixture(params=["memory", "standalone", "cluster"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    if request.param == "memory":
        yield MemoryEventStore()
        return
    url = request.getfixturevalue(f"{request.param}_url")
    prefix = f"test-{uuid.uuid4().hex[:10]}"
    client = connect(url)
    store = RedisEventStore(client, Keys(prefix))
    yield store
    await store.close()
    await client.aclose()
    delete_prefix(url, prefix)


def req(cmd: str, expected: int, n: int = 1, game: str = "g") -> AppendRequest:
    events = [f'{{"e":"{cmd}-{i}"}}'.encode() for i in range(n)]
    return AppendRequest(
        game_id=game, expected_version=expected, command_id=cmd, outcome=cmd.encode(), events=events, public=[None] * n
    )


async def test_append_then_read_by_version(store: EventStore) -> None:
    assert [r.status for r in await store.append_many([req("a", 0, 2), req("b", 2, 1)])] == [OK, OK]
    assert [v for v, _ in await store.read("g")] == [1, 2, 3]
    assert [v for v, _ in await store.read("g", after=2)] == [3]
    assert await store.outcome("g", "b") == b"b"


async def test_a_wrong_expected_version_appends_nothing(store: EventStore) -> None:
    await store.append_many([req("a", 0)])
    [result] = await store.append_many([req("b", 0)])
    assert (result.status, result.version) == (CONFLICT, 1)
    assert len(await store.read("g")) == 1


async def test_a_known_command_id_returns_the_first_outcome(store: EventStore) -> None:
    await store.append_many([req("a", 0)])
    [result] = await store.append_many([req("a", 1)])
    assert (result.status, result.prior_outcome) == (DUPLICATE, b"a")
    assert len(await store.read("g")) == 1


async def test_after_a_conflict_the_rest_of_the_games_chain_is_skipped(store: EventStore) -> None:
    """The second command was judged on the first's effects: it must not land at the version the
    failed first one would have taken (the race two referees hit)."""
    await store.append_many([req("other-referee", 0)])
    results = await store.append_many([req("x", 0), req("y", 1), req("z", 0, game="h")])
    assert [r.status for r in results] == [CONFLICT, SKIPPED, OK]
    assert [v for v, _ in await store.read("g")] == [1]
    assert await store.outcome("g", "y") is None


async def test_the_public_stream_gets_each_events_projection_in_version_order(store: EventStore) -> None:
    """Per event: shown as logged, shown filtered, or withheld (the script is told the first by a
    marker instead of the same bytes twice)."""
    private = [b'{"e":1,"secret":"s"}', b'{"e":2}', b'{"e":3,"secret":"t"}']
    public: list[bytes | None] = [b'{"e":1}', private[1], None]
    request = AppendRequest(
        game_id="g", expected_version=0, command_id="a", outcome=b"a", events=private, public=public
    )
    assert [r.status for r in await store.append_many([request])] == [OK]
    assert [d for _, d in await store.read("g")] == private
    assert await store.read_public("g") == [("1-0", b'{"e":1}'), ("2-0", b'{"e":2}')]


async def test_rejections_record_an_outcome_without_moving_the_version(store: EventStore) -> None:
    await store.append_many([req("a", 0)])
    rejection = AppendRequest(
        game_id="g", expected_version=1, command_id="r", outcome=b"no", public_rejection=b'{"rejected":1}'
    )
    assert [r.status for r in await store.append_many([rejection, req("b", 1)])] == [OK, OK]
    assert [v for v, _ in await store.read("g")] == [1, 2]
    assert await store.audit("g") == [b"a", b"no", b"b"]
    assert ("1-1", b'{"rejected":1}') in await store.read_public("g")


async def test_effects_and_ack_land_only_with_an_applied_command(store: EventStore, standalone_url: str) -> None:
    """Standalone Redis: the append script also publishes and acks, all or nothing per command."""
    if isinstance(store, RedisEventStore) and store.cluster:
        pytest.skip("a script may not touch other hash slots: the referee publishes after the append there")
    prefix = store.keys.prefix if isinstance(store, RedisEventStore) else f"test-{uuid.uuid4().hex[:10]}"
    reply, bus, intake = f"{prefix}:reply:x", f"{prefix}:bus:{{0}}", f"{prefix}:cmd:{{0}}"
    client = connect(standalone_url)
    await client.xgroup_create(intake, "referee", id="0", mkstream=True)
    entry_id = await client.xadd(intake, {"data": b"cmd"})
    await client.xreadgroup("referee", "c", {intake: ">"})
    # A reply stream that is not a stream: its XADD fails, the command must still land whole.
    await client.set(reply, "not a stream")
    applied = msgspec.structs.replace(
        req("a", 0), effects=[(reply, b"r-a"), (bus, b"n-a")], ack=(intake, "referee", entry_id)
    )
    stale = msgspec.structs.replace(req("b", 0), effects=[(bus, b"n-b")])
    assert [r.status for r in await store.append_many([applied])] == [OK]
    assert [r.status for r in await store.append_many([stale])] == [CONFLICT]
    if isinstance(store, RedisEventStore):
        assert [f[b"data"] for _, f in entries_of(await client.xrange(bus))] == [b"n-a"]
        assert (await client.xpending(intake, "referee"))["pending"] == 0
        assert await client.get(reply) == b"not a stream"
    else:
        assert isinstance(store, MemoryEventStore)
        assert store.streams == {reply: [b"r-a"], bus: [b"n-a"]} and store.acked == [entry_id]
    assert [v for v, _ in await store.read("g")] == [1]
    await client.delete(reply, bus, intake)
    await client.aclose()


@pytest.mark.parametrize("where", ["standalone", "cluster"])
async def test_each_outcome_is_stored_once_and_a_hash_of_outcomes_from_before_still_answers(
    where: str, request: pytest.FixtureRequest
) -> None:
    """Given a remembered command, its outcome is in the audit only and the hash holds the audit
    entry's id; a duplicate gets the outcome all the same. A hash field written before (the whole
    outcome) answers its duplicate too."""
    url = request.getfixturevalue(f"{where}_url")
    keys = Keys(f"test-{uuid.uuid4().hex[:10]}")
    client = connect(url)
    store = RedisEventStore(client, keys)
    try:
        long = b'{"status":"accepted","detail":"' + b"x" * 300 + b'"}'
        await store.append_many([msgspec.structs.replace(req("a", 0), outcome=long)])
        [(audit_id, fields)] = entries_of(await client.xrange(keys.audit("g")))
        assert fields[b"data"] == long and await client.hget(keys.commands("g"), "a") == audit_id
        [dup] = await store.append_many([req("a", 1)])
        assert (dup.status, dup.prior_outcome) == (DUPLICATE, long)
        assert await store.outcome("g", "a") == long
        await client.hset(keys.commands("g"), "old", b'{"status":"accepted"}')
        [old] = await store.append_many([req("old", 1)])
        assert (old.status, old.prior_outcome) == (DUPLICATE, b'{"status":"accepted"}')
        assert await store.outcome("g", "old") == b'{"status":"accepted"}'
    finally:
        await store.close()
        await client.aclose()
        delete_prefix(url, keys.prefix)


async def test_public_entry_ids_are_versions_and_refusals_count_after_them(store: EventStore) -> None:
    """What readers take the version from (the entry id): the same on Redis and in memory."""

    def refused(cmd: str, at: int) -> AppendRequest:
        return AppendRequest(
            game_id="g", expected_version=at, command_id=cmd, outcome=b"no", public_rejection=cmd.encode()
        )

    def shown(cmd: str, at: int, public: list[bytes | None]) -> AppendRequest:
        events = [f"{cmd}{i}".encode() for i in range(len(public))]
        return AppendRequest(
            game_id="g", expected_version=at, command_id=cmd, outcome=b"ok", events=events, public=public
        )

    await store.append_many([refused("r1", 0), refused("r2", 0), shown("a", 0, [b"a0"])])
    await store.append_many([refused("r3", 1), refused("r4", 1), shown("b", 1, [b"b0", None, b"b2"])])
    await store.append_many([shown("c", 4, [None]), refused("r5", 5), shown("d", 5, [b"d0"]), refused("r6", 6)])
    ids = [i for i, _ in await store.read_public("g")]
    assert ids == ["0-1", "0-2", "1-0", "1-1", "1-2", "2-0", "4-0", "5-1", "6-0", "6-1"]
