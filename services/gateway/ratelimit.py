"""Rate limits (the `limits` library, sliding-window counters in Redis, so every gateway shares
them; on a cluster each limit's two keys share a hash tag) and the body size limit.

Both run as the first middleware of every route: a body announced larger than the limit is
refused with 413 before anything touches Redis; then the per-address limit, and the per-client
limit (per API key or seat token presented, keyed by a hash of it) apply."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import msgspec
import redis.exceptions
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisClusterStorage, RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from services.gateway.metrics import Metrics
from services.gateway.problems import PROBLEM_JSON, Problem
from services.redis_conn import HiredisPackingConnection

EXEMPT = ("/livez", "/readyz", "/metrics")
# What the web page needs that never reads Redis (its HTML and assets, the component data, the
# game files it opens): limited per address in this process, so the page and its file opening
# keep working while Redis is down.
LOCAL_PREFIXES = ("/static/", "/v1/catalog", "/v1/files/", "/games/")
LOCAL_PATHS = frozenset({"/", "/open", "/fairness", "/favicon.ico", "/v1/files"})
FILES = "/v1/files/"


def is_local(path: str) -> bool:
    return path in LOCAL_PATHS or path.startswith(LOCAL_PREFIXES)


def storage_uri(url: str, cluster: bool) -> str:
    """The `limits` storage URI for a redis:// URL (rediss:// kept)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"not a Redis URL: {url!r}")
    if cluster:
        return f"async+{scheme}+cluster://{rest.split('/', 1)[0]}"
    return f"async+{scheme}://{rest}"


class RateLimits:
    def __init__(self, url: str, cluster: bool, prefix: str, per_address: str, per_client: str) -> None:
        self.per_address: list[RateLimitItem] = parse_many(per_address) if per_address else []
        self.per_client: list[RateLimitItem] = parse_many(per_client) if per_client else []
        self.storage: RedisStorage | None = None
        self.limiter: SlidingWindowCounterRateLimiter | None = None
        if self.per_address or self.per_client:
            kind = RedisClusterStorage if cluster else RedisStorage
            # A large pool, and the services' connection class (hiredis packs the scripts' calls; a
            # cluster client takes it as services.redis_conn.connect sets it, after creation).
            options: dict[str, Any] = {"max_connections": 1000}
            if not cluster:
                options["connection_class"] = HiredisPackingConnection
            self.storage = kind(
                storage_uri(url, cluster), implementation="redispy", key_prefix=f"{prefix}:rl", **options
            )
            if cluster:
                bridge: Any = self.storage.bridge
                bridge.get_connection().connection_kwargs["connection_class"] = HiredisPackingConnection
            self.limiter = SlidingWindowCounterRateLimiter(self.storage)

    async def check(self, address: str, client: str | None) -> tuple[str, float] | None:
        """None if the request may go on, else (which limit, seconds until it may retry)."""
        if self.limiter is None:
            return None
        checks = [("address", item, address) for item in self.per_address]
        if client is not None:
            checks += [("client", item, client) for item in self.per_client]
        # All at once: one round trip whatever the number of limits.
        limiter = self.limiter
        allowed = await asyncio.gather(*(limiter.hit(item, name, who) for name, item, who in checks))
        for (name, item, who), ok in zip(checks, allowed, strict=True):
            if not ok:
                stats = await limiter.get_window_stats(item, name, who)
                return name, max(0.1, round(stats.reset_time - time.time(), 1))
        return None

    async def refusal(self, address: str, client: str | None, metrics: Metrics) -> Problem | None:
        """The 429 (or 503) problem for a request from `address` with credential hash `client`."""
        try:
            limited = await self.check(address, client)
        except redis.exceptions.RedisError:
            return Problem(503, "unavailable", "The game store is not answering", "try again shortly")
        if limited is None:
            return None
        which, retry = limited
        metrics.limited.labels(which).inc()
        return Problem(
            429,
            "rate-limited",
            "Too many requests",
            f"the per-{which} limit is reached; retry in {retry:g} s",
            headers={"Retry-After": str(max(1, round(retry)))},
            retry_after_s=retry,
        )

    async def close(self) -> None:
        if isinstance(self.storage, MemoryStorage):
            return
        if self.storage is not None:
            bridge: Any = self.storage.bridge
            await bridge.get_connection().aclose()


class LocalLimits:
    """Per-address limits counted in this process's memory (the page's own requests)."""

    def __init__(self, per_address: str, files: str) -> None:
        self.storage = MemoryStorage()
        self.limiter = SlidingWindowCounterRateLimiter(self.storage)
        self.per_address: list[RateLimitItem] = parse_many(per_address) if per_address else []
        self.files: list[RateLimitItem] = parse_many(files) if files else []

    async def refusal(self, path: str, address: str, metrics: Metrics) -> Problem | None:
        checks = [("address", item) for item in self.per_address]
        if path.startswith(FILES):
            checks += [("files", item) for item in self.files]
        for name, item in checks:
            if not await self.limiter.hit(item, name, address):
                stats = await self.limiter.get_window_stats(item, name, address)
                retry = max(0.1, round(stats.reset_time - time.time(), 1))
                metrics.limited.labels(name).inc()
                return Problem(
                    429,
                    "rate-limited",
                    "Too many requests",
                    f"the per-{name} limit is reached; retry in {retry:g} s",
                    headers={"Retry-After": str(max(1, round(retry)))},
                    retry_after_s=retry,
                )
        return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


def credential_id(credential: bytes) -> str:
    """What a client limit is counted under: a hash of the credential, never the credential."""
    return hashlib.sha256(credential.strip()).hexdigest()[:24]


def client_of(scope: Scope) -> str | None:
    """The id of the credential presented (API key, else bearer token), if any."""
    credential = _header(scope, b"x-api-key")
    if credential is None:
        auth = _header(scope, b"authorization") or b""
        scheme, _, credential = auth.partition(b" ")
        if scheme.lower() != b"bearer" or not credential:
            return None
    return credential_id(credential)


def address_of(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def send_problem(scope: Any, send: Any, problem: Problem) -> None:
    body = msgspec.json.encode(problem.body(scope.get("path")))
    headers = [(b"content-type", PROBLEM_JSON.encode()), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in problem.headers.items()]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": problem.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": problem.status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": problem.slug})


class LimitsMiddleware(ASGIMiddleware):
    def __init__(self, limits: RateLimits, max_body: int, metrics: Metrics, local: LocalLimits, max_file: int) -> None:
        self.limits = limits
        self.max_body = max_body
        self.metrics = metrics
        self.local = local
        self.max_file = max_file

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        if scope["type"] not in ("http", "websocket"):
            await next_app(scope, receive, send)
            return
        route = str(scope.get("path_template") or "?")
        method = str(scope.get("method", "WS"))
        status = [0]

        async def counted(message: Any) -> None:
            kind = message["type"]
            if kind in ("http.response.start", "websocket.http.response.start"):
                status[0] = message["status"]
            elif kind == "websocket.accept":
                status[0] = 101
            elif kind == "websocket.close" and not status[0]:
                status[0] = 403
            await send(message)

        try:
            problem = await self._refusal(scope)
            if problem is not None:
                await send_problem(scope, counted, problem)
                return
            await next_app(scope, receive, counted)
        finally:
            self.metrics.requests.labels(route, method, str(status[0] or 500)).inc()

    async def _refusal(self, scope: Scope) -> Problem | None:
        path = str(scope["path"])
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                return Problem(400, "bad-request", "Invalid Content-Length")
            most = self.max_file if path.startswith(FILES) else self.max_body
            if size > most:
                return Problem(413, "body-too-large", "Request body too large", f"{size} bytes; at most {most}")
        if path in EXEMPT:
            return None
        if is_local(path):
            return await self.local.refusal(path, address_of(scope), self.metrics)
        return await self.limits.refusal(address_of(scope), client_of(scope), self.metrics)
