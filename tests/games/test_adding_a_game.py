"""docs/adding-a-game.md is true: its toy game, written out from the page's code blocks into a
package outside this repository and named in DICESTREAM_GAME_PACKAGES, is served by the CLI and the
schema and passes the every-game tests (offline and through the referee) with no other edit; a spec
that contradicts itself stops start-up."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adding-a-game.md"
FENCE = re.compile(r"^```[a-z]+ (toydice/\S+)\n(.*?)^```$", re.M | re.S)


def _write_toy(where: Path) -> list[str]:
    files = FENCE.findall(DOC.read_text())
    for name, body in files:
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return [name for name, _ in files]


def _run(env_dir: Path, *args: str, packages: str = "toydice") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(env_dir), str(ROOT)]),
        "DICESTREAM_GAME_PACKAGES": packages,
    }
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("plugin")
    names = _write_toy(where)
    assert {"toydice/spec.py", "toydice/rules.py", "toydice/contracts.py", "toydice/data/toydice.toml"} <= set(names)
    return where


def test_the_toy_game_passes_the_every_game_tests(toy: Path) -> None:
    tests = ["tests/games/test_every_game.py", "tests/games/test_bad_commands.py", "tests/games/test_one_loop.py"]
    done = _run(toy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "toydice", *tests)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    # Every generic test ran on it (the determinization test skips: nothing is hidden).
    assert passed is not None and int(passed.group(1)) >= 8, done.stdout[-2000:]


def test_the_cli_and_the_schema_know_the_toy_game(toy: Path, tmp_path: Path) -> None:
    listed = _run(toy, "-m", "dicestream", "games", "--json")
    assert listed.returncode == 0, listed.stderr
    games = {g["name"]: g for g in json.loads(listed.stdout)["games"]}
    assert games["toydice"]["title"] == "Toy Dice" and games["toydice"]["players"] == [2, 4]
    assert {"sentient", "prosperity", "mechanica", "artifacts"} <= set(games)
    written = _run(toy, "-m", "dicestream", "schema", "--out", str(tmp_path), "--json")
    assert written.returncode == 0, written.stderr
    index = json.loads((tmp_path / "index.json").read_text())
    assert {"toydice.Roll", "toydice.Hold"} <= set(index["commands"])
    assert {"toydice.Started", "toydice.Rolled", "toydice.Banked", "toydice.Finished"} <= set(index["events"])
    assert json.loads((tmp_path / "commands" / "toydice.Roll.json").read_text())["title"] == "toydice.Roll"
    assert "toydice" in index["views"] and (tmp_path / "views" / "toydice.json").is_file()
    assert (tmp_path / "protocol" / "turn-request.toydice.json").is_file()


def test_a_rules_type_missing_from_the_contracts_stops_start_up(toy: Path) -> None:
    # The classic slip: a new event used by the rules but not listed in EVENTS.
    broken = toy / "brokendice"
    broken.mkdir()
    (broken / "__init__.py").write_text("")
    (broken / "spec.py").write_text(
        "import dataclasses, msgspec\n"
        "from toydice import spec as toy\n"
        "class Extra(msgspec.Struct, frozen=True):\n    pass\n"
        "class Rules(type(toy.SPEC.rules)):\n"
        "    name = 'brokendice'\n"
        "    event_types = (*toy.contracts.EVENTS, Extra)\n"
        "SPEC = dataclasses.replace(toy.SPEC, rules=Rules())\n"
    )
    done = _run(toy, "-c", "import games.catalog", packages="brokendice")
    assert done.returncode != 0
    assert "GameSpecError" in done.stderr and "['Extra']" in done.stderr and "toydice.contracts.EVENTS" in done.stderr
    twice = _run(toy, "-c", "import games.catalog", packages="toydice,toydice")
    assert twice.returncode != 0 and "two game packages declare the game 'toydice'" in twice.stderr


GATEWAY = """
import asyncio, httpx
from dicestream.screenshots import gateway
from games.bots import RandomBot
from games.catalog import GREEDY
from services.history import export_lines
from services.selfplay import record_game

async def main():
    hist = await record_game("toydice", [GREEDY["toydice"](), RandomBot(1)], "toy-web", game_id="toy-web")
    body = b"\\n".join(export_lines(hist)) + b"\\n"
    async with gateway() as gw, httpx.AsyncClient(base_url=gw.url) as http:
        titles = (await http.get("/v1/catalog")).json()
        assert "toydice" in [t["title"] for t in titles], titles
        data = await http.get("/v1/catalog/toydice")
        assert data.status_code == 200 and data.json()["name"] == "Toy Dice", data.text
        opened = await http.post("/v1/files/open", content=body)
        assert opened.status_code == 200, opened.text
        states = await http.post("/v1/files/states", params={"from_version": 1, "limit": 200}, content=body)
        assert states.status_code == 200, states.text
        last = states.json()["states"][-1]
        assert last["view"]["game"] == "toydice" and last["summary"]["status"] == "over", last
        print("served", len(states.json()["states"]), "states")

asyncio.run(main())
"""


def test_the_gateway_serves_the_toy_game(toy: Path) -> None:
    # The gateway starts with the plug-in listed, publishes it in its catalog, and replays a file
    # of one of its games (recorded through the real referee) with no Redis.
    done = _run(toy, "-c", GATEWAY)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "served" in done.stdout


def test_a_spec_may_import_the_offline_api(toy: Path) -> None:
    # A game package that imports games.offline (so games.match and the catalog) while the catalog
    # is loading it: the lookups it needs exist before any spec is loaded.
    twin = toy / "toyimport"
    shutil.copytree(toy / "toydice", twin)
    (twin / "data" / "toydice.toml").rename(twin / "data" / "toyimport.toml")
    for path in twin.rglob("*.py"):
        path.write_text(path.read_text().replace("toydice", "toyimport"))
    spec = twin / "spec.py"
    spec.write_text(
        spec.read_text().replace("\nimport msgspec\n", "\nimport msgspec\n\nimport games.offline  # noqa: F401\n", 1)
    )
    done = _run(toy, "-c", "import games.catalog as c; print(sorted(c.SPECS))", packages="toyimport")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "toyimport" in done.stdout
