"""The gateway's own settings, read from the environment (the shared ones are services.config)."""

from __future__ import annotations

import os
import re

import msgspec
from limits import parse_many

# Every variable read here is listed, with what it sets, in services.config.ENV_VARS.

RATE_LIMIT = "60/second;1000/minute"
CLIENT_RATE_LIMIT = "30/second;600/minute"
# Opening a game file folds it in the gateway: counted per address in this process (so the page
# works with Redis down), and tighter than the API's limit.
FILE_RATE_LIMIT = "10/second;300/minute"
MAX_FILE_BYTES = 4 << 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class GatewaySettings(msgspec.Struct, frozen=True, kw_only=True):
    host: str = "127.0.0.1"
    port: int = 8080
    instance: str = ""
    cors_origins: tuple[str, ...] = ()
    # `limits` rate strings ("60/second;1000/minute"); "" turns the limit off.
    rate_limit: str = RATE_LIMIT
    client_rate_limit: str = CLIENT_RATE_LIMIT
    max_body_bytes: int = 65536
    # The page's game files (POST /v1/files/*): largest body, requests per address.
    max_file_bytes: int = MAX_FILE_BYTES
    file_rate_limit: str = FILE_RATE_LIMIT
    command_timeout_s: float = 10.0
    max_streams: int = 500
    max_subscribers: int = 5000
    forwarded_allow_ips: str | None = None


def parse_addr(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPV6]:PORT` or `:PORT` (loopback)."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"DICESTREAM_HTTP_ADDR={text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    host = host.removeprefix("[").removesuffix("]") or "127.0.0.1"
    return host, int(port)


def _rate(name: str, value: str) -> str:
    value = value.strip()
    if value.lower() in ("", "off", "0", "none"):
        return ""
    try:
        parse_many(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected rates like 60/second;1000/minute, or off") from None
    return value


def _int(name: str, value: str, low: int, high: int) -> int:
    try:
        n = int(value)
    except ValueError:
        n = low - 1
    if not low <= n <= high:
        raise ValueError(f"{name}={value!r}: expected a whole number from {low} to {high}")
    return n


def _seconds(name: str, value: str) -> float:
    try:
        s = float(value)
    except ValueError:
        s = -1.0
    if not 0.1 <= s <= 600:
        raise ValueError(f"{name}={value!r}: expected seconds from 0.1 to 600")
    return s


def from_env(env: dict[str, str] | None = None) -> GatewaySettings:
    """Raises ValueError with a one-line message naming the variable at fault."""
    e = dict(os.environ if env is None else env)
    host, port = parse_addr(e.get("DICESTREAM_HTTP_ADDR", "127.0.0.1:8080"))
    instance = e.get("DICESTREAM_GATEWAY_ID", "").strip()
    if instance and not _NAME.fullmatch(instance):
        raise ValueError(f"DICESTREAM_GATEWAY_ID={instance!r}: expected letters, digits, '_', '.', '-' (at most 64)")
    origins = tuple(o.strip() for o in e.get("DICESTREAM_CORS_ORIGINS", "").split(",") if o.strip())
    bad = [o for o in origins if o != "*" and not re.fullmatch(r"https?://[^/\s]+", o)]
    if bad:
        raise ValueError(f"DICESTREAM_CORS_ORIGINS: {bad[0]!r} is not an origin like https://example.org, or *")
    forwarded = e.get("DICESTREAM_FORWARDED_ALLOW_IPS", "").strip() or None
    return GatewaySettings(
        host=host,
        port=port,
        instance=instance,
        cors_origins=origins,
        rate_limit=_rate("DICESTREAM_RATE_LIMIT", e.get("DICESTREAM_RATE_LIMIT", RATE_LIMIT)),
        client_rate_limit=_rate(
            "DICESTREAM_CLIENT_RATE_LIMIT", e.get("DICESTREAM_CLIENT_RATE_LIMIT", CLIENT_RATE_LIMIT)
        ),
        max_body_bytes=_int("DICESTREAM_MAX_BODY_BYTES", e.get("DICESTREAM_MAX_BODY_BYTES", "65536"), 1024, 1 << 24),
        max_file_bytes=_int(
            "DICESTREAM_MAX_FILE_BYTES", e.get("DICESTREAM_MAX_FILE_BYTES", str(MAX_FILE_BYTES)), 1024, 1 << 28
        ),
        file_rate_limit=_rate("DICESTREAM_FILE_RATE_LIMIT", e.get("DICESTREAM_FILE_RATE_LIMIT", FILE_RATE_LIMIT)),
        command_timeout_s=_seconds("DICESTREAM_COMMAND_TIMEOUT_S", e.get("DICESTREAM_COMMAND_TIMEOUT_S", "10")),
        max_streams=_int("DICESTREAM_GATEWAY_MAX_STREAMS", e.get("DICESTREAM_GATEWAY_MAX_STREAMS", "500"), 1, 100000),
        max_subscribers=_int(
            "DICESTREAM_GATEWAY_MAX_SUBSCRIBERS", e.get("DICESTREAM_GATEWAY_MAX_SUBSCRIBERS", "5000"), 1, 1000000
        ),
        forwarded_allow_ips=forwarded,
    )
