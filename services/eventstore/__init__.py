"""The event store: one append-only log per game, guarded appends, idempotent command ids."""

from services.eventstore.base import AppendRequest, AppendResult, EventStore
from services.eventstore.keys import Keys, shard_of

__all__ = ["AppendRequest", "AppendResult", "EventStore", "Keys", "shard_of"]
