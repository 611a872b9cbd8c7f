"""The built-in games share one package shape: a file name means the same thing in each, and every
game folds with one signature (docs/adding-a-game.md)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import msgspec
import pytest

from games.catalog import PACKAGES
from games.rng import Rng

SHARED_FILES = ("state", "components", "fold", "rules", "view", "scoring", "rule_ids", "determinize", "bots", "spec")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_built_in_game_has_the_shared_files(package: str) -> None:
    folder = Path(importlib.import_module(package).__file__ or "").parent
    missing = [name for name in SHARED_FILES if not (folder / f"{name}.py").is_file()]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_built_in_game_folds_as_evolve_data_state_event(package: str) -> None:
    evolve = importlib.import_module(f"{package}.fold").evolve
    assert list(inspect.signature(evolve).parameters) == ["data", "state", "event"]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_rules_fold_is_the_package_fold(package: str) -> None:
    rules = importlib.import_module(f"{package}.spec").SPEC.rules
    fold = importlib.import_module(f"{package}.fold")
    events = rules.setup(rules.min_players, Rng.for_version("shape", 0))
    by_rules, by_fold = rules.initial_state(rules.min_players), rules.initial_state(rules.min_players)
    for event in events:
        by_rules = rules.evolve(by_rules, event)
        by_fold = fold.evolve(rules.data, by_fold, event)
    assert (
        msgspec.to_builtins(by_fold)
        == msgspec.to_builtins(by_rules)
        != msgspec.to_builtins(rules.initial_state(rules.min_players))
    )
