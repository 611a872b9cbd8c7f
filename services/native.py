"""Which native modules (compiled at install, pyproject.toml's ext-modules) this process loaded.

They are optional to pip: an install without a C compiler goes on, and the games fall back to
their Python rules, which play the same moves far slower (Prosperity's hosted search rolls out
about 20 times slower, so at its one-second budget it searches far less and plays weaker). The
bot runner, which hosts the search, says so at start, in its log and in a gauge, instead of
running slower without a word.
"""

from __future__ import annotations

import importlib
from typing import Any

from services.metrics import NATIVE

# Module -> what runs in Python without it (the test keeps this in step with pyproject.toml).
NATIVE_MODULES = {
    "games.sentient.native": "Sentient's games without a log (offline play, the RL environments) step on the "
    "Python rules, several times slower",
    "games.prosperity.playout": "Prosperity's search rolls out in Python, about 20 times slower",
}


def missing_native() -> dict[str, str]:
    """The native modules this process cannot load, each with what runs in its place."""
    out = {}
    for module, fallback in NATIVE_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            out[module] = fallback
    return out


def report_native(log: Any) -> dict[str, str]:
    """Set the gauge per module and log a warning per missing one; the missing ones."""
    missing = missing_native()
    for module in NATIVE_MODULES:
        NATIVE.labels(module=module).set(0 if module in missing else 1)
    for module, fallback in missing.items():
        log.warning("native_module_missing", module=module, fallback=fallback, fix="install with a C compiler")
    return missing
