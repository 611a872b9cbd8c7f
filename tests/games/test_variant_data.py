"""A variant's data (a file being tuned) admitted into a process's catalog: games played on it are
judged and read there, under the variant's own data_version, and never confused with the build's."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games import catalog
from games.base import Rules
from games.mechanica.components import DATA_FILE, load
from games.mechanica.rules import MechanicaRules
from games.spec import GameSpecError

pytestmark = pytest.mark.usefixtures("no_variants")


def _variant(tmp_path: Path, name: str, money: int) -> MechanicaRules:
    current = catalog.GAMES["mechanica"].data_version.split("+")[0]
    text = DATA_FILE.read_text().replace(f'data_version = "{current}"', f'data_version = "{name}"')
    path = tmp_path / f"{name}-{money}.toml"
    path.write_text(text.replace("money = 8\n", f"money = {money}\n", 1))
    return MechanicaRules(load(path))


def test_an_admitted_variant_is_found_by_its_version_and_the_current_data_is_untouched(tmp_path: Path) -> None:
    variant = _variant(tmp_path, "mechanica-try", 9)
    current = catalog.GAMES["mechanica"]
    assert catalog.rules_for("mechanica", variant.data_version) is current  # unknown: the current rules
    assert catalog.admit_variant(variant) is variant
    assert catalog.rules_for("mechanica", variant.data_version) is variant
    assert catalog.rules_for("mechanica") is current and catalog.rules_for("mechanica", current.data_version) is current


def test_the_same_data_twice_is_one_variant_and_the_current_data_is_the_catalogs(tmp_path: Path) -> None:
    first = catalog.admit_variant(_variant(tmp_path, "mechanica-try", 9))
    again = tmp_path / "again"
    again.mkdir()
    assert catalog.admit_variant(_variant(again, "mechanica-try", 9)) is first
    same = MechanicaRules(load(DATA_FILE))
    assert catalog.admit_variant(same) is catalog.GAMES["mechanica"]
    assert list(catalog.VARIANTS) == [("mechanica", first.data_version)]


def test_creating_over_a_variant_lasts_as_long_as_the_block_even_when_it_fails(tmp_path: Path) -> None:
    variant = _variant(tmp_path, "mechanica-try", 9)
    current = catalog.GAMES["mechanica"]
    with pytest.raises(RuntimeError, match="inside"), catalog.creating_over(variant):
        assert catalog.rules_for("mechanica") is variant  # what a referee creates a game over
        raise RuntimeError("inside")
    assert catalog.GAMES["mechanica"] is current
    assert catalog.rules_for("mechanica", variant.data_version) is variant  # still read, once admitted


def test_inside_the_block_the_builds_own_data_keeps_its_name(tmp_path: Path) -> None:
    own = catalog.SPECS["prosperity"].rules
    with catalog.creating_over(_prosperity(tmp_path, "prosperity-try", 2)):
        assert catalog.rules_for("prosperity", own.data_version) is own  # its games are judged on it
        assert catalog.catalog_twin(own) is own
        with pytest.raises(GameSpecError, match="already known here"):
            catalog.admit_variant(_prosperity(tmp_path, own.data_version, 3))
        assert catalog.rules_for("mechanica") is catalog.SPECS["mechanica"].rules  # other games untouched


def test_entries_of_the_environment_variable() -> None:
    assert catalog.variant_files(" mechanica=/a.toml, prosperity=b.toml ,") == [
        ("mechanica", Path("/a.toml")),
        ("prosperity", Path("b.toml")),
    ]
    for bad in ("mechanica", "=a.toml", "mechanica="):
        with pytest.raises(GameSpecError, match="is not GAME=FILE"):
            catalog.variant_files(bad)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("chess={file}", "'chess' is not a game that reads other data files"),
        ("mechanica={missing}", "does not load"),
        ("mechanica", "is not GAME=FILE"),
        ("prosperity={clash}", "clash.toml: prosperity: data 'prosperity-data-1' is already known here"),
    ],
)
def test_a_bad_environment_stops_the_process_naming_what_is_wrong(tmp_path: Path, entry: str, says: str) -> None:
    file = _variant(tmp_path, "mechanica-try", 9)
    clash = _prosperity(tmp_path, "prosperity-data-1", 2).data_version  # an earlier version's name
    (tmp_path / f"{clash}-2.toml").rename(tmp_path / "clash.toml")
    text = entry.format(
        file=tmp_path / "mechanica-try-9.toml", missing=tmp_path / "none.toml", clash=tmp_path / "clash.toml"
    )
    assert file.data_version.startswith("mechanica-try")
    done = subprocess.run(
        [sys.executable, "-c", "import games.catalog"],
        env={"PATH": "/usr/bin:/bin", catalog.VARIANT_DATA_ENV: text},
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and catalog.VARIANT_DATA_ENV in done.stderr and says in done.stderr


def _prosperity(tmp_path: Path, name: str, workshops_capital: int) -> Rules[Any]:
    # Prosperity's data versions are the file's names alone (Mechanica's carry the data's hash).
    spec = catalog.SPECS["prosperity"]
    assert spec.with_data is not None
    text = (spec.package_dir / "data" / "prosperity.toml").read_text()
    current = f'data_version = "{spec.rules.data_version}"'
    assert current in text and 'id = "workshops"' in text
    head, _, tail = text.partition('id = "workshops"')
    tail = tail.replace("capital = 1\n", f"capital = {workshops_capital}\n", 1)
    path = tmp_path / f"{name}-{workshops_capital}.toml"
    path.write_text((head + 'id = "workshops"' + tail).replace(current, f'data_version = "{name}"'))
    return spec.with_data(path)


def test_one_version_name_never_stands_for_two_datas(tmp_path: Path) -> None:
    first = catalog.admit_variant(_prosperity(tmp_path, "prosperity-try", 2))
    with pytest.raises(GameSpecError, match="'prosperity-try' is already known here with other values"):
        catalog.admit_variant(_prosperity(tmp_path, "prosperity-try", 3))
    assert catalog.rules_for("prosperity", "prosperity-try") is first
    # Nor the build's own names: its games on the current data would be judged on other values.
    current = catalog.GAMES["prosperity"].data_version
    with pytest.raises(GameSpecError, match="already known here"):
        catalog.admit_variant(_prosperity(tmp_path, current, 2))
    with pytest.raises(GameSpecError, match="already known here"):
        catalog.admit_variant(_prosperity(tmp_path, "prosperity-data-1", 2))
    assert list(catalog.VARIANTS) == [("prosperity", "prosperity-try")]


def test_the_page_draws_a_named_variants_game_with_the_variants_data(tmp_path: Path) -> None:
    from services.gateway.http_web import catalog as page_catalog

    variant = _prosperity(tmp_path, "prosperity-try", 2)
    catalog.VARIANT_FILES[("prosperity", variant.data_version)] = tmp_path / "prosperity-try-2.toml"
    shown = page_catalog("prosperity", variant.data_version)
    assert shown.data_version == variant.data_version
    [workshops] = [t for t in shown.data["tiles"] if t["id"] == "workshops"]
    assert workshops["capital"] == 2  # the variant's value; the current data's is 1
    [current] = [t for t in page_catalog("prosperity").data["tiles"] if t["id"] == "workshops"]
    assert current["capital"] == 1


def test_a_variant_the_page_could_not_draw_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A plug-in game whose catalog publishes only its current data: its variants' boards would be
    # drawn with the wrong names and values, so the environment may not name one.
    variant = _variant(tmp_path, "mechanica-try", 9)
    spec = catalog.SPECS["mechanica"]
    monkeypatch.setitem(catalog.SPECS, "mechanica", dataclasses.replace(spec, catalog_data=lambda: {}))
    with pytest.raises(GameSpecError, match="mechanica's catalog_data reads no other data file"):
        catalog._admit_variant_files(f"mechanica={tmp_path / 'mechanica-try-9.toml'}")
    assert ("mechanica", variant.data_version) not in catalog.VARIANT_FILES
