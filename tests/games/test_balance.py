"""Seat balance (games/balance.py) and `dicestream balance`: the Wilson interval, the line-up
cycled over the seats, seeded determinism (with search bots too, in one process or several), the
command's JSON and its input errors."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from dicestream import fingerprint
from dicestream.cli import MIXED_CODE, app
from dicestream.fingerprint import code_fingerprint, normalized
from games.balance import OUTSIDE, UNDECIDED, WITHIN, SeatShare, SeatTable, pool, seat_shares, verdict, wilson
from games.bots import Bot, RandomBot
from games.catalog import GAMES, GREEDY, SPECS

RULES = GAMES["sentient"]


def _greedy(seed: int) -> Bot:
    return GREEDY["sentient"]()


def test_wilson_matches_the_textbook_figures() -> None:
    # 5 of 10 and 0 of 10 (Wilson 1927; e.g. Newcombe 1998, table I): a wrong formula fails these.
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_interval_contains_the_share_and_narrows_with_n() -> None:
    for share in (0.0, 0.1, 0.25, 0.5, 0.9, 1.0):
        widths = []
        for n in (10, 100, 1000):
            low, high = wilson(share * n, n)
            assert low <= share <= high
            widths.append(high - low)
        assert widths[0] > widths[1] > widths[2]
    # And on played games: every seat's interval holds its share, narrower over more games.
    few = seat_shares(RULES, [_greedy], 2, 8, "narrow")
    many = seat_shares(RULES, [_greedy], 2, 32, "narrow")
    for a, b in zip(few.seats, many.seats, strict=True):
        assert a.low <= a.share <= a.high and b.low <= b.share <= b.high
        assert b.high - b.low < a.high - a.low
    assert sum(s.wins for s in many.seats) == pytest.approx(32)  # a shared win is split, not doubled
    assert many.fair_share == 0.5 and many.target == 0.05


def test_the_line_up_is_cycled_over_the_seats() -> None:
    built: list[tuple[str, int]] = []

    def maker(kind: str) -> Any:
        def make(seed: int) -> Bot:
            built.append((kind, seed))
            return _greedy(seed) if kind == "greedy" else RandomBot(seed)

        return make

    table = seat_shares(RULES, [maker("greedy"), maker("random")], 3, 2, "cycle", names=["greedy", "random"])
    assert [s.bot for s in table.seats] == ["greedy", "random", "greedy"]
    # Game i, seat s: entry s % 2, bot seed i * 3 + s.
    assert built == [("greedy", 0), ("random", 1), ("greedy", 2), ("greedy", 3), ("random", 4), ("greedy", 5)]
    assert all(s.games == 2 for s in table.seats)


def test_same_seed_same_table() -> None:
    makers = [_greedy, RandomBot]
    done: list[int] = []
    first = seat_shares(RULES, makers, 2, 6, "same", progress=done.append)
    assert done == [1, 2, 3, 4, 5, 6]
    assert seat_shares(RULES, makers, 2, 6, "same") == first
    others = [seat_shares(RULES, makers, 2, 6, f"other-{k}") for k in range(3)]
    assert any(t.seats != first.seats for t in others)  # the seed is used at all


def _rows(table: SeatTable) -> list[tuple[Any, ...]]:
    # Pooled wins sum 1/k shares in another order than one run does: equal up to float rounding.
    return [
        (s.seat, s.bot, s.games, round(s.wins, 9), round(s.share, 9), round(s.mean_score, 9), s.within_target)
        for s in (*table.seats, *table.positions)
    ]


def test_a_run_in_parts_pools_into_the_whole_run() -> None:
    makers = [_greedy, RandomBot]
    whole = seat_shares(RULES, makers, 3, 9, "parts", names=["greedy", "random"])
    head = seat_shares(RULES, makers, 3, 4, "parts", names=["greedy", "random"])
    tail = seat_shares(RULES, makers, 3, 5, "parts", names=["greedy", "random"], first=4)
    assert tail.first_game == 4 and tail.games == 5
    assert tail.seats != seat_shares(RULES, makers, 3, 5, "parts", names=["greedy", "random"]).seats
    pooled = pool([tail, head])  # in any order
    assert (pooled.first_game, pooled.games) == (0, 9)
    assert _rows(pooled) == _rows(whole)
    assert pooled.balanced == whole.balanced and pooled.positions_balanced == whole.positions_balanced
    # A later part alone pools too: games 4-8.
    assert pool([tail]) == tail


def test_pool_refuses_parts_that_are_not_one_run() -> None:
    makers = [_greedy, RandomBot]
    head = seat_shares(RULES, makers, 2, 3, "parts")
    with pytest.raises(ValueError, match="not consecutive"):
        pool([head, seat_shares(RULES, makers, 2, 2, "parts", first=4)])  # game 3 missing
    with pytest.raises(ValueError, match="not consecutive"):
        pool([head, seat_shares(RULES, makers, 2, 2, "parts", first=2)])  # game 2 twice
    with pytest.raises(ValueError, match="same line-up"):
        pool([head, seat_shares(RULES, [RandomBot, _greedy], 2, 2, "parts", first=3, names=["r", "g"])])
    with pytest.raises(ValueError, match="prefix 'other'"):
        pool([head, seat_shares(RULES, makers, 2, 2, "other", first=3)])
    with pytest.raises(ValueError, match="nothing to pool"):
        pool([])
    with pytest.raises(ValueError, match="at least 0"):
        seat_shares(RULES, makers, 2, 2, "parts", first=-1)


def test_cli_first_game_and_pool(tmp_path: Path) -> None:
    def run(*more: str) -> dict[str, Any]:
        # Pooling takes no option of a run's but --players.
        line = ["--bots", "greedy,random"] if "--pool" not in more else []
        result = CliRunner().invoke(app, ["balance", "sentient", "--json", *line, *more])
        assert result.exit_code == 0, result.output
        doc: dict[str, Any] = msgspec.json.decode(result.stdout)
        return doc

    whole = run("--games", "5", "--players", "2,3")
    (tmp_path / "a.json").write_text(msgspec.json.encode(run("--games", "3", "--players", "2,3")).decode())
    later = run("--games", "2", "--first-game", "3", "--workers", "2", "--players", "2,3")
    assert later["first_game"] == 3 and [t["first_game"] for t in later["tables"]] == [3, 3]
    (tmp_path / "b.json").write_text(msgspec.json.encode(later).decode())
    pooled = run("--pool", str(tmp_path / "b.json"), "--pool", str(tmp_path / "a.json"))
    assert (pooled["games"], pooled["first_game"], pooled["bots"]) == (5, 0, ["greedy", "random"])
    for mine, theirs in zip(pooled["tables"], whole["tables"], strict=True):
        assert _rows(msgspec.convert(mine, SeatTable)) == _rows(msgspec.convert(theirs, SeatTable))
    only_three = run("--pool", str(tmp_path / "a.json"), "--pool", str(tmp_path / "b.json"), "--players", "3")
    assert [t["num_players"] for t in only_three["tables"]] == [3]
    text = CliRunner().invoke(app, ["balance", "sentient", "--pool", str(tmp_path / "b.json")])
    assert text.exit_code == 0 and "games 3-4" in text.stdout
    # A pooled document pools again; one written before runs could start elsewhere (no top-level
    # first_game) is games 0 to N-1.
    (tmp_path / "ab.json").write_text(msgspec.json.encode(pooled).decode())
    head = {k: v for k, v in run("--games", "2", "--players", "2,3").items() if k != "first_game"}
    (tmp_path / "old.json").write_text(msgspec.json.encode(head).decode())
    (tmp_path / "c.json").write_text(
        msgspec.json.encode(run("--games", "1", "--first-game", "5", "--players", "2,3")).decode()
    )
    (tmp_path / "d.json").write_text(
        msgspec.json.encode(run("--games", "3", "--first-game", "2", "--players", "2,3")).decode()
    )
    again = run("--pool", str(tmp_path / "ab.json"), "--pool", str(tmp_path / "c.json"))
    longer = run(
        "--pool", str(tmp_path / "old.json"), "--pool", str(tmp_path / "d.json"), "--pool", str(tmp_path / "c.json")
    )
    assert again["games"] == longer["games"] == 6
    for mine, theirs in zip(again["tables"], longer["tables"], strict=True):
        assert _rows(msgspec.convert(mine, SeatTable)) == _rows(msgspec.convert(theirs, SeatTable))


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda d: [d / "a.json", d / "a.json"], "not consecutive"),
        (lambda d: [d / "a.json", d / "greedy.json"], "not the same measurement: bots greedy ("),
        (lambda d: [d / "a.json", d / "junk.json"], "not a `dicestream balance --json` document"),
        (lambda d: [d / "a.json", d / "gone.json"], "gone.json: No such file"),
        (lambda d: [d / "mechanica.json"], "a run of mechanica, not sentient"),
        (lambda d: [d / "no-games.json"], "Expected `int` >= 1 - at `$[0].games`"),
        (lambda d: [d / "short.json"], "hold 1 seat and 2 position rows, not 2 of each"),
        (lambda d: [d / "lying.json"], "a row counts other games than its table"),
        (lambda d: [d / "a.json", d / "far.json"], "a.json games 0-1, "),
        (lambda d: [d / "a.json", d / "rebuilt.json"], "code 0123456789abcdef (" + "{d}/a.json: "),
    ],
)
def test_cli_pool_refuses_what_is_not_one_run(tmp_path: Path, make: Any, line: str) -> None:
    def save(name: str, *more: str) -> None:
        result = CliRunner().invoke(app, ["balance", *more, "--players", "2", "--games", "2", "--json"])
        assert result.exit_code == 0, result.output
        (tmp_path / name).write_text(result.stdout)

    save("a.json", "sentient", "--bots", "greedy,random")
    save("greedy.json", "sentient", "--first-game", "2")
    save("mechanica.json", "mechanica")
    save("far.json", "sentient", "--bots", "greedy,random", "--first-game", "9")
    (tmp_path / "junk.json").write_text('{"game": "sentient"}')
    doc = msgspec.json.decode((tmp_path / "a.json").read_bytes())
    save("later.json", "sentient", "--bots", "greedy,random", "--first-game", "2")
    later = msgspec.json.decode((tmp_path / "later.json").read_bytes())
    (tmp_path / "rebuilt.json").write_text(msgspec.json.encode({**later, "code": "0123456789abcdef"}).decode())
    line = line.replace("{d}", str(tmp_path))
    table = doc["tables"][0]
    for name, broken in (
        ("no-games", {**table, "games": 0}),
        ("short", {**table, "seats": table["seats"][:1]}),
        ("lying", {**table, "games": 1}),
    ):
        (tmp_path / f"{name}.json").write_text(msgspec.json.encode({**doc, "tables": [broken]}).decode())
    pooled = [x for pair in zip(["--pool"] * len(make(tmp_path)), map(str, make(tmp_path)), strict=True) for x in pair]
    result = CliRunner().invoke(app, ["balance", "sentient", *pooled, "--json"])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and line in result.stderr


def test_cli_pool_refuses_the_options_of_a_run(tmp_path: Path) -> None:
    part = tmp_path / "a.json"
    part.write_text(CliRunner().invoke(app, ["balance", "sentient", "--players", "2", "--games", "1", "--json"]).stdout)
    result = CliRunner().invoke(
        app, ["balance", "sentient", "--pool", str(part), "--games", "5", "--data", "x.toml", "--json"]
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert "--pool plays nothing: --games, --data would be ignored" in result.stderr


@pytest.mark.parametrize(
    ("wins", "games", "fair", "expected"),
    [
        (500, 1000, 0.5, WITHIN),  # 0.469-0.531
        (190, 400, 0.5, UNDECIDED),  # 0.427-0.524: a fair-looking share, not yet shown fair
        (20, 40, 0.5, UNDECIDED),  # 0.352-0.648
        (79, 120, 0.5, OUTSIDE),  # 0.570-0.737: Prosperity's 2-player search mirror on prosperity-data-3
        (40, 1000, 0.25, OUTSIDE),  # below the band
        (250, 1000, 0.25, WITHIN),
    ],
)
def test_the_verdict_is_what_the_interval_says_of_the_target(wins: int, games: int, fair: float, expected: str) -> None:
    low, high = wilson(wins, games)
    assert verdict(low, high, fair, 0.05) == expected


def test_every_row_carries_its_verdict() -> None:
    table = seat_shares(RULES, [_greedy], 2, 4, "verdict")
    assert {s.verdict for s in (*table.seats, *table.positions)} == {UNDECIDED}  # 4 games decide nothing


def test_within_target_is_the_share_against_one_over_n() -> None:
    table = seat_shares(RULES, [_greedy, RandomBot], 2, 6, "target")
    for s in table.seats:
        assert s.within_target == (abs(s.share - 0.5) <= 0.05 + 1e-9)
    assert table.balanced == all(s.within_target for s in table.seats)


def test_refuses_a_player_count_the_game_does_not_take() -> None:
    with pytest.raises(ValueError, match="2-4 players"):
        seat_shares(RULES, [_greedy], 5, 1, "bad")


def test_cli_json() -> None:
    result = CliRunner().invoke(
        app, ["balance", "sentient", "--games", "3", "--players", "2,3", "--bots", "greedy,random", "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = msgspec.json.decode(result.stdout)  # one document, nothing else on stdout
    assert doc["game"] == "sentient" and doc["games"] == 3 and doc["bots"] == ["greedy", "random"]
    assert [t["num_players"] for t in doc["tables"]] == [2, 3]
    three = doc["tables"][1]
    assert [s["bot"] for s in three["seats"]] == ["greedy", "random", "greedy"]
    assert three["fair_share"] == pytest.approx(1 / 3)
    assert all(s["low"] <= s["share"] <= s["high"] and s["games"] == 3 for s in three["seats"])
    again = CliRunner().invoke(
        app, ["balance", "sentient", "--games", "3", "--players", "2,3", "--bots", "greedy,random", "--json"]
    )
    assert msgspec.json.decode(again.stdout)["tables"] == doc["tables"]


def test_cli_default_counts_are_every_count_the_game_takes() -> None:
    result = CliRunner().invoke(app, ["balance", "mechanica", "--games", "1", "--json"])
    assert result.exit_code == 0, result.output
    rules = GAMES["mechanica"]
    counts = [t["num_players"] for t in msgspec.json.decode(result.stdout)["tables"]]
    assert counts == list(range(rules.min_players, rules.max_players + 1))


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["chess"], "unknown game type 'chess'"),
        (["sentient", "--bots", "greedy,smart"], "no bot 'smart' for sentient; known: random, greedy, ismcts"),
        (["sentient", "--bots", "ismcts,mcts"], "no bot 'mcts' for sentient; known: random, greedy, ismcts"),
        (["sentient", "--bots", "ismcts", "--iterations", "0"], "search at least one iteration a move"),
        (["sentient", "--workers", "0"], "play in at least one process"),
        (["sentient", "--players", "2,7"], "sentient takes 2-4 players, not 7"),
        (["sentient", "--players", "two"], "expected player counts"),
        (["sentient", "--games", "0"], "play at least one game"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    result = CliRunner().invoke(app, ["balance", *args, "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("dicestream: ") and line in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_documented_json_shape_is_the_real_one() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    example = msgspec.json.decode(
        doc.split("## `dicestream balance GAME`", 1)[1].split("```jsonc\n", 1)[1].split("```")[0]
    )
    real = msgspec.json.decode(
        CliRunner().invoke(app, ["balance", "sentient", "--games", "1", "--players", "2", "--json"]).stdout
    )
    assert list(example) == list(real)
    assert list(example["tables"][0]) == list(SeatTable.__struct_fields__) == list(real["tables"][0])
    assert list(example["tables"][0]["seats"][0]) == list(SeatShare.__struct_fields__)


def test_turn_positions_follow_who_plays_first_not_the_seat_number() -> None:
    from games.bots import RandomBot
    from games.catalog import SPECS
    from games.offline import new_game
    from games.play import play_game

    rules = SPECS["mechanica"].rules
    for i in range(6):
        seed = f"positions-{i}"
        order = play_game(rules, [RandomBot(0), RandomBot(1), RandomBot(2)], seed, 3).turn_order
        assert sorted(order) == [0, 1, 2]
        # Mechanica's first player is drawn at set-up, and play goes round from them.
        first = new_game(rules, 3, seed).state.first_player
        assert order == [(first + k) % 3 for k in range(3)]
    # Prosperity waits on one seat outside its turn (the last board chosen at set-up, a count's
    # choices): its positions come from its first player, not from who first acted alone.
    prosperity = SPECS["prosperity"].rules
    for i in range(6):
        played = play_game(prosperity, [RandomBot(0), RandomBot(1), RandomBot(2)], f"positions-{i}", 3)
        first = played.state.first_player
        assert played.turn_order == [(first + k) % 3 for k in range(3)], i
    table = seat_shares(rules, [lambda s: RandomBot(s)], 3, 12, seed_prefix="positions")
    assert sum(s.wins for s in table.positions) == pytest.approx(sum(s.wins for s in table.seats))
    assert [s.seat for s in table.positions] == [0, 1, 2]


def test_an_ismcts_run_is_seeded_and_the_same_in_one_or_two_processes() -> None:
    from games.balance import Kind

    search = [Kind("sentient", "ismcts", iterations=4)]
    one = seat_shares(RULES, search, 2, 3, "search", names=["ismcts"])
    assert seat_shares(RULES, search, 2, 3, "search", names=["ismcts"]) == one
    done: list[int] = []
    two = seat_shares(RULES, search, 2, 3, "search", names=["ismcts"], workers=2, progress=done.append)
    assert two == one and done == [1, 2, 3]
    assert [s.bot for s in one.seats] == ["ismcts", "ismcts"]
    # The budget is the search's own: another one plays other games.
    more = seat_shares(RULES, [Kind("sentient", "ismcts", iterations=12)], 2, 3, "search", names=["ismcts"])
    assert more.seats != one.seats or more.positions != one.positions


def test_a_mixed_line_up_in_two_processes_is_the_same_table() -> None:
    from games.balance import Kind

    makers = [Kind("sentient", "greedy"), Kind("sentient", "random")]
    assert seat_shares(RULES, makers, 3, 6, "procs", workers=2) == seat_shares(RULES, makers, 3, 6, "procs")


def test_cli_ismcts_json() -> None:
    args = ["balance", "sentient", "--games", "2", "--players", "2", "--bots", "ismcts,greedy", "--iterations", "3"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    doc = msgspec.json.decode(result.stdout)
    assert doc["bots"] == ["ismcts", "greedy"] and doc["iterations"] == 3
    assert [s["bot"] for s in doc["tables"][0]["seats"]] == ["ismcts", "greedy"]
    again = CliRunner().invoke(app, [*args, "--workers", "2", "--json"])
    assert again.exit_code == 0, again.output
    assert msgspec.json.decode(again.stdout)["tables"] == doc["tables"]
    greedy = CliRunner().invoke(app, ["balance", "sentient", "--games", "1", "--players", "2", "--json"])
    assert msgspec.json.decode(greedy.stdout)["iterations"] is None


def _variant(tmp_path: Path, version: str, money: int | None = None) -> Path:
    """A copy of Mechanica's data file under another data_version, its starting money changed."""
    from games.mechanica.components import DATA_FILE

    text = DATA_FILE.read_text()
    current = f'data_version = "{GAMES["mechanica"].data_version.split("+")[0]}"'
    assert current in text and "money = 8\n" in text
    text = text.replace(current, f'data_version = "{version}"')
    if money is not None:
        text = text.replace("money = 8\n", f"money = {money}\n")
    path = tmp_path / f"{version}.toml"
    path.write_text(text)
    return path


def _balance_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["balance", "mechanica", "--players", "2", "--json", *args])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = msgspec.json.decode(result.stdout)
    return doc


def test_cli_data_measures_the_variant_with_bots_that_read_it(tmp_path: Path) -> None:
    from games.balance import Kind
    from games.mcts import MCTSBot
    from games.mechanica.bots import GreedyBot
    from games.mechanica.components import load
    from games.mechanica.planner import PlannerBot
    from games.mechanica.rules import MechanicaRules

    own = _balance_json("--games", "6", "--bots", "greedy,planner")
    assert own["data_version"] == GAMES["mechanica"].data_version
    rich = _variant(tmp_path, "mechanica-rich", money=20)
    doc = _balance_json("--games", "6", "--bots", "greedy,planner", "--data", str(rich))
    assert doc["data_version"] == load(rich).data_version and doc["data_version"].startswith("mechanica-rich+")
    assert doc["tables"] != own["tables"]  # 20 starting money plays other games
    # In two processes the variant's games are the same games (its data is not swapped for the
    # catalog's in the workers).
    assert (
        _balance_json("--games", "6", "--bots", "greedy,planner", "--data", str(rich), "--workers", "2")["tables"]
        == doc["tables"]
    )
    # The bots read the variant: the greedy bot's data and the planner's rules are its.
    assert SPECS["mechanica"].with_data is not None
    rules = SPECS["mechanica"].with_data(rich)
    assert isinstance(rules, MechanicaRules)
    greedy, planner = Kind("mechanica", "greedy", rules=rules)(0), Kind("mechanica", "planner", rules=rules)(0)
    assert isinstance(greedy, GreedyBot) and isinstance(planner, PlannerBot)
    assert greedy.data is rules.data and planner.rules is rules
    search = Kind("mechanica", "ismcts", iterations=3, rules=rules)(0)
    assert isinstance(search, MCTSBot) and isinstance(search.prior, GreedyBot)
    assert search.rules is rules and search.prior.data is rules.data


def test_cli_data_search_mirror_over_a_variant_is_seeded(tmp_path: Path) -> None:
    rich = _variant(tmp_path, "mechanica-rich", money=20)
    args = ("--games", "2", "--bots", "ismcts", "--iterations", "3", "--data", str(rich))
    one = _balance_json(*args)
    assert _balance_json(*args, "--workers", "2")["tables"] == one["tables"]
    assert one["tables"] != _balance_json(*args[:-2])["tables"]


def test_cli_data_equal_to_the_games_own_is_the_same_table(tmp_path: Path) -> None:
    from games.mechanica.components import DATA_FILE

    copy = tmp_path / "copy.toml"
    copy.write_text(DATA_FILE.read_text())
    assert _balance_json("--games", "4", "--data", str(copy))["tables"] == _balance_json("--games", "4")["tables"]


def test_cli_data_an_earlier_file_is_measured_over_the_catalogs_rules_in_every_process() -> None:
    # The earlier file resolves to the catalog's own rules over it; a worker adopts its copy of
    # them and must rebind the search bots with it, or they refuse its games.
    from games.catalog import EARLIER

    spec = SPECS["mechanica"]
    [(version, file)] = spec.earlier_data.items()
    args = ("--games", "2", "--bots", "ismcts,greedy", "--iterations", "2", "--data", str(spec.package_dir / file))
    one = _balance_json(*args)
    assert one["data_version"] == version == EARLIER[("mechanica", version)].data_version
    assert _balance_json(*args, "--workers", "2")["tables"] == one["tables"]


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda tmp: tmp / "missing.toml", "no such file"),
        (lambda tmp: _write(tmp / "bad.toml", "money = ["), "cannot read component data"),
        # Other values under the current data's name (Prosperity's version is the file's word
        # alone; Mechanica's carries the content's hash): figures would name the wrong data.
        (
            lambda tmp: _write(tmp / "same-name.toml", _prosperity_other_values()),
            "give the variant a data_version of its own",
        ),
    ],
)
def test_cli_data_that_cannot_be_measured_is_refused(tmp_path: Path, make: Any, line: str) -> None:
    result = CliRunner().invoke(app, ["balance", "prosperity", "--games", "1", "--data", str(make(tmp_path))])
    assert result.exit_code == 2 and line in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def _prosperity_other_values() -> str:
    """Prosperity's data file, its version unchanged, one value changed (the first tile that costs
    energy, Workshops, costs more)."""
    from games.prosperity.components import DATA_FILE

    text = DATA_FILE.read_text()
    assert text.count("energy = -1\n") > 1
    return text.replace("energy = -1\n", "energy = -2\n", 1)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_bot_bound_to_other_rules_than_the_games_is_refused(tmp_path: Path) -> None:
    from games.balance import Kind

    assert SPECS["mechanica"].with_data is not None
    rules = SPECS["mechanica"].with_data(_variant(tmp_path, "mechanica-rich", money=20))
    with pytest.raises(ValueError, match="bound to other rules"):
        seat_shares(GAMES["mechanica"], [Kind("mechanica", "greedy", rules=rules)], 2, 1)
    with pytest.raises(ValueError, match="bound to other rules"):
        seat_shares(rules, [Kind("mechanica", "greedy")], 2, 1)
    # Random reads no data: it plays any rules of the game.
    assert seat_shares(rules, [Kind("mechanica", "random")], 2, 1).games == 1


class _LastSeatWins(type(RULES)):  # type: ignore[misc]
    """A variant of code over the catalog's data and version: its games are not the catalog's."""

    def result(self, state: Any) -> Any:
        played = super().result(state)
        return msgspec.structs.replace(played, winners=[len(played.scores) - 1])


def test_a_variant_of_code_over_the_catalogs_data_is_not_swapped_in_a_worker() -> None:
    variant = _LastSeatWins(RULES.data)  # type: ignore[attr-defined]
    one = seat_shares(variant, [RandomBot], 2, 4, "code")
    assert [s.wins for s in one.seats] == [0.0, 4.0]
    assert seat_shares(variant, [RandomBot], 2, 4, "code", workers=2) == one


def test_a_variant_named_like_the_catalogs_data_keeps_its_values_in_every_process(tmp_path: Path) -> None:
    from games.balance import Kind

    spec = SPECS["prosperity"]
    assert spec.with_data is not None
    same_name = spec.with_data(_write(tmp_path / "v.toml", _prosperity_other_values()))
    assert same_name.data_version == spec.rules.data_version
    makers = [Kind("prosperity", "greedy", rules=same_name)]
    one = seat_shares(same_name, makers, 2, 8, "variant")
    assert seat_shares(same_name, makers, 2, 8, "variant", workers=2) == one
    assert seat_shares(spec.rules, [Kind("prosperity", "greedy")], 2, 8, "variant") != one


def _plain_env(**extra: str) -> dict[str, str]:
    # What rich reads besides the descriptor (FORCE_COLOR, TTY_COMPATIBLE, ...) would change what it
    # writes: the tests judge the output a plain pipe or terminal gets.
    drop = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def test_a_json_run_shows_its_bar_on_a_terminal_and_keeps_stdout_for_the_document() -> None:
    # A search mirror runs for hours with `--json > file`: its stderr, a terminal, shows progress.
    try:
        main, sub = pty.openpty()
    except OSError:
        pytest.skip("no pseudo-terminals here")
    shown = bytearray()

    def drain() -> None:
        # Read while the child writes: a full terminal buffer would block it.
        with contextlib.suppress(OSError):  # EIO once the child's end is closed and drained
            while chunk := os.read(main, 65536):
                shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        with subprocess.Popen(
            [sys.executable, "-m", "dicestream.cli", "balance", "sentient", "--players", "2", "--games", "3", "--json"],
            stdout=subprocess.PIPE,
            stderr=sub,
            env=_plain_env(TERM="xterm", COLUMNS="100"),
        ) as child:
            os.close(sub)
            sub = -1
            out, _ = child.communicate(timeout=120)
        reader.join(timeout=10)
    finally:
        if sub >= 0:
            os.close(sub)
        os.close(main)
    assert child.returncode == 0, bytes(shown).decode(errors="replace")
    assert msgspec.json.decode(out)["games"] == 3  # one document, nothing else
    assert b"sentient, 2 players" in shown and b"3/3" in shown


def test_the_table_shows_each_row_on_one_line_of_80_columns() -> None:
    # What a pipe or a narrow terminal gets: a wrapped row splits a seat's figures over two lines.
    done = subprocess.run(
        [sys.executable, "-m", "dicestream.cli", "balance", "sentient", "--players", "3", "--games", "2"],
        capture_output=True,
        text=True,
        env=_plain_env(COLUMNS="80"),
        timeout=120,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    rows = [line for line in lines if "greedy" in line]
    assert len(rows) == 6 and all("undecided" in row and re.search(r"\d\.\d{3}-\d\.\d{3}", row) for row in rows)


def test_a_run_names_the_code_that_played_it_and_pool_sums_one_code_only(tmp_path: Path) -> None:
    def run(*more: str) -> dict[str, Any]:
        result = CliRunner().invoke(app, ["balance", "sentient", "--players", "2", "--json", *more])
        assert result.exit_code == 0, result.output
        doc: dict[str, Any] = msgspec.json.decode(result.stdout)
        return doc

    a = run("--games", "2")
    b = run("--games", "2", "--first-game", "2")
    assert a["code"] == b["code"] == code_fingerprint("sentient") != code_fingerprint("mechanica")
    assert len(a["code"]) == 16
    (tmp_path / "a.json").write_text(msgspec.json.encode(a).decode())
    (tmp_path / "b.json").write_text(msgspec.json.encode(b).decode())
    assert run("--pool", str(tmp_path / "a.json"), "--pool", str(tmp_path / "b.json"))["code"] == a["code"]
    # A part written before runs recorded their code pools with any; the sum's code is unknown.
    (tmp_path / "old.json").write_text(msgspec.json.encode({k: v for k, v in a.items() if k != "code"}).decode())
    assert run("--pool", str(tmp_path / "old.json"), "--pool", str(tmp_path / "b.json"))["code"] is None
    text = CliRunner().invoke(app, ["balance", "sentient", "--pool", str(tmp_path / "old.json")])
    assert text.exit_code == 0 and "code not recorded" in text.stdout
    # Parts of different code: refused, unless --any-code sums them knowingly.
    (tmp_path / "other.json").write_text(msgspec.json.encode({**b, "code": "0123456789abcdef"}).decode())
    parts = ["--pool", str(tmp_path / "a.json"), "--pool", str(tmp_path / "other.json")]
    refused = CliRunner().invoke(app, ["balance", "sentient", *parts])
    assert refused.exit_code == 2 and "played by another build (--any-code" in refused.stderr
    summed = run(*parts, "--any-code")
    assert summed["code"] == MIXED_CODE and summed["tables"][0]["games"] == 4
    # A mixed sum stays mixed: pooled again it is refused, whatever code the other part names.
    (tmp_path / "mixed.json").write_text(msgspec.json.encode(summed).decode())
    later = run("--games", "2", "--first-game", "4")
    (tmp_path / "later.json").write_text(msgspec.json.encode(later).decode())
    again = CliRunner().invoke(
        app, ["balance", "sentient", "--pool", str(tmp_path / "mixed.json"), "--pool", str(tmp_path / "later.json")]
    )
    assert again.exit_code == 2 and "code mixed: its games were played by different code" in again.stderr
    text = CliRunner().invoke(app, ["balance", "sentient", "--pool", str(tmp_path / "mixed.json"), "--any-code"])
    assert text.exit_code == 0 and "code mixed)" in text.stdout
    # The first part naming its code is the reference, not the first part.
    first_unknown = ["--pool", str(tmp_path / "old.json"), *parts]
    refused = CliRunner().invoke(app, ["balance", "sentient", *first_unknown])
    assert refused.exit_code == 2 and f"({tmp_path / 'a.json'}: {a['code']})" in refused.stderr
    alone = CliRunner().invoke(app, ["balance", "sentient", "--games", "1", "--any-code"])
    assert alone.exit_code == 2 and "--any-code sums parts: it goes with --pool" in alone.stderr


def test_a_run_whose_code_changed_on_disk_while_it_played_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    hashes = iter(["1111111111111111", "2222222222222222"])
    monkeypatch.setattr(fingerprint, "code_fingerprint", lambda game, data=None: next(hashes))
    result = CliRunner().invoke(app, ["balance", "sentient", "--players", "2", "--games", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert msgspec.json.decode(result.stdout)["code"] == MIXED_CODE
    assert "the code changed on disk during the run (1111111111111111, then 2222222222222222)" in result.stderr


def test_the_code_hash_changes_with_any_file_it_covers_and_with_a_variant_data_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = code_fingerprint("prosperity")
    variant = tmp_path / "variant.toml"
    variant.write_text(SPECS["prosperity"].package_dir.joinpath("data", "prosperity.toml").read_text())
    assert code_fingerprint("prosperity", variant) != base
    module = tmp_path / "rules.py"
    module.write_text('"""Rules."""\nLIMIT = 2\n')
    monkeypatch.setattr(fingerprint, "_files", lambda game: iter([("prosperity/rules.py", module)]))
    before = code_fingerprint("prosperity")
    module.write_text('"""Other words."""\n# a comment\nLIMIT = 2\n')
    assert code_fingerprint("prosperity") == before
    module.write_text('"""Rules."""\nLIMIT = 3\n')
    assert code_fingerprint("prosperity") != before


def test_the_code_hash_ignores_comments_docstrings_and_layout_but_not_code(tmp_path: Path) -> None:
    def normal(name: str, text: str) -> bytes:
        (tmp_path / name).write_text(text)
        return normalized(tmp_path / name)

    base = normal("a.py", 'def f(x):\n    """Twice."""\n    return 2 * x\n')
    assert normal("b.py", "# a note\ndef f(x):\n    return 2*x  # twice\n") == base
    assert normal("c.py", "def f(x):\n    return 3 * x\n") != base
    data = normal("a.toml", "# tiles\nlevel = 2\n")
    assert normal("b.toml", "level   =   2   # the level\n") == data
    assert normal("c.toml", "level = 3\n") != data
