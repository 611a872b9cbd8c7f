"""The one way services build their FastStream broker."""

from __future__ import annotations

import logging

from faststream.redis import RedisBroker

from services.logs import faststream_logger


def make_broker(url: str) -> RedisBroker:
    return RedisBroker(url, logger=faststream_logger(), log_level=logging.DEBUG, graceful_timeout=10.0)
