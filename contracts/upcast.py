"""Upcasters: old event payloads converted to today's shape before they are decoded.

A recorded game keeps the schema version it was written with (the envelope's `schema_version`);
reading it applies, in order, every upcaster from that version up to `SCHEMA_VERSION`. An entry
is (event type, the version it upgrades FROM) -> a function on the payload's JSON object.

Command outcomes (the audit, export files) carry no schema version; `outcome` brings one written
before schema 3 to today's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from contracts.outcome import NULL, REJECTED, CommandOutcome, digest

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _seat_joined_v1(payload: dict[str, Any]) -> dict[str, Any]:
    # Schema 1 called the seat token's digest `token_sha256`.
    out = dict(payload)
    if "token_sha256" in out:
        out["token_hash"] = out.pop("token_sha256")
    return out


def _command_rejected_v2(payload: dict[str, Any]) -> dict[str, Any]:
    # Schema 2 kept the refused payload whole. Its exact bytes are gone once the event is decoded:
    # the digest is of its compact re-encoding, which is what every client this project ships
    # (and any compact JSON encoder) sent.
    out = dict(payload)
    if "payload_digest" not in out:
        out["payload_digest"] = msgspec.to_builtins(digest(msgspec.json.encode(out.pop("payload", None))))
    return out


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("lifecycle.SeatJoined", 1): _seat_joined_v1,
    ("lifecycle.CommandRejected", 2): _command_rejected_v2,
}


def upcast(type_name: str, from_version: int, to_version: int, payload: dict[str, Any]) -> dict[str, Any]:
    for version in range(from_version, to_version):
        step = UPCASTERS.get((type_name, version))
        if step is not None:
            payload = step(payload)
    return payload


def outcome(o: CommandOutcome) -> CommandOutcome:
    """A refusal recorded before schema 3 kept its payload whole: keep its digest instead (of the
    exact bytes received, which an outcome record still holds)."""
    if o.status != REJECTED or o.payload_digest is not None:
        return o
    return msgspec.structs.replace(o, payload=NULL, payload_digest=digest(bytes(o.payload)))
