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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contracts import registry
from games.base import Rules
from games.bots import Bot, RandomBot
from games.spec import GameSpec, GameSpecError, reads_data_files, same_code

PACKAGES: tuple[str, ...] = ("games.sentient", "games.prosperity", "games.mechanica", "games.artifacts")
EXTRA_PACKAGES_ENV = "DICESTREAM_GAME_PACKAGES"


# Filled below, once every spec is loaded and checked; defined first so that a game package's
# spec may import modules that import these (games.match, games.offline) while it loads.
SPECS: dict[str, GameSpec] = {}
GAMES: dict[str, Rules[Any]] = {}
GREEDY: dict[str, Callable[[], Bot]] = {}
# Per game, every rule-based bot kind it declares: "greedy" first, then GameSpec.bots.
RULE_BOTS: dict[str, dict[str, Callable[[], Bot]]] = {}
# The games of this repository (each has a golden playthrough, tests/golden/).
BUILT_IN: set[str] = set()


# (game, data_version) -> the rules over that earlier data (GameSpec.earlier_data).
EARLIER: dict[tuple[str, str], Rules[Any]] = {}
# (game, data_version) -> the rules over a variant's data file, which this process was told to read
# (`balance --data --keep`, DICESTREAM_VARIANT_DATA): games played on data being tuned.
VARIANTS: dict[tuple[str, str], Rules[Any]] = {}
# The files of those the environment named, for what reads a data file itself (the page's catalog).
VARIANT_FILES: dict[tuple[str, str], Path] = {}
VARIANT_DATA_ENV = "DICESTREAM_VARIANT_DATA"


def bot_makers(game_type: str, rules: Rules[Any] | None = None) -> dict[str, Callable[[int], Bot]]:
    """Every bot kind that plays `game_type` without searching, by name: `random` (seeded) and
    the game's rule-based ones (RULE_BOTS), each built from a seed it may ignore. With `rules` (the
    game over other data), the rule-based ones read that data (GameSpec.bots_for); a game without
    bots over it offers `random` alone."""
    makers: dict[str, Callable[[int], Bot]] = {"random": RandomBot}
    spec = SPECS.get(game_type)
    if rules is not None and spec is not None and rules is not spec.rules:
        kit = spec.bots_for(rules)
        ruled = {} if kit is None else {"greedy": kit.greedy, **kit.bots}
    else:
        ruled = RULE_BOTS.get(game_type, {})
    for kind, maker in ruled.items():
        makers[kind] = _seedless(maker)
    return makers


def _seedless(maker: Callable[[], Bot]) -> Callable[[int], Bot]:
    # Rule-based bots choose the same way every time: the seed a request carries is not theirs.
    return lambda seed: maker()


def rules_for(name: str, data_version: str | None = None) -> Rules[Any] | None:
    """The game's rules; with a data_version, over that data when this build still has it (a game
    created under it), else the current rules (whose GAME-VERSION check then refuses the game)."""
    current = GAMES.get(name)
    if current is None or data_version is None or data_version == current.data_version:
        return current
    own = SPECS[name].rules if name in SPECS else None
    if own is not None and data_version == own.data_version:
        return own  # the build's current data, while creating_over has new games made over other data
    earlier = EARLIER.get((name, data_version)) or VARIANTS.get((name, data_version))
    return current if earlier is None else earlier


def catalog_twin(rules: Rules[Any]) -> Rules[Any] | None:
    """The catalog's rules object (over the current data or an earlier file) that judges exactly as
    `rules` do, e.g. an unpickled copy: the same code (games.spec.same_code), data version and data.
    None for a variant of either, which may carry a catalog version's name with other values. Rules
    with no `data` attribute are compared by data version alone."""
    known = rules_for(rules.name, rules.data_version)
    if known is None or known.data_version != rules.data_version or not same_code(rules, known):
        return None
    if rules is known:
        return known
    mine, theirs = getattr(rules, "data", None), getattr(known, "data", None)
    return known if mine == theirs else None


def admit_variant(rules: Rules[Any]) -> Rules[Any]:
    """Let this process judge and read games played on `rules`' data, a variant of its game's
    (rules_for finds it by its data_version); the catalog's own rules when they are the same data.
    Raises GameSpecError for a version this build, or an earlier admitted variant, names with other
    values: two games under one name on different data could not be told apart."""
    twin = catalog_twin(rules)
    if twin is not None:
        return twin
    spec = SPECS.get(rules.name)
    if spec is None:
        raise GameSpecError(f"{rules.name!r} is not a game this build runs")
    key = (rules.name, rules.data_version)
    if rules.data_version == spec.rules.data_version or key in EARLIER or key in VARIANTS:
        raise GameSpecError(
            f"{rules.name}: data {rules.data_version!r} is already known here with other values; "
            "give the variant a data_version of its own"
        )
    VARIANTS[key] = rules
    return rules


@contextmanager
def creating_over(rules: Rules[Any]) -> Iterator[None]:
    """Inside, a referee of this process creates the games of `rules.name` over `rules`' data (a
    variant, admitted, or an earlier version), as if it were the current data: `balance --data
    --keep` has the referee play a variant's games again. Single-threaded callers only."""
    admitted = admit_variant(rules)
    current = GAMES[rules.name]
    GAMES[rules.name] = admitted
    try:
        yield
    finally:
        GAMES[rules.name] = current


def variant_files(text: str) -> list[tuple[str, Path]]:
    """DICESTREAM_VARIANT_DATA: `game=path` entries separated by commas."""
    out = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise GameSpecError(f"{VARIANT_DATA_ENV}: {item!r} is not GAME=FILE")
        out.append((name.strip(), Path(path.strip())))
    return out


def _admit_variant_files(text: str) -> None:
    for name, path in variant_files(text):
        spec = SPECS.get(name)
        if spec is None or spec.with_data is None:
            raise GameSpecError(f"{VARIANT_DATA_ENV}: {name!r} is not a game that reads other data files")
        try:
            rules = spec.with_data(path)
        except Exception as exc:  # a missing or invalid file: name it, whatever the loader raised
            raise GameSpecError(f"{VARIANT_DATA_ENV}: {path} does not load: {exc}") from exc
        try:
            admitted = admit_variant(rules)
        except GameSpecError as exc:
            raise GameSpecError(f"{VARIANT_DATA_ENV}: {path}: {exc}") from exc
        if admitted is rules:
            if spec.catalog_data is not None and not reads_data_files(spec.catalog_data):
                # The page draws a game from its catalog: it could not draw this variant's games.
                raise GameSpecError(f"{VARIANT_DATA_ENV}: {name}'s catalog_data reads no other data file")
            VARIANT_FILES[(name, rules.data_version)] = path


def earlier_rules(spec: GameSpec) -> dict[str, Rules[Any]]:
    """The rules over each earlier data file `spec` keeps, each checked to hold the version it is
    filed under (a file edited after the fact would judge old games by other values)."""
    out: dict[str, Rules[Any]] = {}
    for version, file in spec.earlier_data.items():
        assert spec.with_data is not None  # GameSpec.check requires it
        try:
            rules = spec.with_data(spec.package_dir / file)
        except Exception as exc:  # a missing or invalid file: name it, whatever the loader raised
            raise GameSpecError(f"{spec.name}: earlier data {file} does not load: {exc}") from exc
        if rules.data_version != version:
            raise GameSpecError(f"{spec.name}: {file} holds {rules.data_version!r}, not {version!r}")
        out[version] = rules
    return out


def spec_for(name: str) -> GameSpec | None:
    return SPECS.get(name)


def load_specs(packages: Iterable[str]) -> dict[str, GameSpec]:
    """Import each package's `spec.SPEC` and check them all; nothing is registered unless every
    one is sound (a half-registered catalog would refuse one game's commands as unknown)."""
    specs: dict[str, GameSpec] = {}
    for package in packages:
        try:
            module = importlib.import_module(f"{package}.spec")
        except ModuleNotFoundError as err:
            if err.name not in (package, f"{package}.spec") and not package.startswith(f"{err.name}."):
                raise  # the spec exists but needs a module that is missing: say which
            raise GameSpecError(f"game package {package!r} has no importable spec module: {err}") from err
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, GameSpec):
            raise GameSpecError(f"{package}.spec must define SPEC, a games.spec.GameSpec")
        spec.check()
        if spec.name in specs:
            raise GameSpecError(f"two game packages declare the game {spec.name!r}")
        specs[spec.name] = spec
    return specs


def _extra_packages() -> list[str]:
    return [p.strip() for p in os.environ.get(EXTRA_PACKAGES_ENV, "").split(",") if p.strip()]


def _install(specs: dict[str, GameSpec]) -> None:
    # Every earlier data file loaded first, at start-up: a bad one stops the import before anything
    # is registered, not when the first old game needs it.
    earlier = {(name, v): r for name, spec in specs.items() for v, r in earlier_rules(spec).items()}
    for name, spec in specs.items():
        commands, events = spec.wire_types()
        registry.register(name, commands, events, spec.view)
    SPECS.update(specs)
    GAMES.update({name: spec.rules for name, spec in specs.items()})
    EARLIER.update(earlier)
    GREEDY.update({name: spec.greedy for name, spec in specs.items()})
    RULE_BOTS.update({name: {"greedy": spec.greedy, **spec.bots} for name, spec in specs.items()})


_install(load_specs([*PACKAGES, *_extra_packages()]))
BUILT_IN.update(list(SPECS)[: len(PACKAGES)])  # loaded first, in PACKAGES' order
_admit_variant_files(os.environ.get(VARIANT_DATA_ENV, ""))
