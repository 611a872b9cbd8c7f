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
from collections.abc import Callable
from typing import Any

import msgspec
import structlog
from prometheus_client import Counter

from contracts import codec
from contracts import lifecycle as lc
from contracts.bus import BusNotice
from contracts.envelope import CommandEnvelope, EventEnvelope, event_id
from contracts.outcome import ACCEPTED, NULL, REJECTED, CommandOutcome, Reply, digest
from contracts.registry import type_name
from contracts.rejection import rejection_envelope
from contracts.upcast import outcome as upcast_outcome
from games import match as m
from games.base import Rejected
from services import metrics, tokens
from services.eventstore.base import CONFLICT, DUPLICATE, OK, AppendRequest, AppendResult, EventStore
from services.eventstore.keys import Keys, shard_of
from services.follower import rebuild
from services.referee import entries
from services.referee.entries import Dead, Item, cut
from services.referee.sink import Sink

log = structlog.get_logger("referee")
MAX_ATTEMPTS = 8
# A seat sends the same token with every command: hash it once, not per command.
_token_hash = functools.lru_cache(maxsize=1 << 14)(tokens.token_hash)
# Commands per append pipeline, sent while the rest of the batch is still being judged. One
# referee, 1,000 games, 2 cores (medians of 3 rounds, same run): one pipeline per batch 6.8k
# commands/s; chunks of 16 or 32 9.0k, 64 9.6k-10.2k, 128 10.0k.
CHUNK = 64


# Called once per intake entry the referee is done with: (stream, entry id, "accepted" |
# "rejected" | "dead", the rule or the reason). Metrics and tests count outcomes with it.
Observer = Callable[[str, bytes, str, str], None]
# Refusals whose reply would go where the sender may not write: none is sent.
_UNANSWERED = frozenset({"GAME-REPLY-TO"})


@functools.lru_cache(maxsize=64)
def _judged(game_type: str, status: str) -> Counter:
    """The counter child of one (game type, outcome): bound once, incremented per command."""
    outcome = {ACCEPTED: "accepted", REJECTED: "refused"}.get(status, status)
    return metrics.COMMANDS.labels(game_type or "none", outcome)


class Planned(msgspec.Struct, kw_only=True):
    item: Item
    outcome: CommandOutcome
    public: list[bytes | None]
    token: str | None
    encoded: bytes  # the outcome, encoded once for the command record, the audit and the reply
    game_type: str = ""  # for the metrics ("" until the game exists)


class _EncodedReply(msgspec.Struct, frozen=True, kw_only=True):
    """Encodes to the same JSON as `Reply`, around an outcome already encoded for the append."""

    outcome: msgspec.Raw
    token: str | None = None


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
        # Commands on a shard's timer stream come from the turn service: only its Redis user may
        # write there (deploy/redis/users.acl), so no token is needed, and none can be stolen.
        self.timer_streams = {keys.timer(shard) for shard in range(shards)}
        self.group = group
        self.cache: OrderedDict[str, m.Match] = OrderedDict()
        self.cache_games = cache_games
        self.inline_effects = inline_effects
        self.chunk = chunk
        self.clock = clock
        self.new_seed = new_seed
        self.observe = observe
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
        """Returns the handled items the sink must ack (with inline effects, applied commands are
        acked by their append script); what is neither stays pending."""
        acks: list[Item] = []
        pending = by_game
        for _ in range(MAX_ATTEMPTS):
            if not pending:
                break
            await self._load(list(pending))
            # Taken now: judging yields between chunks, and another handler (the reclaimer) may
            # evict one of these games meanwhile; its append guard still catches any conflict.
            aggs = {g: self.cache.get(g) for g in pending}
            # Judging is CPU here, appending is CPU in Redis: a chunk's appends are sent as soon as
            # it is judged, and the next chunk is judged while Redis runs them. Chunks hold whole
            # games, so no game's commands are split across two pipelines in flight.
            plans: list[tuple[str, Planned]] = []
            appends: list[AppendRequest] = []
            sent: list[tuple[list[tuple[str, Planned]], asyncio.Task[list[AppendResult]]]] = []
            for game_id, items in pending.items():
                agg = aggs[game_id]
                if agg is None:
                    continue  # its log could not be folded: left pending, see _load
                try:
                    decided = [self._decide(agg, item, now_ms) for item in items]
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
                        if append.events:
                            plans.append((game_id, plan))
                            appends.append(append)
                        else:
                            self._publish(plan, sink)
                            acks.append(plan.item)
                    continue
                for plan, append in decided:
                    plans.append((game_id, plan))
                    appends.append(append)
                if len(appends) >= self.chunk:
                    sent.append((plans, asyncio.ensure_future(self.store.append_many(appends))))
                    plans, appends = [], []
                    await asyncio.sleep(0)  # let the task write its pipeline before judging on
            # The last chunk is awaited in place: a lone command (low load) pays for no task.
            last: list[AppendResult] | BaseException = []
            if appends:
                try:
                    last = await self.store.append_many(appends)
                except Exception as exc:
                    last = exc
            answers = [*await asyncio.gather(*(task for _, task in sent), return_exceptions=True), last]
            chunks = [chunk for chunk, _ in sent] + [plans]
            failed = next((a for a in answers if isinstance(a, BaseException)), None)
            if failed is not None:
                # Some scripts may have run: the cached games may be ahead of their logs.
                for chunk in chunks:
                    for game_id, _ in chunk:
                        self._evict(game_id)
                raise failed
            plans = [p for chunk in chunks for p in chunk]
            results = [r for answer in answers for r in answer]  # type: ignore[union-attr]
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
            pending = {g: items for g, items in retry.items() if items}
        # Whatever still conflicts after MAX_ATTEMPTS stays pending and is reclaimed later.
        return acks

    async def _load(self, game_ids: list[str]) -> None:
        missing = {g: 0 for g in game_ids if g not in self.cache}
        if missing:
            logs = await self.store.read_many(missing)
            for game_id, entries in logs.items():
                try:
                    self.cache[game_id] = rebuild(game_id, entries)
                except Exception:
                    log.exception("log_unreadable", game_id=game_id)
        for g in game_ids:
            if g in self.cache:
                self.cache.move_to_end(g)
        while len(self.cache) > self.cache_games:
            self.cache.popitem(last=False)

    def _evict(self, game_id: str) -> None:
        self.cache.pop(game_id, None)

    def _request(self, agg: m.Match, item: Item) -> tuple[m.Request, str | None]:
        env, payload = item.env, item.payload
        assert payload is not None
        token = None
        new_seed = new_token_hash = None
        if isinstance(payload, lc.CreateGame):
            new_seed = self.new_seed()
        elif isinstance(payload, lc.JoinSeat):
            token = tokens.seat_token(self.secret, env.game_id, payload.seat, env.command_id)
            new_token_hash = tokens.token_hash(token)
        req = m.Request(
            payload=payload,
            seat=env.seat,
            token_hash=_token_hash(env.token) if env.token else None,
            expected_version=env.expected_version,
            admin=item.stream in self.timer_streams,
            reply_client=item.reply_client,
            new_seed=new_seed,
            new_token_hash=new_token_hash,
        )
        return req, token

    def _decide(self, agg: m.Match, item: Item, now_ms: int) -> tuple[Planned, AppendRequest]:
        env = item.env
        judged = agg.version
        token = None
        if item.early is not None:
            verdict: list[msgspec.Struct] | Rejected = item.early
            authed = m.authenticated(agg, env.seat, _token_hash(env.token) if env.token else None)
            admin = item.stream in self.timer_streams
        else:
            req, token = self._request(agg, item)
            authed = m.authenticated(agg, req.seat, req.token_hash)
            admin = req.admin
            verdict = m.decide(agg, req, apply=True)
        base = {
            "command_id": env.command_id,
            "command_type": env.type,
            "game_id": env.game_id,
            "seat": env.seat,
            "authenticated": authed,
            "admin": admin,
            "envelope_sha256": item.digest,
            "correlation_id": env.correlation_id,
            "expected_version": env.expected_version,
            "received_at_ms": now_ms,
            "judged_at_version": judged,
            "reply_client": item.reply_client,
        }
        if isinstance(verdict, Rejected):
            # A refusal keeps a bounded digest of what was asked, never the payload itself: anyone
            # may send refused commands, as many and as large as the intake lets through.
            outcome = CommandOutcome(
                status=REJECTED,
                to_version=judged,
                rule=verdict.rule,
                text=verdict.text,
                detail=cut(verdict.detail),
                payload=NULL,
                payload_digest=digest(bytes(env.payload)),
                **base,  # type: ignore[arg-type]
            )
            plan = Planned(
                item=item,
                outcome=outcome,
                public=[],
                token=None,
                encoded=codec.encode(outcome),
                game_type=agg.game_type,
            )
            return plan, AppendRequest(
                game_id=agg.game_id,
                expected_version=judged,
                command_id=env.command_id,
                outcome=plan.encoded,
                # Only a refusal of a known sender (a seat's token, the referee's own services)
                # reaches the game's public stream; the audit keeps every one.
                public_rejection=codec.encode(rejection_envelope(outcome)) if authed or admin else None,
                # An unauthenticated refusal is not remembered under its id: anyone can send one,
                # and it must not pre-empt the real sender's command of the same id.
                remember=authed,
                **self._inline(plan),
            )
        private: list[bytes] = []
        public: list[bytes | None] = []
        version = judged
        for event in verdict:  # already folded into the cache by decide(apply=True)
            version += 1
            payload = msgspec.Raw(codec.encode(event))
            data = codec.encode(self._envelope(agg.game_id, version, event, env, now_ms, payload))
            private.append(data)
            shown = m.public_event(agg, event)
            if shown is event:
                public.append(data)
            else:
                public.append(
                    None
                    if shown is None
                    else codec.encode(
                        self._envelope(agg.game_id, version, shown, env, now_ms, msgspec.Raw(codec.encode(shown)))
                    )
                )
        outcome = CommandOutcome(status=ACCEPTED, to_version=agg.version, payload=env.payload, **base)  # type: ignore[arg-type]
        plan = Planned(
            item=item,
            outcome=outcome,
            public=public,
            token=token,
            encoded=codec.encode(outcome),
            game_type=agg.game_type,
        )
        return plan, AppendRequest(
            game_id=agg.game_id,
            expected_version=judged,
            command_id=env.command_id,
            outcome=plan.encoded,
            events=private,
            public=public,
            **self._inline(plan),
        )

    def _inline(self, plan: Planned) -> dict[str, Any]:
        if not self.inline_effects:
            return {}
        item = plan.item
        return {"effects": self._effects(plan), "ack": (item.stream, self.group, item.entry_id)}

    @staticmethod
    def _envelope(
        game_id: str,
        version: int,
        event: msgspec.Struct,
        cmd: CommandEnvelope,
        now_ms: int,
        payload: msgspec.Raw | None = None,
    ) -> EventEnvelope:
        return EventEnvelope(
            type=type_name(event),
            game_id=game_id,
            version=version,
            event_id=event_id(game_id, version),
            command_id=cmd.command_id,
            correlation_id=cmd.correlation_id or cmd.command_id,
            causation_id=cmd.command_id,
            recorded_at_ms=now_ms,
            payload=payload if payload is not None else msgspec.Raw(codec.encode(event)),
        )

    # ---- effects -------------------------------------------------------------------------------

    def _effects(self, plan: Planned) -> list[tuple[str, bytes]]:
        """What an applied command publishes: its bus notice (if accepted) and its reply."""
        o = plan.outcome
        out: list[tuple[str, bytes]] = []
        if o.status == ACCEPTED:
            notice = BusNotice(
                game_id=o.game_id,
                from_version=o.judged_at_version,
                to_version=o.to_version,
            )
            out.append((self.keys.bus(shard_of(o.game_id, self.shards)), codec.encode(notice)))
        reply_to = self._answer_to(plan.item, o)
        if reply_to:
            reply = _EncodedReply(outcome=msgspec.Raw(plan.encoded), token=plan.token)
            out.append((reply_to, codec.encode(reply)))
        return out

    @staticmethod
    def _answer_to(item: Item, o: CommandOutcome) -> str | None:
        """Where the outcome is replied: the command's reply_to, unless the refusal is that the
        sender may not name it."""
        return None if o.rule in _UNANSWERED else item.env.reply_to

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
        for stream, data in self._effects(plan):
            sink.add(stream, {"data": data})

    def _reply_prior(self, plan: Planned, prior: bytes | None, sink: Sink) -> None:
        """A command whose id was judged before. A redelivery (the very same bytes) gets the answer
        it got the first time; any other message under that id is refused (GAME-DUPLICATE-ID),
        naming that first outcome, and is not played. The seat token only goes back to the very
        same message (so to the same private reply stream): command ids are public, and a
        stranger reusing a JoinSeat's id must not receive that seat's token."""
        if prior is None:
            return
        outcome = upcast_outcome(msgspec.json.decode(prior, type=CommandOutcome))
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
        reply_to = self._answer_to(item, outcome) and self._answer_to(item, plan.outcome)
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
        reply_to = self._answer_to(plan.item, o)
        if reply_to:
            sink.add(reply_to, {"data": codec.encode(Reply(outcome=refusal))})
