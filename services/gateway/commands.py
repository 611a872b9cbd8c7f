"""Sending commands to the referee on the clients' behalf. The gateway alone writes the intake:
it builds the whole envelope (the command id when the client gave none, the reply stream) and
XADDs it with an id Redis picks (`*`) and no trimming; clients choose neither."""

from __future__ import annotations

import time
import uuid

import msgspec

from contracts import codec
from contracts.envelope import CommandEnvelope
from contracts.outcome import ACCEPTED, Reply
from services.eventstore.keys import Keys, shard_of
from services.gateway.metrics import Metrics
from services.gateway.problems import Problem, refused
from services.gateway.replies import ReplyReader
from services.redis_conn import AnyRedis


class Commander:
    def __init__(
        self, redis: AnyRedis, keys: Keys, shards: int, replies: ReplyReader, timeout_s: float, metrics: Metrics
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.shards = shards
        self.replies = replies
        self.timeout_s = timeout_s
        self.metrics = metrics

    def envelope(
        self,
        game_id: str,
        type_name: str,
        payload: msgspec.Struct,
        *,
        seat: int | None = None,
        token: str | None = None,
        expected_version: int | None = None,
        command_id: str | None = None,
        correlation_id: str | None = None,
    ) -> CommandEnvelope:
        # Nothing here varies between two sends of the same command (no clock): a retry with the
        # same command id and body is byte-identical, so the referee answers it with the first
        # outcome (and, for JoinSeat through the same gateway instance, the same token).
        return CommandEnvelope(
            type=type_name,
            game_id=game_id,
            command_id=command_id or uuid.uuid4().hex,
            seat=seat,
            token=token,
            expected_version=expected_version,
            correlation_id=correlation_id,
            reply_to=self.replies.stream,
            payload=msgspec.Raw(codec.encode(payload)),
        )

    async def call(self, env: CommandEnvelope) -> Reply:
        """Send `env` and wait for its outcome; 504 (with the command id to retry with) on timeout."""
        if not self.replies.started:
            raise Problem(503, "unavailable", "The game store is not answering", "try again shortly")
        future = self.replies.expect(env.command_id)
        started = time.perf_counter()
        try:
            await self.redis.xadd(self.keys.intake(shard_of(env.game_id, self.shards)), {"data": codec.encode(env)})
        except BaseException:
            self.replies.forget(env.command_id, future)
            raise
        try:
            reply = await self.replies.wait(env.command_id, future, self.timeout_s)
        except TimeoutError:
            self.metrics.commands.labels("timeout").inc()
            raise Problem(
                504,
                "timeout",
                "No outcome in time",
                f"no outcome within {self.timeout_s:g} s; send the same command again (same command_id and "
                "body) to learn its outcome: it is judged once",
                game_id=env.game_id,
                command_id=env.command_id,
            ) from None
        self.metrics.command_seconds.observe(time.perf_counter() - started)
        self.metrics.commands.labels(reply.outcome.status).inc()
        return reply

    async def accepted(self, env: CommandEnvelope) -> Reply:
        """`call`, with a refusal raised as its problem (rule, text, outcome)."""
        reply = await self.call(env)
        if reply.outcome.status != ACCEPTED:
            raise refused(reply.outcome)
        return reply
