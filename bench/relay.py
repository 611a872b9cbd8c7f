"""A referee that judges nothing: the floor under (c).

    python -m bench.relay REDIS_URL INTAKE_STREAM OUT_STREAM

It reads INTAKE_STREAM with the referee's client stack (redis-py with hiredis on uvloop, one
blocking XREADGROUP), copies each entry's `data` to OUT_STREAM and acks it, in one pipeline per
read. A command relayed through it takes the same four hops as one through the referee (client ->
Redis -> worker -> Redis -> client) and none of the work, so (c0)'s latency at (c)'s pace is what
any worker costs on this machine before it decides anything.
"""

from __future__ import annotations

import sys
from typing import cast

from dicestream.loop import run
from services.redis_conn import StreamReads, connect

GROUP = "relay"


async def relay(url: str, intake: str, out: str) -> None:
    r = connect(url)
    await r.xgroup_create(intake, GROUP, id="0", mkstream=True)
    while True:
        got = cast(StreamReads, await r.xreadgroup(GROUP, "relay", {intake: ">"}, count=200, block=1000))
        for _, entries in got or ():
            pipe = r.pipeline(transaction=False)
            for _, fields in entries:
                pipe.xadd(out, {"data": fields[b"data"]})
            pipe.xack(intake, GROUP, *[entry_id for entry_id, _ in entries])
            await pipe.execute()


if __name__ == "__main__":
    run(relay(*sys.argv[1:4]))
