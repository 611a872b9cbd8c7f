"""The referee's application service over the in-memory store: given a log, when commands, then
events, outcomes, replies and dead letters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import Reply, decode_outcome, stored_outcome
from contracts.sentient import Pass
from games import match as m
from games.bots import RandomBot
from games.catalog import rules_for
from services import history as h
from services.eventstore.base import AppendRequest, AppendResult
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.follower import LogFollower, rebuild
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from tests.platform.helpers import entry, envelope

KEYS = Keys("t")
INTAKE = KEYS.intake(0)
REPLIES = KEYS.reply("tests", "r")


def _recorder() -> Callable[[], MemorySink]:
    """A sink factory that hands every batch the same recorder, so tests see all effects."""
    sink = MemorySink()
    return lambda: sink


@pytest.fixture
def referee() -> Referee:
    return Referee(MemoryEventStore(), _recorder(), KEYS, shards=1, secret=b"s")


def replies(ref: Referee, stream: str = REPLIES) -> list[Reply]:
    sink = ref.new_sink()
    assert isinstance(sink, MemorySink)
    return [msgspec.json.decode(f["data"], type=Reply) for f in sink.streams.get(stream, [])]


async def send(ref: Referee, game_id: str, payload: msgspec.Struct, **kw: object) -> Reply:
    env = envelope(game_id, payload, reply_to=REPLIES, **kw)
    await ref.handle(INTAKE, [entry(env)])
    return replies(ref)[-1]


async def seated_game(ref: Referee, n: int = 2) -> list[str]:
    await send(ref, "g", lc.CreateGame(game_type="sentient", num_players=n))
    tokens = []
    for seat in range(n):
        reply = await send(ref, "g", lc.JoinSeat(seat=seat, name=f"p{seat}"))
        assert reply.token is not None
        tokens.append(reply.token)
    return tokens


async def log_of(ref: Referee, game_id: str = "g") -> m.Match:
    return rebuild(game_id, await ref.store.read(game_id))


async def test_a_full_game_between_bots_ends_with_scores_and_the_seed_revealed(referee: Referee) -> None:
    tokens = await seated_game(referee, 3)
    assert (await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0])).outcome.status == "accepted"
    rules = rules_for("sentient")
    assert rules is not None
    bots = [RandomBot(i) for i in range(3)]
    live = referee.cache["g"]  # the engine folds into this object until the game ends
    for _ in range(2000):
        agg = referee.cache.get("g")
        if agg is None:
            break  # a finished game leaves the cache
        live = agg
        seat = m.to_act(agg)[0]
        cmd = bots[seat].choose({}, rules.legal_actions(agg.game, seat), seat)
        reply = await send(referee, "g", cmd, seat=seat, token=tokens[seat], expected_version=agg.version)
        assert reply.outcome.status == "accepted", reply.outcome
    assert live.status == m.OVER and "g" not in referee.cache
    replayed = await log_of(referee)
    assert replayed.version == live.version
    assert msgspec.to_builtins(rules.view(replayed.game, None)) == msgspec.to_builtins(rules.view(live.game, None))
    types = [codec.decode_event(e, "g", v).type for v, e in await referee.store.read("g")]
    assert types[-2:] == ["lifecycle.GameEnded", "lifecycle.SeedRevealed"]


async def test_a_reply_is_the_reply_contract_around_the_outcome_the_audit_recorded(referee: Referee) -> None:
    """The referee encodes an outcome once and wraps the reply around those bytes: a client
    decoding `Reply` must get exactly what a plain `Reply` encoding would carry, and the audit
    the same outcome, less what its stream's key says and its members at their defaults."""
    await seated_game(referee, 2)
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    raw = [f["data"] for f in sink.streams[REPLIES]]
    decoded = [msgspec.json.decode(r, type=Reply) for r in raw]
    assert raw == [codec.encode(rep) for rep in decoded]
    records = await referee.store.audit("g")
    assert [rep.outcome for rep in decoded] == [decode_outcome(r, "g") for r in records]
    assert records == [stored_outcome(rep.outcome) for rep in decoded]
    assert all(b'"game_id"' not in r and b'"rule"' not in r and b'"admin"' not in r for r in records)
    assert decoded[1].token is not None and decoded[0].token is None


async def test_a_redelivered_command_appends_nothing_and_gets_its_first_answer_again(referee: Referee) -> None:
    await send(referee, "g", lc.CreateGame(game_type="sentient", num_players=2))
    join = envelope("g", lc.JoinSeat(seat=0, name="a"), reply_to=REPLIES)
    await referee.handle(INTAKE, [entry(join)])
    before = await referee.store.read("g")
    await referee.handle(INTAKE, [entry(join)])  # the same command id, delivered again
    assert await referee.store.read("g") == before
    first, again = replies(referee)[-2:]
    assert again.outcome == first.outcome and again.token == first.token is not None


async def test_commands_for_a_seat_without_its_token_are_refused(referee: Referee) -> None:
    tokens = await seated_game(referee)
    await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0])
    seat = m.to_act(referee.cache["g"])[0]
    other = 1 - seat
    reply = await send(referee, "g", Pass(), seat=seat, token=tokens[other])  # impersonation
    assert (reply.outcome.status, reply.outcome.rule) == ("rejected", "GAME-AUTH")
    assert not reply.outcome.authenticated
    reply = await send(referee, "g", Pass(), seat=seat)
    assert reply.outcome.rule == "GAME-AUTH"


async def test_a_stale_expected_version_is_refused_and_says_so(referee: Referee) -> None:
    tokens = await seated_game(referee)
    version = referee.cache["g"].version
    reply = await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0], expected_version=version - 1)
    assert reply.outcome.rule == "GAME-STALE"
    assert f"game is at {version}" in (reply.outcome.detail or "")


async def test_garbage_bytes_go_to_the_dead_letter_stream_and_are_acked(referee: Referee) -> None:
    garbage = entry(b"\xff\xfe not json")
    no_data = (b"99-0", {b"other": b"x"})
    await referee.handle(INTAKE, [garbage, no_data])
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    dead = sink.streams[KEYS.dead_letter]
    assert str(dead[0]["reason"]).startswith("malformed envelope")
    assert dead[0]["field:data"] == b"\xff\xfe not json"
    assert set(sink.acked) >= {garbage[0], no_data[0]}


async def test_an_unknown_command_type_is_refused_once_and_not_dead_lettered(referee: Referee) -> None:
    await send(referee, "g", lc.CreateGame(game_type="sentient", num_players=2))
    env = envelope("g", lc.StartGame(), reply_to=REPLIES)
    env = msgspec.structs.replace(env, type="sentient.Teleport")
    await referee.handle(INTAKE, [entry(env)])
    assert replies(referee)[-1].outcome.rule == "GAME-UNKNOWN-TYPE"
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    assert KEYS.dead_letter not in sink.streams
    audit = [decode_outcome(o, "g") for o in await referee.store.audit("g")]
    assert [o.rule for o in audit if o.command_id == env.command_id] == ["GAME-UNKNOWN-TYPE"]


async def test_a_payload_not_matching_its_schema_is_rejected_as_malformed(referee: Referee) -> None:
    env = envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=REPLIES)
    env = msgspec.structs.replace(env, payload=msgspec.Raw(b'{"game_type": 7}'))
    await referee.handle(INTAKE, [entry(env)])
    assert replies(referee)[-1].outcome.rule == "GAME-MALFORMED"
    assert await referee.store.read("g") == []


async def test_one_game_with_an_unreadable_log_does_not_block_the_others(referee: Referee) -> None:
    store = referee.store
    assert isinstance(store, MemoryEventStore)
    store.logs["bad"] = [b"not an event"]
    bad = entry(envelope("bad", lc.StartGame()))
    good = entry(envelope("good", lc.CreateGame(game_type="sentient", num_players=2)))
    await referee.handle(INTAKE, [bad, good])
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    assert good[0] in sink.acked and bad[0] not in sink.acked  # left pending for the reclaimer
    assert len(await store.read("good")) == 1


async def test_the_public_projection_hides_the_seed_tokens_and_deck_order(referee: Referee) -> None:
    tokens = await seated_game(referee)
    await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0])
    store = referee.store
    assert isinstance(store, MemoryEventStore)
    agg = referee.cache["g"]
    public = b"".join(d for _, d in store.public["g"])
    assert agg.seed is not None and agg.seed.encode() not in public
    for info in agg.seats:
        assert info is not None and info.token_hash is not None and info.token_hash.encode() not in public
    assert tokens[0].encode() not in public
    private = b"".join(store.logs["g"])
    assert agg.seed.encode() in private  # the private log keeps what verify needs
    deck = msgspec.json.encode(agg.game.deck)[1:-1]
    assert deck and deck in private and deck not in public


async def test_a_reply_stream_outside_the_reply_prefix_or_a_bad_game_id_is_dead_lettered(referee: Referee) -> None:
    public = KEYS.public("victim")
    hijack = envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=public)
    braces = envelope("x}{y", lc.CreateGame(game_type="sentient", num_players=2))
    await referee.handle(INTAKE, [entry(hijack), entry(braces)])
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    assert public not in sink.streams
    reasons = [str(d["reason"]) for d in sink.streams[KEYS.dead_letter]]
    assert reasons[0].startswith("reply_to must be") and reasons[1].startswith("invalid game id")
    assert await referee.store.read("g") == [] and await referee.store.read("x}{y") == []


async def test_a_dead_lettered_command_does_not_keep_its_seat_token(referee: Referee) -> None:
    env = envelope("g", lc.StartGame(), seat=0, token="secret-token", reply_to="elsewhere")
    await referee.handle(INTAKE, [entry(env)])
    sink = referee.new_sink()
    assert isinstance(sink, MemorySink)
    [letter] = sink.streams[KEYS.dead_letter]
    head = letter["field:data"]
    assert isinstance(head, bytes)
    assert b"secret-token" not in head and b"<redacted>" in head


async def test_a_game_created_with_other_data_is_not_judged_by_this_data(referee: Referee) -> None:
    tokens = await seated_game(referee)
    agg = referee.cache["g"]
    agg.data_version = "sentient-data-0"  # as if created before the data file was edited
    reply = await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0])
    assert reply.outcome.rule == "GAME-VERSION"
    assert "sentient-data-0" in (reply.outcome.detail or "")


async def test_reusing_a_public_join_command_id_does_not_hand_out_that_seats_token(referee: Referee) -> None:
    await send(referee, "g", lc.CreateGame(game_type="sentient", num_players=2))
    real = await send(referee, "g", lc.JoinSeat(seat=1, name="victim"))
    assert real.token is not None
    # The thief copies the public command id but, not knowing the original bytes, sends its own.
    thief = envelope(
        "g",
        lc.JoinSeat(seat=1, name="thief"),
        command_id=real.outcome.command_id,
        reply_to=KEYS.reply("thief", "r"),
    )
    await referee.handle(INTAKE, [entry(thief)])
    [answer] = replies(referee, KEYS.reply("thief", "r"))
    assert (answer.outcome.status, answer.outcome.rule, answer.token) == ("rejected", "GAME-DUPLICATE-ID", None)


async def test_a_strangers_refused_command_does_not_pre_empt_the_real_one_with_the_same_id(
    referee: Referee,
) -> None:
    tokens = await seated_game(referee)
    # Someone without the token sends StartGame under the id the real player will use.
    await send(referee, "g", lc.StartGame(), seat=0, token="forged", command_id="start-1")
    reply = await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0], command_id="start-1")
    assert reply.outcome.status == "accepted"


async def test_a_failed_append_leaves_no_speculative_state_in_the_cache(referee: Referee) -> None:
    await send(referee, "g", lc.CreateGame(game_type="sentient", num_players=2))
    store = referee.store
    assert isinstance(store, MemoryEventStore)

    async def broken(requests: object) -> object:
        raise ConnectionError("redis went away")

    real = store.append_many
    store.append_many = broken  # type: ignore[method-assign,assignment]
    with pytest.raises(ConnectionError):
        await referee.handle(INTAKE, [entry(envelope("g", lc.JoinSeat(seat=0, name="a")))])
    assert "g" not in referee.cache  # the join was folded speculatively: it must not survive
    store.append_many = real  # type: ignore[method-assign]
    reply = await send(referee, "g", lc.JoinSeat(seat=0, name="a"))
    assert reply.outcome.status == "accepted" and reply.outcome.judged_at_version == 1


async def test_commands_for_a_game_that_does_not_exist_write_no_keys(referee: Referee) -> None:
    reply = await send(referee, "ghost", lc.StartGame(), seat=0, token="t")
    assert reply.outcome.rule == "GAME-NOT-FOUND"
    store = referee.store
    assert isinstance(store, MemoryEventStore)
    assert "ghost" not in store.audits and "ghost" not in store.public and "ghost" not in referee.cache


def test_folding_the_same_tail_twice_changes_nothing() -> None:
    from tests.platform.test_history import golden

    hist = golden()
    entries = [(e.version, codec.encode(e)) for e in hist.events[:40]]
    agg = rebuild(hist.game_id, entries[:20])
    rebuild(hist.game_id, entries[10:], into=agg)  # overlaps the first read
    assert agg.version == 40
    once = rebuild(hist.game_id, entries)
    assert msgspec.to_builtins(agg.rules.view(agg.game, None)) == msgspec.to_builtins(once.rules.view(once.game, None))
    with pytest.raises(ValueError, match="jumps"):
        rebuild(hist.game_id, entries[:5] + entries[6:])


async def test_inline_effects_publish_reply_and_ack_inside_the_append() -> None:
    """On a standalone Redis the append script carries the bus notice, the reply and the XACK: the
    batch's last pipeline then has nothing to send for an applied command."""
    store = MemoryEventStore()
    ref = Referee(store, _recorder(), KEYS, shards=1, secret=b"s", inline_effects=True)
    create = envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=REPLIES)
    first = entry(create)
    await ref.handle(INTAKE, [first])
    reply = msgspec.json.decode(store.streams[REPLIES][0], type=Reply)
    assert reply.outcome.status == "accepted" and reply.outcome.to_version == 1
    assert len(store.streams[KEYS.bus(0)]) == 1 and store.acked == [first[0]]
    sink = ref.new_sink()
    assert isinstance(sink, MemorySink) and sink.streams == {} and sink.acked == []
    # A duplicate is not applied: its answer and ack go through the sink as before.
    again = entry(create)
    await ref.handle(INTAKE, [again])
    assert sink.acked == [again[0]] and len(sink.streams[REPLIES]) == 1 and store.acked == [first[0]]


async def test_an_imported_history_rebuilds_the_same_public_stream_refusals_included(referee: Referee) -> None:
    tokens = await seated_game(referee, 2)
    await send(referee, "g", lc.StartGame(), seat=0, token=tokens[0])
    waiting = m.to_act(referee.cache["g"])[0]
    idle = 1 - waiting
    # An authenticated refusal (out of turn, remembered) and an unauthenticated one (not).
    assert (await send(referee, "g", Pass(), seat=idle, token=tokens[idle])).outcome.rule == "SEN-TURN"
    assert (await send(referee, "g", Pass(), seat=waiting, token="forged")).outcome.rule == "GAME-AUTH"
    store = referee.store
    assert isinstance(store, MemoryEventStore)
    original = await h.load(store, "g")
    target = MemoryEventStore()
    await h.import_history(target, h.rebase(original, "copy"))
    copied = [(i, p.replace(b'"copy', b'"g')) for i, p in await target.read_public("copy")]
    assert copied == await store.read_public("g")
    # Only the authenticated refusal is public (anyone can provoke the other).
    assert sum(b"CommandRejected" in p for _, p in copied) == 1
    assert set(target.outcomes["copy"]) == set(store.outcomes["g"])  # the unauthenticated one is not


class _SlowStore(MemoryEventStore):
    """Records how many append pipelines are in flight at once, and can fail one of them."""

    def __init__(self, fail_call: int | None = None) -> None:
        super().__init__()
        self.in_flight = 0
        self.most_in_flight = 0
        self.calls: list[list[str]] = []
        self.fail_call = fail_call

    async def append_many(self, requests: list[AppendRequest]) -> list[AppendResult]:
        self.calls.append([r.game_id for r in requests])
        call = len(self.calls)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.01)  # a round trip, during which the engine judges on
            if call == self.fail_call:
                raise ConnectionError("redis went away")
            return await super().append_many(requests)
        finally:
            self.in_flight -= 1


async def _created(ref: Referee, games: list[str]) -> None:
    await ref.handle(INTAKE, [entry(envelope(g, lc.CreateGame(game_type="sentient", num_players=2))) for g in games])


async def test_a_batch_is_appended_in_chunks_of_whole_games_sent_while_the_rest_is_judged() -> None:
    store = _SlowStore()
    ref = Referee(store, _recorder(), KEYS, shards=1, secret=b"s", chunk=2)
    games = [f"g{i}" for i in range(5)]
    await _created(ref, games)
    store.calls.clear()
    store.most_in_flight = 0
    # Two joins per game, interleaved across games as they would arrive on a shard.
    joins = [envelope(g, lc.JoinSeat(seat=s, name=f"p{s}"), reply_to=REPLIES) for s in range(2) for g in games]
    await ref.handle(INTAKE, [entry(e) for e in joins])
    assert store.calls == [["g0", "g0"], ["g1", "g1"], ["g2", "g2"], ["g3", "g3"], ["g4", "g4"]]
    assert store.most_in_flight == 5  # every chunk was sent before the first came back
    assert [r.outcome.status for r in replies(ref)] == ["accepted"] * 10
    for g in games:
        agg = await log_of(ref, g)
        assert agg.version == 3 and [s.name for s in agg.seats if s] == ["p0", "p1"]


async def test_when_one_chunk_fails_every_game_of_the_batch_leaves_the_cache() -> None:
    store = _SlowStore()
    ref = Referee(store, _recorder(), KEYS, shards=1, secret=b"s", chunk=1)
    games = ["a", "b", "c"]
    await _created(ref, games)
    store.calls.clear()
    store.fail_call = 2
    with pytest.raises(ConnectionError):
        await ref.handle(INTAKE, [entry(envelope(g, lc.JoinSeat(seat=0, name="x"))) for g in games])
    # "a" and "c" were appended, "b" was not: none of the three may be judged from a speculative
    # copy; reloading gives each its true log.
    assert not set(games) & set(ref.cache)
    assert [(await log_of(ref, g)).version for g in games] == [2, 1, 2]


async def test_a_follower_refolds_a_game_whose_log_was_rewritten_under_it() -> None:
    """After a failover that lost acknowledged writes, new events take the lost versions: a read
    side caught up past them must notice and fold the game again, not skip the new events."""
    store = MemoryEventStore()
    keys = Keys("follow")
    ref = Referee(store, MemorySink, keys, shards=1, secret=b"s", new_seed=lambda: "seed")
    await ref.handle("in", [entry(envelope("g", lc.CreateGame(game_type="sentient", num_players=2)))])
    await ref.handle("in", [entry(envelope("g", lc.JoinSeat(seat=0, name="lost")))])
    follower = LogFollower(store)
    [seen] = await follower.catch_up(["g"])
    assert seen.version == 2 and seen.seats[0] is not None and seen.seats[0].name == "lost"
    store.logs["g"] = store.logs["g"][:1]  # the join was lost in a failover...
    ref.cache.clear()
    await ref.handle("in", [entry(envelope("g", lc.JoinSeat(seat=1, name="new")))])  # ...and v2 rewritten
    [again] = await follower.catch_up(["g"])
    assert again.version == 2 and again.seats[0] is None
    assert again.seats[1] is not None and again.seats[1].name == "new"
