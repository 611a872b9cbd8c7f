"""Side effects of a batch (publishes, replies, dead letters, acks), flushed in one round trip."""

from __future__ import annotations

from typing import Any, Protocol, cast

from services.redis_conn import AnyRedis, is_cluster, node_pipelines


class Sink(Protocol):
    def add(self, stream: str, fields: dict[str, bytes | str], entry_id: str = "*") -> None: ...

    def ack(self, stream: str, group: str, ids: list[bytes]) -> None: ...

    def delete(self, stream: str, ids: list[bytes]) -> None:
        """XDEL: entries over the intake limits are kept nowhere once dead-lettered."""
        ...

    async def flush(self) -> None: ...


class RedisSink:
    """One pipeline on a standalone Redis, in order, so an XACK never runs before the replies and
    notices queued ahead of it, even when the process dies half-way through writing it. On a
    cluster the streams are on different primaries, written at once and in no order between them:
    there the XADDs go first (one pipeline per primary, `node_pipelines`, about half the client
    CPU per command of redis-py's cluster pipeline) and the XACKs and XDELs only once every XADD
    has been answered. Sent together, a SIGKILLed referee once left a command acked, audited and
    never answered (1 of 172,476 in a soak of 50 kills): its reply's primary had not received it."""

    def __init__(self, client: AnyRedis, reply_prefix: str | None = None, reply_ttl_s: int = 0) -> None:
        self.client = client
        self._ops: list[tuple[str, tuple[object, ...]]] = []
        # Reply streams (names under `reply_prefix`) expire `reply_ttl_s` after their last reply.
        self.reply_prefix = reply_prefix if reply_ttl_s > 0 else None
        self.reply_ttl_s = reply_ttl_s

    def add(self, stream: str, fields: dict[str, bytes | str], entry_id: str = "*") -> None:
        self._ops.append(("xadd", (stream, fields, entry_id)))
        if self.reply_prefix is not None and stream.startswith(self.reply_prefix):
            self._ops.append(("expire", (stream, self.reply_ttl_s)))

    def ack(self, stream: str, group: str, ids: list[bytes]) -> None:
        if ids:
            self._ops.append(("xack", (stream, group, ids)))

    def delete(self, stream: str, ids: list[bytes]) -> None:
        if ids:
            self._ops.append(("xdel", (stream, ids)))

    async def flush(self) -> None:
        if not self._ops:
            return
        ops, self._ops = self._ops, []
        if is_cluster(self.client):
            adds: list[tuple[Any, tuple[Any, ...]]] = []
            done: list[tuple[Any, tuple[Any, ...]]] = []
            for op, args in ops:
                stream = args[0]
                if op == "xadd":
                    _, fields, entry_id = args
                    pairs = [x for kv in cast(dict[str, Any], fields).items() for x in kv]
                    adds.append((stream, ("XADD", stream, entry_id, *pairs)))
                elif op == "expire":
                    adds.append((stream, ("EXPIRE", stream, args[1])))  # after its XADD, on its node
                elif op == "xack":
                    done.append((stream, ("XACK", stream, args[1], *cast(list[bytes], args[2]))))
                else:
                    done.append((stream, ("XDEL", stream, *cast(list[bytes], args[1]))))
            # A failed XADD (e.g. a reply stream of the wrong type) must not undo the others; a
            # dropped connection is raised, and then nothing is acked.
            for calls in (adds, done):
                if calls:
                    await node_pipelines(self.client, calls)  # type: ignore[arg-type]
            return
        pipe = self.client.pipeline(transaction=False)
        for op, args in ops:
            if op == "xadd":
                stream, fields, entry_id = args
                pipe.xadd(stream, fields, id=entry_id)  # type: ignore[arg-type]
            elif op == "expire":
                pipe.expire(*args)  # type: ignore[arg-type]
            elif op == "xack":
                stream, group, acked = args
                pipe.xack(stream, group, *cast(list[bytes], acked))  # type: ignore[arg-type]
            else:
                stream, doomed = args
                pipe.xdel(stream, *cast(list[bytes], doomed))  # type: ignore[arg-type]
        # A failed XADD (e.g. a reply stream of the wrong type) must not undo the others.
        await pipe.execute(raise_on_error=False)


class MemorySink:
    """Records effects, for unit tests of the engine."""

    def __init__(self) -> None:
        self.streams: dict[str, list[dict[str, bytes | str]]] = {}
        self.acked: list[bytes] = []
        self.deleted: list[bytes] = []

    def add(self, stream: str, fields: dict[str, bytes | str], entry_id: str = "*") -> None:
        self.streams.setdefault(stream, []).append(fields)

    def ack(self, stream: str, group: str, ids: list[bytes]) -> None:
        self.acked += ids

    def delete(self, stream: str, ids: list[bytes]) -> None:
        self.deleted += ids

    async def flush(self) -> None:
        return None
