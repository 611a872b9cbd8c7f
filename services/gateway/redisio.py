"""Typed wrappers of the few stream reads the gateway makes (redis-py's own types are unions)."""

from __future__ import annotations

from typing import Any

from services.redis_conn import AnyRedis

Fields = dict[bytes, bytes]
Entries = list[tuple[str, Fields]]


def _entries(raw: Any) -> Entries:
    return [(entry_id.decode(), fields) for entry_id, fields in raw or ()]


async def read_after(redis: AnyRedis, key: str, after: str, count: int, block_ms: int) -> Entries:
    """XREAD BLOCK on one stream: entries after `after` (exclusive)."""
    got: Any = await redis.xread({key: after}, count=count, block=block_ms)
    return [e for _, entries in got or () for e in _entries(entries)]


async def range_after(redis: AnyRedis, key: str, after: str, count: int) -> Entries:
    """XRANGE (after +: up to `count` entries after `after` (exclusive)."""
    raw: Any = await redis.xrange(key, min=f"({after}", max="+", count=count)
    return _entries(raw)


async def newest(redis: AnyRedis, key: str) -> tuple[str, Fields] | None:
    raw: Any = await redis.xrevrange(key, count=1)
    found = _entries(raw)
    return found[0] if found else None
