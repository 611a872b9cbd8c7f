"""The projector: folds the bus into read models (game list, each game's public state).

It is a trusted reader of the private logs (to rebuild aggregates) but writes only what
`view(state, None)` and the summary expose. A bus entry carries its command's log entries, which
the projector folds into its cached aggregate when they continue it, and otherwise it catches the
aggregate up from the log (services/follower.py), so a lost or repeated bus entry cannot corrupt a
model; the stored bus position is written in the same MULTI as the models it covers.

Projectors share the bus shards by leases like referees do (services/leases.py): one projector
writes a shard's models at a time, so a slower one can never overwrite a newer model with an
older one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, cast

import msgspec
import structlog

from contracts import codec
from contracts.bus import BusNotice, read_notice
from games import match as m
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import LogFollower
from services.leases import leases_for
from services.readmodel import ReadModelKeys, public_state, summary
from services.redis_conn import AnyRedis, Entries, connect, stream_id
from services.service import Service, settle_gc
from services.shards import Batch, reader_for
from services.supervise import Loop

log = structlog.get_logger("projector")
GROUP = "projector"


class Projector:
    def __init__(self, client: AnyRedis, keys: Keys, shards: int, cache_games: int = 20000) -> None:
        self.client = client
        self.keys = keys
        self.rm = ReadModelKeys(keys)
        self.shards = shards
        self.store = RedisEventStore(client, keys)
        self.follower = LogFollower(self.store, cache_games)
        # The bus position each shard's models cover, as this projector last wrote it (read once).
        # Never ahead of Redis's: only this projector's own writes move it. Behind it (another
        # projector wrote meanwhile) only means entries are folded again, which changes nothing.
        self._pos: dict[int, tuple[int, int]] = {}

    async def catch_up(self, game_ids: Iterable[str]) -> list[m.Match]:
        return await self.follower.catch_up(game_ids)

    async def apply(
        self, shard: int, entries: list[tuple[bytes, dict[bytes, bytes]]], ack: tuple[str, str] | None = None
    ) -> None:
        """Fold a batch of bus entries of `shard` into its models; with `ack` (stream, group) the
        entries are acknowledged in the same MULTI (the bus shares the models' hash tag)."""
        last = self._pos.get(shard)
        if last is None:
            pos = cast(bytes | None, await self.client.get(self.rm.position(shard)))
            last = stream_id(pos) if pos else (0, 0)
        notices: list[tuple[BusNotice, list[tuple[int, bytes]] | None]] = []
        for entry_id, fields in entries:
            if stream_id(entry_id) <= last:
                continue  # already folded before a restart
            notice = read_notice(fields)
            if notice is None:
                log.warning("bus_entry_skipped", shard=shard, entry_id=entry_id.decode())
            else:
                notices.append(notice)
        aggs = await self.follower.follow(notices)
        pipe = self.client.pipeline(transaction=True)
        for agg in aggs:
            self._write(pipe, shard, agg)
        if entries:
            pipe.set(self.rm.position(shard), entries[-1][0])
            if ack is not None:
                pipe.xack(ack[0], ack[1], *[entry_id for entry_id, _ in entries])
        await pipe.execute()
        if entries:
            self._pos[shard] = max(last, stream_id(entries[-1][0]))

    def _write(self, pipe: Any, shard: int, agg: m.Match) -> None:
        pipe.hset(self.rm.games(shard), agg.game_id, codec.encode(summary(agg)))
        if agg.status == m.ARCHIVED:
            # DEL, not UNLINK: redis-py's cluster pipeline does not queue UNLINK (it runs it, unawaited).
            pipe.delete(self.rm.game(shard, agg.game_id))  # its state is in the archive file
        else:
            pipe.set(self.rm.game(shard, agg.game_id), codec.encode(public_state(agg)))

    async def refresh(self, shard: int, game_ids: list[str]) -> None:
        aggs = await self.catch_up(game_ids)
        pipe = self.client.pipeline(transaction=True)
        for agg in aggs:
            self._write(pipe, shard, agg)
        await pipe.execute()

    async def rebuild_all(self, progress: Callable[[int], None] | None = None) -> int:
        """Rebuild every game's read models from its log (position: the bus as it is now), then
        drop the models of games that have no log. Models are overwritten in place, so readers
        never see an empty game list meanwhile. `progress` is told the games rebuilt so far."""
        self.follower.clear()
        self._pos.clear()
        positions = {}
        for shard in range(self.shards):
            last = cast(Entries, await self.client.xrevrange(self.keys.bus(shard), count=1))
            positions[shard] = last[0][0] if last else b"0-0"
        rebuilt: set[str] = set()
        batch: list[str] = []
        async for key in self.client.scan_iter(match=self.keys.log_pattern(), count=500):
            k = key.decode()
            batch.append(k[k.index("{") + 1 : k.rindex("}")])
            if len(batch) >= 200:
                rebuilt.update(await self._rebuild_batch(batch))
                batch = []
                if progress is not None:
                    progress(len(rebuilt))
        rebuilt.update(await self._rebuild_batch(batch))
        if progress is not None:
            progress(len(rebuilt))
        await self._drop_models_except(rebuilt)
        pipe = self.client.pipeline(transaction=False)
        for shard, p in positions.items():
            pipe.set(self.rm.position(shard), p)
        await pipe.execute()
        return len(rebuilt)

    async def _drop_models_except(self, keep: set[str]) -> None:
        kept = {self.rm.game(shard_of(g, self.shards), g).encode() for g in keep}
        for shard in range(self.shards):
            names = cast(list[bytes], await self.client.hkeys(self.rm.games(shard)))
            stale = [g for g in names if g.decode() not in keep]
            if stale:
                await self.client.hdel(self.rm.games(shard), *stale)
            models = [k async for k in self.client.scan_iter(match=self.rm.game(shard, "*"), count=500)]
            if gone := [k for k in models if k not in kept]:
                await self.client.unlink(*gone)

    async def _rebuild_batch(self, game_ids: list[str]) -> list[str]:
        if not game_ids:
            return []
        aggs = await self.catch_up(game_ids)
        pipe = self.client.pipeline(transaction=False)
        for agg in aggs:
            self._write(pipe, shard_of(agg.game_id, self.shards), agg)
        await pipe.execute()
        self.follower.clear()
        return [agg.game_id for agg in aggs]

    async def games(self) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for shard in range(self.shards):
            for raw in (await self.client.hgetall(self.rm.games(shard))).values():
                out.append(msgspec.json.decode(raw))
        return out

    async def game(self, game_id: str) -> dict[str, object] | None:
        raw = await self.client.get(self.rm.game(shard_of(game_id, self.shards), game_id))
        return msgspec.json.decode(raw) if raw else None


class ProjectorService(Service):
    def __init__(self, settings: Settings, url: str) -> None:
        super().__init__("projector", connect(url))
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.projector = Projector(self.client, self.keys, settings.shards, settings.cache_games)
        self.shard_of_stream = {self.keys.bus(s): s for s in range(settings.shards)}
        self.leases = leases_for(self.client, self.keys, GROUP, settings)
        # A new projector group starts at the bus's beginning, so it sees games created before it.
        self.reader = reader_for(
            self.client,
            GROUP,
            settings,
            lambda s: [self.keys.bus(s)],
            self._project,
            batch=500,
            pause_ms=settings.projector_pause_ms,
        )
        self.leases.listen(self.reader)

    async def _project(self, batch: Batch) -> None:
        for stream, entries in batch:
            await self.projector.apply(self.shard_of_stream[stream], entries, ack=(stream, GROUP))

    async def _watch_lag(self, loop: Loop) -> None:
        while True:
            loop.beat()
            await self.reader.measure_lag()
            await asyncio.sleep(5.0)

    async def start(self) -> None:
        assert self.leases is not None
        self.supervisor.spawn("leases", self.leases.run)
        self.supervisor.spawn("bus", self.reader.run)
        self.supervisor.spawn("lag", self._watch_lag, silence_s=60.0)
        settle_gc()
        log.info("projector_started", shards=self.settings.shards, holder=self.leases.holder)

    async def stop(self) -> None:
        if self.leases is not None:
            await self.leases.release_all()
        await self.supervisor.stop()
        await self.projector.store.close()
        await self.client.aclose()
