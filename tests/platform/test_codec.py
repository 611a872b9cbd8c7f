"""The one-pass event decoder that replays use gives exactly what the two-step decode gives."""

from __future__ import annotations

import msgspec
import pytest

from contracts import codec
from contracts.envelope import STORED_SCHEMA, EventEnvelope
from services import history as h
from tests.golden.games import HERE as GOLDEN_DIR


def _events(name: str) -> list[EventEnvelope]:
    _, hist = h.parse_export((GOLDEN_DIR / name).read_bytes().splitlines())
    return hist.events


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN_DIR.glob("*.jsonl")))
def test_every_recorded_event_decodes_in_one_pass_as_in_two(name: str) -> None:
    events = _events(name)
    assert events
    for env in events:
        data = codec.encode(env)
        assert codec.decode_event_payload(data) == codec.event_payload(codec.decode_event(data)), env.type


def test_an_event_of_an_older_schema_is_upcast() -> None:
    joined = next(e for e in _events("sentient-3p.schema1.jsonl") if e.type == "lifecycle.SeatJoined")
    assert joined.schema_version == 1 and b"token_sha256" in bytes(joined.payload)
    event = codec.decode_event_payload(codec.encode(joined))
    assert getattr(event, "token_hash", None)


def test_an_unknown_type_or_a_payload_off_its_schema_fails_as_the_two_step_decode_does() -> None:
    env = _events("sentient-3p.jsonl")[0]
    with pytest.raises(codec.UnknownType, match=r"sentient\.FromTheFuture"):
        codec.decode_event_payload(codec.encode(msgspec.structs.replace(env, type="sentient.FromTheFuture")))
    bad = msgspec.structs.replace(env, payload=msgspec.Raw(b'{"game_type": 7}'))
    with pytest.raises(msgspec.ValidationError, match="game_type"):
        codec.decode_event_payload(codec.encode(bad))


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN_DIR.glob("*.jsonl")))
def test_a_stored_event_reads_back_as_the_whole_envelope_it_was(name: str) -> None:
    for env in _events(name):
        data = codec.encode_stored(env)
        assert b'"game_id"' not in data and b'"version"' not in data
        assert codec.decode_event(data, env.game_id, env.version) == env
        whole = msgspec.json.decode(codec.encode(env))
        filled = codec.fill_in(msgspec.json.decode(data), env.game_id, env.version)
        assert filled == whole and list(filled) == list(whole)  # the same bytes once encoded
        assert codec.decode_event_payload(data) == codec.event_payload(env)
        # An entry written before the stored form (every field) reads the same, context or not.
        assert codec.decode_event(codec.encode(env), "another", 999) == env == codec.decode_event(codec.encode(env))


def test_a_stored_event_keeps_what_its_entry_cannot_say() -> None:
    env = _events("sentient-3p.jsonl")[1]
    unusual = msgspec.structs.replace(env, event_id="elsewhere:1", correlation_id=None, causation_id="other")
    data = codec.encode_stored(unusual)
    assert b'"correlation_id":null' in data and b'"causation_id":"other"' in data and b"elsewhere:1" in data
    assert codec.decode_event(data, env.game_id, env.version) == unusual
    usual = codec.encode_stored(env)
    assert b"correlation_id" not in usual and b"causation_id" not in usual and b"event_id" not in usual
    assert len(usual) < len(codec.encode(env)) * 0.7
    with pytest.raises(msgspec.ValidationError, match="game id and version"):
        codec.decode_event(usual)
    assert codec.entry_version(b"12-3") == 12 == codec.entry_version("12-0")
    # An entry without a schema version is of STORED_SCHEMA (3) for ever: a later schema's writer
    # writes its own. One without a command id has none.
    assert b"schema_version" not in usual and STORED_SCHEMA == 3
    later = msgspec.structs.replace(env, schema_version=4)
    assert b'"schema_version":4' in codec.encode_stored(later)
    assert codec.decode_event(codec.encode_stored(later), env.game_id, env.version).schema_version == 4
    bare = codec.decode_event(b'{"type":"lifecycle.GameStarted","payload":{}}', "g", 3)
    assert bare.schema_version == STORED_SCHEMA and bare.command_id is bare.correlation_id is None
    assert bare.event_id == "g:3"
