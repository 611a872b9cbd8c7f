"""Running `dicestream` as a script does: subprocesses, exit codes, stdout and stderr apart."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

CLI = [sys.executable, "-m", "dicestream.cli"]


def cli_env(redis_url: str, prefix: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    # COLUMNS=80: what a pipe or a narrow terminal gets; output meant for scripts must not wrap.
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DICESTREAM_PREFIX": prefix,
        "DICESTREAM_SHARDS": "4",
        "DICESTREAM_LOG_LEVEL": "warning",
        "DICESTREAM_DATA": str(tmp_path / "data"),
        "COLUMNS": "80",
        "DICESTREAM_HEALTH_ADDR": "127.0.0.1:0",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }
    env.pop("DICESTREAM_DEBUG", None)
    return env


def run(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def ok(env: dict[str, str], *args: str, timeout: float = 60) -> str:
    done = run(env, *args, timeout=timeout)
    assert done.returncode == 0, f"dicestream {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def fails(env: dict[str, str], code: int, *args: str, timeout: float = 60) -> tuple[str, str]:
    """Run a command that must exit `code` with exactly one line on stderr and no traceback;
    (stdout, that line)."""
    done = run(env, *args, timeout=timeout)
    where = f"dicestream {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == code, where
    assert "Traceback" not in done.stderr, where
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dicestream: "), where
    return done.stdout, lines[0]


def json_of(env: dict[str, str], *args: str, timeout: float = 60) -> Any:
    return json.loads(ok(env, *args, timeout=timeout))


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def service(env: dict[str, str], *argv: str) -> Iterator[subprocess.Popen[str]]:
    """`dicestream up` (no argv) or `dicestream serve NAME`, until ready (/readyz 200)."""
    args = list(argv) or ["up"]
    proc = subprocess.Popen([*CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"health on (http://\S+)", line)
        assert found, f"dicestream {' '.join(args)} printed {line!r}: {proc.stderr.read() if proc.stderr else ''}"
        deadline = time.monotonic() + 60
        while not ready(found.group(1)):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, f"dicestream {' '.join(args)} did not become ready"
            time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def wait_for(predicate: Any, what: str, timeout_s: float = 20.0, every_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = predicate()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every_s)
