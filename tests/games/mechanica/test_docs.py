"""The rules page quotes every rule verbatim, its pictures match the data, bad data is named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from games.kit import DataError
from games.mechanica import diagram
from games.mechanica.components import DATA_FILE, load, parse
from games.mechanica.rule_ids import REFUSAL_RULES, RULES_TEXT

DOC = Path(__file__).resolve().parents[3] / "docs" / "rules" / "mechanica.md"


def test_every_rule_is_quoted_verbatim() -> None:
    text = DOC.read_text(encoding="utf-8")
    for rule, body in RULES_TEXT.items():
        assert f"> **{rule}** — {body}" in text, rule
    assert set(REFUSAL_RULES) <= set(RULES_TEXT)


def test_rulings_are_numbered_in_order() -> None:
    text = DOC.read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"\*\*MEC-R(\d+)\*\*", text)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 15


def test_the_pictures_match_the_data() -> None:
    """Regenerate with `python -m games.mechanica.diagram` after editing the data."""
    text = DOC.read_text(encoding="utf-8")
    assert diagram.apply(text, diagram.blocks(load())) == text
    assert "RECONSTRUCTED" in DATA_FILE.read_text(encoding="utf-8")
    assert "reconstructed" in text


def test_the_board_picture_shows_the_printed_pieces() -> None:
    picture = diagram.render_board(load())
    rows = picture.splitlines()
    assert "(B)→" in rows[4] and rows[4].startswith("row 3")  # the Basic Fabricator, row 3
    assert sum(line.count("[o]T") for line in rows[2:7]) == 3  # three small trucks


def _raw() -> dict[str, Any]:
    return tomllib.loads(DATA_FILE.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda r: r["board"]["rows"].__setitem__(2, ">>><T"), "board.rows[2][3]"),
        (lambda r: r["board"]["rows"].__setitem__(2, ">>v>T"), "does not reach a truck"),
        (lambda r: r["kinds"][2].__setitem__("outputs", 1), "kinds[2]"),
        (lambda r: r["kinds"][0].__setitem__("recycle", ["golden"]), "kinds[0]"),
        (lambda r: r["blueprints"].pop(), "setup.blueprint_piles"),
        (lambda r: r["kinds"][0].__setitem__("colour", "red"), "colour"),
        (lambda r: r["setup"].__setitem__("shop_prices", [7, 7, 3]), "setup.shop_prices"),
        (lambda r: r["setup"].__setitem__("blueprint_piles", [0, 15]), "setup.blueprint_piles[0]"),
        (lambda r: r["setup"].__setitem__("blueprint_piles", [16, -1]), "setup.blueprint_piles[1]"),
        (lambda r: r["models"][1].__setitem__("value", -4), "models[1].value"),
        (lambda r: r["trucks"].__setitem__("big_cost", -3), "trucks.big_cost"),
        (lambda r: r["trucks"].__setitem__("huge_cost", -1), "trucks.huge_cost"),
        (lambda r: r["trucks"].__setitem__("upgrade_cost", -1), "trucks.upgrade_cost"),
        (lambda r: r["forks"].__setitem__("cost", -1), "forks.cost"),
        (lambda r: r["trucks"].__setitem__("small_capacity", 0), "trucks.small_capacity"),
        (lambda r: r["trucks"].__setitem__("big_capacity", 0), "trucks.big_capacity"),
        (lambda r: r["trucks"].__setitem__("huge_capacity", -2), "trucks.huge_capacity"),
        (lambda r: r["kinds"][8].__setitem__("capacity", 0), "kinds[8]"),
    ],
)
def test_bad_data_names_the_file_and_field(change: Any, where: str) -> None:
    raw = _raw()
    change(raw)
    with pytest.raises(DataError) as err:
        parse(raw, DATA_FILE)
    assert str(DATA_FILE) in str(err.value) and where in str(err.value)


def test_the_data_loads_with_its_counts() -> None:
    d = load()
    assert len(d.kinds) == 9 and len(d.tiles) == 27 and len(d.blueprints) == 15
    assert d.data_version.startswith("mechanica-data-2+")
    assert [d.value[m] for m in d.models] == [2, 4, 6]
    assert (d.trucks.big_cost, d.trucks.big_capacity, d.trucks.huge_cost, d.trucks.huge_capacity) == (3, 2, 5, 3)
    assert (d.trucks.upgrade_cost, d.forks.cost, d.setup.money) == (3, 1, 8)
    # The box's counts are kept for information only: trucks and forks never run out (MEC-R2).
    assert (d.trucks.big_in_box, d.trucks.huge_in_box, d.forks.in_box) == (15, 7, 10)
    names = {k.name for k in d.kinds.values()}
    assert {"Advanced Fabricator", "Overactive Fabricator", "Duplicator", "Downgrader", "Gift Wrapper"} <= names
