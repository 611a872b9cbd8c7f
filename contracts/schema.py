"""JSON Schema for every wire type, generated from the msgspec structs (the source of truth)."""

from __future__ import annotations

from typing import Any

import msgspec

from contracts.bus import BusNotice
from contracts.envelope import SCHEMA_VERSION, CommandEnvelope, EventEnvelope
from contracts.export import ExportLine
from contracts.limits import entry_limits
from contracts.outcome import Reply
from contracts.protocol import HostBot, HostReply, SeatMessage
from contracts.registry import command_types, event_types


def _schema(tp: Any, title: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title}
    doc.update(msgspec.json.schema(tp))
    return doc


def documents() -> dict[str, dict[str, Any]]:
    """Relative file name -> schema document."""
    docs: dict[str, dict[str, Any]] = {
        "envelope/command.json": _schema(CommandEnvelope, "CommandEnvelope"),
        "envelope/event.json": _schema(EventEnvelope, "EventEnvelope"),
        "protocol/reply.json": _schema(Reply, "Reply"),
        "protocol/seat-message.json": _schema(SeatMessage, "SeatMessage"),
        "protocol/host-bot.json": _schema(HostBot, "HostBot"),
        "protocol/host-reply.json": _schema(HostReply, "HostReply"),
        "export/line.json": _schema(ExportLine, "ExportLine"),
        "protocol/bus-notice.json": _schema(BusNotice, "BusNotice"),
    }
    for name, cls in sorted(command_types().items()):
        docs[f"commands/{name}.json"] = _schema(cls, name)
    for name, cls in sorted(event_types().items()):
        docs[f"events/{name}.json"] = _schema(cls, name)
    docs["index.json"] = {
        "schema_version": SCHEMA_VERSION,
        "commands": sorted(command_types()),
        "events": sorted(event_types()),
        # Intake entry limits (bytes, fields) that the envelope's schema cannot express; past
        # them an entry is dead-lettered unread (docs/bots.md).
        "limits": entry_limits(),
    }
    return docs


def render(doc: dict[str, Any]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
