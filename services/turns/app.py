"""The turn service: tells each seat when it must act, and enforces move deadlines.

For every game that moved (a bus entry), it folds the entry's events into its cached aggregate (or
catches it up from the log: services/follower.py) and posts a
`TurnRequest` (view, legal actions, version, deadline) on the stream of each seat the game waits
for, or `GameOver` when it ended, then a `TurnNotice` per request on the shard's notice stream
(hosts of many seats, like the bot runner, read that instead of every seat stream). Deadlines live
in a sorted set per shard, so whoever holds the shard's lease fires them, also after a restart: a
due one becomes a `ForceDefault` command on the shard's timer stream, which only this service's
Redis user may write and the referee accepts only if the seat is still waited on at that version.

Turn services share the bus shards by leases like referees do (services/leases.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from importlib.resources import files
from typing import Any, cast

import msgspec
import structlog
from redis.exceptions import ResponseError

from contracts import codec
from contracts import lifecycle as lc
from contracts.bus import read_notice
from contracts.envelope import CommandEnvelope
from contracts.protocol import GameOver, LegalAction, SeatMessage, TurnNotice, TurnRequestOut
from contracts.registry import type_name
from games import match as m
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.follower import LogFollower
from services.leases import leases_for
from services.redis_conn import Entries, connect, is_cluster
from services.retention import Trim, trim_all
from services.service import Service, settle_gc
from services.shards import Batch, reader_for
from services.supervise import Loop

log = structlog.get_logger("turns")
GROUP = "turns"
# Notices are wake-ups, not records (the seat streams are): keep about this many per shard.
NOTICES_KEPT = 10_000
_seat_message = msgspec.json.Decoder(SeatMessage)
# Seat streams written before their entry ids were versions have ids that are times in ms.
LEGACY_IDS = 10**11
# A running game that has not moved for REPAIR_S (up to IDLE_S: past that it waits on people) has
# its requests checked against its log: see TurnService.repair.
REPAIR_S = 5.0
IDLE_S = 300.0
_SHRINK = files("services.turns").joinpath("shrink.lua").read_text()


def _older(reply: object) -> bool:
    """Is this XADD reply Redis refusing an entry id not above the stream's newest?"""
    return isinstance(reply, ResponseError) and "equal or smaller" in str(reply)


def turn_requests(agg: m.Match, now_ms: int) -> list[tuple[int, TurnRequestOut | GameOver]]:
    if agg.status == m.OVER and agg.result is not None:
        over = GameOver(game_id=agg.game_id, version=agg.version, scores=agg.result.scores, winners=agg.result.winners)
        return [(seat, over) for seat in range(agg.num_players)]
    out: list[tuple[int, TurnRequestOut | GameOver]] = []
    deadline = int(now_ms + agg.move_timeout_s * 1000) if agg.move_timeout_s else None
    for seat in m.to_act(agg):
        legal = [LegalAction(type=type_name(a), payload=a) for a in agg.rules.legal_actions(agg.game, seat)]
        out.append(
            (
                seat,
                TurnRequestOut(
                    game_id=agg.game_id,
                    seat=seat,
                    version=agg.version,
                    view=agg.rules.view(agg.game, seat),
                    legal_actions=legal,
                    deadline_ms=deadline,
                    data_version=agg.data_version,
                ),
            )
        )
    return out


class TurnService(Service):
    def __init__(self, settings: Settings, url: str) -> None:
        super().__init__("turns", connect(url))
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.store = RedisEventStore(self.client, self.keys)
        self.follower = LogFollower(self.store, settings.cache_games)
        self._posted: dict[str, float] = {}  # when requests were last posted, per cached game
        # Bus entries (stream, ids) whose requests are written, acked with the next round trip.
        self._written: list[tuple[str, list[bytes]]] = []
        self.repair_s = REPAIR_S
        self.leases = leases_for(self.client, self.keys, GROUP, settings)
        self._shrink = self.client.register_script(_SHRINK)
        # A new group reads the bus from its start: a notice written before the first turn service ran
        # (its group did not exist yet) is still turned into requests; later ones only re-send what
        # bots answer at most once (they answer a version once).
        self.reader = reader_for(self.client, GROUP, settings, lambda s: [self.keys.bus(s)], self._on_bus, batch=500)
        self.leases.listen(self.reader)

    async def _on_bus(self, batch: Batch) -> None:
        for stream, entries in batch:
            notices = [n for n in (read_notice(f) for _, f in entries) if n is not None]
            aggs = await self.follower.follow(notices)
            await self.post(aggs, ack=(stream, [entry_id for entry_id, _ in entries]))

    async def notify(self, game_ids: list[str]) -> None:
        """Post the requests of these games' current state, caught up from their logs."""
        await self.post(await self.follower.catch_up(game_ids))

    async def post(self, aggs: list[m.Match], ack: tuple[str, list[bytes]] | None = None) -> None:
        """Post the requests of these games' current state and their notices, and with `ack` (a bus
        stream, entry ids) acknowledge those entries once that is done. On a standalone server the
        requests and notices go in one round trip, each notice behind its request (Redis runs a
        pipeline in order, so a notice never announces a request its reader cannot find yet), and
        the ack rides with the next round trip (the next batch's, or the timer loop's within 0.2 s):
        sent with these writes, it would land even when they are refused (Redis out of memory
        refuses XADD, not XACK), and the entries would never be delivered again. On a cluster the
        notices and the ack wait until the requests are written, which may sit on other nodes."""
        now_ms = int(time.time() * 1000)
        inline = not is_cluster(self.client)
        pipe = self.client.pipeline(transaction=False)
        posts: list[tuple[int, str, bytes, tuple[str, bytes]]] = []  # (reply index, stream, data, notice)
        calls = 0
        for agg in aggs:
            shard = shard_of(agg.game_id, self.settings.shards)
            for seat, message in turn_requests(agg, now_ms):
                seat_stream = self.keys.seat(agg.game_id, seat)
                data = codec.encode(message)
                notice = (
                    self.keys.turn_notices(shard),
                    codec.encode(TurnNotice(game_id=agg.game_id, seat=seat, version=message.version)),
                )
                posts.append((calls, seat_stream, data, notice))
                calls += self._post(pipe, seat_stream, data, message)
                if inline:
                    # Announced even if Redis refuses the request as not newer than the stream's
                    # newest: its reader then answers that newer one, as it would anyway.
                    calls += self._announce(pipe, [notice])
                if isinstance(message, TurnRequestOut) and message.deadline_ms is not None:
                    member = f"{agg.game_id}|{seat}|{agg.version}"
                    pipe.zadd(self.keys.deadlines(shard), {member: message.deadline_ms})
                    calls += 1
        written: list[tuple[str, list[bytes]]] = []
        if inline:
            written, self._written = self._written, []
            for stream, ids in written:
                pipe.xack(stream, GROUP, *ids)
        try:
            replies = await pipe.execute(raise_on_error=False)
            for error in (r for r in replies if isinstance(r, Exception) and not _older(r)):
                raise error
        except BaseException:
            self._written[:0] = written  # acked again with the next round trip (a repeated XACK is a no-op)
            raise
        refused = [(stream, data, notice) for i, stream, data, notice in posts if _older(replies[i])]
        await self._shrink_finished(
            aggs, {stream for i, stream, _, _ in posts if not isinstance(replies[i], Exception)}
        )
        notices = [] if inline else [notice for i, _, _, notice in posts if not isinstance(replies[i], Exception)]
        notices += await self._stale_or_legacy(refused)
        posted = time.monotonic()
        for agg in aggs:
            self._posted[agg.game_id] = posted
        if notices or (ack and not inline):
            pipe = self.client.pipeline(transaction=False)
            self._announce(pipe, notices)
            if ack and not inline:
                pipe.xack(ack[0], GROUP, *ack[1])
            await pipe.execute()
        if ack and inline:
            self._written.append(ack)

    async def ack_written(self) -> None:
        """Acknowledge the bus entries whose requests are written and not acked yet (standalone)."""
        if not self._written:
            return
        written, self._written = self._written, []
        pipe = self.client.pipeline(transaction=False)
        for stream, ids in written:
            pipe.xack(stream, GROUP, *ids)
        try:
            await pipe.execute()
        except BaseException:
            self._written[:0] = written
            raise

    @staticmethod
    def _announce(pipe: Any, notices: list[tuple[str, bytes]]) -> int:
        for stream, data in notices:
            pipe.xadd(stream, {"data": data}, maxlen=NOTICES_KEPT, approximate=True)
        return len(notices)

    async def _shrink_finished(self, aggs: list[m.Match], written: set[str]) -> None:
        """Write the seat streams of the games whose GameOver was just written (not those posted
        again: a late refusal re-posts it, and Redis refuses the copy) again at their size."""
        for agg in aggs:
            if agg.status != m.OVER:
                continue
            seats = [self.keys.seat(agg.game_id, seat) for seat in range(agg.num_players)]
            if any(stream in written for stream in seats):
                await self._shrink(keys=seats)

    def _post(self, pipe: Any, stream: str, data: bytes, message: TurnRequestOut | GameOver | SeatMessage) -> int:
        """Queue a seat message; returns the calls queued. Its entry id is `<version>-0`: Redis
        refuses a message not newer than the stream's newest (a stale writer, such as a turn
        service whose lease lapsed, cannot bury a GameOver or a newer request, and a request
        posted again is not doubled), and the stream keeps only its newest `seat_kept` messages:
        what a bot needs is the current request; an older one is stale anyway (GAME-STALE). (Not
        `<version>-*`: Redis 6.2, the embedded server, lacks it.)"""
        kept = self.settings.seat_kept or None
        pipe.xadd(stream, {"data": data}, id=f"{message.version}-0", maxlen=kept, approximate=False)
        if isinstance(message, GameOver) and self.settings.seat_ttl_s:
            pipe.expire(stream, self.settings.seat_ttl_s)
            return 2
        return 1

    async def _stale_or_legacy(self, refused: list[tuple[str, bytes, tuple[str, bytes]]]) -> list[tuple[str, bytes]]:
        """Of the messages Redis refused as older than their stream's newest: the stale ones are
        dropped; a stream written before entry ids were versions (its newest id is a time in ms)
        is replaced by the message. Returns the notices of what was posted."""
        posted: list[tuple[str, bytes]] = []
        for stream, data, notice in refused:
            newest = cast(Entries, await self.client.xrevrange(stream, count=1))
            if newest and int(newest[0][0].split(b"-")[0]) >= LEGACY_IDS:
                message = _seat_message.decode(data)
                await self.client.delete(stream)
                pipe = self.client.pipeline(transaction=False)
                self._post(pipe, stream, data, message)
                await pipe.execute()
                posted.append(notice)
            else:
                log.info("seat_message_stale", stream=stream, newest=newest[0][0].decode() if newest else None)
        return posted

    async def repair(self) -> int:
        """Post again the requests of games of owned shards that have been idle a while, when the
        log has moved without a notice reaching this service, or a to-act seat's stream lacks the
        request of the game's version (both happen when a failover loses acknowledged writes).
        Returns how many games were repaired."""
        now = time.monotonic()
        for gone in [g for g in self._posted if g not in self.follower.cache]:
            del self._posted[gone]
        idle = [
            agg
            for gid, agg in self.follower.cache.items()
            if agg.status == m.RUNNING
            and shard_of(gid, self.settings.shards) in self.reader.reading
            and self.repair_s <= now - self._posted.get(gid, now) <= IDLE_S
        ]
        if not idle:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for agg in idle:
            pipe.xrevrange(self.keys.log(agg.game_id), count=1)
            for seat in m.to_act(agg):
                pipe.xrevrange(self.keys.seat(agg.game_id, seat), count=1)
        replies = iter(await pipe.execute())
        broken = []
        for agg in idle:
            tail = _log_version(next(replies))
            requested = [_request_version(next(replies)) for _ in m.to_act(agg)]
            self._posted[agg.game_id] = now
            if tail != agg.version or any(v != agg.version for v in requested):
                broken.append(agg.game_id)
        if broken:
            log.warning("turn_requests_repaired", game_ids=broken[:20], games=len(broken))
            await self.notify(broken)
        return len(broken)

    async def _repair_loop(self, loop: Loop) -> None:
        while True:
            loop.beat()
            await self.repair()
            await asyncio.sleep(self.repair_s)

    async def fire_due(self) -> int:
        """Send a ForceDefault for every passed deadline of the shards this service holds (asked of
        every shard in one round trip: this runs five times a second)."""
        now_ms = int(time.time() * 1000)
        fired = 0
        shards = sorted(self.reader.reading)
        pipe = self.client.pipeline(transaction=False)
        for shard in shards:
            pipe.zrangebyscore(self.keys.deadlines(shard), 0, now_ms)
        dues = cast(list[list[bytes]], await pipe.execute() if shards else [])
        for shard, due in zip(shards, dues, strict=True):
            for member in due:
                # ZREM first: if two holders overlap, whichever removes it sends the command.
                if not await self.client.zrem(self.keys.deadlines(shard), member):
                    continue
                game_id, seat, version = member.decode().rsplit("|", 2)
                last = cast(Entries, await self.client.xrevrange(self.keys.log(game_id), count=1))
                if last and _log_version(last) != int(version):
                    continue  # the game moved on before the deadline: nothing to force
                payload = lc.ForceDefault(seat=int(seat), at_version=int(version))
                env = CommandEnvelope(
                    type=type_name(payload),
                    game_id=game_id,
                    command_id=f"timeout:{uuid.uuid4().hex}",
                    payload=msgspec.Raw(codec.encode(payload)),
                )
                await self.client.xadd(self.keys.timer(shard), {"data": codec.encode(env)})
                fired += 1
                log.info("deadline_passed", game_id=game_id, seat=int(seat), version=int(version))
        return fired

    async def _timer_loop(self, loop: Loop) -> None:
        while True:
            loop.beat()
            await self.fire_due()
            await self.ack_written()
            await asyncio.sleep(0.2)

    async def _watch_lag(self, loop: Loop) -> None:
        while True:
            loop.beat()
            await self.reader.measure_lag()
            await asyncio.sleep(5.0)

    async def _retain(self, loop: Loop) -> None:
        """Every trim_every_ms: trim the held shards' turn notices of what every reader group has
        acknowledged, once all of notice_groups exist (services/retention.py); until then (no bot
        runner yet) XADD's MAXLEN keeps the newest NOTICES_KEPT. Its one writer does it, as the
        referee does for the bus."""
        while True:
            loop.beat()
            notices = [self.keys.turn_notices(shard) for shard in sorted(self.reader.reading)]
            await self._trim([Trim("turn_notices", s, self.settings.notice_groups) for s in notices])
            loop.beat()
            await asyncio.sleep(self.settings.trim_every_ms / 1000)

    async def _trim(self, trims: list[Trim]) -> None:
        await trim_all(self.client, trims)

    async def start(self) -> None:
        assert self.leases is not None
        self.supervisor.spawn("leases", self.leases.run)
        self.supervisor.spawn("bus", self.reader.run)
        self.supervisor.spawn("timer", self._timer_loop)
        self.supervisor.spawn("repair", self._repair_loop)
        self.supervisor.spawn("lag", self._watch_lag, silence_s=60.0)
        if self.settings.trim_every_ms:
            self.supervisor.spawn("retention", self._retain, silence_s=max(120.0, self.settings.trim_every_ms / 250))
        settle_gc()
        log.info("turns_started", shards=self.settings.shards, holder=self.leases.holder)

    async def stop(self) -> None:
        if self.leases is not None:
            await self.leases.release_all()
        await self.supervisor.stop()
        with contextlib.suppress(Exception):
            await self.ack_written()  # else whoever takes the shards over posts those requests again
        await self.store.close()
        await self.client.aclose()


def _log_version(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> int:
    """The version of a log's last entry (its entry id), from an XREVRANGE COUNT 1."""
    return int(entries[0][0].split(b"-")[0]) if entries else 0


def _request_version(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> int:
    """The version of a seat stream's last message, or -1 when there is none or it is unreadable."""
    try:
        return _seat_message.decode(entries[0][1][b"data"]).version if entries else -1
    except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
        return -1
