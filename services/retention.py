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

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

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


class Trim(NamedTuple):
    """One stream of a retention round: trimmed of what every group is done with (once all of
    `required` exist), or with `keep` to its newest `keep` entries. `kind` labels the metrics."""

    kind: str
    stream: str
    required: Collection[str] = ()
    keep: int | None = None


def _point(groups: list[dict[str, Any]], pending_min: dict[str, Any], required: Collection[str]) -> str | None:
    """The trim point of a stream from its XINFO GROUPS and, per group with entries pending, the
    lowest pending id (None: acknowledged since): as `trim_point` says."""
    names = {_text(g["name"]) for g in groups}
    if not groups or not set(required) <= names:
        return None
    points: list[tuple[int, int] | None] = []
    for group in groups:
        lowest = pending_min.get(_text(group["name"]))
        if lowest is not None:
            points.append(_parse(_text(lowest)))
        else:  # nothing pending (or all of it acknowledged since XINFO): all it was delivered
            points.append(_after(_text(group["last-delivered-id"])))
    needed = [p for p in points if p is not None]  # None: that group needs nothing any more
    if not needed:
        return ALL
    ms, seq = min(needed)
    return None if (ms, seq) <= (0, 1) else f"{ms}-{seq}"


async def trim_point(client: AnyRedis, stream: str, required: Collection[str] = ()) -> str | None:
    """The lowest entry id some consumer group of `stream` may still need (everything before it can
    go), ALL when none needs any, or None when nothing may go: no such stream, no group, or a
    `required` group missing."""
    try:
        groups: list[dict[str, Any]] = await client.xinfo_groups(stream)
    except ResponseError:
        return None  # no such key
    pending: dict[str, Any] = {}
    for group in groups:
        if int(group["pending"]):
            pending[_text(group["name"])] = (await client.xpending(stream, group["name"]))["min"]
    return _point(groups, pending, required)


async def trim(client: AnyRedis, stream: str, required: Collection[str] = ()) -> int:
    """Remove what every consumer group of `stream` is done with; returns how many entries went."""
    point = await trim_point(client, stream, required)
    if point is None:
        return 0
    if point == ALL:
        return int(await client.xtrim(stream, maxlen=0, approximate=False))
    return int(await client.xtrim(stream, minid=point, approximate=False))


async def trim_all(client: AnyRedis, trims: Sequence[Trim]) -> None:
    """A service's retention round: every stream of `trims` trimmed as `trim` (or capped with
    `keep`), in three round trips whatever their number: every stream's groups, then the lowest
    pending id of each group with entries pending, then the trims. (Per stream and one call after
    another, a referee's round over 64 shards took some 600 round trips.) Best effort: a stream that
    cannot be trimmed (a permission an operator's ACL file lacks, a stream of another type) is
    logged and counted, and never stops the loop or the service; a Redis outage is raised (the
    supervisor waits it out)."""
    measured = [t for t in trims if t.keep is None]
    infos = await _each(client, [("XINFO", "GROUPS", t.stream) for t in measured])
    asks: list[tuple[int, str]] = []
    for i, info in enumerate(infos):
        if not isinstance(info, Exception):
            asks += [(i, _text(g["name"])) for g in info if int(g["pending"])]
    summaries = await _each(client, [("XPENDING", measured[i].stream, group) for i, group in asks])
    pending: list[dict[str, Any]] = [{} for _ in measured]
    failed: dict[int, Exception] = {}
    for (i, group), summary in zip(asks, summaries, strict=True):
        if isinstance(summary, Exception):
            failed[i] = summary
        else:
            pending[i][group] = summary["min"]
    cuts: list[tuple[Trim, tuple[Any, ...]]] = []
    for i, (t, info) in enumerate(zip(measured, infos, strict=True)):
        if i in failed:
            _failed(t, failed[i])
        elif isinstance(info, Exception):
            if "no such key" not in str(info).lower():
                _failed(t, info)
        elif (point := _point(info, pending[i], t.required)) is not None:
            cut = ("MAXLEN", "0") if point == ALL else ("MINID", point)
            cuts.append((t, ("XTRIM", t.stream, *cut)))
    cuts += [(t, ("XTRIM", t.stream, "MAXLEN", t.keep)) for t in trims if t.keep is not None]
    for (t, _), gone in zip(cuts, await _each(client, [cmd for _, cmd in cuts]), strict=True):
        if isinstance(gone, Exception):
            _failed(t, gone)
        else:
            metrics.TRIMMED.labels(t.kind).inc(int(gone))


async def _each(client: AnyRedis, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Run the commands in one pipeline; each reply or its error in its place. XINFO GROUPS and
    XPENDING replies are parsed as their own methods parse them."""
    if not commands:
        return []
    pipe = client.pipeline(transaction=False)
    for cmd in commands:
        if cmd[0] == "XINFO":
            pipe.xinfo_groups(cmd[2])
        elif cmd[0] == "XPENDING":
            pipe.xpending(cmd[1], cmd[2])
        else:
            pipe.execute_command(*cmd)
    replies = list(await pipe.execute(raise_on_error=False))
    for reply in replies:
        if isinstance(reply, Exception) and transient(reply):
            raise reply
    return replies


def _failed(t: Trim, exc: Exception) -> None:
    metrics.TRIM_FAILURES.labels(t.kind).inc()
    log.warning("trim_failed", stream=t.stream, error=f"{type(exc).__name__}: {exc}"[:300])


async def trim_or_log(
    client: AnyRedis, kind: str, stream: str, required: Collection[str] = (), keep: int | None = None
) -> None:
    """One stream's retention round (`trim_all` of one)."""
    await trim_all(client, [Trim(kind, stream, required, keep)])
