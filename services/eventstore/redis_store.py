"""The event store on Redis Streams: log entry ids are the versions (`N-0`)."""

from __future__ import annotations

import hashlib
from importlib.resources import files
from typing import Any, cast

from redis.exceptions import NoScriptError

from contracts import codec
from services.eventstore.base import CONFLICT, DUPLICATE, OK, SKIPPED, AppendRequest, AppendResult
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis, Entries, ReplicasBehind, is_cluster, node_pipelines, sibling

_APPEND = files("services.eventstore").joinpath("append.lua").read_text()


def _raw(response: Any, **options: Any) -> Any:
    return response


def _entries(raw: list[list[Any]]) -> list[tuple[int, bytes]]:
    """(version, data) from a raw XRANGE reply of a log: entries hold the one field `data`."""
    return [(int(entry_id.split(b"-", 1)[0]), fields[1]) for entry_id, fields in raw]


def _key_index(keys: list[str], stream: str) -> int:
    """The 1-based KEYS index of `stream` in a script call, adding it if new."""
    if stream not in keys:
        keys.append(stream)
    return keys.index(stream) + 1


class RedisEventStore:
    """`wait_replicas` > 0: every append call is followed, on the connection that sent it, by
    `WAIT wait_replicas wait_timeout_ms` (on a cluster, one per primary, behind that primary's
    appends); `append_many` returns only once that many replicas have acknowledged the appends, and
    raises `ReplicasBehind` when the WAIT times out first (the appends are then on the primary only;
    their commands are not answered, stay pending and are judged again as duplicates)."""

    def __init__(
        self, client: AnyRedis, keys: Keys, wait_replicas: int = 0, wait_timeout_ms: int = 1000, reply_ttl_s: int = 0
    ) -> None:
        self.client = client
        # Reply streams an append's effects write expire this long after (0: never).
        self.reply_ttl_s = reply_ttl_s
        self.keys = keys
        self.cluster = is_cluster(client)
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self._raw_reader: AnyRedis | None = None
        # EVALSHA directly: redis-py's Script objects add a SCRIPT EXISTS round trip per pipeline.
        self._sha = hashlib.sha1(_APPEND.encode()).hexdigest()

    @property
    def _reader(self) -> AnyRedis:
        """XRANGE replies left as hiredis returns them ([id, [field, value]]): redis-py's parser
        turns every entry into a tuple and a dict in Python, which measured about half of reading a
        log here. A standalone reader shares the client's connections; a cluster one has its own."""
        if self._raw_reader is None:
            self._raw_reader = sibling(self.client)
            self._raw_reader.set_response_callback("XRANGE", _raw)
        return self._raw_reader

    async def close(self) -> None:
        """Close what the store opened itself (a cluster reader), not the client it was given."""
        if self._raw_reader is not None and self.cluster:
            await self._raw_reader.aclose()
        self._raw_reader = None

    async def append_many(self, requests: list[AppendRequest]) -> list[AppendResult]:
        if not requests:
            return []
        # Consecutive requests for one game go in one script call (see append.lua).
        groups: list[list[AppendRequest]] = []
        for r in requests:
            if groups and groups[-1][0].game_id == r.game_id:
                groups[-1].append(r)
            else:
                groups.append([r])
        calls = []
        for group in groups:
            keys: list[str] = self.keys.game_keys(group[0].game_id)
            args: list[bytes | str | int] = [
                group[0].expected_version,
                len(group),
                self.reply_ttl_s,
                self.keys.reply_prefix(),
            ]
            for r in group:
                args += [r.command_id, r.outcome, int(r.remember), len(r.events), *r.events]
                args += [b"=" if p == e else b"" if p is None else p for e, p in zip(r.events, r.public, strict=True)]
                args += [r.public_rejection or b""]
                args += [_key_index(keys, r.notice[0]), r.notice[1]] if r.notice else [0, b""]
                args += [len(r.effects)]
                for stream, data in r.effects:
                    args += [_key_index(keys, stream), data]
                args += [_key_index(keys, r.ack[0]), r.ack[1], r.ack[2]] if r.ack else [0, b"", b""]
            calls.append((len(keys), *keys, *args))
        replies = await self._run(calls)
        out: list[AppendResult] = []
        for group, reply in zip(groups, replies, strict=True):
            for status, value in reply:
                if status == b"ok":
                    out.append(AppendResult(status=OK, version=int(value)))
                elif status == b"dup":
                    out.append(AppendResult(status=DUPLICATE, prior_outcome=value))
                else:
                    out.append(AppendResult(status=CONFLICT, version=int(value)))
            out += [AppendResult(status=SKIPPED)] * (len(group) - len(reply))
        return out

    async def _run(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        replies = await self._evalsha_many(calls)
        missing = [i for i, r in enumerate(replies) if isinstance(r, NoScriptError)]
        if missing:
            # A script cache flush (restart, failover) answers NOSCRIPT without running anything.
            # On a cluster SCRIPT LOAD goes to every primary.
            await self.client.script_load(_APPEND)
            for i, r in zip(missing, await self._evalsha_many([calls[i] for i in missing]), strict=True):
                replies[i] = r
        for r in replies:
            if isinstance(r, Exception):
                raise r
        return replies

    async def _evalsha_many(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        """One round trip: on a standalone Redis one pipeline; on a cluster one pipeline per primary,
        all at once (`node_pipelines`: redis-py's cluster pipeline refuses EVALSHA, and sending each
        call on its own cost ~6x the client CPU per call). A call's keys are one game's, one slot; the
        calls of one game stay in order because a chain of one game is always a single call. With
        `wait_replicas`, each pipeline ends with a WAIT, which counts the writes of its connection."""
        wait = ("WAIT", self.wait_replicas, self.wait_timeout_ms) if self.wait_replicas else None
        if self.cluster:
            # call = (numkeys, first key, ...): routed by the first key.
            replies, acked = await node_pipelines(
                self.client,  # type: ignore[arg-type]
                [(c[1], ("EVALSHA", self._sha, *c)) for c in calls],
                tail=wait,
            )
        else:
            pipe = self.client.pipeline(transaction=False)
            for call in calls:
                pipe.evalsha(self._sha, *call)
            if wait is not None:
                pipe.execute_command(*wait)
            replies = await pipe.execute(raise_on_error=False)
            acked = [replies.pop()] if wait is not None else []
        if wait is not None:
            short = [a for a in acked if not isinstance(a, int) or a < self.wait_replicas]
            if short:
                raise ReplicasBehind(
                    f"WAIT {self.wait_replicas} {self.wait_timeout_ms}: {short[0]!r} replicas acknowledged the appends"
                )
        return replies

    async def read(self, game_id: str, after: int = 0) -> list[tuple[int, bytes]]:
        return (await self.read_many({game_id: after}))[game_id]

    async def read_many(self, after: dict[str, int]) -> dict[str, list[tuple[int, bytes]]]:
        """Each game's log after a version. An archived game's log is gone: what is read for it is
        its marker (lifecycle.GameArchived, at the version after its last event)."""
        pipe = self._reader.pipeline(transaction=False)
        for game_id, v in after.items():
            pipe.xrange(self.keys.log(game_id), min=f"({v}-0" if v else "-")
        results = await pipe.execute()
        out = {gid: _entries(raw) for gid, raw in zip(after, results, strict=True)}
        if empty := [gid for gid, entries in out.items() if not entries]:
            # A new game, an archived one, or a log read past its end.
            pipe = self._reader.pipeline(transaction=False)
            for game_id in empty:
                pipe.get(self.keys.archived(game_id))
            for game_id, marker in zip(empty, await pipe.execute(), strict=True):
                if marker is not None:
                    version = codec.event_version(marker)
                    if version > after[game_id]:
                        out[game_id] = [(version, bytes(marker))]
        return out

    async def read_public(self, game_id: str) -> list[tuple[str, bytes]]:
        """The public stream: (entry id, data), the entry id being `<version>-<n>`."""
        raw = cast(list[list[Any]], await self._reader.xrange(self.keys.public(game_id)))
        return [(entry_id.decode(), bytes(fields[1])) for entry_id, fields in raw]

    async def audit(self, game_id: str) -> list[bytes]:
        return await self._data(self.keys.audit(game_id))

    async def _data(self, stream: str) -> list[bytes]:
        """The `data` field of every entry of `stream` (raw XRANGE: [id, [b"data", value]])."""
        raw = cast(list[list[Any]], await self._reader.xrange(stream))
        return [bytes(fields[1]) for _, fields in raw]

    async def is_over(self, game_id: str) -> bool:
        """Does the log end with the seed revealed (the last event of every finished game)?"""
        last = cast(Entries, await self._reader.xrevrange(self.keys.log(game_id), count=1))
        return bool(last) and b'"type":"lifecycle.SeedRevealed"' in last[0][1][b"data"]

    async def outcome(self, game_id: str, command_id: str) -> bytes | None:
        value = cast(bytes | None, await self.client.hget(self.keys.commands(game_id), command_id))
        if value is None or value.startswith(b"{"):
            return bytes(value) if value is not None else None  # before, the hash held the outcome
        found = cast(list[list[Any]], await self._reader.xrange(self.keys.audit(game_id), min=value, max=value))
        return bytes(found[0][1][1]) if found else None
