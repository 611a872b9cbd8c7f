"""What became of a command: kept in the game's audit trail and sent to its `reply_to` stream."""

from __future__ import annotations

import msgspec

ACCEPTED, REJECTED = "accepted", "rejected"


class CommandOutcome(msgspec.Struct, frozen=True, kw_only=True):
    command_id: str
    command_type: str
    game_id: str
    status: str  # "accepted" | "rejected"
    seat: int | None = None
    authenticated: bool = False
    # Sent by the referee's own services (a deadline's ForceDefault).
    admin: bool = False
    correlation_id: str | None = None
    expected_version: int | None = None
    received_at_ms: int = 0
    # The game version the command was judged at, and the last version its events took.
    judged_at_version: int = 0
    to_version: int = 0
    rule: str | None = None
    text: str | None = None
    detail: str | None = None
    # SHA-256 of the message as received: tells a redelivery from another message reusing its id.
    envelope_sha256: str = ""
    # The payload as received (the token is never recorded).
    payload: msgspec.Raw


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """Posted on a command's `reply_to` stream; `token` only for an accepted JoinSeat."""

    outcome: CommandOutcome
    token: str | None = None
