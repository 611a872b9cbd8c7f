"""Type names on the wire <-> payload structs, for every command and event the service knows."""

from __future__ import annotations

from types import ModuleType

import msgspec

from contracts import artifacts, lifecycle, mechanica, prosperity, sentient

# One entry per contract module; the module's last name is the namespace of its type names.
MODULES: tuple[ModuleType, ...] = (lifecycle, sentient, prosperity, mechanica, artifacts)

_COMMANDS: dict[str, type[msgspec.Struct]] = {}
_EVENTS: dict[str, type[msgspec.Struct]] = {}
_NAMES: dict[type[msgspec.Struct], str] = {}

for _module in MODULES:
    _namespace = _module.__name__.rsplit(".", 1)[-1]
    for _cls in _module.COMMANDS:
        _COMMANDS[f"{_namespace}.{_cls.__name__}"] = _cls
        _NAMES[_cls] = f"{_namespace}.{_cls.__name__}"
    for _cls in _module.EVENTS:
        _EVENTS[f"{_namespace}.{_cls.__name__}"] = _cls
        _NAMES[_cls] = f"{_namespace}.{_cls.__name__}"


def type_name(payload: msgspec.Struct | type[msgspec.Struct]) -> str:
    cls = payload if isinstance(payload, type) else type(payload)
    return _NAMES[cls]


def command_type(name: str) -> type[msgspec.Struct] | None:
    return _COMMANDS.get(name)


def event_type(name: str) -> type[msgspec.Struct] | None:
    return _EVENTS.get(name)


def command_types() -> dict[str, type[msgspec.Struct]]:
    return dict(_COMMANDS)


def event_types() -> dict[str, type[msgspec.Struct]]:
    return dict(_EVENTS)
