"""The shard bus: one notice per accepted command, for projectors and the turn service."""

from __future__ import annotations

import msgspec


class BusNotice(msgspec.Struct, frozen=True, kw_only=True):
    """A wake-up, not a record: its readers (projector, turn service) fold the game's log from
    what they hold to `to_version`. Until issue 20 it also carried the public events, which no
    reader used and which cost every command their bytes once more in Redis; old notices with an
    `events` member still decode (unknown members are ignored)."""

    game_id: str
    # The command's events took versions from_version+1 .. to_version.
    from_version: int
    to_version: int


_notice = msgspec.json.Decoder(BusNotice)


def notice_game_id(fields: dict[bytes, bytes]) -> str | None:
    """The game a bus entry is about, or None for an entry that is not a notice."""
    try:
        return _notice.decode(fields[b"data"]).game_id
    except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
        return None
