"""Text pictures of the factory board and of each improvement's holes, generated from the data.

`python -m games.mechanica.diagram` rewrites the generated blocks of docs/rules/mechanica.md
(between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`); a test checks they are current.
"""

from __future__ import annotations

import sys
from pathlib import Path

from games import docblocks
from games.mechanica.components import MechanicaData, load

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "mechanica.md"
ARROWS = {">": "→", "^": "↑", "v": "↓"}
CELL = 9


def _cell(text: str) -> str:
    return text.center(CELL)


def render_board(d: MechanicaData) -> str:
    geo = d.geometry
    t = d.trucks
    header = "       " + "".join(_cell(f"col {c + 1}") for c in range(geo.ncols))
    areas = "       " + "".join(
        _cell("start" if c < geo.start_cols else "dock" if c == geo.ncols - 1 else "floor") for c in range(geo.ncols)
    )
    lines = [header.rstrip(), areas.rstrip()]
    for r in range(geo.nrows):
        cells: list[str] = []
        for col in range(geo.ncols):
            sq = geo.square(r, col)
            area, arrow = geo.area[sq], geo.arrow[sq]
            if not area:
                cells.append(_cell("·"))
            elif area == "dock":
                cells.append(_cell("[" + "o" * t.small_capacity + "]T"))
            elif area == "start":
                mark = "B" if sq == geo.basic_square else "o"
                cells.append(_cell(f"({mark}){ARROWS[arrow]}"))
            else:
                cells.append(_cell(ARROWS[arrow]))
        lines.append(f"row {r + 1}  " + "".join(cells).rstrip())
    legend = [
        "",
        "(o) start-zone hole    (B) the Basic Fabricator's hole (makes a " + d.basic_model + " bot)",
        "→ ↑ ↓ the way a bot leaves the square    [o]T a small truck (" + str(t.small_capacity) + " hole)"
        "    · no square",
    ]
    return "\n".join(lines + legend)


def render_improvements(d: MechanicaData) -> str:
    lines: list[str] = []
    width = max(len(k.name) for k in d.kinds.values()) + 2
    for k in d.kinds.values():
        if k.effect == "fabricate":
            holes = "(centre) → makes " + k.makes + (f", gives each other player a {k.gift}" if k.gift else "")
        elif k.effect == "truck":
            holes = "→ " + "[o]" * k.capacity + f" truck, +{k.money} per bot sold"
        else:
            holes = "→ " + " ".join(["(in)"] * k.inputs + ["[out]"] * k.outputs) + " →"
        lines.append(f"{k.name:<{width}}{k.place:<7}{holes}")
    lines.append("")
    lines.append("(in) input hole (ringed in red dots)   [out] output hole   holes in belt order")
    return "\n".join(lines)


def render_tables(d: MechanicaData) -> str:
    rows = [
        "| kind | place | effect | holes in/out | recycle | end value |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for k in d.kinds.values():
        extra = f" ({k.money})" if k.money else ""
        holes = f"{k.inputs}/{k.outputs}" if k.place == "floor" else (f"{k.capacity}" if k.capacity else "1 (centre)")
        rows.append(f"| {k.name} | {k.place} | {k.effect}{extra} | {holes} | {', '.join(k.recycle)} | {k.end_value} |")
    rows += ["", "| blueprint | bots | vault money |", "| --- | --- | --- |"]
    for b in d.blueprints.values():
        rows.append(f"| {b.id} | {', '.join(b.bots)} | {b.money} |")
    return "\n".join(rows)


def blocks(d: MechanicaData) -> dict[str, str]:
    return {
        "board": "```text\n" + render_board(d) + "\n```",
        "improvements": "```text\n" + render_improvements(d) + "\n```",
        "tables": render_tables(d),
    }


def apply(text: str, generated: dict[str, str]) -> str:
    return docblocks.apply(DOC, text, generated)


def main() -> int:
    return docblocks.update(DOC, blocks(load()))


if __name__ == "__main__":
    sys.exit(main())
