"""What the image installs: the wheel the Dockerfile builds (`pip wheel .`) and the sdist, from a
copy of the files git tracks, must hold every file the packages read at run time (Lua scripts,
game data), and the wheel alone must import. A missing data file once passed every other test,
since the tests run from the source tree."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from games.catalog import SPECS
from tests.deploy.manifests import ROOT
from tests.games.compiled import c_compiler

# Tracked files under the packages that are documentation, not read by the code.
NOT_PACKAGE_DATA = {"bench/README.md"}


def tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout (the files git tracks are what gets built)")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (ROOT / p).is_file()]


def package_roots() -> list[str]:
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    return [p.rstrip("*").rstrip(".") for p in find["include"]]


def needed_data(files: list[str]) -> set[str]:
    roots = tuple(f"{r}/" for r in package_roots())
    return {f for f in files if f.startswith(roots) and not f.endswith(".py") and f not in NOT_PACKAGE_DATA}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, Path, Path]:
    files = tracked()
    base = tmp_path_factory.mktemp("build")
    src, out = base / "src", base / "out"
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    # The working tree's pyproject.toml, even if not committed yet.
    shutil.copy2(ROOT / "pyproject.toml", src / "pyproject.toml")
    # As the Dockerfile builds it: pip wheel of the source tree (isolated build, setuptools from
    # the package index), without the dependencies.
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out)]
    run = subprocess.run([*pip, str(src)], capture_output=True, text=True, timeout=300)
    if run.returncode != 0 and "No matching distribution" in run.stderr:
        pytest.skip(f"no build backend reachable: {run.stderr[-300:]}")
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    sdist_run = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta as b; print(b.build_sdist({str(out)!r}))"],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sdist_run.returncode == 0, sdist_run.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    return files, wheel, sdist, base


def test_the_package_data_is_what_the_code_reads() -> None:
    data = needed_data(tracked())
    assert "services/leases.lua" in data and "services/eventstore/append.lua" in data
    assert {f for f in data if f.startswith("games/") and f.endswith(".toml")}, "no game data found"


def test_the_wheel_holds_every_data_file(built: tuple[list[str], Path, Path, Path]) -> None:
    files, wheel, _, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = needed_data(files) - names
    assert not missing, f"{wheel.name} lacks {sorted(missing)} (pyproject [tool.setuptools.package-data])"
    modules = {f for f in files if f.endswith(".py") and f.startswith(tuple(f"{r}/" for r in package_roots()))}
    assert not modules - names, f"{wheel.name} lacks modules {sorted(modules - names)[:5]}"
    # Every data file a game's spec declares, by the path the game reads it from.
    for spec in SPECS.values():
        package = Path(inspect.getfile(type(spec.rules))).parent.relative_to(ROOT)
        for data in spec.data_files:
            assert (package / data).as_posix() in names, f"{wheel.name} lacks {spec.name}'s {data}"


def test_the_sdist_holds_every_data_file_and_builds_the_same_wheel(built: tuple[list[str], Path, Path, Path]) -> None:
    files, wheel, sdist, base = built
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        names = {n.removeprefix(f"{top}/") for n in tar.getnames()}
    missing = needed_data(files) - names
    assert not missing, f"{sdist.name} lacks {sorted(missing)}"
    # pip installing from the sdist builds a wheel from it: it must be as complete.
    again = base / "from-sdist"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(again), str(sdist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (second,) = again.glob("*.whl")
    assert set(zipfile.ZipFile(second).namelist()) == set(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_alone_imports_every_module(built: tuple[list[str], Path, Path, Path]) -> None:
    # Extracted on its own, first on the path (the editable install's finder comes after it), from
    # a directory without the sources: every module imports, so every file read at import (the Lua
    # scripts, the game data) is there.
    _, wheel, _, base = built
    site = base / "site"
    zipfile.ZipFile(wheel).extractall(site)
    modules = sorted(
        str(p.relative_to(site).with_suffix("")).replace("/", ".").removesuffix(".__init__")
        for p in site.rglob("*.py")
        if p.relative_to(site).parts[0] in package_roots()
    )
    code = (
        "import importlib, sys\n"
        f"site = {str(site)!r}\n"
        f"for name in {modules!r}:\n"
        "    mod = importlib.import_module(name)\n"
        "    assert (mod.__file__ or '').startswith(site), (name, mod.__file__)\n"
        "from games.catalog import GAMES\n"
        "assert GAMES, 'no games'\n"
        "print(len(sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=base,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(base)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_wheel_holds_the_native_modules_where_a_compiler_is(built: tuple[list[str], Path, Path, Path]) -> None:
    # The image's build stage has a compiler (Dockerfile); pip skips an optional module it cannot
    # compile without failing, so a wheel built with one must hold every module pyproject names.
    if c_compiler() is None:
        pytest.skip("no C compiler: the native modules are skipped, as they are meant to be")
    _, wheel, _, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    assert modules, "pyproject names no native module"
    for module in modules:
        stem = module["name"].replace(".", "/") + "."
        assert any(n.startswith(stem) and n.endswith(".so") for n in names), f"{wheel.name} lacks {module['name']}"
