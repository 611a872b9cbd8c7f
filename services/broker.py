"""The one way services build their FastStream broker and read raw stream entries through it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from faststream.redis import RedisBroker, RedisClusterBroker
from faststream.redis.message import FAKE_CONSUMER, RedisBatchStreamMessage, RedisStreamMessage
from redis.exceptions import ResponseError

from services.logs import faststream_logger
from services.redis_conn import AnyRedis

# What every handler receives: FastStream's raw read, {"message_ids": [...], "data": fields or a
# list of fields}. Handlers take it as their only argument, with no dependency injection.
RawEntries = dict[str, Any]


def make_broker(url: str, cluster: bool = False) -> RedisBroker:
    """A FastStream broker for `url`: FastStream's RedisClusterBroker on a Redis Cluster."""
    cls = RedisClusterBroker if cluster else RedisBroker
    # apply_types=False: FastDepends would resolve a Context-annotated message argument for every
    # message in a worker thread (anyio.to_thread), which measured ~1 ms per message here.
    return cls(url, logger=faststream_logger(), log_level=logging.DEBUG, graceful_timeout=10.0, apply_types=False)


async def raw_parser(msg: Mapping[str, Any], original: Any = None) -> Any:
    """Hand handlers the raw entries (`raw_message["data"]`, `["message_ids"]`) and FastStream no
    body at all: our services decode the fields themselves, so bytes that are not UTF-8 or not
    JSON can never make FastStream's parser fail and leave a batch pending, and no time is spent
    on a decode attempt per message. Services ack explicitly (AckPolicy.MANUAL)."""
    cls = RedisBatchStreamMessage if msg.get("type") == "bstream" else RedisStreamMessage
    return cls(raw_message=msg, body=b"", consumer=FAKE_CONSUMER, group=None)


async def raw_decoder(msg: Any, original: Any = None) -> RawEntries:
    raw: RawEntries = msg.raw_message
    return raw


async def ensure_group(client: AnyRedis, stream: str, group: str, start: str = "0") -> None:
    """Create `group` reading from `start` unless it exists (FastStream would create it at `$`, so
    an entry added before the first consumer started would never be read)."""
    try:
        await client.xgroup_create(stream, group, id=start, mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def reclaim_polling_ms(idle_ms: int) -> int:
    """Look for idle entries a few times per idle period, not FastStream's default ten times a
    second per stream: each poll is a round trip and a deep copy of the subscription."""
    return max(50, min(1000, idle_ms // 5))
