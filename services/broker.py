"""The one way services build their FastStream broker and read raw stream entries through it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import redis.asyncio as aredis
from faststream.redis import RedisBroker
from faststream.redis.message import FAKE_CONSUMER, RedisBatchStreamMessage, RedisStreamMessage

from services.logs import faststream_logger


def make_broker(url: str) -> RedisBroker:
    return RedisBroker(url, logger=faststream_logger(), log_level=logging.DEBUG, graceful_timeout=10.0)


async def raw_parser(msg: Mapping[str, Any], original: Any = None) -> Any:
    """Hand handlers the raw entries (`raw_message["data"]`, `["message_ids"]`) and FastStream no
    body at all: our services decode the fields themselves, so bytes that are not UTF-8 or not
    JSON can never make FastStream's parser fail and leave a batch pending, and no time is spent
    on a decode attempt per message. Services ack explicitly (AckPolicy.MANUAL)."""
    cls = RedisBatchStreamMessage if msg.get("type") == "bstream" else RedisStreamMessage
    return cls(raw_message=msg, body=b"", consumer=FAKE_CONSUMER, group=None)


async def raw_decoder(msg: Any, original: Any = None) -> None:
    return None


async def ensure_group(client: aredis.Redis, stream: str, group: str, start: str = "0") -> None:
    """Create `group` reading from `start` before FastStream does: FastStream creates groups at
    `$`, so an entry added before the first consumer started would never be read."""
    try:
        await client.xgroup_create(stream, group, id=start, mkstream=True)
    except aredis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
