"""JSON Schema for every wire type, generated from the msgspec structs (the source of truth)."""

from __future__ import annotations

from typing import Any, Union, get_type_hints

import msgspec

from contracts.bus import BusNotice
from contracts.envelope import SCHEMA_VERSION, CommandEnvelope, EventEnvelope, StoredEvent
from contracts.export import ExportLine
from contracts.limits import entry_limits
from contracts.outcome import Reply
from contracts.protocol import HostBot, HostReply, SeatMessage, TurnRequest
from contracts.registry import command_types, event_types, view_types


def _schema(tp: Any, title: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title}
    doc.update(msgspec.json.schema(tp))
    return doc


def _action_of(name: str, command: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """An `Action` whose `type` is `name` and whose payload is that command: the same JSON."""
    return msgspec.defstruct(
        f"Action_{name.replace('.', '_')}", [("payload", command)], tag_field="type", tag=name, frozen=True
    )


def turn_request_of(game: str, view: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """`TurnRequest` of one game: `view` typed as its view and each legal action as one of its
    commands (a union tagged by `type`). The same fields, defaults and bytes as `TurnRequest`."""
    actions = tuple(_action_of(n, c) for n, c in sorted(command_types().items()) if n.startswith(f"{game}."))
    typed: dict[str, Any] = {"view": view, "legal_actions": list[Union[actions]]}  # type: ignore[valid-type]  # noqa: UP007
    hints = get_type_hints(TurnRequest)
    names = TurnRequest.__struct_fields__
    n_defaults = len(TurnRequest.__struct_defaults__)
    defaults = dict(zip(names[len(names) - n_defaults :], TurnRequest.__struct_defaults__, strict=True))
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [
        (name, typed.get(name, hints[name]), defaults[name]) if name in defaults
        else (name, typed.get(name, hints[name]))
        for name in names
    ]  # fmt: skip
    return msgspec.defstruct("TurnRequest", fields, kw_only=True, frozen=True, tag="turn")


def documents() -> dict[str, dict[str, Any]]:
    """Relative file name -> schema document."""
    docs: dict[str, dict[str, Any]] = {
        "envelope/command.json": _schema(CommandEnvelope, "CommandEnvelope"),
        "envelope/event.json": _schema(EventEnvelope, "EventEnvelope"),
        "envelope/stored-event.json": _schema(StoredEvent, "StoredEvent"),
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
    for game, view in sorted(view_types().items()):
        docs[f"views/{game}.json"] = _schema(view, view.__name__)
        docs[f"protocol/turn-request.{game}.json"] = _schema(turn_request_of(game, view), f"TurnRequest ({game})")
    docs["index.json"] = {
        "schema_version": SCHEMA_VERSION,
        "commands": sorted(command_types()),
        "events": sorted(event_types()),
        "views": sorted(view_types()),
        # Intake entry limits (bytes, fields) that the envelope's schema cannot express; past
        # them an entry is dead-lettered unread (docs/bots.md).
        "limits": entry_limits(),
    }
    return docs


def render(doc: dict[str, Any]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
