"""JSON encoding of envelopes and per-type payload decoding, with reusable msgspec codecs."""

from __future__ import annotations

from typing import Any, Union

import msgspec

from contracts.envelope import SCHEMA_VERSION, STORED_SCHEMA, CommandEnvelope, EventEnvelope, StoredEvent, event_id
from contracts.registry import event_type, event_types
from contracts.upcast import upcast

_encoder = msgspec.json.Encoder()
_command_envelope = msgspec.json.Decoder(CommandEnvelope)
_stored_event = msgspec.json.Decoder(StoredEvent)
_payload_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


class UnknownType(ValueError):
    """The message names a type this service does not know (a consumer should skip it)."""


def encode(obj: Any) -> bytes:
    return _encoder.encode(obj)


def decode_command(data: bytes) -> CommandEnvelope:
    return _command_envelope.decode(data)


def stored(env: EventEnvelope) -> StoredEvent:
    """`env` as a log or public stream entry holds it (see StoredEvent): only for an entry of
    `env.game_id`'s streams whose id starts with `env.version`."""
    same = env.command_id is not None
    return StoredEvent(
        type=env.type,
        schema_version=msgspec.UNSET if env.schema_version == STORED_SCHEMA else env.schema_version,
        command_id=env.command_id if same else msgspec.UNSET,
        correlation_id=msgspec.UNSET if same and env.correlation_id == env.command_id else env.correlation_id,
        causation_id=msgspec.UNSET if same and env.causation_id == env.command_id else env.causation_id,
        recorded_at_ms=env.recorded_at_ms,
        payload=env.payload,
        event_id=msgspec.UNSET if env.event_id == event_id(env.game_id, env.version) else env.event_id,
    )


def encode_stored(env: EventEnvelope) -> bytes:
    return _encoder.encode(stored(env))


def decode_event(data: bytes, game_id: str | None = None, version: int | None = None) -> EventEnvelope:
    """A whole envelope from an encoded one, or from a stream entry's `data` (a StoredEvent) with
    the `game_id` of its stream and the `version` of its entry id, which such an entry does not
    repeat. Raises msgspec.ValidationError when a stored entry's context is not given."""
    s = _stored_event.decode(data)
    gid = s.game_id if s.game_id is not msgspec.UNSET else game_id
    v = s.version if s.version is not msgspec.UNSET else version
    if gid is None or v is None:
        raise msgspec.ValidationError("a stored event needs the game id and version of its stream entry")
    cid = None if s.command_id is msgspec.UNSET else s.command_id
    return EventEnvelope(
        type=s.type,
        game_id=gid,
        version=v,
        event_id=s.event_id if s.event_id is not msgspec.UNSET else event_id(gid, v),
        schema_version=STORED_SCHEMA if s.schema_version is msgspec.UNSET else s.schema_version,
        command_id=cid,
        correlation_id=s.correlation_id if s.correlation_id is not msgspec.UNSET else cid,
        causation_id=s.causation_id if s.causation_id is not msgspec.UNSET else cid,
        recorded_at_ms=s.recorded_at_ms,
        payload=s.payload,
    )


def fill_in(members: dict[str, Any], game_id: str, version: int) -> dict[str, Any]:
    """A stream entry's JSON object as a whole envelope's, by the rules of `decode_event` and in
    EventEnvelope's field order (so that it encodes as `encode(decode_event(...))` does), then any
    member this version does not know (a newer writer's): what the gateway serves, without a round
    trip through the structs."""
    gid = members.get("game_id", game_id)
    v = members.get("version", version)
    command = members.get("command_id")
    whole: dict[str, Any] = {
        "type": members.get("type"),
        "game_id": gid,
        "version": v,
        "event_id": members.get("event_id", event_id(gid, v)),
        "schema_version": members.get("schema_version", STORED_SCHEMA),
        "command_id": command,
        "correlation_id": members.get("correlation_id", command),
        "causation_id": members.get("causation_id", command),
        "recorded_at_ms": members.get("recorded_at_ms", 0),
        "payload": members.get("payload"),
    }
    for name, value in members.items():
        whole.setdefault(name, value)
    return whole


def entry_version(entry_id: bytes | str) -> int:
    """The version a log or public stream entry id (`<version>-<n>`) stands for."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[0])


_members = msgspec.json.Decoder(dict[str, msgspec.Raw])


def decode_members(data: bytes) -> dict[str, msgspec.Raw]:
    """A JSON object's members, each left undecoded: what the referee reads of an envelope that
    does not match its schema, to find out whom to answer. Raises like any decoder (and
    RecursionError on deeply nested values)."""
    return _members.decode(data)


def decode_command_payload(cls: type[msgspec.Struct], payload: bytes) -> msgspec.Struct:
    """A command's payload as its type (strict: unknown fields and values over their limits
    raise ValidationError)."""
    return _decoder(cls).decode(payload)  # type: ignore[no-any-return]


def _decoder(cls: type[Any]) -> msgspec.json.Decoder[Any]:
    dec = _payload_decoders.get(cls)
    if dec is None:
        dec = _payload_decoders[cls] = msgspec.json.Decoder(cls)
    return dec


def event_payload(env: EventEnvelope | StoredEvent) -> msgspec.Struct:
    cls = event_type(env.type)
    if cls is None:
        raise UnknownType(env.type)
    schema = STORED_SCHEMA if env.schema_version is msgspec.UNSET else env.schema_version
    if schema < SCHEMA_VERSION:
        old = msgspec.json.decode(env.payload)
        return msgspec.convert(upcast(env.type, schema, SCHEMA_VERSION, old), cls)
    return _decoder(cls).decode(env.payload)  # type: ignore[no-any-return]


def _lean(name: str, cls: type[msgspec.Struct]) -> type[msgspec.Struct]:
    return msgspec.defstruct(
        f"Lean{cls.__name__}",
        [("payload", cls), ("schema_version", int, STORED_SCHEMA)],  # absent: a stored event's
        tag_field="type",
        tag=name,
        frozen=True,
    )


# A log entry decoded in one pass, tag `type` choosing the payload's struct: only what folding
# needs is declared, the envelope's other fields are skipped unread. Half the cost of decoding the
# envelope and then its payload (0.43 against 0.84 µs for a Sentient CardAcquired), which is most
# of replaying a log once it is read.
# Built on first use: the game packages register their event types when the catalog is imported.
_lean_event: msgspec.json.Decoder[Any] | None = None


def _lean_decoder() -> msgspec.json.Decoder[Any]:
    global _lean_event
    if _lean_event is None:
        _lean_event = msgspec.json.Decoder(Union[tuple(_lean(n, c) for n, c in event_types().items())])  # noqa: UP007
    return _lean_event


class _Recorded(msgspec.Struct):
    recorded_at_ms: int = 0
    version: int = 0


_recorded = msgspec.json.Decoder(_Recorded)


def event_version(data: bytes) -> int:
    """The version of an encoded event envelope (0 when unreadable)."""
    try:
        return _recorded.decode(data).version
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0


def recorded_at_ms(data: bytes) -> int:
    """When an encoded event envelope was recorded (epoch ms; 0 when unreadable)."""
    try:
        return _recorded.decode(data).recorded_at_ms
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0


def decode_event_payload(data: bytes) -> msgspec.Struct:
    """The payload of an encoded event envelope, upcast if written under an older schema; raises
    UnknownType for a type this service does not know, like `event_payload(decode_event(data))`."""
    try:
        lean = (_lean_event or _lean_decoder()).decode(data)
    except msgspec.ValidationError:
        return event_payload(_stored_event.decode(data))  # the slow path names what is wrong
    if lean.schema_version < SCHEMA_VERSION:
        return event_payload(_stored_event.decode(data))
    payload: msgspec.Struct = lean.payload
    return payload
