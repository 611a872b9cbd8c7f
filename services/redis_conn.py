"""Async Redis clients for the services: redis-py with hiredis, and hiredis's command packer.

redis-py's asyncio connection packs commands in pure Python (~9 µs for an append's EVALSHA with
its events) even when hiredis is installed; hiredis.pack_command does it in ~1.6 µs. On the
referee's hot path that is about a tenth of a command's cost.

No socket timeout: with one (redis-py's default is 5 s) every send runs in `asyncio.wait_for` (a new
task) and every reply read in an `asyncio.timeout` (a timer), which measured 2.3x the client CPU of
a pipelined XADD here (17 vs 7 µs) and 1.6x an awaited one. A dead peer is found by TCP keepalive
instead (about 25 s), and connecting still times out.
"""

from __future__ import annotations

import socket
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


_KEEPALIVE = {
    opt: value
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3))
    if (opt := getattr(socket, name, None)) is not None
}


def connect(url: str) -> aredis.Redis:
    pool = aredis.ConnectionPool.from_url(
        url,
        connection_class=HiredisPackingConnection,
        socket_timeout=None,
        socket_connect_timeout=5.0,
        socket_keepalive=True,
        socket_keepalive_options=_KEEPALIVE,
    )
    return aredis.Redis.from_pool(pool)
