"""The generated appendix of docs/fairness.md: every list the games shuffle, in its order before
the shuffle, as this build's rules hold it (so a reader without the data files can still check a
game of these data versions).

`python -m games.fairnessdoc` rewrites the block between `<!-- generated:orders -->` and
`<!-- /generated:orders -->`; a test checks it is current.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from games import artifacts, docblocks, mechanica, prosperity, sentient
from games.artifacts.components import MARKET_DECKS

DOC = Path(__file__).resolve().parents[1] / "docs" / "fairness.md"


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def render() -> str:
    sen = sentient.RULES.data
    pro = prosperity.RULES.data
    mec = mechanica.RULES.data
    art = artifacts.RULES.data
    lines = [f"**Sentient** (`{sen.data_version}`)", ""]
    lines.append(f"- sides: {_ids(sen.side_ids)}")
    for r, ids in enumerate(sen.investors_by_round, 1):
        lines.append(f"- investors of round {r}: {_ids(ids)}")
    lines.append(f"- cards: {_ids(sen.card_ids)}")
    lines += ["", f"**Prosperity** (`{pro.data_version}`)", ""]
    lines.append(f"- undated start tiles (research board, not shuffled): {_ids(pro.start_tiles)}")
    for decade, ids in pro.decade_tiles:
        lines.append(f"- decade {decade}: {_ids(ids)}")
    lines += ["", f"**Mechanica** (`{mec.data_version}`)", ""]
    lines.append(f"- improvements: {_ids(mec.tile_ids)}")
    lines.append(f"- blueprints: {_ids(mec.blueprint_ids)}")
    lines.append(f"- `setup.extras` = {mec.setup.extras}, `setup.blueprint_piles` = {mec.setup.blueprint_piles}")
    lines += ["", f"**Artifacts, Inc.** (`{art.data_version}`)", ""]
    for deck in MARKET_DECKS:
        lines.append(f"- deck {deck}: {_ids(art.decks[deck])}")
    lines.append(f"- underwater stack (not shuffled), top first: {_ids(art.underwater_ids)}")
    slots = ", ".join(f"{d}: {art.table.market_slots[d]}" for d in MARKET_DECKS)
    lines.append(f"- `table.first_player_dice` = {art.table.first_player_dice}, `table.market_slots` = {slots}")
    return "\n".join(lines)


def blocks() -> dict[str, str]:
    return {"orders": render()}


def apply(text: str) -> str:
    return docblocks.apply(DOC, text, blocks())


def main() -> int:
    return docblocks.update(DOC, blocks())


if __name__ == "__main__":
    sys.exit(main())
