"""`dicestream openings`: what each turn position took first, and how often takers won, from logs.

Given the folder a `balance --keep` run wrote, when `openings` reads it, then its positions are the
run's, and its openings and takers are what the events say (counted here from the raw lines).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from contracts import mechanica as mec
from contracts.outcome import ACCEPTED
from dicestream.cli import app
from games import match as m
from games.catalog import EARLIER, GAMES, GREEDY, SPECS
from games.play import play_game
from services.history import export_lines, parse_export
from services.openings import ReadGame, _tally, judged_states, read_game
from services.selfplay import replay_commands


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _kept_run(folder: Path, game: str, players: int, games: int) -> dict[str, Any]:
    done = _cli(
        "balance", game, "--players", str(players), "--games", str(games), "--keep", str(folder), "--json"
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    table: dict[str, Any] = msgspec.json.decode(done.stdout)["tables"][0]
    return table


def _openings(*args: str) -> dict[str, Any]:
    done = _cli("openings", *args, "--json")
    assert done.exit_code == 0, done.output
    doc: dict[str, Any] = msgspec.json.decode(done.stdout)
    return doc


@pytest.mark.parametrize("game", sorted(GAMES))
def test_positions_are_the_balance_runs_and_every_game_is_read(tmp_path: Path, game: str) -> None:
    table = _kept_run(tmp_path / "kept", game, 3, 8)
    doc = _openings(str(tmp_path / "kept"))
    assert (doc["game"], doc["players"], doc["games"], doc["unfinished"]) == (game, 3, 8, 0)
    assert doc["data_versions"] == [GAMES[game].data_version]
    assert [p["wins"] for p in doc["positions"]] == pytest.approx([p["wins"] for p in table["positions"]])
    assert [p["mean_score"] for p in doc["positions"]] == pytest.approx([p["mean_score"] for p in table["positions"]])
    # Every title writes its turns as events naming the seat whose turn it is.
    assert doc["events"] and all(e["event"].startswith(f"{game}.") for e in doc["events"])
    for position in range(3):
        rows = [o for o in doc["openings"] if o["position"] == position]
        assert sum(o["games"] for o in rows) == 8
        assert sum(o["wins"] for o in rows) == pytest.approx(doc["positions"][position]["wins"])
    # Every game of these titles has seats taking something in its first turns.
    assert doc["items"], "nothing taken in 8 games"


def _events(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """A kept game's events as its raw JSON lines hold them: (type, payload)."""
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row["type"] == "event":
            yield row["event"]["type"], row["event"]["payload"]


def _raw(folder: Path) -> list[tuple[int, list[int], dict[int, list[str]], dict[int, Counter[str]]]]:
    """Per Prosperity game, from the raw JSON lines: first player, winners, tiles bought per seat in
    order, and per seat the game's events naming it, by type."""
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        first, winners, bought = -1, [], defaultdict(list)
        wrote: dict[int, Counter[str]] = defaultdict(Counter)
        for kind, payload in _events(path):
            if kind.startswith("prosperity.") and isinstance(payload.get("seat"), int):
                wrote[payload["seat"]][kind] += 1
            if kind == "prosperity.TableSet":
                first = payload["first_player"]
            elif kind == "prosperity.TileBought":
                bought[payload["seat"]].append(payload["tile"])
            elif kind == "prosperity.GameFinished":
                winners = payload["winners"]
        out.append((first, winners, dict(bought), dict(wrote)))
    return out


def test_openings_and_takers_are_what_the_events_say(tmp_path: Path) -> None:
    _kept_run(tmp_path / "kept", "prosperity", 3, 30)
    doc = _openings(str(tmp_path / "kept"), "--first", "2", "--min-share", "0")
    opened: Counter[tuple[int, tuple[str, ...]]] = Counter()
    opened_wins: dict[tuple[int, tuple[str, ...]], float] = defaultdict(float)
    takers: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    taker_wins: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    written: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    written_in: Counter[str] = Counter()
    raw = _raw(tmp_path / "kept")
    for first, winners, bought, wrote in raw:
        written_in.update({kind for kinds in wrote.values() for kind in kinds})
        for position in range(3):
            seat = (first + position) % 3
            for kind, count in wrote.get(seat, Counter()).items():
                written[kind][position] += count
            won = 1 / len(winners) if seat in winners else 0.0
            key = (position, tuple(bought.get(seat, [])[:2]))
            opened[key] += 1
            opened_wins[key] += won
            for tile in set(bought.get(seat, [])):
                takers[tile][position] += 1
                taker_wins[tile][position] += won
    assert {(o["position"], tuple(o["items"])): o["games"] for o in doc["openings"]} == dict(opened)
    for o in doc["openings"]:
        assert o["wins"] == pytest.approx(opened_wins[o["position"], tuple(o["items"])])
    assert {i["item"]: i["by_position"] for i in doc["items"]} == dict(takers)
    # Events naming a seat: a game on average per position, and the games they were written in.
    assert [e["event"] for e in doc["events"]] == sorted(written)
    for e in doc["events"]:
        assert e["by_position"] == pytest.approx([c / len(raw) for c in written[e["event"]]])
        assert e["games"] == written_in[e["event"]]
    assert "prosperity.TileBought" in written
    for i in doc["items"]:
        assert i["takers"] == sum(i["by_position"])
        assert i["share"] == pytest.approx(sum(taker_wins[i["item"]]) / i["takers"])
        # The takers' wins by position: a position's wins less these are its wins without the tile.
        assert i["wins_by_position"] == pytest.approx(taker_wins[i["item"]])
        assert sum(i["wins_by_position"]) == pytest.approx(i["wins"])
        for position, won in enumerate(i["wins_by_position"]):
            assert 0 <= won <= doc["positions"][position]["wins"] + 1e-9
            assert won <= i["by_position"][position]
    # Listed most played first within a position, and takers from the highest win share down.
    for position in range(3):
        games = [o["games"] for o in doc["openings"] if o["position"] == position]
        assert games == sorted(games, reverse=True)
    shares = [i["share"] for i in doc["items"]]
    assert shares == sorted(shares, reverse=True)
    # --min-share keeps exactly the things whose takers reach that share of the games.
    half = _openings(str(tmp_path / "kept"), "--min-share", "0.5")
    assert {i["item"] for i in half["items"]} == {t for t, by in takers.items() if sum(by) >= 15}


def test_several_takers_in_one_game_split_their_wins_by_position() -> None:
    # Given two games where several seats took a big truck (Mechanica's trucks are not unique),
    # one won alone and one shared: seats listed in order of play, so positions differ from seats.
    games = [
        ReadGame(
            order=[1, 0, 2],
            winners=[0, 2],
            taken={0: ["big truck"], 1: ["big truck", "fork"]},
            scores=[5, 3, 5],
            wrote={},
        ),
        ReadGame(order=[0, 1, 2], winners=[1], taken={1: ["big truck"]}, scores=[1, 4, 2], wrote={}),
    ]
    r = _tally("mechanica", 3, games, 0, 0, ["mechanica-data-2"], 2, 0.0)
    (truck,) = [i for i in r.items if i.item == "big truck"]
    # Then each taker's win goes to its own position, a shared win by halves.
    assert (truck.games, truck.takers, truck.by_position) == (2, 3, [1, 2, 0])
    assert truck.wins_by_position == [0.0, 1.5, 0.0]
    assert (truck.wins, truck.share) == (1.5, 0.5)
    # And a position's wins less its takers' are its wins without the thing: the last position's half.
    assert [p.wins - w for p, w in zip(r.positions, truck.wins_by_position, strict=True)] == [0.0, 0.0, 0.5]


def test_an_event_is_counted_in_the_games_it_was_written_in(tmp_path: Path) -> None:
    # Artifacts: some of its events naming a seat (a sale to the Private Collectors) are written in
    # some games only.
    _kept_run(tmp_path / "kept", "artifacts", 3, 8)
    present: Counter[str] = Counter()
    for path in sorted((tmp_path / "kept").glob("*.jsonl")):
        present.update(
            {
                kind
                for kind, payload in _events(path)
                if kind.startswith("artifacts.") and isinstance(payload.get("seat"), int)
            }
        )
    doc = _openings(str(tmp_path / "kept"))
    assert {e["event"]: e["games"] for e in doc["events"]} == dict(present)
    assert any(n < doc["games"] for n in present.values()), "every event in every game: nothing tested"


def test_an_upgrade_is_named_apart_from_a_purchase(tmp_path: Path) -> None:
    _kept_run(tmp_path / "a", "artifacts", 2, 6)
    items = {i["item"] for i in _openings(str(tmp_path / "a"), "--min-share", "0")["items"]}
    # The greedy bot upgrades a starting card on its first turn (docs/rules/artifacts.md).
    assert any(i.endswith(" upgraded") for i in items), items
    assert any(not i.endswith(" upgraded") for i in items), items
    # Mechanica: a truck bought over the small one, a big truck turned huge, a fork.
    took = SPECS["mechanica"].acquisition
    assert took is not None
    assert took(mec.TruckBought(seat=1, row=2, size="big", cost=3, replaced="small")) == (1, "big truck")
    assert took(mec.TruckBought(seat=0, row=3, size="huge", cost=3, replaced="big")) == (0, "huge truck upgraded")
    assert took(mec.ForkBought(seat=2, row=1, col=2, direction="down", cost=1)) == (2, "fork")
    assert took(mec.ImprovementBought(seat=3, improvement="duplicator-2", price=7)) == (3, "duplicator")
    assert took(mec.WorkdayStarted(workday=2)) is None


def test_an_unfinished_game_is_counted_and_left_out(tmp_path: Path) -> None:
    _kept_run(tmp_path / "kept", "sentient", 2, 3)
    path = sorted((tmp_path / "kept").glob("*.jsonl"))[0]
    _, history = parse_export(path.read_bytes().splitlines())
    cut = history.events[len(history.events) // 2].version
    history.events = [e for e in history.events if e.version <= cut]
    history.outcomes = [o for o in history.outcomes if o.to_version <= cut]
    path.write_bytes(b"\n".join(export_lines(history)) + b"\n")
    doc = _openings(str(tmp_path / "kept"))
    assert (doc["games"], doc["unfinished"]) == (2, 1)
    assert sum(p["wins"] for p in doc["positions"]) == pytest.approx(2)


def test_bad_input_is_refused_in_one_line_naming_it(tmp_path: Path) -> None:
    _kept_run(tmp_path / "p", "prosperity", 2, 1)
    _kept_run(tmp_path / "m", "mechanica", 2, 1)
    _kept_run(tmp_path / "p3", "prosperity", 3, 1)
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.jsonl").write_text('{"type": "header"}\nnot json\n')
    cases = {
        ("openings", str(tmp_path / "p"), str(tmp_path / "m")): "report them apart",
        ("openings", str(tmp_path / "p"), str(tmp_path / "p3")): "prosperity with 3 players",
        ("openings", str(tmp_path / "empty")): "no game files",
        ("openings", str(tmp_path / "nothing")): "no such file or folder",
        ("openings", str(tmp_path / "junk.jsonl")): "junk.jsonl: not a dicestream game file",
        ("openings", str(tmp_path / "p"), "--first", "0"): "--first",
        ("openings", str(tmp_path / "p"), "--min-share", "1.5"): "--min-share",
    }
    for args, message in cases.items():
        done = _cli(*args)
        assert done.exit_code == 2, (args, done.output)
        assert message in done.output, (args, done.output)
        assert "Traceback" not in done.output


def test_an_archive_folder_of_several_games_is_read_one_game_and_count_at_a_time(tmp_path: Path) -> None:
    # The archive's layout: <2 hex>/<game id>.jsonl.gz, every game type and count together.
    for game, players in (("prosperity", 2), ("prosperity", 3), ("mechanica", 2)):
        _kept_run(tmp_path / "kept" / f"{game}{players}", game, players, 2)
    for path in (tmp_path / "kept").rglob("*.jsonl"):
        (tmp_path / "archive" / path.name[:2]).mkdir(parents=True, exist_ok=True)
        (tmp_path / "archive" / path.name[:2] / f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
    archive = str(tmp_path / "archive")
    done = _cli("openings", archive)
    assert done.exit_code == 2 and "report them apart (--game, --players)" in done.output, done.output
    doc = _openings(archive, "--game", "prosperity", "--players", "3")
    assert (doc["game"], doc["players"], doc["games"], doc["other"]) == ("prosperity", 3, 2, 4)
    assert _openings(archive, "--game", "mechanica")["games"] == 2
    done = _cli("openings", archive, "--game", "sentient")
    assert done.exit_code == 2 and "no games to read (6 of another game or player count)" in done.output
    # Read the same as the plain files.
    plain = _openings(str(tmp_path / "kept" / "prosperity3"))
    assert {k: v for k, v in doc.items() if k != "other"} == {k: v for k, v in plain.items() if k != "other"}


def test_the_documented_json_shape_is_the_real_one(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    section = doc.split("## `dicestream openings PATH...`", 1)[1]
    example = msgspec.json.decode(section.split("```jsonc\n", 1)[1].split("```")[0])
    _kept_run(tmp_path / "kept", "prosperity", 3, 2)
    real = _openings(str(tmp_path / "kept"))
    assert list(example) == list(real)
    for part in ("positions", "openings", "items", "events"):
        assert list(example[part][0]) == list(real[part][0])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_command_is_read_against_the_state_it_was_judged_at(tmp_path: Path, game: str) -> None:
    _kept_run(tmp_path / "kept", game, 3, 2)
    for path in sorted((tmp_path / "kept").glob("*.jsonl")):
        _, history = parse_export(path.read_bytes().splitlines())
        outcomes = sorted((o for o in history.outcomes if o.status == ACCEPTED), key=lambda o: o.judged_at_version)
        states = judged_states(history, lambda event: None)
        for outcome, agg in zip(outcomes, states, strict=False):
            assert agg.version == outcome.judged_at_version
            if agg.status == m.RUNNING and outcome.seat is not None:
                assert outcome.seat in m.to_act(agg), (path.name, outcome)
        assert next(states).version == history.events[-1].version


@pytest.mark.parametrize("game", sorted(g for g in GAMES if SPECS[g].turn_order is None))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_positions_by_first_turn_alone_are_those_the_offline_game_noted(game: str, players: int) -> None:
    spec = SPECS[game]
    if not spec.rules.min_players <= players <= spec.rules.max_players:
        pytest.skip(f"{game} does not take {players} players")
    for i in range(3):
        seed = f"order-{players}-{i}"
        played = play_game(spec.rules, [GREEDY[game]() for _ in range(players)], seed, players)
        names = [f"greedy-{s}" for s in range(players)]
        history = asyncio.run(replay_commands(game, played.history, seed, names, f"{game}-{seed}"))
        _, read = read_game(spec, history)
        assert read is not None and read.order == played.turn_order, seed
        assert read.winners == list(played.result.winners)


def test_the_tables_are_printed_for_people(tmp_path: Path) -> None:
    _kept_run(tmp_path / "kept", "artifacts", 2, 4)
    done = _cli("openings", str(tmp_path / "kept"), "--top", "1")
    assert done.exit_code == 0, done.output
    assert "artifacts, 2 players: 4 finished games (artifacts-data-4)" in done.output
    for title in (
        "Win share by turn position",
        "Openings: the first 2 things taken",
        "Taken in at least 0.1",
        "Events naming a seat",
    ):
        assert title in done.output
    assert "upgraded" in done.output and "mean score" in done.output
    # The takers' win share per position, a dash where no seat in that position took the thing.
    assert "won by position" in done.output and "/ –" in done.output
    # --top 1: one opening row a position.
    doc = _openings(str(tmp_path / "kept"))
    shown = [o for o in doc["openings"] if " + ".join(o["items"]) in done.output]
    assert {o["position"] for o in shown} == {0, 1}


def _edited(source: Path, target: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    lines = []
    for line in source.read_text().splitlines():
        row = json.loads(line)
        if row["type"] == "event":
            edit(row["event"])
        lines.append(json.dumps(row))
    target.write_text("\n".join(lines) + "\n")


def test_damaged_or_foreign_logs_are_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kept_run(tmp_path / "kept", "prosperity", 2, 1)
    good = next((tmp_path / "kept").glob("*.jsonl"))
    bad = tmp_path / "bad"
    bad.mkdir()
    packed = bytearray(gzip.compress(good.read_bytes()))
    packed[len(packed) // 2] ^= 0xFF
    packed[len(packed) // 2 + 1] ^= 0xFF
    (bad / "damaged.jsonl.gz").write_bytes(bytes(packed))
    (bad / "notgzip.jsonl.gz").write_bytes(b"plain text")

    def unknown_first(event: dict[str, Any]) -> None:
        if event["version"] == 1:
            event["type"] = "chess.GameCreated"

    def bad_payload(event: dict[str, Any]) -> None:
        if event["type"] == "prosperity.TileBought":
            event["payload"]["seat"] = "zero"

    def not_run_here(event: dict[str, Any]) -> None:
        if event["version"] == 1:
            event["payload"]["game_type"] = "chess"

    def later_type(event: dict[str, Any]) -> None:
        if event["type"] == "prosperity.TileBought":
            event["type"] = "prosperity.TileBoughtTwice"

    def unknown_data(event: dict[str, Any]) -> None:
        if event["version"] == 1:
            event["payload"]["data_version"] = "prosperity-data-99"

    def other_rules(event: dict[str, Any]) -> None:
        if event["version"] == 1:
            event["payload"]["rules_version"] = "prosperity-rules-0"

    edits = (
        ("first", unknown_first),
        ("payload", bad_payload),
        ("chess", not_run_here),
        ("data", unknown_data),
        ("rules", other_rules),
    )
    for name, edit in edits:
        _edited(good, bad / f"{name}.jsonl", edit)
    _edited(good, tmp_path / "later.jsonl", later_type)
    cases = {
        "damaged.jsonl.gz": "damaged.jsonl.gz: not a dicestream game file",
        "notgzip.jsonl.gz": "notgzip.jsonl.gz: not a dicestream game file",
        "first.jsonl": "its first event cannot be read",
        "payload.jsonl": "an event cannot be read",
        "chess.jsonl": "'chess' is not a game this build runs",
        "data.jsonl": "played on data 'prosperity-data-99', which this build does not keep",
        "rules.jsonl": "played by rules 'prosperity-rules-0', this build runs 'prosperity-rules-1'",
    }
    for name, message in cases.items():
        done = _cli("openings", str(bad / name))
        assert done.exit_code == 2 and message in done.output, (name, done.output)
    done = _cli("openings", str(tmp_path / "later.jsonl"))
    assert done.exit_code == 2 and "unknown type" in done.output, done.output
    monkeypatch.setitem(SPECS, "prosperity", dataclasses.replace(SPECS["prosperity"], acquisition=None))
    done = _cli("openings", str(good))
    assert done.exit_code == 2 and "declares nothing a seat takes" in done.output, done.output


def test_a_game_on_earlier_data_is_read_only_while_the_build_keeps_that_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games recorded on earlier data this build keeps are read; once a build drops that data, the
    same log is refused rather than folded on today's."""
    golden = Path(__file__).parent.parent / "golden"
    old = [str(golden / "prosperity-3p.data1.jsonl"), str(golden / "prosperity-3p.data2.jsonl")]
    doc = _openings(*old)
    assert doc["data_versions"] == ["prosperity-data-1", "prosperity-data-2"]
    assert doc["games"] == 2 and doc["unfinished"] == 0
    monkeypatch.delitem(EARLIER, ("prosperity", "prosperity-data-1"))
    done = _cli("openings", *old)
    assert done.exit_code == 2, done.output
    assert "played on data 'prosperity-data-1', which this build does not keep" in done.output
