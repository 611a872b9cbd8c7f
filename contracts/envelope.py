"""Envelopes: routing and audit metadata around a payload that is decoded per type."""

from __future__ import annotations

import msgspec

# 2: SeatJoined.token_sha256 became token_hash (see contracts/upcast.py).
SCHEMA_VERSION = 2


class CommandEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A request from a seat (or an admin) to change one game."""

    type: str
    game_id: str
    command_id: str
    schema_version: int = SCHEMA_VERSION
    seat: int | None = None
    # The secret returned by JoinSeat; the log keeps only its SHA-256.
    token: str | None = None
    # Optimistic check: the game version the sender saw. A stale command is rejected.
    expected_version: int | None = None
    correlation_id: str | None = None
    causation_id: str | None = None
    # Stream key on which the referee posts the outcome (and, for JoinSeat, the seat token).
    reply_to: str | None = None
    sent_at_ms: int | None = None
    payload: msgspec.Raw


class EventEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A fact recorded in a game's log at `version` (1-based, contiguous)."""

    type: str
    game_id: str
    version: int
    event_id: str
    schema_version: int = SCHEMA_VERSION
    command_id: str | None = None
    correlation_id: str | None = None
    causation_id: str | None = None
    recorded_at_ms: int = 0
    payload: msgspec.Raw


def event_id(game_id: str, version: int) -> str:
    """Derived from the version so that re-publishing the same event is recognisably the same."""
    return f"{game_id}:{version}"
