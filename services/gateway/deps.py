"""What the gateway's handlers share, made once per process and started with the app."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import redis.exceptions
import structlog

from services.archive import ArchiveFolder, ArchiveReads
from services.config import Settings
from services.eventstore.keys import Keys
from services.gateway.apikeys import ApiKeys
from services.gateway.commands import Commander
from services.gateway.folding import GameCache
from services.gateway.metrics import Metrics
from services.gateway.ratelimit import LocalLimits, RateLimits
from services.gateway.replies import ReplyReader
from services.gateway.settings import GatewaySettings
from services.gateway.streams import StreamHub
from services.readmodel import ReadModelKeys
from services.redis_conn import AnyRedis, connect, is_cluster
from services.supervise import Supervisor

log = structlog.get_logger("gateway")

# Requests in flight share one pool; every followed stream holds a connection of another pool in
# a blocking XREAD (redis-py's pools hold 100 connections by default, then refuse).
REQUEST_CONNECTIONS = 1000


def sized(client: AnyRedis, connections: int) -> AnyRedis:
    """`client` (fresh from `connect`) allowed `connections` connections (per node on a cluster)."""
    if is_cluster(client):
        cluster: Any = client
        cluster.connection_kwargs["max_connections"] = connections
        for node in cluster.nodes_manager.startup_nodes.values():
            node.max_connections = connections
    else:
        standalone: Any = client
        standalone.connection_pool.max_connections = connections
    return client


@dataclass
class Deps:
    settings: Settings
    gateway: GatewaySettings
    url: str
    instance: str
    redis: AnyRedis
    # The blocking reads of followed streams (WebSocket and SSE subscribers).
    followers: AnyRedis
    keys: Keys
    rm: ReadModelKeys
    store: ArchiveReads
    games: GameCache
    replies: ReplyReader
    commands: Commander
    hub: StreamHub
    api_keys: ApiKeys
    limits: RateLimits
    # The page's own requests (assets, component data, rules, game files): counted in memory.
    local: LocalLimits
    metrics: Metrics
    # Runs the gateway's long-lived loops (the reply reader); /livez reports on it.
    supervisor: Supervisor = field(default_factory=lambda: Supervisor("gateway"))
    # game id -> when GameCreated was recorded (epoch ms), for listing newest first; never changes.
    created: dict[str, int] = field(default_factory=dict)
    # Fairness reports of finished games (they never change), by game id; bounded.
    fairness: dict[str, Any] = field(default_factory=dict)
    # The last ratings answer per title filter, keyed by the finished games it rated (lobby.py).
    rated: dict[str | None, tuple[Any, Any]] = field(default_factory=dict)

    @classmethod
    def create(cls, settings: Settings, url: str, gateway: GatewaySettings) -> Deps:
        redis = sized(connect(url), REQUEST_CONNECTIONS)
        followers = sized(connect(url), gateway.max_streams + 2)
        keys = Keys(settings.prefix)
        instance = gateway.instance or f"gw-{uuid.uuid4().hex[:12]}"
        folder = ArchiveFolder(settings.archive_dir) if settings.archive_dir else None
        store = ArchiveReads(redis, keys, folder)
        metrics = Metrics()
        replies = ReplyReader(redis, f"{keys.reply_prefix()}gw:{instance}")
        return cls(
            settings=settings,
            gateway=gateway,
            url=url,
            instance=instance,
            redis=redis,
            followers=followers,
            keys=keys,
            rm=ReadModelKeys(keys),
            store=store,
            games=GameCache(store, min(settings.cache_games, 5000)),
            replies=replies,
            commands=Commander(redis, keys, settings.shards, replies, gateway.command_timeout_s, metrics),
            hub=StreamHub(redis, followers, gateway.max_streams, gateway.max_subscribers),
            api_keys=ApiKeys(redis, settings.prefix),
            limits=RateLimits(url, is_cluster(redis), settings.prefix, gateway.rate_limit, gateway.client_rate_limit),
            local=LocalLimits(gateway.rate_limit, gateway.file_rate_limit),
            metrics=metrics,
        )

    @property
    def lobby(self) -> str:
        """The bot runner's lobby stream (services.botrunner reads HostBot requests there)."""
        return f"{self.keys.prefix}:bots:lobby"

    async def start(self) -> None:
        # Redis down at start: the gateway serves what needs none (the page, opened game files)
        # and the reply loop starts the reader once Redis answers; commands are 503 until then.
        try:
            await self.replies.start()
        except redis.exceptions.RedisError as exc:
            log.warning("gateway_started_without_redis", error=str(exc))
        self.supervisor.spawn("replies", self.replies.run)

    async def stop(self) -> None:
        await self.hub.close()
        await self.supervisor.stop()
        await self.replies.stop()
        await self.limits.close()
        await self.store.close()
        await self.followers.aclose()
        await self.redis.aclose()
