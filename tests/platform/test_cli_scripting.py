"""The command line as a script uses it: documented exit codes, one line on stderr and never a
traceback (unless --debug), JSON documents on stdout. Real processes, real Redis (standalone and
cluster)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dicestream.errors import Code
from dicestream.loop import run as run_loop
from tests.conftest import sync_client
from tests.platform.cli_helpers import CLI, cli_env, fails, json_of, ok, run, service


@pytest.fixture
def env(redis_url: str, prefix: str, tmp_path: Path) -> dict[str, str]:
    return cli_env(redis_url, prefix, tmp_path)


@pytest.fixture
def up(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    with service(env) as proc:
        yield proc


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_help_lists_the_exit_codes(tmp_path: Path) -> None:
    out = ok(cli_env("redis://127.0.0.1:1/0", "unused", tmp_path, COLUMNS="200"), "--help")
    for code in Code:
        assert f"  {int(code)} " in out, f"exit code {int(code)} not in --help"
    assert "--debug" in out and "DICESTREAM_DEBUG" in out


def test_input_errors_and_missing_games_exit_at_once_with_one_line(
    env: dict[str, str], redis_url: str, prefix: str
) -> None:
    started = time.monotonic()
    _, line = fails(env, Code.USAGE, "new", "chess")
    assert "unknown game type 'chess'" in line and "sentient" in line
    _, line = fails(env, Code.USAGE, "new", "sentient", "--game-id", "bad{id}")
    assert "bad game id 'bad{id}'" in line
    _, line = fails(env, Code.USAGE, "demo", "--titles", "sentient,chess")
    assert "'chess'" in line
    _, line = fails(env, Code.USAGE, "tournament", "--game", "chess")
    assert "'chess'" in line
    _, line = fails(env, Code.USAGE, "tournament", "--bots", "greedy,genius")
    assert "'genius'" in line
    _, line = fails(env, Code.USAGE, "send", "g1", "lifecycle.JoinSeat", '{"seat": 0,')
    assert "payload of lifecycle.JoinSeat: Input data was truncated" in line
    _, line = fails(env, Code.USAGE, "send", "g1", "lifecycle.JoinSeat", '{"seat": 0, "nmae": "x"}')
    assert "nmae" in line
    _, line = fails(env, Code.USAGE, "send", "g1", "chess.Castle")
    assert "unknown command type 'chess.Castle'" in line
    _, line = fails(env, Code.USAGE, "send", "bad{id}", "lifecycle.StartGame")
    assert "bad game id" in line
    _, line = fails({**env, "DICESTREAM_SHARDS": "eight"}, Code.USAGE, "status")
    assert "DICESTREAM_SHARDS='eight'" in line
    assert time.monotonic() - started < 30, "an input error waited for something"
    # Refused before sending anything: no intake stream got an entry.
    client = sync_client(redis_url)
    try:
        assert [client.xlen(f"{prefix}:cmd:{{{s}}}") for s in range(4)] == [0, 0, 0, 0]
    finally:
        client.close()

    for args in (
        ["watch", "nosuch"],
        ["replay", "nosuch"],
        ["verify", "nosuch"],
        ["audit", "nosuch", "--version", "1"],
        ["export", "nosuch"],
    ):
        begun = time.monotonic()
        _, line = fails(env, Code.NOT_FOUND, *args)
        assert "no game 'nosuch'" in line and prefix in line, line
        assert time.monotonic() - begun < 10
    _, line = fails(env, Code.USAGE, "replay", "bad{id}")
    assert "neither a file nor a valid game id" in line
    # Nobody answers: exit 3 once --timeout has passed, saying what to check.
    _, line = fails(env, Code.REDIS, "new", "sentient", "--timeout", "1")
    assert "no answer from a referee within 1 s" in line


def test_bad_files_exit_2(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    for args in (["verify", str(bad)], ["replay", str(bad)], ["import", str(bad)]):
        _, line = fails(env, Code.USAGE, *args)
        assert "not a dicestream game file" in line, line
    _, line = fails(env, Code.USAGE, "import", str(tmp_path / "missing.jsonl"))
    assert "no such file" in line


def test_unreachable_redis_exits_3_with_one_line_naming_the_url(tmp_path: Path) -> None:
    url = f"redis://operator:hunter2@127.0.0.1:{closed_port()}/0"
    # `up` and `serve` first wait DICESTREAM_START_WAIT_S (10 s) for Redis, logging each try
    # (tests/platform/test_faults.py); with 0 they fail at once, with the same one line.
    env = {**cli_env(url, "unused", tmp_path), "DICESTREAM_START_WAIT_S": "0"}
    for args in (
        ["new", "sentient"],
        ["send", "g1", "lifecycle.StartGame"],
        ["watch", "g1"],
        ["replay", "g1"],
        ["status"],
        ["status", "--json"],
        ["dead", "list"],
        ["dead", "retry", "--all"],
        ["projector", "rebuild"],
        ["up"],
        ["serve", "referee"],
    ):
        stdout, line = fails(env, Code.REDIS, *args)
        assert stdout == ""
        assert "unreachable" in line and url.replace("hunter2", "***") in line and "hunter2" not in line, line
        assert "Connection refused" in line
    # --debug (or DICESTREAM_DEBUG=1): the traceback, for a bug report.
    for debug_env, argv in (({}, ["--debug", "status"]), ({"DICESTREAM_DEBUG": "1"}, ["status"])):
        done = run({**env, **debug_env}, *argv)
        assert done.returncode != 0 and "Traceback" in done.stderr and "ConnectionError" in done.stderr


def test_a_game_scripted_with_json_and_exit_codes(
    env: dict[str, str], up: subprocess.Popen[str], tmp_path: Path
) -> None:
    # A watcher started before the game exists waits for it with --wait.
    watcher = subprocess.Popen(
        [*CLI, "watch", "scripted", "--wait", "--no-follow", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    created = json_of(env, "new", "sentient", "--game-id", "scripted", "--json")
    assert created["game_id"] == "scripted" and created["outcome"]["status"] == "accepted"
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert json.loads(out.splitlines()[0])["type"] == "lifecycle.GameCreated"

    # The id is printed only for a game that was created; a refusal exits 1 with its rule.
    out = ok(env, "new", "sentient", "--players", "2")
    assert "accepted lifecycle.CreateGame" in out and "game id:" in out
    out, line = fails(env, Code.REFUSED, "new", "sentient", "--game-id", "scripted")
    assert "GAME-EXISTS" in out and "game id:" not in out
    assert "GAME-EXISTS" in line
    out, line = fails(env, Code.REFUSED, "new", "sentient", "--game-id", "scripted", "--json")
    assert json.loads(out)["outcome"]["rule"] == "GAME-EXISTS" and "GAME-EXISTS" in line

    tokens = []
    for seat in range(2):
        joined = json_of(
            env, "send", "scripted", "lifecycle.JoinSeat", f'{{"seat": {seat}, "name": "p{seat}"}}', "--json"
        )
        assert joined["outcome"]["status"] == "accepted" and len(joined["token"]) == 64
        tokens.append(joined["token"])
    out, line = fails(
        env, Code.REFUSED, "send", "scripted", "lifecycle.StartGame", "--seat", "0", "--token", tokens[1], "--json"
    )
    assert json.loads(out)["outcome"]["rule"] == "GAME-AUTH" and "GAME-AUTH" in line
    started = json_of(env, "send", "scripted", "lifecycle.StartGame", "--seat", "0", "--token", tokens[0], "--json")
    assert started["outcome"]["status"] == "accepted"

    verdict = json_of(env, "verify", "scripted", "--json")
    assert verdict["ok"] is True and verdict["findings"] == [] and verdict["game_id"] == "scripted"
    steps = [json.loads(line) for line in ok(env, "replay", "scripted", "--json").splitlines()]
    assert steps and steps[0]["type"] == "lifecycle.GameCreated"
    report = json_of(env, "audit", "scripted", "--version", "1", "--json")
    assert report["game_id"] == "scripted"
    _, line = fails(env, Code.NOT_FOUND, "audit", "scripted", "--version", "999")
    assert "999" in line

    # A running game's export is refused (its secrets), unless asked for.
    _, line = fails(env, Code.REFUSED, "export", "scripted")
    assert "not over" in line
    path = tmp_path / "scripted.jsonl"
    exported = json_of(env, "export", "scripted", "--allow-running", "--out", str(path), "--json")
    assert exported["path"] == str(path) and path.is_file()
    assert exported["events"] == started["outcome"]["to_version"] and exported["commands"] >= 4
    assert exported["records"] == exported["events"] + exported["commands"]
    imported = json_of(env, "import", str(path), "--json")
    assert imported == {"game_id": "scripted-imported", "events": exported["events"], "file": str(path)}
    _, line = fails(env, Code.REFUSED, "import", str(path))
    assert "scripted-imported" in line
    assert json_of(env, "verify", str(path), "--json")["ok"] is True

    rebuilt = json_of(env, "projector", "rebuild", "--json")
    assert rebuilt["games"] >= 3
    written = json_of(env, "schema", "--out", str(tmp_path / "schema"), "--json")
    assert written["out"] == str(tmp_path / "schema") and "index.json" in written["documents"]


def test_verify_fail_exits_1(env: dict[str, str], up: subprocess.Popen[str], tmp_path: Path) -> None:
    ok(env, "new", "sentient", "--game-id", "tampered")
    path = tmp_path / "t.jsonl"
    ok(env, "export", "tampered", "--allow-running", "--out", str(path))
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["event"]["version"] = 7  # an event at the wrong version
    path.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    done = run(env, "verify", str(path), "--json")
    assert done.returncode == Code.REFUSED, done.stdout + done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["ok"] is False and verdict["findings"]
    assert run(env, "verify", str(path)).stdout.startswith("FAIL")


def test_tournament_and_demo_print_json(env: dict[str, str]) -> None:
    result = json_of(env, "tournament", "--games", "2", "--json", timeout=180)
    assert result["game"] == "sentient" and result["games"] == 2 and len(result["records"]) == 2
    assert {s["bot"] for s in result["standings"]} == {"greedy", "random"}
    assert sum(s["games"] for s in result["standings"]) == 4  # two seats a game
    for s in result["standings"]:
        assert s["rating"] == pytest.approx(s["rating_mu"] - 3 * s["rating_sigma"], abs=0.01)
        assert s["rating_sigma"] < 25 / 3  # two games made each rating surer
    demo = json_of(env, "demo", "--titles", "mechanica", "--players", "1", "--json", timeout=180)
    [game] = demo["games"]
    assert game["game_id"].startswith("mechanica-") and len(game["scores"]) == 1
    assert game["url"] == f"{demo['web']}/games/{game['game_id']}"
    bare = json_of(env, "demo", "--titles", "mechanica", "--players", "1", "--web", "off", "--json", timeout=180)
    assert "url" not in bare["games"][0] and "web" not in bare


def test_the_demo_keeps_each_games_page_open_with_keep(env: dict[str, str]) -> None:
    """`demo` serves the page on a free port while it runs and prints each game's URL as the game
    starts; with --keep the page stays up after the games, until Ctrl-C."""
    proc = subprocess.Popen(
        [*CLI, "demo", "--titles", "sentient", "--keep"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops" in line:
                break
        out = "".join(lines)
        [page] = re.findall(r"sentient-\w+: (http://127\.0\.0\.1:\d+/games/sentient-\w+)", out)
        assert re.search(r"web page: http://127\.0\.0\.1:\d+/", out), out
        game_id = page.rsplit("/", 1)[1]
        base = page.split("/games/")[0]
        with httpx.Client(base_url=base, timeout=10) as http:
            html = http.get(f"/games/{game_id}")
            assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
            state = http.get(f"/v1/games/{game_id}").json()
            assert state["summary"]["status"] == "over"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) in (0, 130)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_closed_pipe_and_ctrl_c_end_quietly(env: dict[str, str], redis_url: str, prefix: str) -> None:
    client = sync_client(redis_url)
    try:
        pipe = client.pipeline()
        event = {"type": "lifecycle.GameCreated", "schema_version": 3, "game_id": "piped", "version": 1, "payload": {}}
        for _ in range(3000):
            pipe.xadd(f"{prefix}:game:{{piped}}:public", {"data": json.dumps(event)})
        pipe.execute()
    finally:
        client.close()
    # `dicestream watch piped --json | head -1`: the reader leaves, the writer ends with 0, silently.
    proc = subprocess.Popen(
        [*CLI, "watch", "piped", "--json", "--no-follow"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())["game_id"] == "piped"
    proc.stdout.close()
    assert proc.wait(30) == 0
    assert proc.stderr.read() == ""
    # Ctrl-C stops a follow: 130, as shells report it, and no "Aborted!" or traceback.
    proc = subprocess.Popen(
        [*CLI, "watch", "piped"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    # Nobody reads on: the watch fills the pipe and blocks in a write, where asyncio's own first
    # Ctrl-C (cancel the main task) never reaches the loop. It must end all the same.
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == Code.INTERRUPTED
    assert proc.stderr.read() == ""


def test_an_interrupt_at_once_loop_puts_the_callers_ctrl_c_back() -> None:
    # `watch` raises at Ctrl-C even while blocked on a full pipe; whoever ran it in-process keeps
    # its own Ctrl-C once the command is over, whether it ended or failed.
    def mine(signum: int, frame: object) -> None:
        pass

    async def seen() -> object:
        return signal.getsignal(signal.SIGINT)

    async def failing() -> None:
        raise RuntimeError("the command failed")

    before = signal.signal(signal.SIGINT, mine)
    try:
        inside = run_loop(seen(), interrupt_at_once=True)
        assert inside is not mine and inside is not signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is mine
        with pytest.raises(RuntimeError, match="the command failed"):
            run_loop(failing(), interrupt_at_once=True)
        assert signal.getsignal(signal.SIGINT) is mine
        assert run_loop(seen()) is mine  # without it, asyncio's own handling (it keeps a custom handler)
    finally:
        signal.signal(signal.SIGINT, before)
