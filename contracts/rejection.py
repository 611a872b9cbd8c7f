"""A refused command as every audience may see it: the public `lifecycle.CommandRejected` envelope."""

from __future__ import annotations

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import EventEnvelope
from contracts.outcome import CommandOutcome, digest
from contracts.registry import type_name


def rejection_envelope(o: CommandOutcome) -> EventEnvelope:
    """The public CommandRejected of a refused command, from its outcome alone (so an imported
    history rebuilds the same public stream)."""
    rejection = lc.CommandRejected(
        command_id=o.command_id,
        command_type=o.command_type,
        seat=o.seat,
        rule=o.rule or "",
        text=o.text or "",
        detail=o.detail or "",
        authenticated=o.authenticated,
        expected_version=o.expected_version,
        correlation_id=o.correlation_id,
        payload_digest=o.payload_digest or digest(bytes(o.payload)),
    )
    return EventEnvelope(
        type=type_name(rejection),
        game_id=o.game_id,
        version=o.judged_at_version,
        event_id=f"{o.game_id}:{o.judged_at_version}:rejected:{o.command_id}",
        command_id=o.command_id,
        correlation_id=o.correlation_id or o.command_id,
        causation_id=o.command_id,
        recorded_at_ms=o.received_at_ms,
        payload=msgspec.Raw(codec.encode(rejection)),
    )
