"""Envelopes: routing and audit metadata around a payload that is decoded per type."""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from contracts.limits import GameId, Id, ReplyTo, Seat, Token, TypeName

# 2: SeatJoined.token_sha256 became token_hash. 3: CommandRejected keeps a digest of the payload
# (payload_digest) instead of the whole payload (see contracts/upcast.py).
SCHEMA_VERSION = 3


class CommandEnvelope(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A request from a seat (or an admin) to change one game.

    Strict like the payloads: a field this version does not know is refused (GAME-MALFORMED), not
    ignored. A misspelt `expected_version` or `reply_to` would otherwise silently drop the
    staleness check or the answer; a client that wants a newer field honoured needs a referee
    that knows it, and `schema_version` says which one it wrote for. Events, replies and export
    lines stay lenient: they are read back by other versions."""

    type: TypeName
    game_id: GameId
    command_id: Id
    schema_version: int = SCHEMA_VERSION
    seat: Seat | None = None
    # The secret returned by JoinSeat; the log keeps only its SHA-256.
    token: Token | None = None
    # Optimistic check: the game version the sender saw. A stale command is rejected.
    expected_version: int | None = None
    correlation_id: Id | None = None
    causation_id: Id | None = None
    # Stream on which the referee posts the outcome (and, for JoinSeat, the seat token):
    # `<prefix>:reply:<client>:<rest>`, see docs/bots.md.
    reply_to: ReplyTo | None = None
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


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event as an entry of a game's log or public stream holds it: the `EventEnvelope` less
    what the entry's key and id already say, which was half of every entry's bytes.

    Not written: `game_id` (the `{game id}` hash tag of the stream's key), `version` (the first
    part of the entry id, `<version>-<n>`), `event_id` when it is `<game id>:<version>`, and
    `correlation_id` and `causation_id` when they equal `command_id` (absent means "the command
    id"; an explicit null stays null), and `schema_version` when it is STORED_SCHEMA (3).
    Entries written before this form hold every field; a reader
    takes what an entry holds and fills in the rest (`contracts.codec.decode_event`). Exports, the
    HTTP API and the WebSocket always carry whole `EventEnvelope`s."""

    type: str
    # Absent: STORED_SCHEMA, whatever SCHEMA_VERSION is by the time the entry is read.
    schema_version: Annotated[int, msgspec.Meta(description="Absent: 3, whatever today's schema is.")] | (
        msgspec.UnsetType
    ) = msgspec.UNSET
    command_id: str | msgspec.UnsetType | None = msgspec.UNSET  # absent: null
    correlation_id: str | msgspec.UnsetType | None = msgspec.UNSET
    causation_id: str | msgspec.UnsetType | None = msgspec.UNSET
    recorded_at_ms: int = 0
    payload: msgspec.Raw
    game_id: str | msgspec.UnsetType = msgspec.UNSET
    version: int | msgspec.UnsetType = msgspec.UNSET
    event_id: str | msgspec.UnsetType = msgspec.UNSET


# The schema of a stored event that does not say (the schema stored events were introduced in):
# fixed for ever, so that a writer of a later schema, which writes its version, is never misread.
STORED_SCHEMA: Final = 3


def event_id(game_id: str, version: int) -> str:
    """Derived from the version so that re-publishing the same event is recognisably the same."""
    return f"{game_id}:{version}"
