"""The OpenAPI document served at /openapi.json: Litestar's, generated from the handlers and
their response structs, plus the request bodies the gateway decodes itself (strictly) and the
WebSocket messages (OpenAPI has no WebSockets: they are under `x-websockets`)."""

from __future__ import annotations

import copy
from typing import Any, Union

import msgspec

from contracts.protocol import GameOver, TurnRequest
from contracts.registry import view_types
from services.gateway import bodies
from services.gateway.problems import ProblemDetail
from services.gateway.responses import CommandResult, EventItem
from services.gateway.ws import AuthMessage, CommandMessage, ProblemMessage

SEAT = "/v1/games/{game_id}/seats/{seat}"
BODIES: dict[str, tuple[str, Any]] = {
    "/v1/games": ("CreateGameBody", bodies.CreateGameBody),
    f"{SEAT}/join": ("JoinBody", bodies.JoinBody),
    f"{SEAT}/commands": ("CommandBody", bodies.CommandBody),
    f"{SEAT}/bot": ("HostBotBody", bodies.HostBotBody),
}
MESSAGES: dict[str, Any] = {
    "AuthMessage": AuthMessage,
    "CommandMessage": CommandMessage,
    "ProblemMessage": ProblemMessage,
    "TurnRequest": TurnRequest,
    "GameOver": GameOver,
    "EventItem": EventItem,
    "CommandResult": CommandResult,
    "ProblemDetail": ProblemDetail,
}
WEBSOCKETS = {
    "/v1/games/{game_id}/events/ws": {
        "summary": "A game's public events, live. Query: `after` (a cursor, exclusive) or `from_version`.",
        "server": ['{"type": "event", "cursor", "event"} (EventItem)', '{"type": "live", "cursor"}', "ProblemMessage"],
        "client": [],
    },
    f"{SEAT}/ws": {
        "summary": "A seat's turn requests (and GameOver), and its commands. Token: `Authorization: Bearer` "
        "or a first AuthMessage. Query: `after` (a cursor); without it, the latest request first.",
        "server": [
            "TurnRequest fields + cursor (type turn)",
            "GameOver fields + cursor (type over)",
            '{"type": "live", "cursor"}',
            '{"type": "outcome", "ref", "result": CommandResult}',
            "ProblemMessage",
        ],
        "client": ["AuthMessage", "CommandMessage (command: a CommandBody)"],
    },
}


# Messages that carry a game's view: served as the JSON the read models hold (a dict to Litestar),
# documented as what it is, one of the games' typed views (schema/views/), told apart by `game`.
# The value: whether `view` may be null (a state before the game is set up has none).
VIEWED = {"PublicState": True, "SeatView": True, "VersionedState": True, "TurnRequest": False}


def _views() -> tuple[dict[str, Any], dict[str, Any]]:
    """The schema of a game's view and the components it refers to."""
    views = tuple(view_types().values())
    (union,), components = msgspec.json.schema_components(
        [Union[views] if len(views) > 1 else views[0]],  # noqa: UP007
        ref_template="#/components/schemas/{name}",
    )
    return union, components


def _strict_names() -> set[str]:
    """Schemas of structs that refuse unknown fields (msgspec's schemas do not say so)."""
    strict: list[type[msgspec.Struct]] = [*bodies.strict_types(), AuthMessage, CommandMessage]
    return {cls.__name__ for cls in strict}


def _components() -> tuple[dict[str, Any], dict[str, Any]]:
    named = [t for _, t in BODIES.values()] + list(MESSAGES.values())
    schemas, components = msgspec.json.schema_components(named, ref_template="#/components/schemas/{name}")
    for name in _strict_names() & set(components):
        components[name]["additionalProperties"] = False
    refs: dict[str, Any] = {}
    for (name, _), schema in zip(BODIES.values(), schemas, strict=False):
        if "$ref" not in schema:
            components[name] = schema  # the CommandBody union: a oneOf with its discriminator
            schema = {"$ref": f"#/components/schemas/{name}"}
        refs[name] = schema
    return refs, components


def patch(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    refs, components = _components()
    schemas = out.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in components.items():
        schemas.setdefault(name, schema)
    view, view_components = _views()
    for name, schema in view_components.items():
        if schemas.setdefault(name, schema) != schema:
            # Components are named by class: two structs of one name would share one schema.
            raise ValueError(f"OpenAPI component {name!r} names two different schemas")
    for name, nullable in VIEWED.items():
        properties = schemas.get(name, {}).get("properties", {})
        if "view" not in properties:
            raise ValueError(f"OpenAPI component {name!r} has no view to type")
        if nullable:
            properties["view"] = {
                "anyOf": [view, {"type": "null"}],
                "description": "The game's view (schema/views/<game>.json), or null.",
            }
        else:
            properties["view"] = {**view, "description": "What this seat sees (schema/views/<game>.json)."}
    for path, (name, _) in BODIES.items():
        operation = out.get("paths", {}).get(path, {}).get("post")
        if operation is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": refs[name]}},
            }
    out["x-websockets"] = WEBSOCKETS
    return out
