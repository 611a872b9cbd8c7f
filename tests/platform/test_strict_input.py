"""Strict, bounded, answered input (issue 17 part 3), given/when/then on the referee engine over the
in-memory store: unknown fields and sizes refused, poison bytes dead-lettered without breaking a
batch, answers for what can be answered, bounded refusal records, the reply_to rule, old exports."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec
import pytest

from contracts import codec
from contracts import lifecycle as lc
from contracts.limits import DEAD_HEAD_BYTES, HEAD_BYTES, MAX_DATA_BYTES, MAX_FIELDS, MAX_NAME
from contracts.outcome import CommandOutcome, Reply, decode_outcome
from contracts.sentient import Acquire, Pass
from games import match as m
from services import history as h
from services.eventstore.keys import Keys
from services.eventstore.memory_store import MemoryEventStore
from services.follower import rebuild
from services.referee.engine import Referee
from services.referee.sink import MemorySink
from tests.golden.games import HERE as GOLDEN_DIR
from tests.platform.helpers import entry, envelope

KEYS = Keys("t")
INTAKE = KEYS.intake(0)
MINE = KEYS.reply("me", "r")
Seen = list[tuple[bytes, str, str]]


class Judged:
    """A referee over the in-memory store, recording every effect and every entry's outcome."""

    def __init__(self) -> None:
        self.sink = MemorySink()
        self.store = MemoryEventStore()
        self.seen: Seen = []
        self.ref = Referee(
            self.store, lambda: self.sink, KEYS, shards=1, secret=b"s", observe=self._observe, new_seed=lambda: "seed"
        )

    def _observe(self, stream: str, entry_id: bytes, status: str, why: str) -> None:
        self.seen.append((entry_id, status, why))

    async def send(self, *entries: tuple[bytes, dict[bytes, bytes]]) -> None:
        await self.ref.handle(INTAKE, list(entries))

    async def call(self, game_id: str, payload: msgspec.Struct, reply_to: str = MINE, **kw: Any) -> Reply:
        env = envelope(game_id, payload, reply_to=reply_to, **kw)
        await self.send(entry(env))
        return self.replies(reply_to)[-1]

    def replies(self, stream: str = MINE) -> list[Reply]:
        return [msgspec.json.decode(f["data"], type=Reply) for f in self.sink.streams.get(stream, [])]

    def dead(self) -> list[dict[str, bytes | str]]:
        return self.sink.streams.get(KEYS.dead_letter, [])

    async def audit(self, game_id: str = "g") -> list[CommandOutcome]:
        return [decode_outcome(o, game_id) for o in await self.store.audit(game_id)]

    async def public(self, game_id: str = "g") -> list[dict[str, Any]]:
        return [json.loads(p) for _, p in await self.store.read_public(game_id)]


@pytest.fixture
def judged() -> Judged:
    return Judged()


async def running_game(j: Judged, clients: tuple[str, str] = ("me", "me")) -> list[str]:
    """Game "g": Sentient, two seats joined (seat i by client clients[i]) and started."""
    assert (await j.call("g", lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == "accepted"
    tokens = []
    for seat, client in enumerate(clients):
        reply = await j.call("g", lc.JoinSeat(seat=seat, name=f"p{seat}"), reply_to=KEYS.reply(client, "join"))
        assert reply.token is not None, reply.outcome
        tokens.append(reply.token)
    started = await j.call("g", lc.StartGame(), seat=0, token=tokens[0], reply_to=KEYS.reply(clients[0], "x"))
    assert started.outcome.status == "accepted", started.outcome
    return tokens


def raw_envelope(game_id: str, type_: str, payload: bytes, **kw: Any) -> bytes:
    doc = {"type": type_, "game_id": game_id, "command_id": kw.pop("command_id", "cmd-1"), **kw}
    body = json.dumps(doc).encode()
    return body[:-1] + b', "payload": ' + payload + b"}"


# ---- strict payloads -----------------------------------------------------------------------


async def test_a_misspelt_payload_field_is_refused_naming_it_and_nothing_is_played(judged: Judged) -> None:
    tokens = await running_game(judged)
    agg = judged.ref.cache["g"]
    seat, version = m.to_act(agg)[0], agg.version
    legal = agg.rules.legal_actions(agg.game, seat)
    acquire = next(a for a in legal if isinstance(a, Acquire))
    doc = msgspec.to_builtins(acquire)
    doc["assistant"] = doc.pop("assistants")  # the misspelling of the issue
    data = raw_envelope("g", "sentient.Acquire", json.dumps(doc).encode(), seat=seat, token=tokens[seat], reply_to=MINE)
    await judged.send(entry(data))
    refused = judged.replies()[-1].outcome
    assert (refused.status, refused.rule) == ("rejected", "GAME-MALFORMED")
    assert "assistant" in (refused.detail or "")
    assert (await judged.ref.store.read("g"))[-1][0] == version  # not played with the default
    assert not judged.dead()


async def test_an_envelope_field_this_version_does_not_know_is_refused_and_answered(judged: Judged) -> None:
    await running_game(judged)
    data = raw_envelope("g", "sentient.Pass", b"{}", reply_to=MINE, expected_versoin=3, command_id="typo")
    await judged.send(entry(data))
    refused = judged.replies()[-1].outcome
    assert (refused.command_id, refused.rule) == ("typo", "GAME-MALFORMED")
    assert "expected_versoin" in (refused.detail or "")
    assert not judged.dead()


@pytest.mark.parametrize(
    "payload",
    [
        lc.JoinSeat(seat=1, name="n" * (MAX_NAME + 1)),
        lc.CreateGame(game_type="g" * 33, num_players=2),
    ],
    ids=["name over 64", "game type over 32"],
)
async def test_strings_over_their_limit_are_refused_as_malformed(judged: Judged, payload: msgspec.Struct) -> None:
    await judged.call("g", lc.CreateGame(game_type="sentient", num_players=2))
    reply = await judged.call("g", payload)
    assert reply.outcome.rule == "GAME-MALFORMED" and "length" in (reply.outcome.detail or "")


# ---- size limits of the entry --------------------------------------------------------------


async def test_an_entry_over_the_data_limit_is_dead_lettered_bounded_and_stored_nowhere_else(judged: Judged) -> None:
    await judged.call("g", lc.CreateGame(game_type="sentient", num_players=2))
    before = (await judged.store.audit("g"), await judged.store.read_public("g"))
    huge = envelope("g", lc.JoinSeat(seat=0, name="n" * MAX_DATA_BYTES), reply_to=MINE, token="tok-secret")
    data = codec.encode(huge)
    assert len(data) > MAX_DATA_BYTES
    big = entry(data)
    replies_before = len(judged.replies())
    await judged.send(big)
    [letter] = judged.dead()
    assert str(letter["reason"]) == f"data is {len(data)} bytes, at most {MAX_DATA_BYTES}"
    assert letter["sha256"] == hashlib.sha256(data).hexdigest() and letter["bytes"] == str(len(data) + 4)
    head = letter["field:data"]
    assert isinstance(head, bytes)
    assert len(head) == DEAD_HEAD_BYTES and b"tok-secret" not in head
    assert sum(len(v) for v in letter.values()) < 2 * DEAD_HEAD_BYTES
    assert (await judged.store.audit("g"), await judged.store.read_public("g")) == before
    assert len(judged.replies()) == replies_before  # not parsed, so not answered
    assert big[0] in judged.sink.acked and judged.sink.deleted == [big[0]]  # and gone from the intake
    assert judged.seen[-1] == (big[0], "dead", letter["reason"])


async def test_an_entry_with_too_many_fields_is_dead_lettered(judged: Judged) -> None:
    fields = {f"f{i}".encode(): b"x" for i in range(MAX_FIELDS + 1)}
    fields[b"data"] = codec.encode(envelope("g", lc.CreateGame(game_type="sentient", num_players=2)))
    await judged.send((b"5-0", fields))
    [letter] = judged.dead()
    assert str(letter["reason"]) == f"entry has {MAX_FIELDS + 2} fields, at most {MAX_FIELDS}"
    assert sum(k.startswith("field:") for k in letter) == MAX_FIELDS
    assert await judged.store.read("g") == []


# ---- poison bytes ----------------------------------------------------------------------------

DEEP = b"[" * 10_000 + b"]" * 10_000
POISON: dict[str, dict[bytes, bytes]] = {
    "10,000 levels deep": {b"data": DEEP},
    "deep in an unknown field": {b"data": b'{"x": ' + DEEP + b', "type": "lifecycle.StartGame"}'},
    "deep in the payload": {b"data": raw_envelope("g", "lifecycle.StartGame", DEEP)},
    "binary": {b"data": bytes(range(256)) * 4},
    "invalid UTF-8": {
        b"data": raw_envelope("g", "lifecycle.StartGame", b'{"x": "\xff\xfe"}').replace(b"cmd-1", b"\xc3(")
    },
    "no data field": {b"payload": b"{}"},
    "JSON, not an object": {b"data": b'["lifecycle.StartGame", "g"]'},
    "an object, not an envelope": {b"data": b'{"hello": "world"}'},
    "a game id with braces": {b"data": raw_envelope("x}{y", "lifecycle.StartGame", b"{}")},
    "huge": {b"data": b'{"type": "' + b"a" * (4 * MAX_DATA_BYTES) + b'"}'},
}


@pytest.mark.parametrize("fields", list(POISON.values()), ids=list(POISON))
async def test_poison_is_dead_lettered_on_first_sight_and_the_rest_of_its_batch_is_answered(
    judged: Judged, fields: dict[bytes, bytes]
) -> None:
    before = entry(envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=MINE))
    poison = (b"900-0", fields)
    after = entry(envelope("g", lc.JoinSeat(seat=0, name="a"), reply_to=MINE))
    await judged.send(before, poison, after)
    assert [r.outcome.status for r in judged.replies()] == ["accepted", "accepted"]
    [letter] = judged.dead()
    assert letter["entry_id"] == b"900-0" and str(letter["reason"])
    assert len(str(letter["reason"])) <= 300
    assert {before[0], poison[0], after[0]} <= set(judged.sink.acked)
    # Each entry is accounted for once (dead letters as they are read, the rest once judged).
    assert sorted((e, status) for e, status, _ in judged.seen) == sorted(
        [(before[0], "accepted"), (poison[0], "dead"), (after[0], "accepted")]
    )


async def test_the_reclaimers_dead_letter_of_a_deep_entry_does_not_parse_it_again(judged: Judged) -> None:
    await judged.ref.dead_letter(INTAKE, b"7-0", {b"data": DEEP}, "failed 5 deliveries")
    [letter] = judged.dead()
    assert letter["reason"] == "failed 5 deliveries" and letter["field:data"] == DEEP[:DEAD_HEAD_BYTES]
    assert b"7-0" in judged.sink.acked


# ---- answers ---------------------------------------------------------------------------------


async def test_a_reused_command_id_with_another_body_is_refused_naming_the_first_outcome(judged: Judged) -> None:
    tokens = await running_game(judged)
    agg = judged.ref.cache["g"]
    seat = m.to_act(agg)[0]
    first = await judged.call("g", Pass(), seat=seat, token=tokens[seat], command_id="move-1")
    assert first.outcome.status == "accepted"
    version = judged.ref.cache["g"].version
    # Another move under the same id (a client that reuses ids), at the version it now sees.
    legal = agg.rules.legal_actions(judged.ref.cache["g"].game, m.to_act(judged.ref.cache["g"])[0])
    other = m.to_act(judged.ref.cache["g"])[0]
    again = await judged.call("g", legal[0], seat=other, token=tokens[other], command_id="move-1")
    o = again.outcome
    assert (o.status, o.rule, o.command_id) == ("rejected", "GAME-DUPLICATE-ID", "move-1")
    assert "accepted" in (o.detail or "") and f"{first.outcome.judged_at_version} to {first.outcome.to_version}" in (
        o.detail or ""
    )
    assert judged.ref.cache.get("g") is None or judged.ref.cache["g"].version == version
    assert (await judged.store.read("g"))[-1][0] == version  # the new move was not played
    assert judged.seen[-1][1:] == ("rejected", "GAME-DUPLICATE-ID")


async def test_a_byte_identical_redelivery_still_gets_the_first_outcome(judged: Judged) -> None:
    tokens = await running_game(judged)
    seat = m.to_act(judged.ref.cache["g"])[0]
    move = entry(envelope("g", Pass(), seat=seat, token=tokens[seat], reply_to=MINE))
    await judged.send(move)
    await judged.send((b"777-0", move[1]))
    first, again = judged.replies()[-2:]
    assert again.outcome == first.outcome and first.outcome.status == "accepted"


async def test_a_malformed_envelope_without_a_readable_command_id_is_dead_lettered_not_answered(
    judged: Judged,
) -> None:
    data = raw_envelope("g", "lifecycle.StartGame", b"{}", reply_to=MINE, command_id=17)
    await judged.send(entry(data))
    assert judged.replies() == [] and "command_id" in str(judged.dead()[0]["reason"])


# ---- bounded refusal records ------------------------------------------------------------------


async def test_a_refusal_records_a_bounded_digest_and_an_acceptance_its_whole_payload(judged: Judged) -> None:
    tokens = await running_game(judged)
    agg = judged.ref.cache["g"]
    idle = 1 - m.to_act(agg)[0]
    big = {"factory_slot": 1, "network_slot": 1, "pad": "p" * 4000}  # refused: unknown field, large
    data = raw_envelope("g", "sentient.Acquire", json.dumps(big).encode(), seat=idle, token=tokens[idle], reply_to=MINE)
    await judged.send(entry(data))
    [o] = [o for o in await judged.audit() if o.command_id == "cmd-1"]
    assert o.rule == "GAME-MALFORMED" and bytes(o.payload) == b"null"
    assert o.payload_digest is not None and o.payload_digest.size == len(json.dumps(big))
    assert o.payload_digest.sha256 == hashlib.sha256(json.dumps(big).encode()).hexdigest()
    assert len(o.payload_digest.head.encode()) == HEAD_BYTES
    [public] = [p for p in await judged.public() if p["type"] == "lifecycle.CommandRejected"]
    assert public["payload"]["payload_digest"] == msgspec.to_builtins(o.payload_digest)
    assert "payload" not in public["payload"]
    accepted = [o for o in await judged.audit() if o.status == "accepted"]
    assert all(o.payload_digest is None and bytes(o.payload) != b"null" for o in accepted)


async def test_unauthenticated_refusals_stay_off_the_public_stream_and_in_the_audit(judged: Judged) -> None:
    await running_game(judged)
    public_before = await judged.public()
    spam = await judged.call("g", lc.JoinSeat(seat=1, name="spam"))  # the game is running
    forged = await judged.call("g", Pass(), seat=0, token="forged")
    assert (spam.outcome.rule, forged.outcome.rule) == ("GAME-NOT-OPEN", "GAME-AUTH")
    assert await judged.public() == public_before
    audited = {o.command_id: o for o in await judged.audit()}
    assert {spam.outcome.command_id, forged.outcome.command_id} <= set(audited)


async def test_a_refused_short_payload_can_still_be_rejudged_by_the_audit(judged: Judged) -> None:
    tokens = await running_game(judged)
    idle = 1 - m.to_act(judged.ref.cache["g"])[0]
    refused = await judged.call("g", Pass(), seat=idle, token=tokens[idle])
    assert refused.outcome.rule == "SEN-TURN"
    hist = await h.load(judged.store, "g")
    report = h.audit(hist, h.find_outcome(hist, command_id=refused.outcome.command_id), rejudge=True)
    assert report.command["payload"] == {} and report.rejudged is not None and report.rejudged["agrees"]
    assert h.verify(hist).ok


# ---- the reply_to rule -----------------------------------------------------------------------


async def test_a_seat_is_tied_to_the_client_that_joined_it_privately(judged: Judged) -> None:
    await running_game(judged, clients=("alice", "bob"))
    agg = rebuild("g", await judged.store.read("g"))
    assert [s.reply_client for s in agg.seats if s] == ["alice", "bob"]
    joined = [p for p in await judged.public() if p["type"] == "lifecycle.SeatJoined"]
    assert [p["payload"]["reply_client"] for p in joined] == [None, None]


async def test_a_seat_command_naming_another_clients_reply_stream_is_refused_and_not_written(judged: Judged) -> None:
    tokens = await running_game(judged, clients=("alice", "mallory"))
    seat = m.to_act(judged.ref.cache["g"])[0]
    # The seat's owner names a stream of the other client: refused, and that stream gets nothing.
    other = "mallory" if seat == 0 else "alice"
    victim = KEYS.reply(other, "inbox")
    env = envelope("g", Pass(), seat=seat, token=tokens[seat], reply_to=victim)
    await judged.send(entry(env))
    assert judged.replies(victim) == []
    [o] = [o for o in await judged.audit() if o.command_id == env.command_id]
    assert (o.rule, o.authenticated, o.reply_client) == ("GAME-REPLY-TO", True, other)
    assert judged.seen[-1][1:] == ("rejected", "GAME-REPLY-TO")
    await judged.send((b"778-0", entry(env)[1]))  # redelivered: the first outcome, still not written there
    assert judged.replies(victim) == [] and judged.seen[-1][1:] == ("rejected", "GAME-REPLY-TO")
    # Its own client under another <rest> is fine.
    own = "alice" if seat == 0 else "mallory"
    ok = await judged.call("g", Pass(), seat=seat, token=tokens[seat], reply_to=KEYS.reply(own, "new-process"))
    assert ok.outcome.status == "accepted"


@pytest.mark.parametrize(
    "reply_to", ["t:reply:me", "t:reply:me:a{b}", "other:reply:me:r", "t:reply::r", "t:game:{g}:public"]
)
async def test_a_reply_to_outside_the_reply_stream_shape_is_dead_lettered(judged: Judged, reply_to: str) -> None:
    await judged.send(entry(envelope("g", lc.CreateGame(game_type="sentient", num_players=2), reply_to=reply_to)))
    assert str(judged.dead()[0]["reason"]).startswith("reply_to must be a stream t:reply:<client>:<rest>")
    assert reply_to not in judged.sink.streams and await judged.store.read("g") == []


# ---- old exports -----------------------------------------------------------------------------

OLD = GOLDEN_DIR / "refusals-2p.schema2.jsonl"
OLD_PUBLIC = GOLDEN_DIR / "refusals-2p.schema2-public.ndjson"


def test_a_game_exported_before_strict_input_replays_and_verifies_with_bounded_refusals() -> None:
    """Made at 5ec8dc8 (schema 2, export format 1): refusals kept whole payloads, one of them a
    3,000-character JoinSeat name, and unauthenticated refusals were public."""
    header, hist = h.parse_export(OLD.read_bytes().splitlines())
    assert header.format_version == 1 and {e.schema_version for e in hist.events} == {2}
    assert b"x" * 3000 in OLD.read_bytes()
    refused = [o for o in hist.outcomes if o.status == "rejected"]
    assert [o.rule for o in refused] == ["GAME-SEAT-TAKEN", "GAME-AUTH", "SEN-TURN"]
    assert all(bytes(o.payload) == b"null" and o.payload_digest is not None for o in refused)
    assert refused[0].payload_digest is not None and refused[0].payload_digest.size > 3000
    steps, final = h.replay(hist)
    assert final.status == m.OVER and len(steps) == len(hist.events)
    verdict = h.verify(hist)
    assert verdict.ok and verdict.seed_verified, verdict.findings


async def test_a_game_exported_before_strict_input_imports_with_bounded_unauthenticated_refusals_off_public() -> None:
    _, hist = h.parse_export(OLD.read_bytes().splitlines())
    store = MemoryEventStore()
    await h.import_history(store, h.rebase(hist, "imported"))
    public = [json.loads(p) for _, p in await store.read_public("imported")]
    rejections = [p["payload"] for p in public if p["type"] == "lifecycle.CommandRejected"]
    assert [r["rule"] for r in rejections] == ["SEN-TURN"]  # the authenticated one only
    assert all(len(o) < 2_000 for o in await store.audit("imported"))
    again = await h.load(store, "imported")
    assert h.verify(again).ok


def test_an_old_public_command_rejected_is_upcast_to_a_digest() -> None:
    olds = [codec.decode_event(line) for line in OLD_PUBLIC.read_bytes().splitlines() if line]
    rejected = [e for e in olds if e.type == "lifecycle.CommandRejected"]
    assert len(rejected) == 3 and all(e.schema_version == 2 for e in rejected)
    for env in rejected:
        old_payload = msgspec.json.decode(env.payload)["payload"]
        new = codec.decode_event_payload(codec.encode(env))
        assert isinstance(new, lc.CommandRejected)
        assert new.payload_digest.sha256 == hashlib.sha256(msgspec.json.encode(old_payload)).hexdigest()
        assert new == codec.event_payload(env)
    spam = codec.event_payload(rejected[0])
    assert isinstance(spam, lc.CommandRejected) and spam.payload_digest.size > 3000
