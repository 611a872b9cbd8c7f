"""JSON encoding of envelopes and per-type payload decoding, with reusable msgspec codecs."""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.envelope import SCHEMA_VERSION, CommandEnvelope, EventEnvelope
from contracts.registry import event_type
from contracts.upcast import upcast

_encoder = msgspec.json.Encoder()
_command_envelope = msgspec.json.Decoder(CommandEnvelope)
_event_envelope = msgspec.json.Decoder(EventEnvelope)
_payload_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


class UnknownType(ValueError):
    """The message names a type this service does not know (a consumer should skip it)."""


def encode(obj: Any) -> bytes:
    return _encoder.encode(obj)


def decode_command(data: bytes) -> CommandEnvelope:
    return _command_envelope.decode(data)


def decode_event(data: bytes) -> EventEnvelope:
    return _event_envelope.decode(data)


def _decoder(cls: type[Any]) -> msgspec.json.Decoder[Any]:
    dec = _payload_decoders.get(cls)
    if dec is None:
        dec = _payload_decoders[cls] = msgspec.json.Decoder(cls)
    return dec


def event_payload(env: EventEnvelope) -> msgspec.Struct:
    cls = event_type(env.type)
    if cls is None:
        raise UnknownType(env.type)
    if env.schema_version < SCHEMA_VERSION:
        old = msgspec.json.decode(env.payload)
        return msgspec.convert(upcast(env.type, env.schema_version, SCHEMA_VERSION, old), cls)
    return _decoder(cls).decode(env.payload)  # type: ignore[no-any-return]
