"""A fixed-size float32 vector from a seat's typed view (the struct of contracts/views/<game>.py).

The layout follows the view struct's declared fields, depth first, in declaration order:

* int, float, bool: one number.
* str: one number, 1 + the string's index in the game's vocabulary (every string of its data
  files and its command encoding, sorted), -1 for a string outside it.
* `T | None`: a presence flag (1/0), then T (zeros when None).
* a nested struct: its fields in order.
* a list: its length, then `cap` items (zeros past the end; longer lists are truncated). The cap
  of a list is `caps[game][path]` (path: field names joined by ".", "[]" per list level), else
  the number of seats for a list of per-seat entries named in PER_SEAT, else DEFAULT_CAP.

`ObservationEncoder(game, max_players).size` is the length; `encode(view)` the vector.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import msgspec
import msgspec.inspect as mi
import numpy as np
import numpy.typing as npt

from games.catalog import SPECS
from rl.actions import codec_for

DEFAULT_CAP = 8
# Per game, per list path: how many items are kept (the longest a game shows in practice).
CAPS: dict[str, dict[str, int]] = {
    "sentient": {"discard": 64, "players[].collected": 16, "players[].investors": 16, "players[].investor_types": 16},
    "prosperity": {
        "deck_backs": 40,
        "drawn": 40,
        "research_board": 40,
        "research_board_layout": 40,
        "players[].spaces": 12,
        "pending.options": 40,
    },
    "mechanica": {"discard": 40, "players[].factory.pieces": 32, "players[].factory.forks": 16},
    "artifacts": {"players[].cards": 24, "market": 16, "market[]": 4},
}
PER_SEAT = {"players", "final_scores", "winners", "to_act", "turn_order", "next_turn_order", "money_left"}


@cache
def vocabulary(game: str) -> dict[str, int]:
    """Every string in the game's data files and command encoding -> 1-based index."""
    spec = SPECS[game]
    words: set[str] = set()

    def collect(x: Any) -> None:
        if isinstance(x, str):
            words.add(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                words.add(str(k))
                collect(v)
        elif isinstance(x, list | tuple):
            for v in x:
                collect(v)

    package = resources.files(type(spec.rules).__module__.rsplit(".", 1)[0])
    # The current data only: shipping an earlier file must not shift every index a policy learnt.
    for name in (f for f in spec.data_files if f not in spec.earlier_data.values()):
        text = package.joinpath(name).read_text(encoding="utf-8")
        collect(tomllib.loads(text) if name.endswith(".toml") else json.loads(text))
    for cmd in codec_for(game).commands:
        collect(msgspec.to_builtins(cmd))
    return {w: i + 1 for i, w in enumerate(sorted(words))}


@dataclass(frozen=True)
class _Node:
    kind: str  # "num" | "str" | "opt" | "struct" | "list" | "skip"
    width: int
    children: tuple[tuple[str, _Node], ...] = ()
    item: _Node | None = None
    cap: int = 0


class ObservationEncoder:
    def __init__(self, game: str, max_players: int) -> None:
        self.game = game
        self.max_players = max_players
        self.vocab = vocabulary(game)
        self._caps = CAPS.get(game, {})
        self._root = self._build(mi.type_info(SPECS[game].view), "")
        self.size = self._root.width

    def _cap(self, path: str) -> int:
        if path in self._caps:
            return self._caps[path]
        return self.max_players if path.split(".")[-1] in PER_SEAT else DEFAULT_CAP

    def _build(self, t: mi.Type, path: str) -> _Node:
        if isinstance(t, mi.IntType | mi.FloatType | mi.BoolType):
            return _Node("num", 1)
        if isinstance(t, mi.StrType | mi.LiteralType | mi.EnumType):
            return _Node("str", 1)
        if isinstance(t, mi.UnionType):
            rest = [x for x in t.types if not isinstance(x, mi.NoneType)]
            if len(rest) != 1:
                return _Node("skip", 0)
            inner = self._build(rest[0], path)
            return _Node("opt", 1 + inner.width, item=inner)
        if isinstance(t, mi.StructType):
            kids = tuple((f.name, self._build(f.type, f"{path}.{f.name}" if path else f.name)) for f in t.fields)
            return _Node("struct", sum(k.width for _, k in kids), children=kids)
        if isinstance(t, mi.ListType | mi.VarTupleType):
            cap = self._cap(path)
            inner = self._build(t.item_type, path + "[]")
            return _Node("list", 1 + cap * inner.width, item=inner, cap=cap)
        return _Node("skip", 0)

    def encode(self, view: msgspec.Struct) -> npt.NDArray[np.float32]:
        out = np.zeros(self.size, dtype=np.float32)
        self._fill(self._root, view, out, 0)
        return out

    def _fill(self, node: _Node, value: Any, out: npt.NDArray[np.float32], at: int) -> None:
        if node.kind == "num":
            out[at] = float(value)
        elif node.kind == "str":
            out[at] = self.vocab.get(str(value), -1)
        elif node.kind == "opt":
            if value is not None:
                out[at] = 1.0
                assert node.item is not None
                self._fill(node.item, value, out, at + 1)
        elif node.kind == "struct":
            for name, child in node.children:
                self._fill(child, getattr(value, name), out, at)
                at += child.width
        elif node.kind == "list":
            assert node.item is not None
            out[at] = len(value)
            at += 1
            for item in list(value)[: node.cap]:
                self._fill(node.item, item, out, at)
                at += node.item.width
