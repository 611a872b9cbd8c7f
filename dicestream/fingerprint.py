"""What code played a balance run, as a short hash, so that parts played by different builds are
not summed as one run (`dicestream balance --pool`).

It covers what can change a game's outcome: the game's own package (rules, data, bots, a native
core's source and its compiled module), the shared engine (the modules at the top of `games/`: the
match, offline play, search, balance), the contracts the game's commands, events and views are made
of, a variant data file measured instead of the game's own, and the Python version (which the
syntax trees below depend on). Python is hashed as its syntax tree without docstrings, and TOML as
its values, so comments, docstrings and layout change nothing; any other edit, even one that
changes no figure, gives another hash.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import contracts
import games
from games.catalog import GAMES, SPECS


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0].value if body and isinstance(body[0], ast.Expr) else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def normalized(path: Path) -> bytes:
    """The file as hashed: Python's syntax tree without docstrings, TOML's values, else its bytes."""
    raw = path.read_bytes()
    if path.suffix == ".py":
        return ast.dump(_without_docstrings(ast.parse(raw, str(path)))).encode()
    if path.suffix == ".toml":
        return json.dumps(tomllib.loads(raw.decode()), sort_keys=True).encode()
    return raw


_OWN = (".py", ".pyx", ".pxd", ".toml", ".so", ".pyd")


def _files(game: str) -> Iterator[tuple[str, Path]]:
    engine = Path(games.__file__).parent
    own = SPECS[game].package_dir
    wire = Path(contracts.__file__).parent
    others = set(GAMES) - {game}
    for path in sorted(engine.glob("*.py")):
        yield f"games/{path.name}", path
    if (own / "__init__.py").is_file():
        for path in sorted(own.rglob("*")):
            if path.suffix in _OWN and "__pycache__" not in path.parts:
                yield f"{game}/{path.relative_to(own).as_posix()}", path
    else:  # a game whose rules live in a module of their own, not in a package
        rules_file = Path(inspect.getfile(type(SPECS[game].rules)))
        yield f"{game}/{rules_file.name}", rules_file
    for folder, prefix in ((wire, "contracts"), (wire / "views", "contracts/views")):
        for path in sorted(folder.glob("*.py")):
            if path.stem not in others:
                yield f"{prefix}/{path.name}", path


def code_fingerprint(game: str, data: Path | None = None) -> str:
    """16 hex digits naming the code that plays `game` in this build (with `data`: over that data
    file instead of the game's own)."""
    digest = hashlib.sha256(f"python {sys.version_info[0]}.{sys.version_info[1]}\0".encode())
    files = list(_files(game))
    if data is not None:
        files.append(("--data", data))
    for name, path in files:
        body = normalized(path)
        digest.update(f"{name}\0{len(body)}\0".encode())
        digest.update(body)
    return digest.hexdigest()[:16]
