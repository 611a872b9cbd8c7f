"""Mechanica component data: loaded from data/mechanica.toml, validated, indexed.

The rules read the board, every improvement, blueprint, truck and fork value from here, so
correcting a reconstructed value means editing the TOML file only.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import msgspec

from games.kit import DataError, fail, read_toml
from games.kit import published as kit_published

DATA_FILE = Path(__file__).parent / "data" / "mechanica.toml"

COPIES_PER_KIND = 3
Place = Literal["start", "floor", "dock"]
Effect = Literal["fabricate", "duplicate", "upgrade", "split", "downgrade", "wrap", "assemble", "truck"]
FLOOR_EFFECTS = frozenset({"duplicate", "upgrade", "split", "downgrade", "wrap", "assemble"})
# Directions a belt arrow (or a fork's output arrow) can point, as (row step, column step).
STEPS: dict[str, tuple[int, int]] = {">": (0, 1), "^": (-1, 0), "v": (1, 0)}
FORK_DIRECTIONS: dict[str, str] = {"right": ">", "up": "^", "down": "v"}
DOCK, NO_SQUARE = "T", "#"


class Model(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    value: int


class Kind(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    place: Place
    effect: Effect
    inputs: int = 0
    outputs: int = 0
    makes: str = ""
    gift: str = ""
    money: int = 0
    capacity: int = 0
    recycle: list[str] = msgspec.field(default_factory=list)
    end_value: int = 0


class Blueprint(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    bots: list[str]
    money: int


class Setup(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    money: int
    starting_bot: str
    stack: int
    extras: int
    shop_prices: list[int]
    blueprint_piles: list[int]


class Board(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    rows: list[str]
    start_cols: int
    basic_fabricator: list[int]
    basic_model: str


class Trucks(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    small_capacity: int
    big_capacity: int
    big_cost: int
    huge_capacity: int
    huge_cost: int
    upgrade_cost: int
    # Informational only: how many the box holds. Trucks can always be bought (MEC-R2), so the
    # rules never read these.
    big_in_box: int = 0
    huge_in_box: int = 0


class Forks(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    cost: int
    # Informational only: how many the box holds; forks can always be bought (MEC-R2).
    in_box: int = 0


class _File(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    data_version: str
    setup: Setup
    models: list[Model]
    board: Board
    trucks: Trucks
    forks: Forks
    kinds: list[Kind]
    blueprints: list[Blueprint]


class Geometry(msgspec.Struct, frozen=True, kw_only=True):
    """The factory board as flat per-square tables (index = row * cols + col, 0-based)."""

    nrows: int
    ncols: int
    start_cols: int
    # "start" | "floor" | "dock" | "" (no square)
    area: tuple[str, ...]
    # Printed arrow character per square ("T" on the dock, "#" off the board).
    arrow: tuple[str, ...]
    basic_square: int
    dock_squares: tuple[int, ...]
    start_squares: tuple[int, ...]
    floor_squares: tuple[int, ...]
    # Per arrow character, per square: the square it leads to, or -1 (off the board / no square).
    leads: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)

    def square(self, row: int, col: int) -> int:
        return row * self.ncols + col

    def row_col(self, sq: int) -> tuple[int, int]:
        return divmod(sq, self.ncols)

    def target(self, sq: int, arrow: str) -> int | None:
        """The square an arrow on `sq` leads to, or None off the board / onto no square."""
        nxt = self.leads[arrow][sq]
        return None if nxt < 0 else nxt

    def _target(self, sq: int, arrow: str) -> int | None:
        dr, dc = STEPS[arrow]
        r, c = self.row_col(sq)
        r, c = r + dr, c + dc
        if not (0 <= r < self.nrows and 0 <= c < self.ncols):
            return None
        nxt = self.square(r, c)
        return nxt if self.area[nxt] else None


class MechanicaData(msgspec.Struct, frozen=True, kw_only=True):
    data_version: str
    setup: Setup
    models: tuple[str, ...]
    value: dict[str, int]
    geometry: Geometry
    # What the printed Basic Fabricator makes.
    basic_model: str
    trucks: Trucks
    forks: Forks
    kinds: dict[str, Kind]
    # Improvement tile id ("duplicator-2") -> its kind; ids in file order (the box before shuffling).
    tiles: dict[str, Kind]
    tile_ids: tuple[str, ...]
    blueprints: dict[str, Blueprint]
    blueprint_ids: tuple[str, ...]


def follow(geo: Geometry, arrows: list[str] | tuple[str, ...], sq: int) -> bool:
    """Does the belt from `sq` reach the dock without running in a circle?"""
    seen: set[int] = set()
    while geo.area[sq] != "dock":
        if sq in seen:
            return False
        seen.add(sq)
        nxt = geo.target(sq, arrows[sq])
        if nxt is None:
            return False
        sq = nxt
    return True


def _geometry(path: Path, board: Board) -> Geometry:
    rows = board.rows
    if not rows or len({len(r) for r in rows}) != 1:
        raise fail(path, "board.rows", "must be non-empty strings of equal length")
    nrows, ncols = len(rows), len(rows[0])
    if board.start_cols != 1 or ncols < 3:
        # Commands name start-zone holes by row, so the start zone is exactly the first column.
        raise fail(path, "board.start_cols", "the start zone is the first column (1), then floor, then dock")
    area: list[str] = []
    arrow: list[str] = []
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            where = f"board.rows[{r}][{c}]"
            if ch == NO_SQUARE:
                area.append("")
            elif ch == DOCK:
                if c != ncols - 1:
                    raise fail(path, where, "trucks (T) stand only in the last column")
                area.append("dock")
            elif ch in STEPS:
                if c == ncols - 1:
                    raise fail(path, where, "the last column is the dock: T or #")
                area.append("start" if c < board.start_cols else "floor")
            else:
                raise fail(path, where, f"{ch!r} is not one of > ^ v T #")
            arrow.append(ch)
    geo = Geometry(
        nrows=nrows,
        ncols=ncols,
        start_cols=board.start_cols,
        area=tuple(area),
        arrow=tuple(arrow),
        basic_square=0,
        dock_squares=tuple(i for i, a in enumerate(area) if a == "dock"),
        start_squares=tuple(i for i, a in enumerate(area) if a == "start"),
        floor_squares=tuple(i for i, a in enumerate(area) if a == "floor"),
    )
    leads = {a: tuple(-1 if (t := geo._target(sq, a)) is None else t for sq in range(len(area))) for a in STEPS}
    geo = msgspec.structs.replace(geo, leads=leads)
    for sq, a in enumerate(area):
        if a in ("start", "floor") and not follow(geo, arrow, sq):
            r, c = geo.row_col(sq)
            raise fail(path, f"board.rows[{r}][{c}]", "the belt from here does not reach a truck")
        if a == "start" and arrow[sq] != ">":
            r, c = geo.row_col(sq)
            raise fail(path, f"board.rows[{r}][{c}]", "start-zone belts lead right, onto the floor")
    if len(board.basic_fabricator) != 2:
        raise fail(path, "board.basic_fabricator", "must be [row, col]")
    br, bc = board.basic_fabricator[0] - 1, board.basic_fabricator[1] - 1
    if not (0 <= br < nrows and 0 <= bc < ncols) or area[geo.square(br, bc)] != "start":
        raise fail(path, "board.basic_fabricator", "must be a start-zone square")
    return msgspec.structs.replace(geo, basic_square=geo.square(br, bc))


def _check_kind(path: Path, i: int, k: Kind, models: set[str]) -> None:
    where = f"kinds[{i}] (id {k.id!r})"
    for m in [*k.recycle, *([k.makes] if k.makes else []), *([k.gift] if k.gift else [])]:
        if m not in models:
            raise fail(path, where, f"unknown bot model {m!r}")
    if k.effect == "fabricate":
        if k.place != "start" or not k.makes:
            raise fail(path, where, "a fabricator goes in the start zone and names what it makes")
    elif k.effect == "truck":
        if k.place != "dock" or k.capacity < 1:
            raise fail(path, where, "a truck goes on the dock and holds at least 1 bot")
    else:
        if k.place != "floor" or k.inputs < 1:
            raise fail(path, where, "a floor improvement has at least one input hole")
        if k.effect in ("duplicate", "split") and k.outputs < 2:
            raise fail(path, where + ".outputs", f"{k.effect} needs 2 output holes")
        if k.effect in ("upgrade", "downgrade", "assemble") and k.outputs < 1:
            raise fail(path, where + ".outputs", f"{k.effect} needs an output hole")
        if k.effect == "assemble" and k.inputs < 2:
            raise fail(path, where + ".inputs", "assemble needs 2 input holes")
    if k.end_value < 0 or k.money < 0:
        raise fail(path, where, "money and end values are not negative")


def _check_numbers(path: Path, f: _File) -> None:
    """Sale values and prices are not negative; every truck holds a bot; every pile has a card."""
    for i, m in enumerate(f.models):
        if m.value < 0:
            raise fail(path, f"models[{i}].value (id {m.id!r})", f"a sale value is not negative, not {m.value}")
    t = f.trucks
    costs = {"trucks.big_cost": t.big_cost, "trucks.huge_cost": t.huge_cost, "trucks.upgrade_cost": t.upgrade_cost}
    costs["forks.cost"] = f.forks.cost
    for where, cost in costs.items():
        if cost < 0:
            raise fail(path, where, f"a price is not negative, not {cost}")
    capacities = {"small_capacity": t.small_capacity, "big_capacity": t.big_capacity, "huge_capacity": t.huge_capacity}
    for name, capacity in capacities.items():
        if capacity < 1:
            raise fail(path, f"trucks.{name}", f"a truck holds at least 1 bot, not {capacity}")
    for i, size in enumerate(f.setup.blueprint_piles):
        if size < 1:
            raise fail(path, f"setup.blueprint_piles[{i}]", f"a pile holds at least 1 blueprint, not {size}")


def parse(raw: dict[str, Any], path: Path = DATA_FILE) -> MechanicaData:
    """Validate decoded TOML into `MechanicaData`, raising `DataError` naming file and field."""
    try:
        f = msgspec.convert(raw, _File)
    except msgspec.ValidationError as exc:
        raise DataError(f"{path}: {exc}") from exc
    models = [m.id for m in f.models]
    if len(models) < 2 or len(set(models)) != len(models):
        raise fail(path, "models", "need at least 2 distinct bot models")
    model_set = set(models)
    _check_numbers(path, f)
    geo = _geometry(path, f.board)
    if f.board.basic_model not in model_set or f.setup.starting_bot not in model_set:
        raise fail(path, "board.basic_model / setup.starting_bot", "unknown bot model")
    if len(f.kinds) * COPIES_PER_KIND != f.setup.stack + f.setup.extras:
        raise fail(path, "kinds", f"{len(f.kinds)} kinds x {COPIES_PER_KIND} != stack + extras")
    dupes = sorted(k for k, n in Counter([k.id for k in f.kinds] + [b.id for b in f.blueprints]).items() if n > 1)
    if dupes:
        raise fail(path, "id", f"duplicate ids {dupes}")
    for i, k in enumerate(f.kinds):
        _check_kind(path, i, k, model_set)
    if sum(f.setup.blueprint_piles) != len(f.blueprints) or len(f.setup.blueprint_piles) != 2:
        raise fail(path, "setup.blueprint_piles", "two piles holding every blueprint")
    for i, b in enumerate(f.blueprints):
        if not b.bots or any(m not in model_set for m in b.bots) or b.money <= 0:
            raise fail(path, f"blueprints[{i}] (id {b.id!r})", "needs known bot models and positive money")
    prices = f.setup.shop_prices
    if len(prices) < 2 or any(a <= b for a, b in itertools.pairwise(prices)) or prices[-1] < 0:
        raise fail(path, "setup.shop_prices", "at least 2 spaces, strictly cheaper round the wheel")
    tiles = {f"{k.id}-{n}": k for k in f.kinds for n in range(1, COPIES_PER_KIND + 1)}
    return MechanicaData(
        data_version=f.data_version,
        setup=f.setup,
        models=tuple(models),
        value={m.id: m.value for m in f.models},
        geometry=geo,
        basic_model=f.board.basic_model,
        trucks=f.trucks,
        forks=f.forks,
        kinds={k.id: k for k in f.kinds},
        tiles=tiles,
        tile_ids=tuple(tiles),
        blueprints={b.id: b for b in f.blueprints},
        blueprint_ids=tuple(b.id for b in f.blueprints),
    )


def load(path: Path = DATA_FILE) -> MechanicaData:
    raw, raw_bytes = read_toml(path)
    data = parse(raw, path)
    # The declared version plus a content hash: editing a value without bumping the version still
    # yields a different data_version, so old games are never judged by new data.
    digest = hashlib.sha256(raw_bytes).hexdigest()[:12]
    return msgspec.structs.replace(data, data_version=f"{data.data_version}+{digest}")


def published(path: Path = DATA_FILE) -> dict[str, Any]:
    """The data file as GET /v1/catalog/<game> publishes it (games.kit.published)."""
    return kit_published(path, _File)
