"""The self-contained game file: JSON Lines, a header then every event and command outcome."""

from __future__ import annotations

import msgspec

from contracts.envelope import EventEnvelope
from contracts.outcome import CommandOutcome

FORMAT = "dicestream-game"


class ExportHeader(msgspec.Struct, frozen=True, kw_only=True, tag="header"):
    format: str = FORMAT
    # 2: a refused command's outcome keeps a digest of its payload (CommandOutcome.payload_digest)
    # instead of the payload; format 1 files are read through contracts.upcast.outcome.
    format_version: int = 2
    game_id: str
    game_type: str
    rules_version: str
    data_version: str
    seats: list[str | None]
    events: int
    outcomes: int


class EventLine(msgspec.Struct, frozen=True, kw_only=True, tag="event"):
    event: EventEnvelope


class OutcomeLine(msgspec.Struct, frozen=True, kw_only=True, tag="outcome"):
    outcome: CommandOutcome


ExportLine = ExportHeader | EventLine | OutcomeLine
