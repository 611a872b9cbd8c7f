"""The shard bus: one notice per accepted command, for projectors and the turn service.

An entry's field `data` holds the `BusNotice`; since issue 20 the entry also holds the command's
log entries, each under a field named by its version (`"7"`: the bytes `ds:game:{id}:log` holds at
`7-0`), so that a reader folds them without reading the log. The bus is private like the log (only
the services' Redis users read it). A notice without them (written before, or a re-publish after a
crash) is a wake-up: its reader folds the log from what it holds.
"""

from __future__ import annotations

import zlib

import msgspec


class BusNotice(msgspec.Struct, frozen=True, kw_only=True):
    """The field `data` of a bus entry: which game moved, from which version to which. When
    `prev_crc` is set, the entry also holds each of the command's log entries under a field named
    by its version. (Notices written before issue 20 had an `events` member with the public
    events, which no reader used; they still decode: unknown members are ignored.)"""

    game_id: str
    # The command's events took versions from_version+1 .. to_version.
    from_version: int
    to_version: int
    # CRC-32 of the log entry at from_version as stored (0 when from_version is 0), present when
    # the entry carries the events: a reader folds them only onto that very entry, so a history
    # rewritten under it (a failover that lost acknowledged writes) is folded again from the log.
    prev_crc: int | None = None


_notice = msgspec.json.Decoder(BusNotice)


def entry_crc(data: bytes) -> int:
    """What `prev_crc` says of a log entry: CRC-32 of its bytes."""
    return zlib.crc32(data)


def notice_fields(notice: bytes, from_version: int, events: list[bytes]) -> dict[str, bytes | str]:
    """A bus entry's fields: the encoded notice, then each event under its version."""
    fields: dict[str, bytes | str] = {"data": notice}
    for i, data in enumerate(events, start=from_version + 1):
        fields[str(i)] = data
    return fields


def read_notice(fields: dict[bytes, bytes]) -> tuple[BusNotice, list[tuple[int, bytes]] | None] | None:
    """A bus entry's notice and, when the entry carries every one of them and says what they
    follow, its events as (version, log entry bytes); None for an entry that is not a notice."""
    try:
        notice = _notice.decode(fields[b"data"])
    except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if notice.prev_crc is None or notice.to_version <= notice.from_version:
        return notice, None
    events = [(v, fields.get(str(v).encode())) for v in range(notice.from_version + 1, notice.to_version + 1)]
    if any(data is None for _, data in events):
        return notice, None
    return notice, [(v, bytes(data)) for v, data in events if data is not None]


def notice_game_id(fields: dict[bytes, bytes]) -> str | None:
    """The game a bus entry is about, or None for an entry that is not a notice."""
    got = read_notice(fields)
    return got[0].game_id if got is not None else None
