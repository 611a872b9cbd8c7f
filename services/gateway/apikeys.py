"""Per-client API keys, stored hashed: `<prefix>:gw:apikeys` maps SHA-256(key) to the client's
name and scopes, so a key is shown once (by `dicestream gateway add-key`) and never kept in clear."""

from __future__ import annotations

import hashlib
import re
import secrets
import time

import msgspec

from services.redis_conn import AnyRedis

# create: create games; bots: seat reference bots; admin: both, plus exporting running games.
SCOPES = ("create", "bots", "admin")
DEFAULT_SCOPES = ("create", "bots")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
HEADER = "x-api-key"
# A key found is trusted this long without asking Redis again (revocation takes this long).
CACHE_S = 5.0


class ApiKey(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    scopes: list[str]
    created_at_ms: int = 0

    def allows(self, scope: str) -> bool:
        return scope in self.scopes or "admin" in self.scopes


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKeys:
    def __init__(self, redis: AnyRedis, prefix: str) -> None:
        self.redis = redis
        self.key = f"{prefix}:gw:apikeys"
        self._cache: dict[str, tuple[float, ApiKey]] = {}

    async def add(self, name: str, scopes: tuple[str, ...] = DEFAULT_SCOPES) -> str:
        """A new key for client `name`: returned once, stored only as its hash."""
        if not NAME.fullmatch(name):
            raise ValueError(f"client name {name!r}: 1-64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)")
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown or not scopes:
            raise ValueError(f"scopes {list(scopes)}: expected some of {', '.join(SCOPES)}")
        key = f"dsk_{secrets.token_urlsafe(32)}"
        record = ApiKey(name=name, scopes=sorted(set(scopes)), created_at_ms=int(time.time() * 1000))
        await self.redis.hset(self.key, key_hash(key), msgspec.json.encode(record))
        return key

    async def revoke(self, name: str) -> int:
        """Remove every key of client `name`; how many there were."""
        gone = []
        for digest, raw in (await self.redis.hgetall(self.key)).items():
            if msgspec.json.decode(raw, type=ApiKey).name == name:
                gone.append(digest)
        if gone:
            await self.redis.hdel(self.key, *gone)
        self._cache.clear()
        return len(gone)

    async def lookup(self, key: str | None) -> ApiKey | None:
        if not key or len(key) > 200:
            return None
        digest = key_hash(key)
        now = time.monotonic()
        hit = self._cache.get(digest)
        if hit is not None and hit[0] > now:
            return hit[1]
        raw = await self.redis.hget(self.key, digest)
        if raw is None:
            return None
        found = msgspec.json.decode(raw, type=ApiKey)
        if len(self._cache) > 10000:
            self._cache.clear()
        self._cache[digest] = (now + CACHE_S, found)
        return found
