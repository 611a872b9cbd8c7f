"""The referee's application service: a batch of raw commands in, guarded appends and publishes out.

A batch costs three round trips whatever its size: one pipelined read of the logs of games not in
the cache, pipelines of guarded appends (one Lua call per game; a pipeline per CHUNK commands, each
sent as soon as it is judged so that Redis runs it while the next is judged), one pipeline of publishes,
replies, dead letters and the batch's XACK. On a standalone Redis (`inline_effects`) an applied
command's bus notice, reply and XACK ride in its append script instead, so the last pipeline
only carries what was not applied (dead letters, duplicates, games that do not exist), usually
nothing: two round trips, and the reply is visible the moment the events are.

Commands of one game are judged in arrival order; a version conflict (another referee wrote
first) or a duplicate evicts the game from the cache, and its remaining commands are judged again
on the reloaded log.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

import msgspec
import structlog
from prometheus_client import Counter

from contracts import codec
from contracts import lifecycle as lc
from contracts.bus import BusNotice, entry_crc
from contracts.outcome import ACCEPTED, NULL, REJECTED, CommandOutcome, Reply, decode_outcome, digest
from contracts.upcast import outcome as upcast_outcome
from games import match as m
from services import metrics, tokens
from services.eventstore.base import CONFLICT, DUPLICATE, OK, AppendRequest, AppendResult, EventStore
from services.eventstore.keys import Keys, shard_of
from services.follower import rebuild
from services.referee import entries
from services.referee.entries import Dead, Item, cut
from services.referee.judging import Judge, Planned
from services.referee.sink import Sink

log = structlog.get_logger("referee")
MAX_ATTEMPTS = 8
# Commands per append pipeline, sent while the rest of the batch is still being judged. One
# referee, 1,000 games, 2 cores (medians of 3 rounds, same run): one pipeline per batch 6.8k
# commands/s; chunks of 16 or 32 9.0k, 64 9.6k-10.2k, 128 10.0k.
CHUNK = 64


# Called once per intake entry the referee is done with: (stream, entry id, "accepted" |
# "rejected" | "dead", the rule or the reason). Metrics and tests count outcomes with it.
Observer = Callable[[str, bytes, str, str], None]


@functools.lru_cache(maxsize=64)
def _judged(game_type: str, status: str) -> Counter:
    """The counter child of one (game type, outcome): bound once, incremented per command."""
    outcome = {ACCEPTED: "accepted", REJECTED: "refused"}.get(status, status)
    return metrics.COMMANDS.labels(game_type or "none", outcome)


class Referee:
    def __init__(
        self,
        store: EventStore,
        sink: Callable[[], Sink],
        keys: Keys,
        *,
        shards: int,
        secret: bytes,
        group: str = "referee",
        cache_games: int = 20000,
        inline_effects: bool = False,
        chunk: int = CHUNK,
        clock: Callable[[], float] = time.time,
        new_seed: Callable[[], str] = tokens.new_seed,
        observe: Observer | None = None,
    ) -> None:
        self.store = store
        # One sink per batch: batches of different shards run concurrently in one process.
        self.new_sink = sink
        self.keys = keys
        self.shards = shards
        self.secret = secret
        self.group = group
        self.cache: OrderedDict[str, m.Match] = OrderedDict()
        # CRC-32 of each cached game's last log entry, which its next bus notice names.
        self.tails: dict[str, int] = {}
        self.cache_games = cache_games
        self.inline_effects = inline_effects
        self.chunk = chunk
        self.clock = clock
        self.observe = observe
        self.judge = Judge(
            keys, shards=shards, secret=secret, group=group, inline_effects=inline_effects, new_seed=new_seed
        )
        self.stats = {"accepted": 0, "rejected": 0, "dead": 0, "conflicts": 0, "duplicates": 0}

    # ---- intake ----------------------------------------------------------------------------

    async def handle(self, stream: str, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        """Judge a batch read from intake `stream`; everything handled is acked in the last pipeline."""
        await self.handle_many([(stream, entries)])

    async def handle_many(self, batches: list[tuple[str, list[tuple[bytes, dict[bytes, bytes]]]]]) -> None:
        """Judge what one read returned from several intake streams as one batch, for the round
        trips of one. A game's commands come from its shard's streams (the shared intake, the
        timer, registered clients' own intakes): each stream's in arrival order, one stream after
        another in the order of the read, so commands sent through different streams at the same
        moment are judged in either order (as they could arrive in either order)."""
        now_ms = int(self.clock() * 1000)
        sink = self.new_sink()
        by_game: dict[str, list[Item]] = {}
        acks: dict[str, list[bytes]] = {}
        oversized: dict[str, list[bytes]] = {}
        for stream, batch in batches:
            done = acks.setdefault(stream, [])
            for entry_id, fields in batch:
                got = entries.read(self.keys, stream, entry_id, fields)
                if isinstance(got, Item):
                    by_game.setdefault(got.env.game_id, []).append(got)
                    continue
                self._dead(stream, entry_id, fields, got, sink)
                done.append(entry_id)
                if got.oversized:
                    oversized.setdefault(stream, []).append(entry_id)
        for item in await self._judge(by_game, now_ms, sink):
            acks[item.stream].append(item.entry_id)
        for stream, ids in acks.items():
            sink.ack(stream, self.group, ids)
        for stream, ids in oversized.items():
            # Over a documented limit: the bounded dead letter is all that is kept of it.
            sink.delete(stream, ids)
        await sink.flush()

    async def dead_letter(self, stream: str, entry_id: bytes, fields: dict[bytes, bytes], reason: str) -> None:
        """Move one intake entry to the dead-letter stream and ack it (the reclaimer's last resort)."""
        sink = self.new_sink()
        self._dead(stream, entry_id, fields, Dead(reason=reason), sink)
        sink.ack(stream, self.group, [entry_id])
        await sink.flush()

    def _dead(self, stream: str, entry_id: bytes, fields: dict[bytes, bytes], dead: Dead, sink: Sink) -> None:
        """Never raises: the record is bounded and built without parsing the entry again."""
        self.stats["dead"] += 1
        _judged("unknown", "dead_lettered").inc()
        log.warning(
            "dead_letter", stream=stream, entry_id=entry_id.decode(errors="replace"), reason=dead.reason, **dead.said
        )
        sink.add(self.keys.dead_letter, entries.dead_record(stream, entry_id, fields, dead.reason))
        if self.observe is not None:
            self.observe(stream, entry_id, "dead", dead.reason)

    # ---- judging -----------------------------------------------------------------------------

    async def _judge(self, by_game: dict[str, list[Item]], now_ms: int, sink: Sink) -> list[Item]:
        """The unit of work of a batch: judge each game's commands on its cached aggregate, append
        them (one guarded script per command), then settle each result; a game whose append lost
        a race is reloaded and its remaining commands judged again. Returns the handled items the
        sink must ack (with inline effects, applied commands are acked by their append script);
        what is neither stays pending, for the reclaimer."""
        acks: list[Item] = []
        pending = by_game
        for _ in range(MAX_ATTEMPTS):
            if not pending:
                break
            await self._load(list(pending))
            plans, results = await self._append(self._plan(pending, now_ms, sink, acks))
            pending = self._settle(plans, results, sink, acks)
        return acks

    def _plan(
        self, pending: dict[str, list[Item]], now_ms: int, sink: Sink, acks: list[Item]
    ) -> Iterator[tuple[str, list[tuple[Planned, AppendRequest]]]]:
        """Judge the pending commands, one game at a time, as the appends are sent (a generator:
        judging the next games overlaps Redis running the last chunk). What needs no append (a
        game that does not exist) is answered into `sink` and `acks` at once."""
        # Taken now: judging yields between chunks, and another handler (the reclaimer) may
        # evict one of these games meanwhile; its append guard still catches any conflict.
        aggs = {g: self.cache.get(g) for g in pending}
        for game_id, items in pending.items():
            agg = aggs[game_id]
            if agg is None:
                continue  # its log could not be folded: left pending, see _load
            try:
                decided = []
                tail = self.tails.get(game_id)
                for item in items:
                    plan, append = self.judge.plan(agg, item, now_ms, tail)
                    decided.append((plan, append))
                    tail = plan.tail_crc
                if tail is not None and self.cache.get(game_id) is agg:
                    self.tails[game_id] = tail  # a failed append evicts the game, and this with it
            except Exception:
                # A bug or bad data must not sink the batch: this game's commands stay pending,
                # are redelivered by the reclaimer and dead-lettered after max_deliveries.
                first = items[0].env
                log.exception(
                    "decide_failed",
                    game_id=game_id,
                    command_id=first.command_id,
                    version=agg.version,
                    correlation_id=first.correlation_id or first.command_id,
                )
                self._evict(game_id)
                continue
            if agg.status in (m.NEW, m.ARCHIVED):
                # Nothing to record for a game that does not exist (or no longer in Redis):
                # answer, ack, write no keys.
                self._evict(game_id)
                for plan, append in decided:
                    if not append.events:
                        self._publish(plan, sink)
                        acks.append(plan.item)
                decided = [(plan, append) for plan, append in decided if append.events]
            yield game_id, decided

    async def _append(
        self, planned: Iterator[tuple[str, list[tuple[Planned, AppendRequest]]]]
    ) -> tuple[list[tuple[str, Planned]], list[AppendResult]]:
        """Send the appends in chunks of whole games, each as soon as it is cut, and await them all.
        Judging is CPU here and appending is CPU in Redis: a chunk's scripts run while the next
        games are judged. No game's commands are split across two pipelines in flight."""
        chunks: list[list[tuple[str, Planned]]] = []
        sent: list[asyncio.Task[list[AppendResult]]] = []
        plans: list[tuple[str, Planned]] = []
        appends: list[AppendRequest] = []
        for game_id, decided in planned:
            for plan, append in decided:
                plans.append((game_id, plan))
                appends.append(append)
            if len(appends) >= self.chunk:
                chunks.append(plans)
                sent.append(asyncio.ensure_future(self.store.append_many(appends)))
                plans, appends = [], []
                await asyncio.sleep(0)  # let the task write its pipeline before judging on
        # The last chunk is awaited in place: a lone command (low load) pays for no task.
        last: list[AppendResult] | BaseException = []
        if appends:
            try:
                last = await self.store.append_many(appends)
            except Exception as exc:
                last = exc
        answers = [*await asyncio.gather(*sent, return_exceptions=True), last]
        chunks.append(plans)
        failed = next((a for a in answers if isinstance(a, BaseException)), None)
        if failed is not None:
            # Some scripts may have run: the cached games may be ahead of their logs.
            for chunk in chunks:
                for game_id, _ in chunk:
                    self._evict(game_id)
            raise failed
        results = [r for answer in answers for r in answer]  # type: ignore[union-attr]
        return [p for chunk in chunks for p in chunk], results

    def _settle(
        self, plans: list[tuple[str, Planned]], results: list[AppendResult], sink: Sink, acks: list[Item]
    ) -> dict[str, list[Item]]:
        """Answer each appended command by its result; returns the games to judge again."""
        retry: dict[str, list[Item]] = {}
        for (game_id, plan), result in zip(plans, results, strict=True):
            if game_id in retry:
                retry[game_id].append(plan.item)
            elif result.status == OK:
                if self.inline_effects:
                    self._count(plan)  # the append script published, replied and acked
                else:
                    self._publish(plan, sink)
                    acks.append(plan.item)
                if self.cache.get(game_id) is not None and self.cache[game_id].status == m.OVER:
                    self._evict(game_id)  # no more moves will come: keep memory for live games
            elif result.status == DUPLICATE:
                self.stats["duplicates"] += 1
                self._evict(game_id)
                self._reply_prior(plan, result.prior_outcome, sink)
                acks.append(plan.item)
                retry[game_id] = []
            else:
                # A conflict; SKIPPED only follows a duplicate or conflict, already in retry.
                assert result.status == CONFLICT, result.status
                self.stats["conflicts"] += 1
                self._evict(game_id)
                retry[game_id] = [plan.item]
        # Whatever still conflicts after MAX_ATTEMPTS stays pending and is reclaimed later.
        return {g: items for g, items in retry.items() if items}

    async def _load(self, game_ids: list[str]) -> None:
        missing = {g: 0 for g in game_ids if g not in self.cache}
        if missing:
            logs = await self.store.read_many(missing)
            for game_id, entries in logs.items():
                try:
                    self.cache[game_id] = rebuild(game_id, entries)
                    self.tails[game_id] = entry_crc(entries[-1][1]) if entries else 0
                except Exception:
                    log.exception("log_unreadable", game_id=game_id)
        for g in game_ids:
            if g in self.cache:
                self.cache.move_to_end(g)
        while len(self.cache) > self.cache_games:
            self.tails.pop(self.cache.popitem(last=False)[0], None)

    def _evict(self, game_id: str) -> None:
        self.cache.pop(game_id, None)
        self.tails.pop(game_id, None)

    def _count(self, plan: Planned) -> None:
        self._counted(plan.item, plan.outcome, plan.game_type)

    def _counted(self, item: Item, o: CommandOutcome, game_type: str = "") -> None:
        if self.observe is not None:
            self.observe(item.stream, item.entry_id, o.status, o.rule or "")
        _judged(game_type, o.status).inc()
        if o.status == ACCEPTED:
            self.stats["accepted"] += 1
            # Debug only: at the default level this is a no-op, a JSON line per command is not.
            log.debug(
                "accepted",
                game_id=o.game_id,
                command_id=o.command_id,
                version=o.to_version,
                correlation_id=o.correlation_id or o.command_id,
                type=o.command_type,
                seat=o.seat,
                from_version=o.judged_at_version,
            )
        else:
            self.stats["rejected"] += 1
            log.info(
                "rejected",
                game_id=o.game_id,
                command_id=o.command_id,
                version=o.judged_at_version,
                correlation_id=o.correlation_id or o.command_id,
                type=o.command_type,
                seat=o.seat,
                rule=o.rule,
                detail=o.detail,
            )

    def _publish(self, plan: Planned, sink: Sink) -> None:
        self._count(plan)
        if (notice := self.judge.notice_entry(plan)) is not None:
            sink.add(*notice)
        for stream, data in self.judge.effects(plan):
            sink.add(stream, {"data": data})

    def _reply_prior(self, plan: Planned, prior: bytes | None, sink: Sink) -> None:
        """A command whose id was judged before. A redelivery (the very same bytes) gets the answer
        it got the first time; any other message under that id is refused (GAME-DUPLICATE-ID),
        naming that first outcome, and is not played. The seat token only goes back to the very
        same message (so to the same private reply stream): command ids are public, and a
        stranger reusing a JoinSeat's id must not receive that seat's token."""
        if prior is None:
            return
        outcome = upcast_outcome(decode_outcome(prior, plan.item.env.game_id))
        item = plan.item
        if not hmac.compare_digest(outcome.envelope_sha256, plan.outcome.envelope_sha256):
            self._refuse_reused_id(plan, outcome, sink)
            return
        payload = item.payload
        token = None
        if outcome.status == ACCEPTED and isinstance(payload, lc.JoinSeat):
            token = tokens.seat_token(self.secret, outcome.game_id, payload.seat, outcome.command_id)
        if outcome.status == ACCEPTED:
            # The first delivery may have been appended but never announced (a crash between the
            # append and the publish): announce again; bus readers catch up from the log anyway.
            notice = BusNotice(
                game_id=outcome.game_id,
                from_version=outcome.judged_at_version,
                to_version=outcome.to_version,
            )
            sink.add(self.keys.bus(shard_of(outcome.game_id, self.shards)), {"data": codec.encode(notice)})
        if self.observe is not None:
            self.observe(item.stream, item.entry_id, outcome.status, outcome.rule or "")
        # Neither the first answer nor this one may go where the sender may not write.
        reply_to = self.judge.answer_to(item, outcome) and self.judge.answer_to(item, plan.outcome)
        if reply_to:
            sink.add(reply_to, {"data": codec.encode(Reply(outcome=outcome, token=token))})

    def _refuse_reused_id(self, plan: Planned, first: CommandOutcome, sink: Sink) -> None:
        """Only answered (the game's records keep the first command under its id)."""
        o = plan.outcome
        step = (
            f"{first.judged_at_version} to {first.to_version}"
            if first.status == ACCEPTED
            else str(first.judged_at_version)
        )
        verdict = m.rejected(
            "GAME-DUPLICATE-ID",
            cut(
                f"command id {o.command_id!r} was judged before: {first.status}"
                f"{f' ({first.rule})' if first.rule else ''} at version {step}; send a new command_id"
            ),
        )
        refusal = msgspec.structs.replace(
            o,
            status=REJECTED,
            to_version=o.judged_at_version,
            rule=verdict.rule,
            text=verdict.text,
            detail=verdict.detail,
            payload=NULL,
            payload_digest=o.payload_digest or digest(bytes(plan.item.env.payload)),
        )
        self._counted(plan.item, refusal)
        reply_to = self.judge.answer_to(plan.item, o)
        if reply_to:
            sink.add(reply_to, {"data": codec.encode(Reply(outcome=refusal))})
