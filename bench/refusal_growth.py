"""What refused commands cost Redis: the issue-17 attack of 24 MiB of refused JoinSeat names.

    REDIS_URL=redis://127.0.0.1:6379/0 python -m bench.refusal_growth [--mib 24] [--sizes 1024,61440,1048576]

One game is created, both seats joined and the game started, then an unauthenticated client sends
JoinSeat commands (refused: the game is running, or the name is over its limit) whose names add up
to `--mib` MiB, for each name size in `--sizes`. They go through Redis as in production: XADD to
the game's intake shard, XREADGROUP, the referee engine, its Lua append and its last pipeline.
Printed per name size: the bytes each key holds afterwards (MEMORY USAGE) for the game's public
stream, its audit, its command hash, the sender's reply stream, the dead-letter stream and the
intake stream, and how Redis's used_memory moved. Keys live under a random `bench-<hex>` prefix and
are deleted at the end (the intake stream included).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from typing import cast

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import CommandEnvelope
from contracts.registry import type_name
from services import logs
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import Entries, connect, is_cluster
from services.referee.engine import Referee
from services.referee.sink import RedisSink

GROUP = "referee"
SHARDS = 1
BATCH = 100


def _envelope(game_id: str, payload: msgspec.Struct, reply_to: str, **kw: object) -> bytes:
    env = CommandEnvelope(
        type=type_name(payload),
        game_id=game_id,
        command_id=uuid.uuid4().hex,
        reply_to=reply_to,
        payload=msgspec.Raw(codec.encode(payload)),
        **kw,  # type: ignore[arg-type]
    )
    return codec.encode(env)


async def _drain(client: object, referee: Referee, stream: str) -> None:
    while True:
        got = await client.xreadgroup(GROUP, "bench", {stream: ">"}, count=BATCH)  # type: ignore[attr-defined]
        if not got or not got[0][1]:
            return
        await referee.handle(stream, [(i, f or {}) for i, f in got[0][1]])


async def _usage(client: object, key: str) -> int:
    value = await client.memory_usage(key, samples=0)  # type: ignore[attr-defined]
    return int(value or 0)


async def one_size(url: str, name_bytes: int, total: int) -> dict[str, int]:
    client = connect(url)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix)
    stream = keys.intake(0)
    reply_to = f"{prefix}:reply:attack:r"
    standalone = not is_cluster(client)
    referee = Referee(
        RedisEventStore(client, keys),
        lambda: RedisSink(client),
        keys,
        shards=SHARDS,
        secret=b"bench-secret",
        group=GROUP,
        inline_effects=standalone,
    )
    game = "victim"
    assert shard_of(game, SHARDS) == 0
    try:
        await client.xgroup_create(stream, GROUP, id="0", mkstream=True)
        setup = [_envelope(game, lc.CreateGame(game_type="sentient", num_players=2), f"{prefix}:reply:host:r")]
        await client.xadd(stream, {"data": setup[0]})
        await _drain(client, referee, stream)
        tokens = []
        for seat in range(2):
            await client.xadd(stream, {"data": _envelope(game, lc.JoinSeat(seat=seat, name=f"p{seat}"), reply_to)})
            await _drain(client, referee, stream)
            last = cast(Entries, await client.xrevrange(reply_to, count=1))
            tokens.append(msgspec.json.decode(last[0][1][b"data"])["token"])
        start = _envelope(game, lc.StartGame(), reply_to, seat=0, token=tokens[0])
        await client.xadd(stream, {"data": start})
        await _drain(client, referee, stream)
        await client.delete(reply_to)
        before = {k: await _usage(client, k) for k in (keys.public(game), keys.audit(game))}
        info = await client.info("memory")
        used_before = int(info["used_memory"])
        count = max(1, total // name_bytes)
        name = "n" * name_bytes
        sent = 0
        while sent < count:
            pipe = client.pipeline(transaction=False)
            for _ in range(min(BATCH, count - sent)):
                pipe.xadd(stream, {"data": _envelope(game, lc.JoinSeat(seat=1, name=name), reply_to)})
                sent += 1
            await pipe.execute()
            await _drain(client, referee, stream)
        pending = (await client.xpending(stream, GROUP))["pending"]
        info = await client.info("memory")
        out = {
            "commands": count,
            "name_bytes": name_bytes,
            "public": await _usage(client, keys.public(game)) - before[keys.public(game)],
            "audit": await _usage(client, keys.audit(game)) - before[keys.audit(game)],
            "cmds": await _usage(client, keys.commands(game)),
            "replies": await _usage(client, reply_to),
            "dead": await _usage(client, keys.dead_letter),
            "intake": await _usage(client, stream),
            "used_memory_delta": int(info["used_memory"]) - used_before,
            "pending": int(pending),
        }
        return out
    finally:
        doomed = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if doomed:
            await client.delete(*doomed)
        await client.aclose()


def _mb(n: int) -> str:
    return f"{n / 1e6:9.2f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=24.0)
    parser.add_argument("--sizes", default="1024,61440,1048576", help="name sizes in bytes, comma-separated")
    args = parser.parse_args()
    logs.configure("warning", "console")
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    total = int(args.mib * 1024 * 1024)
    print(f"{args.mib} MiB of refused JoinSeat names per row; sizes in MB (1e6 bytes)")
    print(
        f"{'name bytes':>10} {'commands':>8} {'public':>9} {'audit':>9} {'cmds':>9} {'replies':>9} "
        f"{'dead':>9} {'intake':>9} {'used_mem':>9} pending"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        r = await one_size(url, size, total)
        print(
            f"{r['name_bytes']:>10} {r['commands']:>8} {_mb(r['public'])} {_mb(r['audit'])} {_mb(r['cmds'])} "
            f"{_mb(r['replies'])} {_mb(r['dead'])} {_mb(r['intake'])} {_mb(r['used_memory_delta'])} {r['pending']}"
        )


if __name__ == "__main__":
    asyncio.run(main())
