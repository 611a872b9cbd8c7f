"""The referee worker: judges the commands of the intake shards it holds leases on.

Any number of referees share the shards (services/leases.py): each holds leases on a fair share,
takes over a dead referee's shards within the lease TTL (judging that referee's pending commands
of the shard first, in arrival order) and drains and releases shards when others join. The intake
of its shards (the shared intake `ds:cmd:{S}`, the turn service's `ds:timer:{S}`, and the own
intake `ds:cmd:{S}:<client>` of every registered trusted client, `ds:clients`) is read by a
`ShardReader` (services/shards.py); the engine judges what each read
returns as one batch and acks it in its last pipeline (or, on a standalone Redis, in each
command's append script). A command delivered `max_deliveries` times goes to the dead-letter
stream instead of looping. Every loop runs under the service's supervisor.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import cast

import structlog

from contracts.limits import CLIENT_PATTERN
from services import metrics
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.leases import leases_for
from services.redis_conn import AnyRedis, connect, is_cluster
from services.referee.engine import Referee
from services.referee.sink import RedisSink
from services.retention import Trim, trim_all
from services.service import Service, settle_gc
from services.shards import ShardReader, reader_for
from services.supervise import Loop, patiently

log = structlog.get_logger("referee")
GROUP = "referee"
# Each registered client adds a stream to every shard's read: a cap keeps a mistaken registry
# from making every read enormous.
MAX_CLIENTS = 256
CLIENTS_EVERY_S = 2.0
_CLIENT = re.compile(CLIENT_PATTERN)


async def load_secret(client: AnyRedis, keys: Keys, configured: str | None) -> bytes:
    if configured:
        return configured.encode()
    await client.set(keys.secret, secrets.token_hex(32), nx=True)
    value = cast(bytes | None, await client.get(keys.secret))
    assert value is not None
    return value


class RefereeService(Service):
    def __init__(self, settings: Settings, url: str) -> None:
        super().__init__("referee", connect(url))
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.store = RedisEventStore(
            self.client,
            self.keys,
            settings.append_wait_replicas,
            settings.append_wait_timeout_ms,
            reply_ttl_s=settings.reply_ttl_s,
        )
        self.engine: Referee | None = None
        self.reader: ShardReader | None = None
        self.clients: tuple[str, ...] = ()
        self.former_clients: set[str] = set()
        self.leases = leases_for(self.client, self.keys, GROUP, settings)

    async def start(self) -> None:
        s = self.settings
        secret = await patiently(lambda: load_secret(self.client, self.keys, s.token_secret), "token secret")
        self.engine = Referee(
            self.store,
            lambda: RedisSink(self.client, self.keys.reply_prefix(), s.reply_ttl_s),
            self.keys,
            shards=s.shards,
            secret=secret,
            group=GROUP,
            cache_games=s.cache_games,
            # A script may write keys of other hash slots only outside Redis Cluster. With a WAIT for
            # replicas, nothing of a command (bus notice, reply, ack) may be seen before the WAIT
            # returns: its effects go in the pipeline after it, as on a cluster.
            inline_effects=not is_cluster(self.client) and not s.append_wait_replicas,
        )
        self.reader = reader_for(
            self.client,
            GROUP,
            s,
            self._streams,
            self.engine.handle_many,
            batch=s.batch,
            dead_letter=self.engine.dead_letter,
        )
        await patiently(self._load_clients, "registered clients")
        assert self.leases is not None
        self.leases.listen(self.reader)
        self.supervisor.spawn("leases", self.leases.run)
        self.supervisor.spawn("intake", self.reader.run)
        self.supervisor.spawn("lag", self._watch_lag, silence_s=60.0)
        self.supervisor.spawn("clients", self._watch_clients, silence_s=60.0)
        if s.trim_every_ms:
            self.supervisor.spawn("retention", self._retain, silence_s=max(120.0, s.trim_every_ms / 250))
        settle_gc()
        log.info(
            "referee_started",
            consumer=s.consumer,
            holder=self.leases.holder,
            shards=s.shards,
            static_shards=list(s.own_shards),
            inline_effects=self.engine.inline_effects,
            append_wait_replicas=s.append_wait_replicas,
            cluster=is_cluster(self.client),
        )

    def _streams(self, shard: int) -> list[str]:
        keys = self.keys
        return [keys.intake(shard), keys.timer(shard), *(keys.client_intake(shard, c) for c in self.clients)]

    async def _load_clients(self) -> bool:
        """Read the registry of trusted clients; True when it changed."""
        members = cast(set[bytes], await self.client.smembers(self.keys.clients))
        names = sorted(n for m in members if _CLIENT.fullmatch(n := m.decode(errors="replace")))
        if len(names) < len(members):
            log.warning("clients_invalid_names_ignored", key=self.keys.clients, ignored=len(members) - len(names))
        if len(names) > MAX_CLIENTS:
            log.error("clients_over_cap", key=self.keys.clients, registered=len(names), read=MAX_CLIENTS)
            names = names[:MAX_CLIENTS]
        if tuple(names) == self.clients:
            return False
        log.info("clients_registered", clients=names)
        # A client's intake is still trimmed after it is unregistered: what was judged there holds
        # seat tokens in clear (what was not judged stays, and is read if the name comes back).
        self.former_clients = (self.former_clients | set(self.clients)) - set(names)
        self.clients = tuple(names)
        metrics.CLIENTS.set(len(names))
        return True

    async def _watch_clients(self, loop: Loop) -> None:
        """A client registered (or removed) while running is read from (or left) within
        CLIENTS_EVERY_S; what it wrote before is read from its stream's start."""
        assert self.reader is not None
        while True:
            loop.beat()
            if await self._load_clients():
                self.reader.restream()
            await asyncio.sleep(CLIENTS_EVERY_S)

    async def _retain(self, loop: Loop) -> None:
        """Every trim_every_ms: trim the owned shards' intake streams (their seat tokens in clear
        go with them) and bus streams of what every consumer group has acknowledged, and cap the
        dead letters. The referee does it as the one writer of the bus that holds the shard; the
        bus waits until every group of bus_groups exists (services/retention.py)."""
        assert self.reader is not None
        s = self.settings
        while True:
            loop.beat()
            trims: list[Trim] = []
            for shard in sorted(self.reader.reading):
                former = [self.keys.client_intake(shard, c) for c in sorted(self.former_clients)]
                trims += [Trim("intake", stream) for stream in [*self._streams(shard), *former]]
                trims.append(Trim("bus", self.keys.bus(shard), s.bus_groups))
            if s.dead_kept:
                trims.append(Trim("dead", self.keys.dead_letter, keep=s.dead_kept))
            await self._trim(trims)
            loop.beat()
            await asyncio.sleep(s.trim_every_ms / 1000)

    async def _trim(self, trims: list[Trim]) -> None:
        await trim_all(self.client, trims)

    async def _watch_lag(self, loop: Loop) -> None:
        """Intake lag per owned shard and the dead-letter count, for /metrics (every 5 s)."""
        assert self.reader is not None
        while True:
            loop.beat()
            await self.reader.measure_lag()
            metrics.DEAD_LETTERS.set(await self.client.xlen(self.keys.dead_letter))
            await asyncio.sleep(5.0)

    async def stop(self) -> None:
        if self.leases is not None:
            await self.leases.release_all()
        await self.supervisor.stop()
        await self.store.close()
        await self.client.aclose()
