"""Wire types of dicestream: versioned msgspec structs, JSON on the wire.

A message is an envelope (`CommandEnvelope` or `EventEnvelope`) whose `type` names the payload
struct and whose `payload` stays raw until a consumer that knows the type decodes it; a consumer
that meets an unknown type skips it.
"""

from contracts.envelope import SCHEMA_VERSION, CommandEnvelope, EventEnvelope

__all__ = ["SCHEMA_VERSION", "CommandEnvelope", "EventEnvelope"]
