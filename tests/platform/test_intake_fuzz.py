"""Fuzz of raw intake bytes: random bytes, random JSON, random envelopes with random payloads, and
the known poison shapes, in batches, through the referee engine (in memory, and a smaller run over
a real Redis).

Invariant: nothing escapes `handle`, and every entry is accounted for exactly once (the engine's
observer): accepted, refused with a known rule id, or dead-lettered with a reason (a bounded
record naming the entry); every one is acked.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from contracts import codec
from contracts import lifecycle as lc
from contracts.limits import DEAD_HEAD_BYTES, MAX_DATA_BYTES, MAX_FIELDS
from contracts.outcome import decode_outcome
from contracts.registry import command_types, type_name
from games import match as m
from games.artifacts import rule_ids as art
from games.mechanica import rule_ids as mec
from games.prosperity import rule_ids as pro
from games.sentient import rule_ids as sen
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import connect, is_cluster
from services.referee.app import GROUP
from services.referee.engine import Referee
from services.referee.sink import RedisSink
from tests.platform.helpers import entries_of, envelope, reads_of
from tests.platform.test_strict_input import DEEP, POISON, Judged, running_game

KEYS = Keys("t")
RULES = set(m.LIFECYCLE_RULES) | {r for mod in (sen, pro, mec, art) for r in mod.RULES_TEXT}
STATUSES = {"accepted", "rejected", "dead"}

# ---- strategies --------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _sometimes(value: st.SearchStrategy[Any], noise: st.SearchStrategy[Any] = json_values) -> st.SearchStrategy[Any]:
    """Mostly a plausible value, one time in twelve any JSON."""
    return st.integers(0, 11).flatmap(lambda i: noise if i == 0 else value)


def _mostly(value: Any, *others: Any) -> st.SearchStrategy[Any]:
    """`value` four times in five, else one of `others`."""
    return st.integers(0, 4).flatmap(lambda i: st.sampled_from(others) if i == 0 and others else st.just(value))


@st.composite
def payloads(draw: st.DrawFn, legal: dict[str, Any]) -> bytes:
    kind = draw(st.sampled_from(["legal"] * 6 + ["mutated", "mutated", "json", "bytes", "deep"]))
    if kind == "deep":
        return DEEP
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    doc = dict(legal)
    if kind == "mutated":
        key = draw(st.sampled_from([*doc, "assistant", "extra"]))
        doc[key] = draw(json_values)
    return json.dumps(doc).encode()


@st.composite
def envelopes(draw: st.DrawFn, game: dict[str, Any]) -> bytes:
    """Mostly a command the running game could take (a legal move, with the right token and
    version, or a lifecycle command), each member sometimes changed or left out."""
    seat = draw(st.sampled_from([game["seat"], game["seat"], 1 - game["seat"]]))
    type_, legal = draw(st.sampled_from(game["legal"] + game["lifecycle"]))
    members: dict[str, st.SearchStrategy[Any]] = {
        "type": _sometimes(_mostly(type_, *sorted(command_types()), "nope.Nothing")),
        "game_id": _sometimes(_mostly("g", "ghost", "x}{y", "", "g" * 101)),
        "command_id": _sometimes(st.uuids().map(lambda u: u.hex) | st.sampled_from(["c1", "c2", "", "i" * 101])),
        "seat": _sometimes(_mostly(seat, 2, -1, 64)),
        "token": _sometimes(_mostly(game["tokens"][seat], "forged", "t" * 200)),
        "expected_version": _sometimes(_mostly(game["version"], game["version"] - 1, game["version"] + 1)),
        "reply_to": _sometimes(_mostly(KEYS.reply("fz", "r"), KEYS.reply("other", "x"), "t:reply:fz", None)),
        "correlation_id": _sometimes(st.text(max_size=10)),
        "schema_version": _sometimes(st.integers(0, 4)),
        "unknown": json_values,
    }
    # Required members are nearly always there, the others most of the time, an unknown one rarely.
    odds = {"type": 19, "game_id": 19, "command_id": 19, "unknown": 1}
    doc = {k: draw(v) for k, v in members.items() if draw(st.integers(0, 19)) < odds.get(k, 16)}
    body = json.dumps(doc).encode()
    if draw(st.integers(0, 19)) < 19:  # with a payload, spliced in raw (it may be anything)
        payload = draw(payloads(legal))
        body = (body[:-1] + b', "payload": ' if doc else b'{"payload": ') + payload + b"}"
    return body


@st.composite
def data_bytes(draw: st.DrawFn, game: dict[str, Any], huge: bool = True) -> bytes:
    kind = draw(st.sampled_from(["envelope"] * 12 + ["bytes", "json", "poison", *(["huge"] if huge else [])]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "poison":
        fields = draw(st.sampled_from(list(POISON.values())))
        return fields.get(b"data", b"")
    if kind == "huge":
        return codec.encode(envelope("g", lc.JoinSeat(seat=1, name="n" * MAX_DATA_BYTES)))
    return draw(envelopes(game))


@st.composite
def entry_fields(draw: st.DrawFn, game: dict[str, Any], huge: bool = True) -> dict[bytes, bytes]:
    shape = draw(st.sampled_from(["data"] * 16 + ["no data", "extra fields", "many fields"]))
    fields: dict[bytes, bytes] = {}
    if shape != "no data":
        fields[b"data"] = draw(data_bytes(game, huge))
    if shape != "data":
        n = MAX_FIELDS + 1 if shape == "many fields" else draw(st.integers(1, 2))
        for i in range(n):
            fields[draw(st.binary(min_size=1, max_size=6)) + str(i).encode()] = draw(st.binary(max_size=20))
    return fields


# ---- the game every batch is sent to ----------------------------------------------------------


def _game(j: Judged, tokens: list[str]) -> dict[str, Any]:
    agg = j.ref.cache["g"]
    seat = m.to_act(agg)[0]
    legal = [(type_name(a), msgspec.to_builtins(a)) for a in agg.rules.legal_actions(agg.game, seat)]
    lifecycle = [
        ("lifecycle.Resign", {}),
        ("lifecycle.StartGame", {}),
        ("lifecycle.JoinSeat", {"seat": 1, "name": "late"}),
        ("lifecycle.ForceDefault", {"seat": seat, "at_version": agg.version}),
    ]
    return {"tokens": tokens, "seat": seat, "version": agg.version, "legal": legal, "lifecycle": lifecycle}


async def _prepared() -> tuple[Judged, dict[str, Any]]:
    j = Judged()
    tokens = await running_game(j, clients=("fz", "fz"))
    return j, _game(j, tokens)


_READY, GAME = asyncio.run(_prepared())


def _fresh() -> Judged:
    """A referee on a copy of the running game's store (nothing of an earlier example remains)."""
    j = Judged()
    j.store = copy.deepcopy(_READY.store)
    j.ref.store = j.store
    return j


def check(entries: list[tuple[bytes, dict[bytes, bytes]]], seen: list[tuple[bytes, str, str]]) -> Counter[str]:
    ids = [e for e, _ in entries]
    by_entry = Counter(e for e, _, _ in seen)
    assert all(by_entry[e] == 1 for e in ids), by_entry
    assert set(by_entry) == set(ids)
    kinds: Counter[str] = Counter()
    for _, status, why in seen:
        assert status in STATUSES
        if status == "rejected":
            assert why in RULES, why
        if status == "dead":
            assert why
        kinds[status] += 1
    return kinds


def _bounded_dead(letters: list[dict[Any, Any]]) -> None:
    for letter in letters:
        assert sum(len(k) + len(v) for k, v in letter.items()) < MAX_FIELDS * (DEAD_HEAD_BYTES + 80) + 1200


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=st.lists(entry_fields(GAME), min_size=1, max_size=8))
def test_any_bytes_in_any_batch_are_accounted_for_exactly_once(batch: list[dict[bytes, bytes]]) -> None:
    j = _fresh()
    entries = [(f"{i + 1}-0".encode(), fields) for i, fields in enumerate(batch)]
    asyncio.run(j.send(*entries))
    check(entries, j.seen)
    assert set(j.sink.acked) == {e for e, _ in entries}
    dead = {letter["entry_id"] for letter in j.dead()}
    assert dead == {e for e, status, _ in j.seen if status == "dead"}
    _bounded_dead(j.dead())
    for stream in j.sink.streams:  # written only to reply streams of this installation, the bus and ds:dead
        assert stream in (KEYS.dead_letter, KEYS.bus(0)) or KEYS.reply_client(stream) is not None, stream
    for record in j.store.audits.get("g", []):
        o = decode_outcome(record, "g")
        assert (o.status == "accepted") == (o.payload_digest is None)
        assert len(record) < 3_000


# ---- over a real Redis -------------------------------------------------------------------------


async def _redis_round(url: str, prefix: str, batch: list[dict[bytes, bytes]], state: dict[str, Any]) -> None:
    keys = Keys(prefix)
    client = connect(url)
    stream = keys.intake(0)
    seen: list[tuple[bytes, str, str]] = []
    try:
        ref = Referee(
            RedisEventStore(client, keys),
            lambda: RedisSink(client),
            keys,
            shards=1,
            secret=b"s",
            group=GROUP,
            inline_effects=not is_cluster(client),
            observe=lambda s, e, status, why: seen.append((e, status, why)),
        )
        if not state:
            await client.xgroup_create(stream, GROUP, id="0", mkstream=True)
            create = envelope("g", lc.CreateGame(game_type="sentient", num_players=2))
            await client.xadd(stream, {"data": codec.encode(create)})
            got = reads_of(await client.xreadgroup(GROUP, "fuzz", {stream: ">"}, count=10))
            await ref.handle(stream, got[0][1])
            state["ready"] = True
            seen.clear()
        sent = [await client.xadd(stream, fields) for fields in batch]  # type: ignore[arg-type]
        got = reads_of(await client.xreadgroup(GROUP, "fuzz", {stream: ">"}, count=len(batch) + 10))
        entries = [(i, f) for i, f in got[0][1]]
        assert [i for i, _ in entries] == sent
        await ref.handle(stream, entries)
        kinds = check(entries, seen)
        assert (await client.xpending(stream, GROUP))["pending"] == 0
        dead_ids = {e for e, status, _ in seen if status == "dead"}
        letters = [f for _, f in entries_of(await client.xrange(keys.dead_letter))]
        assert dead_ids <= {f[b"entry_id"] for f in letters}
        _bounded_dead(letters)
        state["kinds"] = state.get("kinds", Counter()) + kinds
    finally:
        await client.aclose()


@pytest.mark.redis
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(entry_fields(GAME), min_size=1, max_size=6))
def test_any_bytes_over_a_real_redis_are_accounted_for_exactly_once(
    redis_url: str, prefix: str, batch: list[dict[bytes, bytes]]
) -> None:
    # The state (the group, the game) is shared by this test's examples: its prefix is the same.
    state = _STATE.setdefault(prefix, {})
    asyncio.run(_redis_round(redis_url, prefix, batch, state))


_STATE: dict[str, dict[str, Any]] = {}


def test_the_fuzz_reaches_every_kind_of_outcome() -> None:
    """The strategies are not all garbage: a fixed sample has all three outcomes and many rules."""
    from hypothesis import find

    rules: set[str] = set()
    statuses: set[str] = set()

    def interesting(batch: list[dict[bytes, bytes]]) -> bool:
        j = _fresh()
        entries = [(f"{i + 1}-0".encode(), fields) for i, fields in enumerate(batch)]
        asyncio.run(j.send(*entries))
        statuses.update(s for _, s, _ in j.seen)
        rules.update(w for _, s, w in j.seen if s == "rejected")
        return statuses == STATUSES and len(rules) >= 4

    find(
        # Without the huge entry: hypothesis prints what `find` found, and a 1 MB entry is a repr it
        # warns about (the fuzz tests above send it).
        st.lists(entry_fields(GAME, huge=False), min_size=8, max_size=8),
        interesting,
        settings=settings(max_examples=500, database=None, phases=[Phase.generate]),  # found: no shrinking
    )
