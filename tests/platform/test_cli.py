"""The command line as a user runs it: `dicestream up` in one process, the other commands in
others, over a real Redis (each test under its own key prefix)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from contracts.schema import documents
from tests.conftest import sync_client

CLI = [sys.executable, "-m", "dicestream.cli"]


@pytest.fixture
def env(redis_url: str, prefix: str, tmp_path: Path) -> dict[str, str]:
    # COLUMNS=80: what a pipe or a narrow terminal gets; output meant for scripts must not wrap.
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "DICESTREAM_PREFIX": prefix,
        "DICESTREAM_SHARDS": "2",
        "DICESTREAM_LOG_LEVEL": "warning",
        "DICESTREAM_DATA": str(tmp_path / "data"),
        "COLUMNS": "80",
        "DICESTREAM_HEALTH_ADDR": "127.0.0.1:0",
        "PYTHONUNBUFFERED": "1",
    }


def cli(env: dict[str, str], *args: str, timeout: float = 60, code: int = 0) -> str:
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == code, f"dicestream {' '.join(args)}:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture
def up(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([*CLI, "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"health on (http://\S+)", line)
        assert found, f"dicestream up printed {line!r}"
        # Ready (/readyz 200) once every service is connected and holds its shard leases.
        deadline = time.monotonic() + 60
        while not ready(found.group(1)):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "dicestream up did not become ready"
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        proc.wait(15)


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_new_send_watch_and_rebuild_a_game_from_the_command_line(
    env: dict[str, str], up: subprocess.Popen[str], redis_url: str, prefix: str
) -> None:
    out = cli(env, "new", "sentient", "--players", "2", "--game-id", "cli-game")
    assert "accepted lifecycle.CreateGame" in out and "cli-game" in out
    tokens = []
    for seat in range(2):
        out = cli(
            env, "send", "cli-game", "lifecycle.JoinSeat", f'{{"seat": {seat}, "name": "p{seat}"}}', "--seat", str(seat)
        )
        # The token line is longer than 80 columns and still one line a script can cut.
        [token] = re.findall(r"seat token \(keep it secret\): ([0-9a-f]{64})$", out, re.M)
        tokens.append(token)
    # A refusal exits 1 (its JSON still on stdout).
    refused = json.loads(
        cli(env, "send", "cli-game", "lifecycle.StartGame", "--seat", "0", "--token", tokens[1], "--json", code=1)
    )
    assert (refused["outcome"]["status"], refused["outcome"]["rule"]) == ("rejected", "GAME-AUTH")
    started = json.loads(
        cli(env, "send", "cli-game", "lifecycle.StartGame", "--seat", "0", "--token", tokens[0], "--json")
    )
    assert started["outcome"]["status"] == "accepted" and started["token"] is None
    # A seat's refusal is public; the forged one above (anyone can send it) is not.
    again = json.loads(
        cli(env, "send", "cli-game", "lifecycle.StartGame", "--seat", "0", "--token", tokens[0], "--json", code=1)
    )
    assert again["outcome"]["rule"] == "GAME-NOT-OPEN"

    watched = cli(env, "watch", "cli-game", "--no-follow")
    lines = watched.splitlines()
    assert [ln.split()[1] for ln in lines[:4]] == [
        "lifecycle.GameCreated",
        "lifecycle.SeatJoined",
        "lifecycle.SeatJoined",
        "lifecycle.GameStarted",
    ]
    assert [ln.split()[1] for ln in lines].count("lifecycle.CommandRejected") == 1
    assert "sentient.DeckShuffled" in watched
    # Whole envelopes for machines: what is hidden is visibly absent, not cut off.
    events = [json.loads(ln) for ln in cli(env, "watch", "cli-game", "--no-follow", "--json").splitlines()]
    assert [e["version"] for e in events if e["type"] != "lifecycle.CommandRejected"] == list(range(1, len(events)))
    shown = {e["type"]: e["payload"] for e in events}
    assert shown["lifecycle.GameCreated"]["seed"] is None and shown["lifecycle.SeatJoined"]["token_hash"] is None
    assert shown["sentient.DeckShuffled"]["cards"] is None

    client = sync_client(redis_url)
    try:

        def models() -> set[bytes]:
            return {k for k in client.scan_iter(match=f"{prefix}:rm:*") if not k.endswith(b":pos")}

        deadline = time.monotonic() + 10
        while not any(k.endswith(b":game:cli-game") for k in models()):
            assert time.monotonic() < deadline, "the projector wrote no read model of the game"
            time.sleep(0.1)
        before = models()
        out = cli(env, "projector", "rebuild")
        assert "rebuilt read models of 1 games" in out
        assert models() == before
    finally:
        client.close()


def test_schema_writes_every_document(env: dict[str, str], tmp_path: Path) -> None:
    out = cli(env, "schema", "--out", str(tmp_path / "schema"))
    written = sorted(p.relative_to(tmp_path / "schema").as_posix() for p in (tmp_path / "schema").rglob("*.json"))
    assert written == sorted(documents())
    assert f"wrote {len(written)} schema documents" in out
