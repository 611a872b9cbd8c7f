"""Judging one command: pure, given the game's aggregate and the service's facts.

`Judge.plan` turns one parsed intake entry into the outcome and the guarded append that records
it (and, on a standalone Redis, the effects that ride in the append script); it folds an accepted
command's events into the aggregate it is given (`games.match.decide(apply=True)`), which is the
referee's cache. Nothing here reads or writes Redis, logs or counts: `services.referee.engine`
does that around it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.bus import BusNotice, entry_crc, notice_fields
from contracts.envelope import SCHEMA_VERSION, STORED_SCHEMA, CommandEnvelope, StoredEvent
from contracts.outcome import ACCEPTED, NULL, REJECTED, CommandOutcome, digest, stored_outcome
from contracts.registry import type_name
from contracts.rejection import rejection_envelope
from games import match as m
from games.base import Rejected
from services import tokens
from services.eventstore.base import AppendRequest
from services.eventstore.keys import Keys, shard_of
from services.referee.entries import Item, cut

# A seat sends the same token with every command: hash it once, not per command.
token_hash = functools.lru_cache(maxsize=1 << 14)(tokens.token_hash)
# Refusals whose reply would go where the sender may not write: none is sent.
_UNANSWERED = frozenset({"GAME-REPLY-TO"})

# A stored event of today's schema leaves it out while that is STORED_SCHEMA (contracts/envelope.py).
_SCHEMA: int | msgspec.UnsetType = msgspec.UNSET if SCHEMA_VERSION == STORED_SCHEMA else SCHEMA_VERSION


class Planned(msgspec.Struct, kw_only=True):
    item: Item
    outcome: CommandOutcome
    public: list[bytes | None]
    token: str | None
    encoded: bytes  # the outcome, encoded once for the command record, the audit and the reply
    game_type: str = ""  # for the metrics ("" until the game exists)
    events: list[bytes] = []  # the log entries an accepted command appends
    notice: bytes | None = None  # its bus notice, encoded (accepted commands only)
    # CRC-32 of the game's last log entry once this command is appended (contracts/bus.py).
    tail_crc: int | None = None


class EncodedReply(msgspec.Struct, frozen=True, kw_only=True):
    """Encodes to the same JSON as `Reply`, around an outcome already encoded for the append."""

    outcome: msgspec.Raw
    token: str | None = None


class Judge:
    """The referee's facts for judging (its secret, its seeds, which streams are its own) and the
    records a judged command writes."""

    def __init__(
        self,
        keys: Keys,
        *,
        shards: int,
        secret: bytes,
        group: str,
        inline_effects: bool,
        new_seed: Callable[[], str],
    ) -> None:
        self.keys = keys
        self.shards = shards
        self.secret = secret
        # Commands on a shard's timer stream come from the turn service: only its Redis user may
        # write there (deploy/redis/users.acl), so no token is needed, and none can be stolen.
        self.timer_streams = {keys.timer(shard) for shard in range(shards)}
        self.group = group
        self.inline_effects = inline_effects
        self.new_seed = new_seed

    def request(self, agg: m.Match, item: Item) -> tuple[m.Request, str | None]:
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
            token_hash=token_hash(env.token) if env.token else None,
            expected_version=env.expected_version,
            admin=item.stream in self.timer_streams,
            reply_client=item.reply_client,
            new_seed=new_seed,
            new_token_hash=new_token_hash,
        )
        return req, token

    def plan(self, agg: m.Match, item: Item, now_ms: int, tail_crc: int | None = None) -> tuple[Planned, AppendRequest]:
        """`tail_crc`: CRC-32 of the game's last log entry (0 with no log), which the bus notice
        names so that its readers fold its events onto that entry only; None when not known (the
        notice is then a wake-up without events)."""
        env = item.env
        judged = agg.version
        token = None
        if item.early is not None:
            verdict: list[msgspec.Struct] | Rejected = item.early
            authed = m.authenticated(agg, env.seat, token_hash(env.token) if env.token else None)
            admin = item.stream in self.timer_streams
        else:
            req, token = self.request(agg, item)
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
                tail_crc=tail_crc,
            )
            return plan, AppendRequest(
                game_id=agg.game_id,
                expected_version=judged,
                command_id=env.command_id,
                outcome=stored_outcome(outcome),
                # Only a refusal of a known sender (a seat's token, the referee's own services)
                # reaches the game's public stream; the audit keeps every one.
                public_rejection=codec.encode_stored(rejection_envelope(outcome)) if authed or admin else None,
                # An unauthenticated refusal is not remembered under its id: anyone can send one,
                # and it must not pre-empt the real sender's command of the same id.
                remember=authed,
                **self._inline(plan),
            )
        private: list[bytes] = []
        public: list[bytes | None] = []
        for event in verdict:  # already folded into the cache by decide(apply=True)
            data = codec.encode(self.stored(event, env, now_ms))
            private.append(data)
            shown = m.public_event(agg, event)
            if shown is event:
                public.append(data)
            else:
                public.append(None if shown is None else codec.encode(self.stored(shown, env, now_ms)))
        outcome = CommandOutcome(status=ACCEPTED, to_version=agg.version, payload=env.payload, **base)  # type: ignore[arg-type]
        notice = BusNotice(
            game_id=agg.game_id,
            from_version=judged,
            to_version=agg.version,
            prev_crc=tail_crc if private else None,
        )
        plan = Planned(
            item=item,
            outcome=outcome,
            public=public,
            token=token,
            encoded=codec.encode(outcome),
            game_type=agg.game_type,
            events=private,
            notice=codec.encode(notice),
            tail_crc=entry_crc(private[-1]) if private else tail_crc,
        )
        return plan, AppendRequest(
            game_id=agg.game_id,
            expected_version=judged,
            command_id=env.command_id,
            outcome=stored_outcome(outcome),
            events=private,
            public=public,
            **self._inline(plan),
        )

    def _inline(self, plan: Planned) -> dict[str, Any]:
        if not self.inline_effects:
            return {}
        item = plan.item
        out: dict[str, Any] = {"effects": self.effects(plan), "ack": (item.stream, self.group, item.entry_id)}
        if plan.notice is not None:
            out["notice"] = (self.bus(plan.outcome.game_id), plan.notice)
        return out

    def bus(self, game_id: str) -> str:
        return self.keys.bus(shard_of(game_id, self.shards))

    def notice_entry(self, plan: Planned) -> tuple[str, dict[str, bytes | str]] | None:
        """An applied command's bus entry (stream, fields), written after its append where the
        append script cannot write it (a Redis Cluster: the bus is in another slot)."""
        if plan.notice is None:
            return None
        o = plan.outcome
        return self.bus(o.game_id), notice_fields(plan.notice, o.judged_at_version, plan.events)

    @staticmethod
    def stored(event: msgspec.Struct, cmd: CommandEnvelope, now_ms: int) -> StoredEvent:
        """An event of `cmd` as its log (or public stream) entry holds it: the game id, version
        and event id are the entry's key and id; the correlation id is the command's own unless
        it named another, and the causation id is always the command's (contracts/envelope.py)."""
        corr = cmd.correlation_id
        return StoredEvent(
            type=type_name(event),
            schema_version=_SCHEMA,
            command_id=cmd.command_id,
            correlation_id=corr if corr and corr != cmd.command_id else msgspec.UNSET,
            recorded_at_ms=now_ms,
            payload=msgspec.Raw(codec.encode(event)),
        )

    # ---- effects -------------------------------------------------------------------------------

    def effects(self, plan: Planned) -> list[tuple[str, bytes]]:
        """What an applied command publishes besides its bus notice: its reply."""
        o = plan.outcome
        out: list[tuple[str, bytes]] = []
        reply_to = self.answer_to(plan.item, o)
        if reply_to:
            reply = EncodedReply(outcome=msgspec.Raw(plan.encoded), token=plan.token)
            out.append((reply_to, codec.encode(reply)))
        return out

    @staticmethod
    def answer_to(item: Item, o: CommandOutcome) -> str | None:
        """Where the outcome is replied: the command's reply_to, unless the refusal is that the
        sender may not name it."""
        return None if o.rule in _UNANSWERED else item.env.reply_to
