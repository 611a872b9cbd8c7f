"""Which native modules (compiled at install, pyproject.toml's ext-modules) this process loaded.

They are optional to pip: an install without a C compiler goes on, and the games fall back to
their Python rules, which play the same moves far slower (the hosted search rolls out
about 20 times slower in Prosperity and 40 in Artifacts, Inc., so at its one-second budget it
searches far less and plays weaker). The
bot runner, which hosts the search, says so at start for the modules its search uses, in its log
and in a gauge, instead of running slower without a word.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from services.metrics import NATIVE

# Module -> what runs in Python without it (the test keeps this in step with pyproject.toml).
NATIVE_MODULES: dict[str, str] = {
    "games.sentient.native": "Sentient's games without a log (offline play, the RL environments) step on the "
    "Python rules, several times slower",
    "games.prosperity.playout": "Prosperity's search rolls out in Python, about 20 times slower",
    "games.artifacts.playout": "Artifacts, Inc.'s search rolls out in Python, about 40 times slower",
}
# What the hosted search uses (services/bots.py): it searches copies of the referee's aggregate,
# which never step on Sentient's core.
SEARCH_MODULES = ("games.prosperity.playout", "games.artifacts.playout")


def missing_native(modules: Iterable[str] = NATIVE_MODULES) -> dict[str, str]:
    """Those of `modules` this process cannot load, each with what runs in its place and why."""
    out = {}
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # a build that does not load (stale, other ABI) is as missing as none
            out[module] = f"{NATIVE_MODULES[module]} ({type(exc).__name__}: {exc})"
    return out


def report_native(log: Any, modules: Iterable[str] = NATIVE_MODULES) -> dict[str, str]:
    """Set the gauge per module and log a warning per missing one; the missing ones."""
    modules = tuple(modules)
    missing = missing_native(modules)
    for module in modules:
        NATIVE.labels(module=module).set(0 if module in missing else 1)
    for module, fallback in missing.items():
        log.warning("native_module_missing", module=module, fallback=fallback, fix="install with a C compiler")
    return missing
