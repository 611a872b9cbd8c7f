"""Async Redis clients for the services: redis-py with hiredis, and hiredis's command packer.

redis-py's asyncio connection packs commands in pure Python (~9 µs for an append's EVALSHA with
its events) even when hiredis is installed; hiredis.pack_command does it in ~1.6 µs. On the
referee's hot path that is about a tenth of a command's cost.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis.asyncio as aredis
from redis.asyncio.connection import Connection


class HiredisPackingConnection(Connection):
    def pack_command(self, *args: Any) -> list[bytes]:
        # redis-py splits multi-word command names ("SCRIPT LOAD"); hiredis would not.
        if isinstance(args[0], str) and " " in args[0]:
            return super().pack_command(*args)
        return [hiredis.pack_command(args)]


def connect(url: str) -> aredis.Redis:
    pool = aredis.ConnectionPool.from_url(url, connection_class=HiredisPackingConnection)
    return aredis.Redis.from_pool(pool)
