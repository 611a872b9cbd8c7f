"""Whether a game's compiled module (a Cython .pyx built at install, pyproject's ext-modules) must
be there for its tests: the install builds it wherever a C compiler is found."""

from __future__ import annotations

import importlib
import os
import shutil
import sysconfig
from pathlib import Path

import pytest


def c_compiler() -> str | None:
    """The C compiler an install would build with ($CC, else Python's own CC), if it is here."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(os.environ.get("CC", compiler).split()[0])


def why_not_built(module: str) -> str | None:
    """None when `module` must be there. Missing with a compiler present is a failure, not a skip,
    and so is a build older than its source."""
    try:
        built = importlib.import_module(module)
    except ImportError:
        if c_compiler() is None:
            return f"no C compiler here: the install could not build {module}"
        return None
    so = Path(built.__file__ or "")
    pyx = so.with_name(module.rsplit(".", 1)[1] + ".pyx")
    if so.suffix == ".so" and pyx.exists() and so.stat().st_mtime < pyx.stat().st_mtime:
        pytest.fail(f"{pyx} is newer than its build: reinstall (./dev setup)")
    return None
