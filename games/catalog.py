"""The games this build can referee: the one registration point (docs/adding-a-game.md).

A game is a package with a `spec.py` declaring `SPEC` (`games.spec.GameSpec`). `PACKAGES` lists
this build's games; `DICESTREAM_GAME_PACKAGES` (comma-separated importable packages) adds more
without editing this file. Everything per game derives from the specs: the rules by name, the
reference bots, the wire names (`contracts.registry`), the schema, the every-game tests. A spec
that contradicts itself stops the import (start-up) with `GameSpecError` naming what is wrong.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from typing import Any

from contracts import registry
from games.base import Rules
from games.bots import Bot
from games.spec import GameSpec, GameSpecError

PACKAGES: tuple[str, ...] = ("games.sentient", "games.prosperity", "games.mechanica", "games.artifacts")
EXTRA_PACKAGES_ENV = "DICESTREAM_GAME_PACKAGES"


def load_specs(packages: Iterable[str]) -> dict[str, GameSpec]:
    """Import each package's `spec.SPEC`, check it and register its wire types."""
    specs: dict[str, GameSpec] = {}
    for package in packages:
        try:
            module = importlib.import_module(f"{package}.spec")
        except ModuleNotFoundError as err:
            raise GameSpecError(f"game package {package!r} has no importable spec module: {err}") from err
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, GameSpec):
            raise GameSpecError(f"{package}.spec must define SPEC, a games.spec.GameSpec")
        spec.check()
        if spec.name in specs:
            raise GameSpecError(f"two game packages declare the game {spec.name!r}")
        commands, events = spec.wire_types()
        registry.register(spec.name, commands, events, spec.view)
        specs[spec.name] = spec
    return specs


def _extra_packages() -> list[str]:
    return [p.strip() for p in os.environ.get(EXTRA_PACKAGES_ENV, "").split(",") if p.strip()]


SPECS: dict[str, GameSpec] = load_specs([*PACKAGES, *_extra_packages()])
GAMES: dict[str, Rules[Any]] = {name: spec.rules for name, spec in SPECS.items()}
GREEDY: dict[str, Callable[[], Bot]] = {name: spec.greedy for name, spec in SPECS.items()}


def rules_for(name: str) -> Rules[Any] | None:
    return GAMES.get(name)


def spec_for(name: str) -> GameSpec | None:
    return SPECS.get(name)
