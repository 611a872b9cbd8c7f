"""Upcasters: old event payloads converted to today's shape before they are decoded.

A recorded game keeps the schema version it was written with (the envelope's `schema_version`);
reading it applies, in order, every upcaster from that version up to `SCHEMA_VERSION`. An entry
is (event type, the version it upgrades FROM) -> a function on the payload's JSON object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _seat_joined_v1(payload: dict[str, Any]) -> dict[str, Any]:
    # Schema 1 called the seat token's digest `token_sha256`.
    out = dict(payload)
    if "token_sha256" in out:
        out["token_hash"] = out.pop("token_sha256")
    return out


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("lifecycle.SeatJoined", 1): _seat_joined_v1,
}


def upcast(type_name: str, from_version: int, to_version: int, payload: dict[str, Any]) -> dict[str, Any]:
    for version in range(from_version, to_version):
        step = UPCASTERS.get((type_name, version))
        if step is not None:
            payload = step(payload)
    return payload
