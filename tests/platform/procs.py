"""Services as separate processes (`dicestream serve NAME`, as deployed), bot games hosted through
Redis, and the checks every fault test makes: every game finishes and verifies, and every
command sent got exactly one recorded outcome."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from contracts import lifecycle as lc
from contracts.outcome import decode_outcome
from contracts.protocol import HOSTED, HostBot
from services import history
from services.botrunner.app import BotRunner
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import AnyRedis, transient
from tests.platform.helpers import entries_of, fields_of


class ServiceProcess:
    """`dicestream serve NAME` in its own process, logging JSON lines at info to a file."""

    def __init__(self, name: str, settings: Settings, url: str, consumer: str, **env: str) -> None:
        self.name = name
        self.consumer = consumer
        self.log = Path(tempfile.mkstemp(prefix=f"{name}-{consumer}-", suffix=".log")[1])
        self.env = {
            **os.environ,
            "REDIS_URL": url,
            "DICESTREAM_PREFIX": settings.prefix,
            "DICESTREAM_SHARDS": str(settings.shards),
            "DICESTREAM_CONSUMER": consumer,
            "DICESTREAM_BATCH": str(settings.batch),
            "DICESTREAM_RECLAIM_IDLE_MS": str(settings.reclaim_idle_ms),
            "DICESTREAM_MAX_DELIVERIES": str(settings.max_deliveries),
            "DICESTREAM_LEASE_TTL_MS": str(settings.lease_ttl_ms),
            "DICESTREAM_TOKEN_SECRET": settings.token_secret or "",
            "DICESTREAM_LOG_LEVEL": "info",
            "DICESTREAM_LOG_FORMAT": "json",
            "DICESTREAM_HEALTH_ADDR": "127.0.0.1:0",
            # check_games compares every intake entry with the audits: keep the intake whole.
            "DICESTREAM_TRIM_EVERY_MS": "0",
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dicestream.cli", "serve", self.name],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> float:
        """SIGKILL; the time it was sent (time.time())."""
        assert self.proc is not None
        at = time.time()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        return at

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a traceback line
        return out

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


async def lease_holders(client: AnyRedis, keys: Keys, role: str) -> dict[int, str]:
    """Shard -> holder ("consumer#nonce") of `role`'s lease table."""
    raw = fields_of(await client.hgetall(keys.leases(role)[0]))
    return {int(k): v.decode() for k, v in raw.items()}


async def wait_until(predicate: Any, timeout: float, every: float = 0.05, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await predicate()
        except Exception as exc:
            if not transient(exc):
                raise
            value = None  # Redis restarting or failing over: ask again
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        await asyncio.sleep(every)


async def host_games(
    client: AnyRedis,
    settings: Settings,
    count: int,
    game_type: str = "sentient",
    players: int = 2,
    bots: tuple[str, ...] = ("greedy", "random"),
    move_timeout_s: float | None = None,
) -> list[str]:
    """Create `count` games, host a reference bot in every seat (recorded in Redis for whichever bot
    runner holds the game's shard) and start them."""
    keys = Keys(settings.prefix)
    cli = Client(client, keys, settings.shards, name="tests:host")
    host = BotRunner(client, keys, settings.shards, name="tests-host")
    games = []
    for g in range(count):
        gid = f"{game_type}-{g}-{os.urandom(3).hex()}"
        created = await cli.call(
            gid, lc.CreateGame(game_type=game_type, num_players=players, move_timeout_s=move_timeout_s), timeout_s=30
        )
        assert created.outcome.status == "accepted", created.outcome
        for seat in range(players):
            req = HostBot(game_id=gid, seat=seat, kind=bots[(g + seat) % len(bots)], game_type=game_type, seed=g)
            hosted = await host.host(req, request_id=f"{g}-{seat}")
            assert hosted.status == HOSTED, hosted
        assert await host.start_game(gid, 0)
        games.append(gid)
    await cli.close()
    await host.commands.close()
    return games


async def all_over(store: RedisEventStore, games: list[str]) -> bool:
    for gid in games:
        if not await store.is_over(gid):
            return False
    return True


async def check_games(client: AnyRedis, keys: Keys, shards: int, games: list[str]) -> dict[str, int]:
    """Every game verifies (log well formed, every event re-derived, the seed reveals), and every
    command sent to the intake streams and timer streams got exactly one outcome in its game's
    audit. Returns counts for the report."""
    store = RedisEventStore(client, keys)
    sent: dict[str, int] = {}
    for shard in range(shards):
        for stream in (keys.intake(shard), keys.timer(shard)):
            for _, fields in entries_of(await client.xrange(stream)):
                env = msgspec.json.decode(fields[b"data"])
                if env["game_id"] in games:
                    sent[env["command_id"]] = sent.get(env["command_id"], 0) + 1
    audited: dict[str, int] = {}
    for gid in games:
        hist = await history.load(store, gid)
        verdict = history.verify(hist)
        assert verdict.ok and verdict.seed_verified, (gid, verdict.findings)
        for raw in await store.audit(gid):
            o = decode_outcome(raw, gid)
            audited[o.command_id] = audited.get(o.command_id, 0) + 1
    twice = {c: n for c, n in audited.items() if n > 1}
    assert not twice, f"judged more than once: {list(twice)[:5]}"
    # A command sent again under its id (a bot resending after a fault) is one command.
    lost = set(sent) - set(audited)
    assert not lost, f"{len(lost)} commands never judged: {sorted(lost)[:5]}"
    await store.close()
    return {"commands": len(sent), "outcomes": len(audited), "resent": sum(n - 1 for n in sent.values())}


def lease_intervals(
    procs: list[ServiceProcess], role: str, killed: dict[str, float]
) -> dict[int, list[tuple[float, float, str]]]:
    """Per shard, (start, end, holder) of the time each process of `role` read it, from the
    processes' logs: from `lease_acquired` to the drain (it stops reading) before `lease_released`,
    or to `lease_lost`, or to its kill (it judged nothing after)."""
    out: dict[int, list[tuple[float, float, str]]] = {}
    for proc in procs:
        opened: dict[tuple[int, str], float] = {}
        drained: dict[int, float] = {}
        for e in proc.events():
            if e.get("role") != role:
                continue
            ts = _ts(e["timestamp"])
            if e["event"] == "shards_drained":
                drained.update({int(s): ts for s in e["shards"]})
                continue
            if e["event"] not in ("lease_acquired", "lease_released", "lease_lost"):
                continue
            key = (int(e["shard"]), e["holder"])
            if e["event"] == "lease_acquired":
                opened[key] = ts
            elif e["event"] in ("lease_released", "lease_lost") and key in opened:
                end = drained.pop(key[0], ts) if e["event"] == "lease_released" else ts
                out.setdefault(key[0], []).append((opened.pop(key), end, key[1]))
        end = killed.get(proc.consumer, time.time())
        for (shard, holder), start in opened.items():
            out.setdefault(shard, []).append((start, end, holder))
    return out


def _ts(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


async def stall_report(client: AnyRedis, keys: Keys, shards: int, games: list[str]) -> str:
    """Where each unfinished game stands: its last event, each seat's last message, the hosted seats."""
    lines = []
    for gid in games:
        last = entries_of(await client.xrevrange(keys.log(gid), count=1))
        if last and b"SeedRevealed" in last[0][1][b"data"]:
            continue
        if last:
            entry_id, fields = last[0]
            lines.append(f"{gid}: log at {entry_id!r} {fields[b'data'][:80]!r}")
        else:
            lines.append(f"{gid}: log at None ")
        for seat in range(4):
            msg = entries_of(await client.xrevrange(keys.seat(gid, seat), count=1))
            if msg:
                doc = msgspec.json.decode(msg[0][1][b"data"])
                lines.append(f"  seat {seat}: {doc.get('type')} v{doc.get('version')}")
        from services.eventstore.keys import shard_of

        hosted = fields_of(await client.hgetall(f"{keys.prefix}:bots:{{{shard_of(gid, shards)}}}:seats"))
        for field, raw in hosted.items():
            if field.decode().startswith(f"{gid}|"):
                lines.append(f"  hosted {field.decode()}: answered {msgspec.json.decode(raw)['answered']}")
    return "\n".join(lines)
