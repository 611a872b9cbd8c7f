"""Building raw intake entries and driving the engine in tests, and Redis replies narrowed to what
the tests' clients read (bytes: none of them decodes responses)."""

from __future__ import annotations

import itertools
import uuid
from typing import TYPE_CHECKING, Any, TypeGuard

import msgspec
import redis

from contracts import codec
from contracts.envelope import CommandEnvelope
from contracts.registry import type_name
from services.redis_conn import AnyRedis, Entries, StreamReads

if TYPE_CHECKING:
    # Annotations only: older redis-py releases, which pyproject allows, lack these names.
    from redis.typing import StreamRangeResponse, XReadGroupResponse, XReadResponse

_ids = itertools.count(1)


def envelope(game_id: str, payload: msgspec.Struct, **kw: Any) -> CommandEnvelope:
    kw.setdefault("command_id", uuid.uuid4().hex)
    return CommandEnvelope(type=type_name(payload), game_id=game_id, payload=msgspec.Raw(codec.encode(payload)), **kw)


def entry(env: CommandEnvelope | bytes) -> tuple[bytes, dict[bytes, bytes]]:
    data = env if isinstance(env, bytes) else codec.encode(env)
    return f"{next(_ids)}-0".encode(), {b"data": data}


def _binary(fields: dict[bytes | str, bytes | str]) -> TypeGuard[dict[bytes, bytes]]:
    return all(isinstance(k, bytes) and isinstance(v, bytes) for k, v in fields.items())


def fields_of(raw: dict[bytes | str, bytes | str] | None) -> dict[bytes, bytes]:
    """A hash (HGETALL) or a stream entry's fields."""
    assert raw is not None and _binary(raw)
    return raw


def entries_of(raw: StreamRangeResponse | None) -> Entries:
    """An XRANGE or XREVRANGE reply, or the entries of one stream that XREAD(GROUP) returned."""
    assert raw is not None
    got: Entries = []
    for entry_id, fields in raw:
        assert isinstance(entry_id, bytes)
        got.append((entry_id, fields_of(fields)))
    return got


def reads_of(raw: XReadResponse | XReadGroupResponse) -> StreamReads:
    """An XREAD or XREADGROUP reply: RESP2's [stream, entries] per stream ([] when nothing came)."""
    assert isinstance(raw, list)
    got: StreamReads = []
    for stream, entries in raw:
        assert isinstance(stream, bytes)
        got.append((stream, entries_of(entries)))
    return got


async def memory(client: AnyRedis, key: str) -> int:
    """MEMORY USAGE of `key`, which exists, every element counted (SAMPLES 0)."""
    used = await client.memory_usage(key, samples=0)
    assert used is not None, key
    return used


def command(client: redis.Redis, *args: object) -> Any:
    """A raw command on a synchronous client (CLUSTER subcommands on a node, READONLY, ASKING: redis-py
    has no typed method for them), its reply as redis-py parses it."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def summary_version(state: dict[str, object] | None) -> object:
    """The version in a projected game state's summary (None while the game is not projected)."""
    if state is None:
        return None
    summary = state["summary"]
    assert isinstance(summary, dict)
    return summary["version"]
