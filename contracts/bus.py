"""The shard bus: one notice per accepted command, for projectors and the turn service."""

from __future__ import annotations

import msgspec


class BusNotice(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    # The command's events took versions from_version+1 .. to_version.
    from_version: int
    to_version: int
    # Their public projections (EventEnvelope JSON), withheld ones left out.
    events: list[msgspec.Raw]
