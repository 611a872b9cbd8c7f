"""Building raw intake entries and driving the engine in tests."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import msgspec

from contracts import codec
from contracts.envelope import CommandEnvelope
from contracts.registry import type_name

_ids = itertools.count(1)


def envelope(game_id: str, payload: msgspec.Struct, **kw: Any) -> CommandEnvelope:
    kw.setdefault("command_id", uuid.uuid4().hex)
    return CommandEnvelope(type=type_name(payload), game_id=game_id, payload=msgspec.Raw(codec.encode(payload)), **kw)


def entry(env: CommandEnvelope | bytes) -> tuple[bytes, dict[bytes, bytes]]:
    data = env if isinstance(env, bytes) else codec.encode(env)
    return f"{next(_ids)}-0".encode(), {b"data": data}
