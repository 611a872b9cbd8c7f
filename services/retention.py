"""Trimming streams that every reader is done with: what keeps Redis memory bounded by the games in
play rather than by every command ever sent (docs/scaling.md, "Redis memory").

A stream read through consumer groups may lose an entry once every group has acknowledged it: it
is before the group's first pending entry, or, with nothing pending, at or before the last entry
delivered to the group. `trim` removes exactly those (XTRIM MINID, exact), never one a group may
still be delivered, claim or take over. Entries not delivered yet are after every group's
last-delivered id; a pending entry (a batch in flight, a dead owner's) is kept with everything
after it. A stream lacking any of its `required` groups is left whole: a group created later
reads from the stream's start (the turn service, the projector) and must find what was written
before it existed. Each group's lowest needed id only grows, so a view that is stale by the time
XTRIM runs trims less than it could, never more.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import structlog
from redis.exceptions import ResponseError

from services import metrics
from services.redis_conn import AnyRedis, transient

log = structlog.get_logger()

MAX_PART = 2**64 - 1  # both parts of a stream entry id are unsigned 64-bit


def _parse(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _after(entry_id: str) -> tuple[int, int] | None:
    """The id right after `entry_id`, None after the last possible one (a client may XADD that
    id to its own intake: its successor must not be an id Redis refuses)."""
    ms, seq = _parse(entry_id)
    if seq < MAX_PART:
        return ms, seq + 1
    return (ms + 1, 0) if ms < MAX_PART else None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


ALL = "all"  # every group has been delivered the last possible id, and acknowledged it


async def trim_point(client: AnyRedis, stream: str, required: Collection[str] = ()) -> str | None:
    """The lowest entry id some consumer group of `stream` may still need (everything before it can
    go), ALL when none needs any, or None when nothing may go: no such stream, no group, or a
    `required` group missing."""
    try:
        groups: list[dict[str, Any]] = await client.xinfo_groups(stream)
    except ResponseError:
        return None  # no such key
    names = {_text(g["name"]) for g in groups}
    if not groups or not set(required) <= names:
        return None
    points: list[tuple[int, int] | None] = []
    for group in groups:
        summary = await client.xpending(stream, group["name"]) if int(group["pending"]) else None
        if summary is not None and summary["min"] is not None:
            points.append(_parse(_text(summary["min"])))
        else:  # nothing pending (or all of it acknowledged since XINFO): all it was delivered
            points.append(_after(_text(group["last-delivered-id"])))
    needed = [p for p in points if p is not None]  # None: that group needs nothing any more
    if not needed:
        return ALL
    ms, seq = min(needed)
    return None if (ms, seq) <= (0, 1) else f"{ms}-{seq}"


async def trim(client: AnyRedis, stream: str, required: Collection[str] = ()) -> int:
    """Remove what every consumer group of `stream` is done with; returns how many entries went."""
    point = await trim_point(client, stream, required)
    if point is None:
        return 0
    if point == ALL:
        return int(await client.xtrim(stream, maxlen=0, approximate=False))
    return int(await client.xtrim(stream, minid=point, approximate=False))


async def trim_or_log(
    client: AnyRedis, kind: str, stream: str, required: Collection[str] = (), keep: int | None = None
) -> None:
    """A service's retention round on one stream: `trim`, or with `keep` the newest `keep` entries.
    Best effort: a stream that cannot be trimmed (a permission an operator's ACL file lacks, a
    stream of another type) is logged and counted, and never stops the loop or the service; a Redis
    outage is raised (the supervisor waits it out)."""
    try:
        if keep is not None:
            gone = int(await client.xtrim(stream, maxlen=keep, approximate=False))
        else:
            gone = await trim(client, stream, required)
        metrics.TRIMMED.labels(kind).inc(gone)
    except Exception as exc:
        if transient(exc):
            raise
        metrics.TRIM_FAILURES.labels(kind).inc()
        log.warning("trim_failed", stream=stream, error=f"{type(exc).__name__}: {exc}"[:300])
