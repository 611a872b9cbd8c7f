"""Trimming streams that every reader is done with: what keeps Redis memory bounded by the games in
play rather than by every command ever sent (docs/scaling.md, "Redis memory").

A stream read through consumer groups may lose an entry once every group has acknowledged it: it
is before the group's first pending entry, or, with nothing pending, at or before the last entry
delivered to the group. `trim` removes exactly those (XTRIM MINID, exact), never one a group may
still be delivered, claim or take over. Entries not delivered yet are after every group's
last-delivered id; a pending entry (a batch in flight, a dead owner's) is kept with everything
after it. A stream none of whose `required` groups exists yet is left whole: a group created later
reads from the stream's start (the turn service, the projector) and must find what was written
before it existed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from redis.exceptions import ResponseError

from services.redis_conn import AnyRedis


def _parse(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def trim_point(client: AnyRedis, stream: str, required: Collection[str] = ()) -> str | None:
    """The lowest entry id some consumer group of `stream` may still need (everything before it can
    go), or None when nothing may: no such stream, no group, or a `required` group missing."""
    try:
        groups: list[dict[str, Any]] = await client.xinfo_groups(stream)
    except ResponseError:
        return None  # no such key
    names = {_text(g["name"]) for g in groups}
    if not groups or not set(required) <= names:
        return None
    points: list[tuple[int, int]] = []
    for group in groups:
        if int(group["pending"]):
            summary = await client.xpending(stream, group["name"])
            if summary["min"] is None:  # acknowledged between the two calls
                continue
            points.append(_parse(_text(summary["min"])))
        else:
            ms, seq = _parse(_text(group["last-delivered-id"]))
            points.append((ms, seq + 1))
    if not points:
        return None
    ms, seq = min(points)
    return None if (ms, seq) <= (0, 1) else f"{ms}-{seq}"


async def trim(client: AnyRedis, stream: str, required: Collection[str] = ()) -> int:
    """Remove what every consumer group of `stream` is done with; returns how many entries went."""
    point = await trim_point(client, stream, required)
    if point is None:
        return 0
    return int(await client.xtrim(stream, minid=point, approximate=False))
