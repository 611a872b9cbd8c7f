"""The gateway as a service: its settings, `dicestream up` printing its URL, `dicestream gateway
add-key`, health and metrics."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from services.config import ENV_VARS
from services.gateway.settings import from_env

CLI = [sys.executable, "-m", "dicestream.cli"]
SETTINGS_PY = Path(__file__).resolve().parents[2] / "services" / "gateway" / "settings.py"


def test_every_gateway_variable_is_listed_in_env_vars() -> None:
    read = set(re.findall(r'"(DICESTREAM_[A-Z_]+)"', SETTINGS_PY.read_text()))
    assert read and read <= set(ENV_VARS), sorted(read - set(ENV_VARS))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DICESTREAM_HTTP_ADDR", "localhost"),
        ("DICESTREAM_HTTP_ADDR", "1.2.3.4:99999"),
        ("DICESTREAM_GATEWAY_ID", "a b"),
        ("DICESTREAM_CORS_ORIGINS", "example.org"),
        ("DICESTREAM_RATE_LIMIT", "lots"),
        ("DICESTREAM_CLIENT_RATE_LIMIT", "5 per fortnight"),
        ("DICESTREAM_MAX_BODY_BYTES", "10"),
        ("DICESTREAM_COMMAND_TIMEOUT_S", "soon"),
        ("DICESTREAM_GATEWAY_MAX_STREAMS", "0"),
        ("DICESTREAM_GATEWAY_MAX_SUBSCRIBERS", "-1"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name) as err:
        from_env({name: value})
    assert "\n" not in str(err.value)


def test_settings_from_the_environment() -> None:
    s = from_env(
        {
            "DICESTREAM_HTTP_ADDR": "[::1]:0",
            "DICESTREAM_CORS_ORIGINS": "https://a.example, http://localhost:5173",
            "DICESTREAM_RATE_LIMIT": "off",
            "DICESTREAM_CLIENT_RATE_LIMIT": "10/second;100/minute",
        }
    )
    assert (s.host, s.port) == ("::1", 0)
    assert s.cors_origins == ("https://a.example", "http://localhost:5173")
    assert s.rate_limit == "" and s.client_rate_limit == "10/second;100/minute"
    default = from_env({})
    assert (default.host, default.port, default.max_body_bytes) == ("127.0.0.1", 8080, 65536)


def test_serve_gateway_refuses_a_bad_variable_in_one_line() -> None:
    env = {**os.environ, "DICESTREAM_HTTP_ADDR": "nowhere", "REDIS_URL": "redis://127.0.0.1:1/0"}
    done = subprocess.run([*CLI, "serve", "gateway"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "DICESTREAM_HTTP_ADDR" in done.stderr


@pytest.mark.redis
@pytest.mark.standalone_only(
    "runs `dicestream up` (every service) as a user would; the gateway's cluster tests are apart"
)
def test_up_prints_the_gateway_url_and_add_key_makes_a_working_key(redis_url: str, prefix: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DICESTREAM_PREFIX": prefix,
        "DICESTREAM_SHARDS": "2",
        "DICESTREAM_LOG_LEVEL": "warning",
        "DICESTREAM_DATA": str(tmp_path / "data"),
        "DICESTREAM_HTTP_ADDR": "127.0.0.1:0",
        "COLUMNS": "200",
    }
    proc = subprocess.Popen([*CLI, "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            for line in proc.stdout or ():
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        url = page = None
        deadline = time.monotonic() + 60
        while url is None or page is None:
            assert time.monotonic() < deadline and proc.poll() is None, "dicestream up printed no gateway URL"
            with contextlib.suppress(queue.Empty):
                line = lines.get(timeout=1)
                found = re.search(r"gateway: (http://127\.0\.0\.1:\d+)", line)
                url = found.group(1) if found else url
                shown = re.search(r"web page: (http://127\.0\.0\.1:\d+/)", line)
                page = shown.group(1) if shown else page
        assert page == f"{url}/"
        key = subprocess.run(
            [*CLI, "gateway", "add-key", "cli-test", "--scope", "create"], env=env, capture_output=True, text=True
        )
        assert key.returncode == 0, key.stderr
        assert re.fullmatch(r"dsk_[A-Za-z0-9_-]{40,}", key.stdout.strip())
        with httpx.Client(base_url=url, timeout=15) as http:
            assert http.get("/livez").status_code == 200 and http.get("/readyz").status_code == 200
            lobby = http.get("/")
            assert lobby.status_code == 200 and lobby.headers["content-type"].startswith("text/html")
            created = http.post(
                "/v1/games", json={"game_type": "sentient", "num_players": 2}, headers={"X-API-Key": key.stdout.strip()}
            )
            assert created.status_code == 201, created.text
            metrics = http.get("/metrics")
            assert metrics.status_code == 200 and "dicestream_gateway_commands_total" in metrics.text
            denied = http.post(
                f"/v1/games/{created.json()['game_id']}/seats/0/bot",
                json={"kind": "random"},
                headers={"X-API-Key": key.stdout.strip()},
            )
            assert denied.status_code == 403
        revoked = subprocess.run([*CLI, "gateway", "revoke-key", "cli-test"], env=env, capture_output=True, text=True)
        assert revoked.returncode == 0 and "revoked 1" in revoked.stdout
    finally:
        proc.terminate()
        proc.wait(20)
    assert proc.returncode in (0, -15), proc.stderr.read() if proc.stderr else ""
