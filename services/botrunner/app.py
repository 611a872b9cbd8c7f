"""The bot runner: hosts reference bots in seats and plays them through the public protocol only.

Hosting: a `HostBot` request on the lobby stream (`<prefix>:bots:lobby`, a FastStream subscriber
in the `botrunner` group: any runner may take it) is joined with a JoinSeat whose bytes depend only
on the request (so a runner that retries another's half-done request gets the same seat token
back), recorded in the shard's hosted-seat hash `<prefix>:bots:{shard}:seats` (readable only by
the bot runner's Redis user: it holds seat tokens), acked, and answered with a `HostReply` when
the request names a `reply_to`. A request that fails on a Redis error is not acked: it is
delivered again (to this or another runner) after DICESTREAM_RECLAIM_IDLE_MS.

Playing: bot runners share the shards by leases (services/leases.py) like the other services.
Whoever holds a shard plays every seat hosted there, resuming them from the hosted-seat hash after
a restart or a takeover: it reads the turn service's notices of its shards (which seat was asked
at which version), reads that seat's latest request, and sends the bot's answer with the request's
version as `expected_version` and a command id derived from (game, seat, version), so that sending
it again after a failure or a restart can never play a second move. A seat is marked answered
only once its command is written; a failed send is retried at the next poll (every POLL_S, also
the safety net for a missed notice).

Search bots (`ismcts`) think for up to DICESTREAM_ISMCTS_MS a move, so they do not answer inside the
batch: their requests queue for one supervised loop that, per request, folds the new entries of the
game's public stream (the only game state such a bot reads) and searches in a worker thread, so
that leases, notices and the other seats go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import OrderedDict
from typing import Any

import msgspec
import structlog
from faststream import AckPolicy
from faststream.redis import StreamSub
from redis.exceptions import ResponseError

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.outcome import ACCEPTED, Reply
from contracts.protocol import HOSTED, REFUSED, GameOver, HostBot, HostReply, TurnNotice
from services.bots import RawSeatMessage, RawTurnRequest, SearchBudget, make_bot
from services.broker import RawEntries, ensure_group, make_broker, raw_decoder, raw_parser, reclaim_polling_ms
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.leases import leases_for
from services.native import SEARCH_MODULES, report_native
from services.redis_conn import AnyRedis, connect, is_cluster, transient
from services.service import Service, settle_gc
from services.shards import Batch, reader_for
from services.supervise import Loop, patiently

log = structlog.get_logger("botrunner")
GROUP = "botrunner"
POLL_S = 2.0
# An answer the game has not moved past after RESEND_S (its intake entry was lost in a failover that
# dropped acknowledged writes) is sent again, at most RESENDS times: as a duplicate when it had
# landed after all.
RESEND_S = 5.0
RESENDS = 3
_seat_message = msgspec.json.Decoder(RawSeatMessage)
_notice = msgspec.json.Decoder(TurnNotice)


class HostedSeat(msgspec.Struct, kw_only=True):
    """What a runner needs to play a seat again after a restart (kept in the shard's seat hash)."""

    game_id: str
    seat: int
    token: str
    kind: str
    game_type: str
    seed: int = 0
    answered: int = -1  # the last version this seat's answer was written for


class Playing(msgspec.Struct, kw_only=True):
    hosted: HostedSeat
    bot: Any
    moves: int = 0
    sent: bytes | None = None  # the last answer as sent, to send again byte for byte
    sent_at: float = msgspec.field(default_factory=time.monotonic)
    resends: int = 0
    # The version of a turn request this bot could not read (said once, then skipped).
    unreadable: int = -1


def seat_field(game_id: str, seat: int) -> str:
    return f"{game_id}|{seat}"


def move_id(game_id: str, seat: int, version: int) -> str:
    """One command id per (game, seat, version): a move sent twice is a duplicate, not two moves."""
    return "bot-" + hashlib.sha256(f"{game_id}|{seat}|{version}".encode()).hexdigest()[:32]


class BotRunner:
    def __init__(self, client: AnyRedis, keys: Keys, shards: int, name: str = "botrunner") -> None:
        self.redis = client
        self.keys = keys
        self.shards = shards
        self.name = name
        self.commands = Client(client, keys, shards, name=f"botrunner:{name}", own_intake=False)
        self.seats: dict[tuple[str, int], Playing] = {}
        self.finished: dict[str, GameOver] = {}
        self.wanted: set[int] = set()
        self.loaded: set[int] = set()
        self._not_hosted: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._wake = asyncio.Event()
        self.resend_s = RESEND_S
        self.budget = SearchBudget()
        # Requests waiting for a search bot, newest per seat, in arrival order.
        self._think: dict[tuple[str, int], RawTurnRequest] = {}
        self._think_wake = asyncio.Event()
        self._thinking = asyncio.Lock()  # slow rule-based bots' batches, one worker thread at a time
        self._in_flight: set[tuple[str, int]] = set()  # seats whose slow bot is thinking now
        self.searched = 0  # answers search bots chose (tests, reports)

    @property
    def lobby(self) -> str:
        return f"{self.keys.prefix}:bots:lobby"

    def hosted_key(self, shard: int) -> str:
        return f"{self.keys.prefix}:bots:{{{shard}}}:seats"

    # ---- hosting ----------------------------------------------------------------------------------

    async def host(self, req: HostBot, request_id: str | None = None) -> HostReply:
        """Join `req.seat` with a bot of `req.kind` and record it for whoever plays the shard.
        `request_id` (the lobby entry id) makes the join idempotent across runners and retries."""
        try:
            make_bot(req.kind, req.game_type, req.seed, self.budget)
        except ValueError as exc:
            return HostReply(game_id=req.game_id, seat=req.seat, status=REFUSED, reason=str(exc))
        reply = await self._join(req, request_id)
        if reply.outcome.status != ACCEPTED or reply.token is None:
            o = reply.outcome
            log.warning("join_refused", game_id=req.game_id, seat=req.seat, rule=o.rule, detail=o.detail)
            reason = o.detail or o.text or "the seat could not be joined"
            return HostReply(game_id=req.game_id, seat=req.seat, status=REFUSED, reason=reason, rule=o.rule)
        hosted = HostedSeat(
            game_id=req.game_id,
            seat=req.seat,
            token=reply.token,
            kind=req.kind,
            game_type=req.game_type,
            seed=req.seed,
        )
        shard = shard_of(req.game_id, self.shards)
        await self.redis.hset(self.hosted_key(shard), seat_field(req.game_id, req.seat), codec.encode(hosted))
        self._not_hosted.pop((req.game_id, req.seat), None)
        if shard in self.loaded:
            self._play(hosted)
        self._wake.set()
        log.info("bot_hosted", game_id=req.game_id, seat=req.seat, kind=req.kind)
        return HostReply(game_id=req.game_id, seat=req.seat, status=HOSTED)

    async def _join(self, req: HostBot, request_id: str | None) -> Reply:
        join = lc.JoinSeat(seat=req.seat, name=req.name or req.kind, kind="bot")
        if request_id is None:
            return await self.commands.call(req.game_id, join)
        # Same bytes whoever sends it: a retry is answered as the first delivery was, token included.
        command_id = "host-" + hashlib.sha256(f"{req.game_id}|{req.seat}|{request_id}".encode()).hexdigest()[:32]
        replies = Client(self.redis, self.keys, self.shards, name=f"botrunner:host:{command_id}", own_intake=False)
        try:
            return await replies.call(req.game_id, join, command_id=command_id)
        finally:
            await replies.close()

    async def start_game(self, game_id: str, seat: int) -> bool:
        playing = self.seats.get((game_id, seat))
        token = playing.hosted.token if playing else await self._token(game_id, seat)
        reply = await self.commands.call(game_id, lc.StartGame(), seat=seat, token=token)
        return reply.outcome.status == ACCEPTED

    async def _token(self, game_id: str, seat: int) -> str | None:
        raw = await self.redis.hget(self.hosted_key(shard_of(game_id, self.shards)), seat_field(game_id, seat))
        return msgspec.json.decode(raw, type=HostedSeat).token if raw else None

    # ---- the shards this runner plays (a lease listener) ---------------------------------------------

    def assign(self, shards: set[int]) -> None:
        if shards != self.wanted:
            self.wanted = set(shards)
            self._wake.set()

    def active(self) -> set[int]:
        return set(self.loaded)

    def _play(self, hosted: HostedSeat) -> None:
        key = (hosted.game_id, hosted.seat)
        if key not in self.seats:
            bot = make_bot(hosted.kind, hosted.game_type, hosted.seed, self.budget)
            self.seats[key] = Playing(hosted=hosted, bot=bot)

    async def _reconcile(self) -> None:
        for shard in sorted(self.loaded - self.wanted):
            self.loaded.discard(shard)
            for key in [k for k in self.seats if shard_of(k[0], self.shards) == shard]:
                del self.seats[key]
        for shard in sorted(self.wanted - self.loaded):
            records = await self.redis.hgetall(self.hosted_key(shard))
            for raw in records.values():
                self._play(msgspec.json.decode(raw, type=HostedSeat))
            self.loaded.add(shard)
            if records:
                log.info("seats_resumed", shard=shard, seats=len(records))

    async def poll(self, loop: Loop) -> None:
        """Supervised: load the seats of newly owned shards and answer every hosted seat's latest
        request, now and every POLL_S (what notices may have missed)."""
        while True:
            loop.beat()
            await self._reconcile()
            await self.answer(list(self.seats))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=POLL_S)

    async def on_notices(self, batch: Batch) -> None:
        """Handle turn notices of owned shards: answer the seats this runner hosts."""
        wanted: list[tuple[str, int]] = []
        unknown: list[tuple[str, int]] = []
        for _, entries in batch:
            for _, fields in entries:
                try:
                    n = _notice.decode(fields[b"data"])
                except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
                    continue
                key = (n.game_id, n.seat)
                if key in self.seats:
                    wanted.append(key)
                elif key not in self._not_hosted and shard_of(n.game_id, self.shards) in self.loaded:
                    unknown.append(key)
        if unknown:
            # Hosted by another runner since this one loaded the shard (or not a bot's seat at all).
            pipe = self.redis.pipeline(transaction=False)
            for game_id, seat in unknown:
                pipe.hget(self.hosted_key(shard_of(game_id, self.shards)), seat_field(game_id, seat))
            for key, raw in zip(unknown, await pipe.execute(), strict=True):
                if raw:
                    self._play(msgspec.json.decode(raw, type=HostedSeat))
                    wanted.append(key)
                else:
                    self._not_hosted[key] = None
            while len(self._not_hosted) > 100_000:
                self._not_hosted.popitem(last=False)
        acks = [(stream, [i for i, _ in entries]) for stream, entries in batch]
        await self.answer(list(dict.fromkeys(wanted)), acks)

    async def answer(self, keys: list[tuple[str, int]], acks: list[tuple[str, list[bytes]]] | None = None) -> int:
        """Read the latest message of each seat's stream and answer it if it is an unanswered
        request; then acknowledge `acks` (notice stream, entry ids) with the last writes."""
        if not keys:
            await self._send([], time.monotonic(), self.redis.pipeline(transaction=False), acks)
            return 0
        now = time.monotonic()
        asked = [(key, playing) for key in keys if (playing := self.seats.get(key)) is not None]
        pipe = self.redis.pipeline(transaction=False)
        for (game_id, seat), playing in asked:
            # Seat message ids are their versions: ask only for a message newer than the one
            # answered (or that one again, when its answer is due to be resent), so that a poll of
            # every hosted seat reads and decodes nothing for seats still waiting on others.
            answered = playing.hosted.answered
            due = now - playing.sent_at >= self.resend_s and playing.resends < RESENDS
            low = "-" if answered < 0 else f"{answered if due else answered + 1}-0"
            pipe.xrevrange(self.keys.seat(game_id, seat), min=low, count=1)
        latest = await pipe.execute() if asked else []
        sends: list[tuple[Playing, CommandEnvelope]] = []
        stalled: list[tuple[Playing, RawTurnRequest]] = []
        done: list[Playing] = []
        due_now: list[tuple[tuple[str, int], Playing, RawTurnRequest]] = []
        for (key, playing), entries in zip(asked, latest, strict=True):
            if not entries:
                continue
            try:
                message = _seat_message.decode(entries[0][1][b"data"])
            except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
                log.warning("seat_entry_skipped", game_id=key[0], seat=key[1])
                continue
            if isinstance(message, GameOver):
                self.finished[key[0]] = message
                done.append(playing)
            elif message.version > playing.hosted.answered and _searches(playing):
                if playing.unreadable != message.version:
                    self._queue(key, message)
            elif message.version > playing.hosted.answered and key not in self._in_flight:
                due_now.append((key, playing, message))
            elif now - playing.sent_at >= self.resend_s and playing.resends < RESENDS:
                stalled.append((playing, message))
        quick = [d for d in due_now if not _slow(d[1])]
        slow = [d for d in due_now if _slow(d[1])]
        results = [(d, a, False) for d, a in zip(quick, self._choose_now(quick), strict=True)]
        if slow:
            results += [(d, a, True) for d, a in zip(slow, await self._think_slow(slow), strict=True)]
            now = time.monotonic()  # the answers leave now, not when the batch was read
        for (key, playing, message), answer, thought in results:
            if thought and (self.seats.get(key) is not playing or shard_of(key[0], self.shards) not in self.loaded):
                continue  # the shard moved or the game ended while a slow bot thought: not ours to answer
            if isinstance(answer, CommandEnvelope):
                sends.append((playing, answer))
            elif playing.unreadable != message.version:
                # A request this bot cannot read (a view of another shape, written by a turn
                # service of another version) costs that seat this move, never the others'.
                playing.unreadable = message.version
                log.warning(
                    "turn_request_unreadable",
                    game_id=key[0],
                    seat=key[1],
                    version=message.version,
                    error=str(answer)[:200],
                )
        if stalled:
            await self._resend(stalled, now)
        pipe = self.redis.pipeline(transaction=False)
        for playing in done:
            h = playing.hosted
            self.seats.pop((h.game_id, h.seat), None)
            pipe.hdel(self.hosted_key(shard_of(h.game_id, self.shards)), seat_field(h.game_id, h.seat))
        return await self._send(sends, now, pipe, acks)

    async def _send(
        self,
        sends: list[tuple[Playing, CommandEnvelope]],
        now: float,
        pipe: Any,
        acks: list[tuple[str, list[bytes]]] | None = None,
    ) -> int:
        """Write the answers, the seat records that mark them answered, what `pipe` already holds
        and then `acks` (notice stream, entry ids), in one round trip; returns the answers sent. An
        answer Redis refuses leaves its seat unanswered here (it is answered again at the next
        poll); its record, written alongside, only makes a runner restarted meanwhile resend it
        after RESEND_S (a restarted runner resends every answer the game has not moved past)."""
        first = len(pipe)
        encoded = [codec.encode(env) for _, env in sends]
        for (_, env), data in zip(sends, encoded, strict=True):
            pipe.xadd(self.keys.intake(shard_of(env.game_id, self.shards)), {"data": data})
        for playing, env in sends:
            h = msgspec.structs.replace(playing.hosted, answered=env.expected_version)
            pipe.hset(self.hosted_key(shard_of(h.game_id, self.shards)), seat_field(h.game_id, h.seat), codec.encode(h))
        for stream, ids in acks or ():
            if ids:
                pipe.xack(stream, GROUP, *ids)
        if not len(pipe):
            return 0
        replies = await pipe.execute(raise_on_error=False)
        sent = 0
        for (playing, env), data, reply in zip(sends, encoded, replies[first : first + len(sends)], strict=True):
            if isinstance(reply, Exception):
                log.warning("answer_not_sent", game_id=env.game_id, seat=env.seat, error=str(reply)[:200])
                continue
            assert env.expected_version is not None
            playing.hosted.answered = env.expected_version
            playing.moves += 1
            playing.sent, playing.sent_at, playing.resends = data, now, 0
            sent += 1
        answers = range(first, first + len(sends))
        if failed := [r for i, r in enumerate(replies) if i not in answers and isinstance(r, Exception)]:
            raise failed[0]  # a record or an ack: the notices stay pending and are delivered again
        return sent

    def _queue(self, key: tuple[str, int], req: RawTurnRequest) -> None:
        queued = self._think.get(key)
        if queued is None or queued.version < req.version:
            self._think[key] = req
            self._think_wake.set()

    async def think(self, loop: Loop) -> None:
        """Supervised: answer search bots' requests one at a time (see the module docstring). A
        request the game has moved past, or a seat no longer played here, is dropped; a search
        that fails is answered by the bot's prior; a send that fails is left for the next poll."""
        while True:
            loop.beat()
            if not self._think:
                self._think_wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._think_wake.wait(), timeout=POLL_S)
                continue
            key, req = next(iter(self._think.items()))
            playing = self.seats.get(key)
            try:
                if playing is not None and req.version > playing.hosted.answered:
                    await self._search(key, playing, req)
            finally:
                if self._think.get(key) is req:
                    del self._think[key]

    async def _search(self, key: tuple[str, int], playing: Playing, req: RawTurnRequest) -> None:
        bot = playing.bot
        entries: Any = []
        if bot.version < req.version:
            entries = await self.redis.xrange(
                self.keys.public(req.game_id), min=f"{bot.version + 1}-0", max=f"{req.version}-0"
            )
        try:
            env = await asyncio.to_thread(self._searched, playing, req, entries)
            self.searched += 1
        except Exception as exc:
            # A search that fails (a bug, a public entry it cannot fold, a state it cannot
            # determinize) costs the seat its look-ahead, not its move: the prior answers.
            log.exception(
                "search_failed", game_id=req.game_id, seat=req.seat, version=req.version, error=repr(exc)[:200]
            )
            fallback = self._fallback(playing, req)
            if fallback is None:
                return
            env = fallback
        if self.seats.get(key) is not playing or shard_of(req.game_id, self.shards) not in self.loaded:
            return  # the shard moved or the game ended while it thought: the seat is not ours to record
        await self._send([(playing, env)], time.monotonic(), self.redis.pipeline(transaction=False))

    def _fallback(self, playing: Playing, req: RawTurnRequest) -> CommandEnvelope | None:
        """The search bot's prior's answer; None (said once per request) when it cannot read the
        request either, which then costs that seat this move, as for any bot."""
        try:
            kind, payload = playing.bot.fallback(req)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, StopIteration) as exc:
            if playing.unreadable != req.version:
                playing.unreadable = req.version
                log.warning(
                    "turn_request_unreadable",
                    game_id=req.game_id,
                    seat=req.seat,
                    version=req.version,
                    error=str(exc)[:200],
                )
            return None
        return self._envelope(playing, req, kind, payload)

    async def _resend(self, stalled: list[tuple[Playing, RawTurnRequest]], now: float) -> None:
        """Send again the answers to requests whose game has not moved since (its public stream
        ends at the request's version): the same bytes, or after a restart the same command id."""
        pipe = self.redis.pipeline(transaction=False)
        for _, req in stalled:
            pipe.xrevrange(self.keys.public(req.game_id), count=1)
        tails = await pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        again = 0
        for (playing, req), tail in zip(stalled, tails, strict=True):
            playing.sent_at = now
            if not tail or int(tail[0][0].split(b"-")[0]) > req.version:
                playing.resends = RESENDS  # the game moved on: nothing was lost
                continue
            if playing.sent is None and _searches(playing):
                # After a restart the bytes are gone and a search takes long: the prior answers
                # under the same command id (refused, harmlessly, if the first move landed after all).
                env = self._fallback(playing, req)
                if env is None:
                    continue
                playing.sent = codec.encode(env)
            elif playing.sent is None and _slow(playing):
                key = (req.game_id, req.seat)
                if key in self._in_flight:
                    continue
                [answer] = await self._think_slow([(key, playing, req)])
                if not isinstance(answer, CommandEnvelope):
                    continue  # unreadable: said when it was first asked
                playing.sent = codec.encode(answer)
            playing.resends += 1
            data = playing.sent if playing.sent is not None else codec.encode(self._answer(playing, req))
            pipe.xadd(self.keys.intake(shard_of(req.game_id, self.shards)), {"data": data})
            again += 1
            log.warning(
                "answer_resent", game_id=req.game_id, seat=req.seat, version=req.version, resends=playing.resends
            )
        if again:
            await pipe.execute()

    def _searched(self, playing: Playing, req: RawTurnRequest, entries: list[Any]) -> CommandEnvelope:
        """In a worker thread, so that the event loop goes on: fold the public stream's new
        `entries`, then search. StopIteration cannot cross into the awaiting future (it would leave
        the await hanging), so every failure leaves as a RuntimeError or its own type."""
        try:
            if entries or playing.bot.version < req.version:
                playing.bot.follow(entries, upto=req.version)
            return self._answer(playing, req)
        except StopIteration as exc:
            raise RuntimeError("StopIteration in a search") from exc

    async def _think_slow(
        self, due: list[tuple[tuple[str, int], Playing, RawTurnRequest]]
    ) -> list[CommandEnvelope | Exception]:
        """Slow rule-based bots' answers (Mechanica's planner: milliseconds a decision; greedy
        takes ~0.05 ms and answers on the loop), in a worker thread so that the leases and the
        other loops go on meanwhile. One batch at a time, and a seat being thought about is left
        out of other batches (a poll and a notice may ask for the same request): no bot object is
        ever used by two threads at once."""
        keys = {key for key, _, _ in due}
        self._in_flight |= keys
        try:
            async with self._thinking:
                return await asyncio.to_thread(self._choose_now, due)
        finally:
            self._in_flight -= keys

    def _choose_now(
        self, due: list[tuple[tuple[str, int], Playing, RawTurnRequest]]
    ) -> list[CommandEnvelope | Exception]:
        out: list[CommandEnvelope | Exception] = []
        for _, playing, message in due:
            try:
                out.append(self._answer(playing, message))
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
                out.append(exc)
            except StopIteration as exc:
                # Raised out of a worker thread it would never reach the awaiting loop.
                raise RuntimeError(f"bot raised StopIteration for {message.game_id} seat {message.seat}") from exc
        return out

    def _answer(self, playing: Playing, req: RawTurnRequest) -> CommandEnvelope:
        kind, payload = playing.bot.choose(req)
        return self._envelope(playing, req, kind, payload)

    def _envelope(self, playing: Playing, req: RawTurnRequest, kind: str, payload: bytes) -> CommandEnvelope:
        return CommandEnvelope(
            type=kind,
            game_id=req.game_id,
            command_id=move_id(req.game_id, req.seat, req.version),
            seat=req.seat,
            token=playing.hosted.token,
            expected_version=req.version,
            payload=msgspec.Raw(payload),
        )


def _searches(playing: Playing) -> bool:
    return getattr(playing.bot, "needs_public", False) is True


def _slow(playing: Playing) -> bool:
    return getattr(playing.bot, "slow", False) is True


class BotRunnerService(Service):
    def __init__(self, settings: Settings, url: str) -> None:
        super().__init__("botrunner", connect(url))
        self.settings = settings
        self.keys = Keys(settings.prefix)
        self.runner = BotRunner(self.client, self.keys, settings.shards, name=settings.consumer)
        self.runner.budget = SearchBudget(iterations=settings.ismcts_iterations, seconds=settings.ismcts_ms / 1000)
        self.leases = leases_for(self.client, self.keys, GROUP, settings)
        self.notices = reader_for(
            self.client,
            GROUP,
            settings,
            lambda s: [self.keys.turn_notices(s)],
            self.runner.on_notices,
            batch=500,
            group_start="0",
        )
        self.leases.listen(self.notices)
        self.leases.listen(self.runner)
        self.broker = make_broker(url, cluster=is_cluster(self.client))
        self._subscribe()

    def _subscribe(self) -> None:
        s = self.settings
        for min_idle in (None, s.reclaim_idle_ms):
            # The second subscriber redelivers requests a runner took and never acked (it died, or
            # Redis failed mid-request): hosting is idempotent, see BotRunner.host.
            sub = StreamSub(self.runner.lobby, group=GROUP, consumer=s.consumer)
            if min_idle is not None:
                sub = StreamSub(
                    self.runner.lobby,
                    group=GROUP,
                    consumer=s.consumer,
                    min_idle_time=min_idle,
                    polling_interval=reclaim_polling_ms(min_idle),
                )
            self.broker.subscriber(stream=sub, parser=raw_parser, decoder=raw_decoder, ack_policy=AckPolicy.MANUAL)(
                self._lobby
            )

    async def _lobby(self, raw: RawEntries) -> None:
        entry_ids: list[bytes] = raw["message_ids"]
        fields: dict[bytes, bytes] = raw["data"]
        try:
            req = msgspec.json.decode(fields[b"data"], type=HostBot)
        except (KeyError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            log.warning("lobby_request_skipped", error=str(exc)[:200])
            await self.client.xack(self.runner.lobby, GROUP, *entry_ids)
            return
        if req.kind not in self.settings.bots:
            hosted = ", ".join(self.settings.bots)
            reason = f"bot kind {req.kind!r} is not hosted here; hosted: {hosted}"
            answer = HostReply(game_id=req.game_id, seat=req.seat, status=REFUSED, reason=reason)
            log.warning("bot_kind_not_hosted", kind=req.kind, hosted=list(self.settings.bots))
        else:
            # A Redis error propagates: the request stays pending and is delivered again.
            answer = await self.runner.host(req, request_id=entry_ids[0].decode())
        if req.reply_to:
            await self._host_reply(req.reply_to, answer)
        await self.client.xack(self.runner.lobby, GROUP, *entry_ids)

    async def _host_reply(self, reply_to: str, answer: HostReply) -> None:
        """Only into a reply stream of this installation. A write Redis refuses (a stream outside
        this user's ACL, which grants only the gateway's `<prefix>:reply:gw:*`; a key of another
        type) is logged and the request settled all the same: raising would leave it pending, to
        be redelivered, hosted again and refused again for ever."""
        if self.keys.reply_client(reply_to) is None:
            log.warning("host_reply_skipped", reply_to=reply_to[:120], reason="not a reply stream")
            return
        try:
            await self.client.xadd(reply_to, {"data": codec.encode(answer)})
        except ResponseError as exc:
            if transient(exc):
                raise
            log.warning("host_reply_refused", reply_to=reply_to[:120], error=str(exc)[:200])

    async def _watch_lobby(self, loop: Loop) -> None:
        """FastStream stops a stream subscriber whose group vanished (NOGROUP): recreate the group
        from the lobby's start (a request hosted before is refused: the seat is taken) and start it."""
        while True:
            loop.beat()
            for sub in self.broker.subscribers:
                if not sub.running:
                    log.warning("consumer_group_recreated", stream=self.runner.lobby, group=GROUP)
                    await ensure_group(self.client, self.runner.lobby, GROUP)
                    await sub.start()
            await asyncio.sleep(1.0)

    async def start(self) -> None:
        assert self.leases is not None
        await patiently(lambda: ensure_group(self.client, self.runner.lobby, GROUP), "lobby group")
        await patiently(self.broker.start, "lobby subscriber")
        self.supervisor.spawn("leases", self.leases.run)
        self.supervisor.spawn("notices", self.notices.run)
        self.supervisor.spawn("seats", self.runner.poll)
        # A search beats once per move: allow it its budget, several times over.
        self.supervisor.spawn("think", self.runner.think, silence_s=max(30.0, 3 * self.settings.ismcts_ms / 1000 + 10))
        self.supervisor.spawn("lobby", self._watch_lobby)
        # A search without its native rollout runs each iteration on the Python rules, so fewer fit in
        # a move's budget: say so. Before settle_gc, since this first import allocates what stays.
        report_native(log, SEARCH_MODULES)
        settle_gc()
        log.info("botrunner_started", holder=self.leases.holder, bots=list(self.settings.bots))

    async def stop(self) -> None:
        if self.leases is not None:
            await self.leases.release_all()
        await self.supervisor.stop()
        await self.broker.stop()
        await self.runner.commands.close()
        await self.client.aclose()
