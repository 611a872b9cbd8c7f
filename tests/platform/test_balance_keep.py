"""`dicestream balance --keep`: every game a balance run plays, kept as the referee's log.

Given a balance run with --keep, when it ends, then the folder holds one export file per game that
`verify` passes, whose results are the run's figures, and whose seats are named by the line-up.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import structlog
from typer.testing import CliRunner

from dicestream.cli import app
from dicestream.kept import Keeper
from games import catalog
from games.balance import KeptGame, seat_shares
from games.catalog import GAMES, GREEDY
from services.history import fold, parse_export, verify
from services.selfplay import replay_commands


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["balance", *args])


def _kept(folder: Path) -> dict[str, Any]:
    out = {}
    for path in sorted(folder.iterdir()):
        header, history = parse_export(path.read_bytes().splitlines())
        out[path.name] = (header, history)
    return out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_each_game_of_a_run_is_kept_as_a_log_that_verifies_and_adds_up_to_the_table(
    tmp_path: Path, workers: str
) -> None:
    result = _run(
        "sentient", "--players", "2,3", "--games", "2", "--first-game", "4", "--bots", "greedy,ismcts",
        "--iterations", "2", "--workers", workers, "--keep", str(tmp_path / "kept"), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = msgspec.json.decode(result.stdout)
    kept = _kept(tmp_path / "kept")
    assert sorted(kept) == [f"sentient-balance-{n}-{i}.jsonl" for n in (2, 3) for i in (4, 5)]
    for table in doc["tables"]:
        n = table["num_players"]
        wins = [0.0] * n
        for i in (4, 5):
            header, history = kept[f"sentient-balance-{n}-{i}.jsonl"]
            assert header.game_type == "sentient" and header.data_version == GAMES["sentient"].data_version
            assert header.seats == [f"{('greedy', 'ismcts')[s % 2]}-{s}" for s in range(n)]
            assert verify(history).ok
            agg = fold(history)
            assert agg.status == "over" and agg.result is not None
            for w in agg.result.winners:
                wins[w] += 1 / len(agg.result.winners)
        assert [s["wins"] for s in table["seats"]] == pytest.approx(wins)


def test_stdout_holds_the_document_alone_and_logging_is_left_as_it_was(tmp_path: Path) -> None:
    # Where nothing configured structlog (a real `dicestream` process), its default prints every
    # debug line the in-memory referee logs to stdout: the run must not let one through.
    run = [sys.executable, "-m", "dicestream", "balance", "mechanica", "--players", "2", "--games", "1"]
    done = subprocess.run([*run, "--keep", str(tmp_path / "k"), "--json"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert msgspec.json.decode(done.stdout)["tables"][0]["games"] == 1
    assert done.stderr == b"" and len(list((tmp_path / "k").iterdir())) == 1
    # In this process: the configuration a caller had is the one it has after a kept run.
    before = structlog.get_config()
    assert _run("mechanica", "--players", "2", "--games", "1", "--keep", str(tmp_path / "j")).exit_code == 0
    assert structlog.get_config() == before


def test_the_games_handed_over_are_the_games_played_in_order() -> None:
    rules = GAMES["mechanica"]
    got: list[KeptGame] = []
    table = seat_shares(rules, [lambda seed: GREEDY["mechanica"]()], 2, 3, "k", first=1, keep=got.append)
    assert [(g.number, g.seed, g.num_players) for g in got] == [(1, "k-2-1", 2), (2, "k-2-2", 2), (3, "k-2-3", 2)]
    assert all(g.winners and g.commands for g in got)
    assert table.seats[0].wins == pytest.approx(sum(1 / len(g.winners) for g in got if 0 in g.winners))
    # The referee plays each one again from its seed to the same end.
    for g in got:
        history = asyncio.run(replay_commands("mechanica", g.commands, g.seed, ["a", "b"], f"m-{g.number}"))
        result = fold(history).result
        assert result is not None and list(result.scores) == g.scores and list(result.winners) == g.winners


def test_a_command_list_the_referee_refuses_or_that_does_not_finish_is_a_defect_not_a_log() -> None:
    got: list[KeptGame] = []
    seat_shares(GAMES["mechanica"], [lambda seed: GREEDY["mechanica"]()], 2, 1, "k", keep=got.append)
    [game] = got
    with pytest.raises(AssertionError, match="not over after"):
        asyncio.run(replay_commands("mechanica", game.commands[:-1], game.seed, ["a", "b"], "short"))
    # Played from another seed, the same commands soon ask for what is not there.
    with pytest.raises(AssertionError, match="refused move"):
        asyncio.run(replay_commands("mechanica", game.commands, "another-seed", ["a", "b"], "other"))


def test_a_result_other_than_the_offline_games_stops_the_run(tmp_path: Path) -> None:
    got: list[KeptGame] = []
    seat_shares(GAMES["mechanica"], [lambda seed: GREEDY["mechanica"]()], 2, 1, "k", keep=got.append)
    keeper = Keeper(tmp_path, "mechanica", ["greedy"])
    for lying in (
        msgspec.structs.replace(got[0], scores=[s + 1 for s in got[0].scores]),
        msgspec.structs.replace(got[0], winners=[s for s in range(2) if s not in got[0].winners]),
    ):
        with pytest.raises(RuntimeError, match="is not the offline game's"):
            keeper(lying)
    assert list(tmp_path.iterdir()) == []
    keeper(got[0])
    assert [p.name for p in tmp_path.iterdir()] == ["mechanica-k-2-0.jsonl"]


def _variant(tmp_path: Path) -> Path:
    from games.mechanica.components import DATA_FILE

    text = DATA_FILE.read_text()
    current = f'data_version = "{GAMES["mechanica"].data_version.split("+")[0]}"'
    assert current in text
    path = tmp_path / "variant.toml"
    path.write_text(text.replace(current, 'data_version = "mechanica-variant"').replace("money = 8\n", "money = 9\n"))
    return path


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda d: ["--seed", "a b"], "is not one the referee takes"),
        (lambda d: ["--pool", str(d / "x.json")], "--keep would be ignored"),
        (lambda d: [], "mechanica-balance-2-0.jsonl and 1 more already there"),
    ],
)
def test_keep_is_refused_before_anything_is_played(tmp_path: Path, make: Any, line: str) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    theirs = [folder / "mechanica-balance-2-0.jsonl", folder / "mechanica-balance-2-1.jsonl"]
    for p in theirs:
        p.write_text("another run's game\n")
    result = _run("mechanica", "--players", "2", "--games", "2", "--keep", str(folder), "--json", *make(tmp_path))
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and line in result.stderr
    assert sorted(folder.iterdir()) == theirs and all(p.read_text() == "another run's game\n" for p in theirs)


def _earlier() -> Path:
    from games.catalog import SPECS

    spec = SPECS["mechanica"]
    [file] = spec.earlier_data.values()
    return spec.package_dir / file


def test_a_path_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine\n")
    result = _run("mechanica", "--players", "2", "--games", "1", "--keep", str(tmp_path / "file"), "--json")
    assert result.exit_code == 2 and "not a folder" in result.stderr and result.stdout == ""
    assert (tmp_path / "file").read_text() == "mine\n"


def test_a_copy_of_the_current_data_is_the_current_data_and_is_kept(tmp_path: Path) -> None:
    from games.mechanica.components import DATA_FILE

    copy = tmp_path / "copy.toml"
    copy.write_text(DATA_FILE.read_text())
    result = _run("mechanica", "--players", "2", "--games", "1", "--data", str(copy), "--keep", str(tmp_path / "k"))
    assert result.exit_code == 0, result.output
    [(header, history)] = _kept(tmp_path / "k").values()
    assert header.data_version == GAMES["mechanica"].data_version and verify(history).ok


def _cli(*args: str, variants: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != catalog.VARIANT_DATA_ENV}
    if variants is not None:
        env[catalog.VARIANT_DATA_ENV] = variants
    return subprocess.run([sys.executable, "-m", "dicestream", *args], capture_output=True, timeout=120, env=env)


def test_a_variants_games_are_kept_over_its_data_and_read_where_it_is_named(tmp_path: Path, no_variants: None) -> None:
    variant = _variant(tmp_path)
    folder = tmp_path / "kept"
    result = _run(
        "mechanica", "--players", "2", "--games", "2", "--data", str(variant), "--keep", str(folder), "--json"
    )
    assert result.exit_code == 0, result.output
    doc = msgspec.json.decode(result.stdout)
    kept = _kept(folder)
    assert len(kept) == 2
    for header, history in kept.values():
        # The log names the data its games were played on, the run's document's, not the current.
        assert header.data_version == doc["data_version"] != GAMES["mechanica"].data_version
        assert header.data_version.startswith("mechanica-variant")
        assert verify(history).ok  # this process has the variant: the run admitted it
    # Another process reads them once told where that data is, and says how when it is not.
    game = str(folder / "mechanica-balance-2-0.jsonl")
    told = f"mechanica={variant}"
    unknown = _cli("verify", game)
    assert unknown.returncode != 0 and catalog.VARIANT_DATA_ENV.encode() in unknown.stdout + unknown.stderr
    assert _cli("verify", game, variants=told).returncode == 0
    refused = _cli("openings", str(folder))
    assert refused.returncode != 0 and catalog.VARIANT_DATA_ENV.encode() in refused.stderr
    read = _cli("openings", str(folder), "--json", variants=told)
    assert read.returncode == 0, read.stderr
    report = msgspec.json.decode(read.stdout)
    assert report["games"] == 2 and report["data_versions"] == [doc["data_version"]]


def test_an_earlier_datas_games_are_kept_over_that_data(tmp_path: Path, no_variants: None) -> None:
    result = _run(
        "mechanica", "--players", "2", "--games", "1", "--data", str(_earlier()), "--keep", str(tmp_path / "k")
    )
    assert result.exit_code == 0, result.output
    [(header, history)] = _kept(tmp_path / "k").values()
    earlier = {v for (g, v) in catalog.EARLIER if g == "mechanica"}
    assert header.data_version in earlier and verify(history).ok
    assert ("mechanica", header.data_version) not in catalog.VARIANTS  # the build's own, not a variant
    assert GAMES["mechanica"] is catalog.SPECS["mechanica"].rules  # new games are over the current data again
