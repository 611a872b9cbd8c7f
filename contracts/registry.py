"""Type names on the wire <-> payload structs, for every command and event the service knows.

The lifecycle's types are registered here; each game's are registered by `games.catalog` from the
game's spec (its one declaration), under `<game name>.<ClassName>`. The first lookup imports the
catalog, so a reader that only imports `contracts` still knows every game of the build.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import msgspec

from contracts import lifecycle

_COMMANDS: dict[str, type[msgspec.Struct]] = {}
_EVENTS: dict[str, type[msgspec.Struct]] = {}
_NAMES: dict[type[msgspec.Struct], str] = {}
_VIEWS: dict[str, type[msgspec.Struct]] = {}
_games_loaded = False


def register(
    namespace: str,
    commands: Sequence[type[msgspec.Struct]],
    events: Sequence[type[msgspec.Struct]],
    view: type[msgspec.Struct] | None = None,
) -> None:
    """Give `commands` and `events` the wire names `<namespace>.<ClassName>`, and `view` the
    game's view; a name taken by another struct is an error (two games would decode each
    other's messages)."""
    if view is not None:
        _VIEWS[namespace] = view
    for table, classes in ((_COMMANDS, commands), (_EVENTS, events)):
        for cls in classes:
            name = f"{namespace}.{cls.__name__}"
            if table.get(name, cls) is not cls:
                raise ValueError(f"wire name {name!r} is already registered for another type")
            table[name] = cls
            _NAMES[cls] = name


register("lifecycle", lifecycle.COMMANDS, lifecycle.EVENTS)


def _load_games() -> None:
    global _games_loaded
    if not _games_loaded:
        _games_loaded = True  # set first: the catalog's own imports look types up
        try:
            importlib.import_module("games.catalog")
        except BaseException:
            _games_loaded = False  # every later lookup fails the same way, none answers half
            raise


def type_name(payload: msgspec.Struct | type[msgspec.Struct]) -> str:
    cls = payload if isinstance(payload, type) else type(payload)
    name = _NAMES.get(cls)
    if name is None:
        _load_games()
        name = _NAMES[cls]
    return name


def command_type(name: str) -> type[msgspec.Struct] | None:
    if not _games_loaded:
        _load_games()
    return _COMMANDS.get(name)


def event_type(name: str) -> type[msgspec.Struct] | None:
    if not _games_loaded:
        _load_games()
    return _EVENTS.get(name)


def command_types() -> dict[str, type[msgspec.Struct]]:
    _load_games()
    return dict(_COMMANDS)


def view_types() -> dict[str, type[msgspec.Struct]]:
    """Game name -> the struct its `view` returns (contracts/views/)."""
    _load_games()
    return dict(_VIEWS)


def event_types() -> dict[str, type[msgspec.Struct]]:
    _load_games()
    return dict(_EVENTS)
