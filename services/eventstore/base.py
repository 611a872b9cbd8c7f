"""The store's interface, shared by the Redis implementation and the in-memory one for unit tests."""

from __future__ import annotations

from typing import Protocol

import msgspec

OK, DUPLICATE, CONFLICT = "ok", "dup", "conflict"
# Not attempted: an earlier request for the same game in the same call was a duplicate or conflict.
SKIPPED = "skipped"


class AppendRequest(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    expected_version: int
    command_id: str
    outcome: bytes
    events: list[bytes] = []
    # One entry per event: its public projection, or None when withheld from every audience.
    public: list[bytes | None] = []
    public_rejection: bytes | None = None
    # Record the outcome under the command id (duplicates then return it). False for refusals
    # anyone could provoke, which must not pre-empt the real sender's command of the same id.
    remember: bool = True
    # Standalone Redis only (other hash slots): (stream, data) XADDed and the intake entry
    # (stream, group, entry id) acked by the same script once the command is applied, which saves
    # the round trip that would otherwise publish and ack after the append.
    effects: list[tuple[str, bytes]] = []
    ack: tuple[str, str, bytes] | None = None
    # Standalone Redis only: (bus stream, encoded BusNotice) XADDed by the same script, the entry
    # holding the notice and every event of `events` under a field named by its version
    # (contracts/bus.py), before the effects.
    notice: tuple[str, bytes] | None = None


class AppendResult(msgspec.Struct, frozen=True, kw_only=True):
    status: str  # ok | dup | conflict | skipped
    version: int = 0  # ok: the new version; conflict: the actual version
    prior_outcome: bytes | None = None  # dup: the outcome recorded the first time


class EventStore(Protocol):
    async def append_many(self, requests: list[AppendRequest]) -> list[AppendResult]:
        """All sent in one round trip, in order. Consecutive requests for one game form a chain,
        each judged on the state the previous one left: once one of them is a duplicate or a
        conflict, the rest of the chain is SKIPPED (never appended on a state that did not happen)."""
        ...

    async def read(self, game_id: str, after: int = 0) -> list[tuple[int, bytes]]:
        """(version, private event JSON) after `after`, in order."""
        ...

    async def read_many(self, after: dict[str, int]) -> dict[str, list[tuple[int, bytes]]]: ...

    async def read_public(self, game_id: str) -> list[tuple[str, bytes]]:
        """(entry id `<version>-<n>`, public event or refusal JSON), in order."""
        ...

    async def audit(self, game_id: str) -> list[bytes]: ...

    async def outcome(self, game_id: str, command_id: str) -> bytes | None: ...
