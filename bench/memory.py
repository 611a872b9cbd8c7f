"""(g) Redis memory per finished game, retention off against on, in one run.

    python -m bench.memory [--games 6] [--titles sentient,artifacts,mechanica,prosperity] [--json]

For each mode a private Redis (the system `redis-server`, no persistence) runs every service in
this process (`dicestream.runtime.running`, as `dicestream tournament` does); reference bots play
`--games` games of each title to the end; once the services have had time to trim
(DICESTREAM_TRIM_EVERY_MS, 200 ms here) they stop and every key is weighed with MEMORY USAGE (all
samples), grouped by what it is, and divided by the games played. "off": no trimming, seat
streams keep every message (what dicestream did before retention); "on": the defaults
(seat streams keep the latest message, acknowledged intake and bus entries trimmed, seat
streams' expiry set at GameOver; the bench measures before the expiry fires). `used_memory`'s
growth per game is printed too: it includes allocator overhead that MEMORY USAGE does not count.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aredis

from dicestream.localredis import LocalRedis, free_ports, server_binary
from dicestream.runtime import running
from games.catalog import GAMES
from services import logs
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import AnyRedis
from services.tournament import tournament

SHARDS = 8
KINDS = ["greedy", "random"]
# Key classes, in the order printed: a game's own keys by their suffix, then the shard's.
CLASSES = [
    ("log", r":game:\{[^}]*\}:log$"),
    ("public", r":game:\{[^}]*\}:public$"),
    ("audit", r":game:\{[^}]*\}:audit$"),
    ("cmds", r":game:\{[^}]*\}:cmds$"),
    ("seat streams", r":game:\{[^}]*\}:seat:\d+$"),
    ("archive markers", r":game:\{[^}]*\}:archived$"),
    ("intake", r":(?:cmd|timer):\{\d+\}(?::.*)?$"),
    ("bus", r":bus:\{\d+\}$"),
    ("turn notices", r":turns:\{\d+\}$"),
    ("read models", r":rm:"),
    ("replies", r":reply:"),
    ("bot runner", r":bots:"),
    ("dead letters", r":dead$"),
]


def classify(key: str) -> str:
    for name, pattern in CLASSES:
        if re.search(pattern, key):
            return name
    return "other"


def settings_for(mode: str, prefix: str) -> Settings:
    base = Settings(prefix=prefix, shards=SHARDS, consumer=f"mem-{mode}", log_level="warning", health_addr=None)
    if mode == "off":
        return msgspec.structs.replace(base, trim_every_ms=0, seat_kept=0, seat_ttl_s=0)
    return msgspec.structs.replace(base, trim_every_ms=200)


async def weigh(client: AnyRedis, prefix: str) -> dict[str, int]:
    out: dict[str, int] = {}
    async for raw in client.scan_iter(match=f"{prefix}:*", count=1000):
        key = raw.decode()
        size = await client.memory_usage(key, samples=0)
        out[classify(key)] = out.get(classify(key), 0) + int(size or 0)
    return out


async def measure(mode: str, titles: list[str], games: int) -> dict[str, Any]:
    prefix = f"mem-{uuid.uuid4().hex[:6]}"
    settings = settings_for(mode, prefix)
    with tempfile.TemporaryDirectory() as tmp:
        node = LocalRedis(free_ports(1), Path(tmp), binary=server_binary()).start()
        try:
            admin = aredis.Redis.from_url(node.url)
            used_before = int((await admin.info("memory"))["used_memory"])
            played = 0
            async with running(settings, node.url) as run:
                keys = Keys(prefix)
                client = Client(run.client(), keys, SHARDS)
                store = RedisEventStore(client.redis, keys)
                for title in titles:
                    players = [GAMES[title].min_players, GAMES[title].max_players]
                    _, records = await tournament(
                        client, run.bots.runner, store, game_type=title, bots=KINDS, games=games, players=players
                    )
                    played += len(records)
                await client.close()
                await asyncio.sleep(1.0 if settings.trim_every_ms else 0.2)  # a few trim rounds
            classes = await weigh(admin, prefix)
            used = int((await admin.info("memory"))["used_memory"]) - used_before
            await admin.aclose()
        finally:
            node.stop()
    return {"mode": mode, "games": played, "bytes": classes, "used_memory": used}


def per_game(result: dict[str, Any], name: str) -> float:
    return float(result["bytes"].get(name, 0)) / float(result["games"])


def report(off: dict[str, Any], on: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Redis bytes per finished game ({on['games']} games, MEMORY USAGE)")
    for col in ("keys", "retention off", "retention on", "on / off"):
        table.add_column(col, justify="right" if col != "keys" else "left")
    names = [n for n, _ in CLASSES] + ["other"]
    for name in names:
        a, b = per_game(off, name), per_game(on, name)
        if a or b:
            table.add_row(name, f"{a / 1024:,.1f} KB", f"{b / 1024:,.1f} KB", f"{b / a:.2f}x" if a else "-")
    total_off = sum(off["bytes"].values()) / off["games"]
    total_on = sum(on["bytes"].values()) / on["games"]
    table.add_row("total", f"{total_off / 1024:,.1f} KB", f"{total_on / 1024:,.1f} KB", f"{total_on / total_off:.2f}x")
    um_off, um_on = off["used_memory"] / off["games"], on["used_memory"] / on["games"]
    table.add_row("used_memory growth", f"{um_off / 1024:,.1f} KB", f"{um_on / 1024:,.1f} KB", f"{um_on / um_off:.2f}x")
    Console().print(table)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=6, help="games per title and mode")
    parser.add_argument("--titles", default=",".join(GAMES), help="comma-separated titles")
    parser.add_argument("--json", action="store_true", help="print both results as JSON")
    args = parser.parse_args(argv)
    logs.configure("warning")
    titles = [t for t in args.titles.split(",") if t]
    off = await measure("off", titles, args.games)
    on = await measure("on", titles, args.games)
    if args.json:
        sys.stdout.write(msgspec.json.encode({"off": off, "on": on}).decode() + "\n")
    else:
        report(off, on)


if __name__ == "__main__":
    asyncio.run(main())
