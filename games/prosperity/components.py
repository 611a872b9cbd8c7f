"""Prosperity component data: loaded from data/prosperity.toml, validated, indexed.

The rules read every tile, board and track value from here, so correcting a reconstructed face
means editing the TOML file only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

import msgspec

from games.kit import DataError, fail, read_toml
from games.kit import published as kit_published

DATA_FILE = Path(__file__).parent / "data" / "prosperity.toml"

Side = Literal["energy", "ecology"]
TileType = Literal["power", "supplies", "transport", "infrastructure", "special"]
Symbol = Literal["energy", "ecology", "capital", "research", "prosperity"]
Colour = Literal["pink", "yellow", "green", "blue"]

SIDES: tuple[str, ...] = ("energy", "ecology")
SYMBOLS: tuple[str, ...] = ("energy", "ecology", "capital", "research", "prosperity")
# The rulebook's placement rule: a tile goes on a space of its background colour.
COLOUR_OF: dict[str, str] = {
    "power": "pink",
    "supplies": "yellow",
    "transport": "green",
    "infrastructure": "blue",
}
DECADES: tuple[int, ...] = (1970, 1980, 1990, 2000, 2010, 2020, 2030)
LAST_DECADE = 2030
START_LEVELS = range(1, 7)
START_TILES_PER_LEVEL = 2
TILE_COUNT = 60
# Set-up: discs put on every pollution track (a board must hold them on round spaces).
START_DISCS = 8


class Face(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Symbols a visible tile (bought or printed) shows on an individual board."""

    name: str
    energy: int = 0
    ecology: int = 0
    capital: int = 0
    research: int = 0
    prosperity: int = 0


class Tile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    side: Side
    level: int
    type: TileType
    # 0: an undated start tile; else the decade printed on its back.
    decade: int = 0
    # The highlighted (white-bordered) symbol: what every player counts when it is drawn.
    count: Symbol | None = None
    energy: int = 0
    ecology: int = 0
    capital: int = 0
    research: int = 0
    prosperity: int = 0
    # Special tiles only: prosperity points gained, or pollution discs removed.
    points: int = 0
    clean: int = 0

    @property
    def special(self) -> bool:
        return self.type == "special"


class Space(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    colour: Colour
    # A green space that must hold a transport tile before this (blue) space can take a tile.
    needs: str = ""
    printed: Face | None = None


class Board(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    name: str
    pollution_spaces: int
    pollution_prosperity: list[int]
    spaces: list[Space]


class ResearchTrack(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    start: int
    top: int


class _File(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    data_version: str
    research: ResearchTrack
    boards: list[Board]
    tiles: list[Tile]


class ProsperityData(msgspec.Struct, frozen=True, kw_only=True):
    data_version: str
    research_start: int
    research_top: int
    tiles: dict[str, Tile]
    boards: dict[str, Board]
    board_ids: tuple[str, ...]
    # Undated tiles in file order: the research board at set-up.
    start_tiles: tuple[str, ...]
    # Decade tile ids per decade, oldest first, file order inside a decade.
    decade_tiles: tuple[tuple[int, tuple[str, ...]], ...]
    # Per board: space id -> index in `spaces`.
    space_index: dict[str, dict[str, int]]
    # Per decade: (tile id, highlighted symbol) of its tiles that highlight one; and per symbol, the
    # tiles of the whole deck highlighting it. What the view's counts still to come start from.
    counting_tiles: dict[int, tuple[tuple[str, Symbol], ...]]
    count_totals: dict[str, int]


def _check_tile(path: Path, index: int, t: Tile, top: int) -> None:
    where = f"tiles[{index}] (id {t.id!r})"
    if not 1 <= t.level <= top:
        raise fail(path, where + ".level", f"must be within 1..{top} (the research track)")
    if t.decade and t.decade not in DECADES:
        raise fail(path, where + ".decade", f"must be one of {list(DECADES)} or absent")
    if t.decade and t.count is None:
        raise fail(path, where + ".count", "a decade tile highlights a symbol")
    if not t.decade and t.count is not None:
        raise fail(path, where + ".count", "an undated start tile is never drawn, so it highlights nothing")
    if min(t.capital, t.research, t.prosperity, t.points, t.clean) < 0:
        raise fail(path, where, "capital, research, prosperity, points and clean cannot be negative")
    shown = {"energy": t.energy, "ecology": t.ecology, "capital": t.capital, "research": t.research,
             "prosperity": t.prosperity}  # fmt: skip
    if t.special:
        if any(shown.values()):
            raise fail(path, where, "a special tile is never placed, so it shows no symbols")
        if (t.points > 0) == (t.clean > 0):
            raise fail(path, where + ".points/clean", "a special tile has exactly one effect")
        effect_symbol = "prosperity" if t.points > 0 else "ecology"
        if t.count is not None and t.count != effect_symbol:
            raise fail(path, where + ".count", f"a {effect_symbol} special highlights {effect_symbol}")
    else:
        if t.points or t.clean:
            raise fail(path, where + ".points/clean", "only special tiles have a one-shot effect")
        if t.count is not None and not shown[t.count]:
            raise fail(path, where + ".count", f"the tile must show the {t.count} symbol it highlights")


def _check_tiles(path: Path, tiles: list[Tile], top: int) -> None:
    if len(tiles) != TILE_COUNT:
        raise fail(path, "tiles", f"expected {TILE_COUNT} tiles, found {len(tiles)}")
    for i, t in enumerate(tiles):
        _check_tile(path, i, t, top)
    start: Counter[tuple[str, int]] = Counter((t.side, t.level) for t in tiles if not t.decade)
    for side in SIDES:
        for level in START_LEVELS:
            if start[(side, level)] != START_TILES_PER_LEVEL:
                raise fail(
                    path,
                    "tiles",
                    f"expected {START_TILES_PER_LEVEL} undated {side} tiles at level {level}, "
                    f"found {start[(side, level)]}",
                )
    if sum(start.values()) != START_TILES_PER_LEVEL * len(SIDES) * len(START_LEVELS):
        raise fail(path, "tiles", "undated tiles must be at levels 1-6 only")
    for decade in DECADES:
        counts = Counter(t.count for t in tiles if t.decade == decade)
        want = Counter({s: 1 for s in SYMBOLS})
        if decade == LAST_DECADE:
            want["prosperity"] += 1
        if counts != want:
            raise fail(
                path,
                "tiles",
                f"decade {decade} must highlight each symbol once"
                + (" and prosperity a second time" if decade == LAST_DECADE else "")
                + f"; found {dict(counts)}",
            )


def _check_board(path: Path, index: int, b: Board) -> None:
    where = f"boards[{index}] (id {b.id!r})"
    if b.pollution_spaces < START_DISCS:
        raise fail(path, where + ".pollution_spaces", f"must hold the {START_DISCS} set-up discs")
    for n in b.pollution_prosperity:
        if not 1 <= n <= b.pollution_spaces:
            raise fail(path, where + ".pollution_prosperity", f"{n} is not a round space 1..{b.pollution_spaces}")
    ids = [s.id for s in b.spaces]
    if len(set(ids)) != len(ids):
        raise fail(path, where + ".spaces", "duplicate space ids")
    colours = {s.id: s.colour for s in b.spaces}
    if set(colours.values()) != set(COLOUR_OF.values()):
        raise fail(path, where + ".spaces", "needs at least one space of each colour")
    for j, s in enumerate(b.spaces):
        if s.needs and (s.colour != "blue" or colours.get(s.needs) != "green"):
            raise fail(path, f"{where}.spaces[{j}].needs", "only a blue space needs a green space of this board")
        if s.printed is not None and min(s.printed.capital, s.printed.research, s.printed.prosperity) < 0:
            raise fail(path, f"{where}.spaces[{j}].printed", "symbol counts cannot be negative")


def parse(raw: dict[str, Any], path: Path = DATA_FILE) -> ProsperityData:
    """Validate decoded TOML into `ProsperityData`, raising `DataError` naming file and field."""
    try:
        f = msgspec.convert(raw, _File)
    except msgspec.ValidationError as exc:
        # msgspec's message ends with the path, e.g. "... - at `$.tiles[3].side`".
        raise DataError(f"{path}: {exc}") from exc
    if not 1 <= f.research.start < f.research.top:
        raise fail(path, "research", "needs 1 <= start < top")
    ids = [t.id for t in f.tiles]
    dupes = sorted(k for k, n in Counter(ids).items() if n > 1)
    if dupes:
        raise fail(path, "tiles", f"duplicate ids {dupes}")
    _check_tiles(path, f.tiles, f.research.top)
    if sorted(b.id for b in f.boards) != ["black", "silver"]:
        raise fail(path, "boards", "expected the two sides 'silver' and 'black'")
    for i, b in enumerate(f.boards):
        _check_board(path, i, b)
    counting = {d: tuple((t.id, t.count) for t in f.tiles if t.decade == d and t.count) for d in DECADES}
    totals = dict.fromkeys(SYMBOLS, 0)
    for tiles in counting.values():
        for _, symbol in tiles:
            totals[symbol] += 1
    return ProsperityData(
        data_version=f.data_version,
        research_start=f.research.start,
        research_top=f.research.top,
        tiles={t.id: t for t in f.tiles},
        boards={b.id: b for b in f.boards},
        board_ids=tuple(b.id for b in f.boards),
        start_tiles=tuple(t.id for t in f.tiles if not t.decade),
        decade_tiles=tuple((d, tuple(t.id for t in f.tiles if t.decade == d)) for d in DECADES),
        space_index={b.id: {s.id: i for i, s in enumerate(b.spaces)} for b in f.boards},
        counting_tiles=counting,
        count_totals=totals,
    )


def load(path: Path = DATA_FILE) -> ProsperityData:
    return parse(read_toml(path)[0], path)


def published(path: Path = DATA_FILE) -> dict[str, Any]:
    """The data file as GET /v1/catalog/<game> publishes it (games.kit.published)."""
    return kit_published(path, _File)
