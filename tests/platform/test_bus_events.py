"""Bus entries carry their command's log entries: given a referee's bus, when a read side follows
it, then each game is folded from the entries alone, exactly as from its log, and from the log
whenever an entry does not continue what the reader folded (a gap, a rewritten history, a notice
without its entries)."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
import structlog

from contracts import lifecycle as lc
from contracts.bus import BusNotice, read_notice
from games import match as m
from games.bots import RandomBot
from games.catalog import rules_for
from services import tokens
from services.eventstore.keys import Keys, shard_of
from services.eventstore.memory_store import MemoryEventStore
from services.eventstore.redis_store import RedisEventStore
from services.follower import LogFollower, rebuild
from services.readmodel import public_state
from services.redis_conn import AnyRedis, is_cluster
from services.referee.engine import Referee
from services.referee.sink import MemorySink, RedisSink
from tests.platform.helpers import entries_of, entry, envelope

KEYS = Keys("bus")
INTAKE = KEYS.intake(0)
REPLIES = KEYS.reply("tests", "r")
Notices = list[tuple[BusNotice, list[tuple[int, bytes]] | None]]


def as_read(fields: dict[str, bytes | str]) -> dict[bytes, bytes]:
    """A bus entry's fields as a reader gets them from Redis."""
    return {k.encode(): v if isinstance(v, bytes) else v.encode() for k, v in fields.items()}


def bus_of(store: MemoryEventStore) -> Notices:
    return [n for n in (read_notice(as_read(f)) for f in store.notices.get(KEYS.bus(0), [])) if n is not None]


async def play(ref: Referee, game_id: str = "g", players: int = 2, moves: int = 10_000) -> list[str]:
    """A game between random bots through the referee, `moves` moves at most; returns the seats'
    tokens."""

    async def send(payload: msgspec.Struct, **kw: object) -> str:
        env = envelope(game_id, payload, reply_to=REPLIES, **kw)
        await ref.handle(INTAKE, [entry(env)])
        return env.command_id

    await send(lc.CreateGame(game_type="sentient", num_players=players))
    seat_tokens = []
    for seat in range(players):
        join = await send(lc.JoinSeat(seat=seat, name=f"p{seat}"))
        seat_tokens.append(tokens.seat_token(ref.secret, game_id, seat, join))
    await send(lc.StartGame(), seat=0, token=seat_tokens[0])
    rules = rules_for("sentient")
    assert rules is not None
    bots = [RandomBot(seat) for seat in range(players)]
    for _ in range(moves):
        agg = ref.cache.get(game_id)
        if agg is None or agg.status != m.RUNNING:
            break
        seat = m.to_act(agg)[0]
        cmd = bots[seat].choose({}, rules.legal_actions(agg.game, seat), seat)
        await send(cmd, seat=seat, token=seat_tokens[seat], expected_version=agg.version)
    return seat_tokens


async def move(ref: Referee, on: m.Match, seat_tokens: list[str], *, expected: bool = True) -> None:
    """A random legal move of game "g"'s seat to act in `on`, sent to `ref` (at `on`'s version when
    `expected`, else at whatever version the referee holds)."""
    rules = rules_for("sentient")
    assert rules is not None
    seat = m.to_act(on)[0]
    cmd = RandomBot(seat).choose({}, rules.legal_actions(on.game, seat), seat)
    at = {"expected_version": on.version} if expected else {}
    await ref.handle(INTAKE, [entry(envelope("g", cmd, seat=seat, token=seat_tokens[seat], **at))])


async def created_and_joined() -> tuple[MemoryEventStore, Referee, LogFollower]:
    """Game "g" created and seat 0 joined (versions 1 and 2, a fixed seed), and a reader that has
    folded nothing yet: the set-up of the failover tests."""
    store = MemoryEventStore()
    ref = Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True, new_seed=lambda: "seed")
    await ref.handle(INTAKE, [entry(envelope("g", lc.CreateGame(game_type="sentient", num_players=2)))])
    await ref.handle(INTAKE, [entry(envelope("g", lc.JoinSeat(seat=0, name="lost")))])
    return store, ref, LogFollower(store)


def same(a: m.Match, b: m.Match) -> bool:
    return bool(msgspec.to_builtins(public_state(a, plain=True)) == msgspec.to_builtins(public_state(b, plain=True)))


async def test_a_whole_game_is_followed_from_the_bus_alone_and_equals_its_log() -> None:
    store = MemoryEventStore()
    ref = Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True)
    await play(ref, players=3)
    notices = bus_of(store)
    assert notices and all(events is not None for _, events in notices)
    follower = LogFollower(store)
    # One bus entry at a time, as a reader at low load gets them.
    for notice in notices:
        [agg] = await follower.follow([notice])
    assert follower.log_reads == 0
    logged = rebuild("g", await store.read("g"))
    assert agg.version == logged.version and agg.status == m.OVER and same(agg, logged)


async def test_the_referee_writes_the_same_entries_through_its_sink_where_the_script_cannot() -> None:
    """On a Redis Cluster the bus is in another slot than the game: the referee writes the entry
    after the append, with the same fields the standalone script writes."""
    inline, apart = MemoryEventStore(), MemoryEventStore()
    sink = MemorySink()
    await play(Referee(inline, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True, new_seed=lambda: "x"))
    await play(Referee(apart, lambda: sink, KEYS, shards=1, secret=b"s", new_seed=lambda: "x"))
    written = inline.notices[KEYS.bus(0)]
    sent = sink.streams[KEYS.bus(0)]
    assert len(written) == len(sent) > 10

    def strip(fields: dict[str, bytes | str]) -> dict[bytes, bytes]:
        return {k: v for k, v in as_read(fields).items() if k != b"data"}

    # The events hold the time they were recorded: compare which versions each entry holds.
    assert [sorted(strip(f)) for f in written] == [sorted(strip(f)) for f in sent]
    assert [read_notice(as_read(f))[0].prev_crc is not None for f in sent] == [True] * len(sent)  # type: ignore[index]


async def test_a_gap_or_an_entry_without_its_events_is_caught_up_from_the_log() -> None:
    store = MemoryEventStore()
    ref = Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True)
    seat_tokens = await play(ref, moves=6)
    notices = bus_of(store)
    follower = LogFollower(store)
    await follower.follow(notices[:3])
    assert follower.log_reads == 0
    [agg] = await follower.follow(notices[4:6])  # the fourth entry was lost: the log is read
    assert follower.log_reads == 1 and agg.version == len(store.logs["g"])
    await follower.follow(notices[6:])  # entries the log read took it past cost nothing
    assert follower.log_reads == 1
    agg = ref.cache["g"]
    await move(ref, agg, seat_tokens)
    [latest] = bus_of(store)[len(notices) :]
    [agg] = await follower.follow([(latest[0], None)])  # a re-publish after a crash carries no events
    assert follower.log_reads == 2 and same(agg, rebuild("g", await store.read("g")))


async def test_an_entry_that_does_not_continue_the_history_folded_refolds_the_game_from_its_log() -> None:
    """After a failover that lost acknowledged writes, new events take the lost versions: an entry
    naming another last entry than the one folded makes the reader fold the game again."""
    store, ref, follower = await created_and_joined()
    for notice in bus_of(store):
        [seen] = await follower.follow([notice])
    assert seen.version == 2 and seen.seats[0] is not None and follower.log_reads == 0
    store.logs["g"] = store.logs["g"][:1]  # the join was lost in a failover...
    ref.cache.clear()
    await ref.handle(INTAKE, [entry(envelope("g", lc.JoinSeat(seat=1, name="new")))])  # ...and v2 rewritten
    await ref.handle(INTAKE, [entry(envelope("g", lc.JoinSeat(seat=0, name="again")))])
    [again] = await follower.follow(bus_of(store)[-2:])
    assert follower.log_reads >= 1
    assert again.version == 3 and again.seats[1] is not None and again.seats[1].name == "new"
    assert again.seats[0] is not None and again.seats[0].name == "again"


@pytest.mark.redis
async def test_on_redis_each_bus_entry_holds_the_log_entries_it_announces(client: AnyRedis, prefix: str) -> None:
    """Standalone: written by the append script; cluster: by the referee's sink after the append."""
    keys = Keys(prefix)
    store = RedisEventStore(client, keys)
    cluster = is_cluster(client)
    ref = Referee(
        store,
        lambda: RedisSink(client),
        keys,
        shards=4,
        secret=b"s",
        inline_effects=not cluster,
    )
    game_id = "bus-redis"
    intake = keys.intake(shard_of(game_id, 4))
    await ref.handle(intake, [entry(envelope(game_id, lc.CreateGame(game_type="sentient", num_players=2)))])
    await ref.handle(intake, [entry(envelope(game_id, lc.JoinSeat(seat=0, name="a")))])
    raw = entries_of(await client.xrange(keys.bus(shard_of(game_id, 4))))
    bus = [read_notice(fields) for _, fields in raw]
    log = dict(await store.read(game_id))
    assert [n[0].to_version for n in bus if n is not None] == [1, 2]
    for n in bus:
        assert n is not None and n[1] is not None
        assert all(log[v] == data for v, data in n[1])
    follower = LogFollower(store)
    [agg] = await follower.follow([n for n in bus if n is not None])
    assert follower.log_reads == 0 and agg.version == 2 and same(agg, rebuild(game_id, list(log.items())))


async def test_an_entry_rewritten_at_the_version_already_folded_refolds_the_game() -> None:
    """The new history's entry takes exactly the version the reader holds: the reader is not past
    it, it holds another entry there, so it reads the log."""
    store, ref, follower = await created_and_joined()
    for notice in bus_of(store):
        await follower.follow([notice])
    store.logs["g"] = store.logs["g"][:1]  # the join was lost in a failover...
    ref.cache.clear()
    await ref.handle(INTAKE, [entry(envelope("g", lc.JoinSeat(seat=1, name="new")))])  # ...and v2 rewritten
    [again] = await follower.follow(bus_of(store)[-1:])  # the only entry of the new history
    assert follower.log_reads == 1 and again.version == 2
    assert again.seats[0] is None and again.seats[1] is not None and again.seats[1].name == "new"


async def test_every_game_of_a_batch_is_returned_even_when_the_cache_holds_fewer() -> None:
    store = MemoryEventStore()
    ref = Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True)
    games = ["a", "b", "c"]
    for g in games:
        await ref.handle(INTAKE, [entry(envelope(g, lc.CreateGame(game_type="sentient", num_players=2)))])
    follower = LogFollower(store, cache_games=2)
    followed = await follower.follow(bus_of(store))
    assert [agg.game_id for agg in followed] == games and len(follower.cache) == 2


async def test_entries_folded_while_a_log_read_is_in_flight_are_not_taken_for_a_rewrite() -> None:
    """The turn service's repair loop reads a game's log while its bus loop folds the game's newer
    entries: the read is checked against the version it asked from, not the one folded since."""

    class Held(MemoryEventStore):
        """Holds the next log read's answer until `release` is set."""

        def __init__(self) -> None:
            super().__init__()
            self.release: asyncio.Event | None = None

        async def read_many(self, after: dict[str, int]) -> dict[str, list[tuple[int, bytes]]]:
            got = await super().read_many(after)
            release, self.release = self.release, None
            if release is not None:
                await release.wait()
            return got

    store = Held()
    ref = Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True)
    seat_tokens = await play(ref, moves=3)
    follower = LogFollower(store)
    folded = len(bus_of(store))
    await follower.follow(bus_of(store))
    release = store.release = asyncio.Event()
    reading = asyncio.ensure_future(follower.catch_up(["g"]))  # reads the log as it is now...
    await asyncio.sleep(0)
    agg = ref.cache["g"]
    await move(ref, agg, seat_tokens)
    with structlog.testing.capture_logs() as logs:
        [moved] = await follower.follow(bus_of(store)[folded:])  # ...while the next entry is folded
        assert moved.version == agg.version and follower.log_reads == 1
        release.set()
        [caught] = await reading
    assert not [e for e in logs if e["event"] == "log_rewritten_refolding"]
    assert follower.log_reads == 1 and caught is moved
    assert same(caught, rebuild("g", await store.read("g")))


async def test_two_referees_taking_turns_on_one_game_announce_one_history() -> None:
    """Each referee appends on its cached copy; when the other wrote meanwhile its append
    conflicts, it reloads and judges again: every bus entry either continues the history the
    reader folded or sends it to the log, and the reader ends where the log ends."""
    store = MemoryEventStore()
    one, two = (Referee(store, MemorySink, KEYS, shards=1, secret=b"s", inline_effects=True) for _ in range(2))
    seat_tokens = await play(one, moves=2)
    await two.handle(INTAKE, [])
    follower = LogFollower(store)
    for i in range(12):
        ref = (one, two)[i % 2]
        logged = rebuild("g", await store.read("g"))
        if logged.status != m.RUNNING:
            break
        await move(ref, logged, seat_tokens, expected=False)
    for notice in bus_of(store):
        [agg] = await follower.follow([notice])
    assert (one.stats["conflicts"] + two.stats["conflicts"]) > 0
    assert same(agg, rebuild("g", await store.read("g"))) and follower.log_reads == 0
