"""Sending commands and waiting for their outcome: what the CLI, the bot runner and tests use."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any, cast

import msgspec
from redis.exceptions import NoPermissionError

from contracts import codec
from contracts.envelope import CommandEnvelope
from contracts.limits import MAX_CLIENT
from contracts.outcome import Reply
from contracts.registry import type_name
from services.eventstore.keys import Keys, shard_of
from services.redis_conn import AnyRedis, StreamReads


def reply_stream(keys: Keys, name: str | None = None) -> str:
    """The reply stream `<prefix>:reply:<client>:<rest>` for `name` ("client" or "client:rest";
    without a rest, a random one; without a name, client "cli"). The referee refuses reply streams
    outside that shape (docs/bots.md): a character outside a part's charset becomes '-' and each
    part is cut to its limit, so a host name or consumer name can be used as it is."""
    client, _, rest = (name or "cli").partition(":")
    client = re.sub(r"[^A-Za-z0-9_.-]", "-", client)[:MAX_CLIENT]
    if not client[:1].isalnum() or not client[:1].isascii():
        client = ("c" + client)[:MAX_CLIENT]
    rest = re.sub(r"[^A-Za-z0-9_.:-]", "-", rest or uuid.uuid4().hex)[:128]
    stream = keys.reply(client, rest)
    assert keys.reply_client(stream) == client, stream
    return stream


class Client:
    """A client named `name` ("client" or "client:rest", see reply_stream). A registered trusted
    client (`dicestream acl add-client`, listed in `<prefix>:clients`) sends to its own intake
    `<prefix>:cmd:{S}:<client>`, the only one its Redis user may write; any other client (the
    services, an operator, a developer's unsecured Redis) to the shared `<prefix>:cmd:{S}`.
    `own_intake` says which; by default the registry is asked once, at the first send."""

    def __init__(
        self, redis: AnyRedis, keys: Keys, shards: int, name: str | None = None, own_intake: bool | None = None
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.shards = shards
        self.reply_to = reply_stream(keys, name)
        self.name = cast(str, keys.reply_client(self.reply_to))
        self.own_intake = own_intake
        self._last = "0-0"
        self._replies: dict[str, Reply] = {}

    def envelope(
        self,
        game_id: str,
        payload: msgspec.Struct,
        *,
        seat: int | None = None,
        token: str | None = None,
        expected_version: int | None = None,
        command_id: str | None = None,
        correlation_id: str | None = None,
        reply: bool = True,
    ) -> CommandEnvelope:
        return CommandEnvelope(
            type=type_name(payload),
            game_id=game_id,
            command_id=command_id or uuid.uuid4().hex,
            seat=seat,
            token=token,
            expected_version=expected_version,
            correlation_id=correlation_id,
            reply_to=self.reply_to if reply else None,
            payload=msgspec.Raw(codec.encode(payload)),
        )

    async def intake(self, game_id: str) -> str:
        """The stream this client sends `game_id`'s commands to."""
        shard = shard_of(game_id, self.shards)
        if self.own_intake is None:
            try:
                self.own_intake = bool(await self.redis.sismember(self.keys.clients, self.name))
            except NoPermissionError:
                # A user made before clients had intakes of their own (or by a hand-written ACL
                # line): it may only write the shared intake (docs/security.md, "Upgrading").
                self.own_intake = False
        return self.keys.client_intake(shard, self.name) if self.own_intake else self.keys.intake(shard)

    async def send_envelope(self, env: CommandEnvelope) -> str:
        await self.redis.xadd(await self.intake(env.game_id), {"data": codec.encode(env)})
        return env.command_id

    async def send(self, game_id: str, payload: msgspec.Struct, **kw: Any) -> str:
        return await self.send_envelope(self.envelope(game_id, payload, **kw))

    async def wait(self, command_id: str, timeout_s: float = 30.0) -> Reply:
        """The outcome of `command_id`, reading this client's reply stream."""
        deadline = time.monotonic() + timeout_s
        while command_id not in self._replies:
            left_ms = int((deadline - time.monotonic()) * 1000)
            got = cast(
                StreamReads, await self.redis.xread({self.reply_to: self._last}, count=100, block=max(left_ms, 1))
            )
            if not got and time.monotonic() >= deadline:
                raise TimeoutError(f"no outcome for command {command_id} after {timeout_s}s")
            for _, entries in got:
                for entry_id, fields in entries:
                    self._last = entry_id.decode()
                    reply = msgspec.json.decode(fields[b"data"], type=Reply)
                    self._replies[reply.outcome.command_id] = reply
        return self._replies.pop(command_id)

    async def call(self, game_id: str, payload: msgspec.Struct, timeout_s: float = 30.0, **kw: Any) -> Reply:
        return await self.wait(await self.send(game_id, payload, **kw), timeout_s)

    async def close(self) -> None:
        await self.redis.delete(self.reply_to)
