"""(g) The gateway: commands/s through it over HTTP and over WebSocket, and the command -> outcome
latency at a fixed offered load, each against sending the same commands straight to Redis in the
same run (medians over repeats).

One referee worker process (as in (b)) and one gateway process (`dicestream serve gateway`, rate
limits on but high, so their two Redis scripts per request are paid and never refuse). The moves
come from the bench's `Pool` (real legal Sentient moves, each with its seat's token and expected
version), so the three ways send byte-for-byte the same commands:

* direct: XADD of the envelope to its intake shard, outcome read from a reply stream (as (b)/(c));
* HTTP: `POST /v1/games/{g}/seats/{s}/commands` with the seat token, over keep-alive connections
  (a lean HTTP/1.1 client, so that the client's own cost stays small next to the gateway's);
* WebSocket: the command on the seat's socket, the `outcome` message back.

Throughput: waves of one move per game, all in flight at once (direct: one pipeline; HTTP: at most
`HTTP_CONNECTIONS` requests at a time; WebSocket: every seat's socket), timed to the last outcome.
Latency: commands paced at `rate`/s round-robin over the games, each timed alone.

`python -m bench.gateway [--quick]` runs only this section.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench.harness import BenchError, Pool, Replies, Worker, cpu_seconds, start_workers, stop_workers
from bench.sections import percentile, quiet_gc
from contracts.envelope import CommandEnvelope
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis

HTTP_CONNECTIONS = 64


@dataclass(frozen=True)
class GatewaySizes:
    games: int  # 2-player Sentient games per pool
    waves: int  # timed waves per repeat
    rate: float  # latency: offered commands/s
    seconds: float  # latency: per repeat


FULL = GatewaySizes(games=200, waves=5, rate=500.0, seconds=4.0)
QUICK = GatewaySizes(games=100, waves=3, rate=500.0, seconds=2.0)


# ---- the gateway process and its clients -----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class GatewayProcess:
    def __init__(self, url: str, prefix: str, shards: int) -> None:
        self.port = _free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="dicestream-bench-gateway-", suffix=".log", delete=False)  # noqa: SIM115
        env = dict(os.environ)
        env.update(
            REDIS_URL=url,
            DICESTREAM_PREFIX=prefix,
            DICESTREAM_SHARDS=str(shards),
            DICESTREAM_HTTP_ADDR=f"127.0.0.1:{self.port}",
            DICESTREAM_RATE_LIMIT="1000000/second",
            DICESTREAM_CLIENT_RATE_LIMIT="1000000/second",
            DICESTREAM_LOG_LEVEL="warning",
            DICESTREAM_GATEWAY_MAX_SUBSCRIBERS="100000",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dicestream.cli", "serve", "gateway"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def wait_ready(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"the gateway exited with {self.proc.returncode}:\n{self._tail()}")
            with contextlib.suppress(OSError, BenchError):
                conn = await HttpConnection.open(self.port)
                status, _ = await conn.request("GET", "/readyz")
                await conn.close()
                if status == 200:
                    return
            if time.monotonic() > deadline:
                raise BenchError(f"the gateway did not get ready:\n{self._tail()}")
            await asyncio.sleep(0.1)

    def _tail(self) -> str:
        try:
            return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-30:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)


class HttpConnection:
    """One keep-alive HTTP/1.1 connection: a request, then its whole response (Content-Length)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def request(self, method: str, path: str, body: bytes = b"", token: str | None = None) -> tuple[int, bytes]:
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nContent-Length: {len(body)}\r\n"
        if body:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise BenchError("the gateway closed a connection")
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return int(status_line.split()[1]), await self.reader.readexactly(length)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class HttpPool:
    def __init__(self, conns: list[HttpConnection]) -> None:
        self.free: asyncio.Queue[HttpConnection] = asyncio.Queue()
        self.all = conns
        for c in conns:
            self.free.put_nowait(c)

    @classmethod
    async def open(cls, port: int, n: int) -> HttpPool:
        return cls([await HttpConnection.open(port) for _ in range(n)])

    async def post(self, path: str, body: bytes, token: str) -> tuple[int, bytes]:
        conn = await self.free.get()
        try:
            return await conn.request("POST", path, body, token)
        finally:
            self.free.put_nowait(conn)

    async def get(self, path: str, token: str) -> tuple[int, bytes]:
        conn = await self.free.get()
        try:
            return await conn.request("GET", path, b"", token)
        finally:
            self.free.put_nowait(conn)

    async def close(self) -> None:
        for c in self.all:
            await c.close()


class SeatSockets:
    """One WebSocket per seat of every game; outcomes matched to commands by `ref`."""

    def __init__(self) -> None:
        self.sockets: dict[tuple[str, int], ClientConnection] = {}
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.readers: list[asyncio.Task[None]] = []

    async def open(self, port: int, pool: Pool) -> None:
        for g in pool.games.values():
            for seat, token in enumerate(g.tokens):
                ws = await connect(
                    f"ws://127.0.0.1:{port}/v1/games/{g.game_id}/seats/{seat}/ws",
                    additional_headers={"Authorization": f"Bearer {token}"},
                    compression=None,
                )
                self.sockets[g.game_id, seat] = ws
                self.readers.append(asyncio.create_task(self._read(ws)))

    async def _read(self, ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            async for text in ws:
                msg = json.loads(text)
                future = self.waiting.pop(msg.get("ref") or "", None)
                if future is not None and not future.done():
                    future.set_result(msg)

    async def send(self, env: CommandEnvelope) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[env.command_id] = future
        message = b'{"type":"command","ref":"%s","command":%s}' % (env.command_id.encode(), body_of(env))
        await self.sockets[env.game_id, env.seat or 0].send(message.decode())
        return await asyncio.wait_for(future, 60)

    async def close(self) -> None:
        for t in self.readers:
            t.cancel()
        for ws in self.sockets.values():
            with contextlib.suppress(Exception):
                await ws.close()


def body_of(env: CommandEnvelope) -> bytes:
    """The command as a gateway client sends it (the token goes in the header, not the body)."""
    return b'{"type":"%s","payload":%s,"expected_version":%d,"command_id":"%s"}' % (
        env.type.encode(),
        bytes(env.payload),
        env.expected_version or 0,
        env.command_id.encode(),
    )


def path_of(env: CommandEnvelope) -> str:
    return f"/v1/games/{env.game_id}/seats/{env.seat}/commands"


def accepted_http(status: int, body: bytes) -> bool:
    return status == 200 and msgspec.json.decode(body)["outcome"]["status"] == "accepted"


def accepted_ws(msg: dict[str, Any]) -> bool:
    return msg.get("type") == "outcome" and msg["result"]["outcome"]["status"] == "accepted"


# ---- the measured runs ----------------------------------------------------------------------


async def _wave_direct(pool: Pool, envs: list[CommandEnvelope], workers: Sequence[Worker]) -> int:
    replies = await pool.call_many(envs, workers)
    return sum(r.outcome.status == "accepted" for r in replies)


async def _wave_http(http: HttpPool, envs: list[CommandEnvelope]) -> int:
    got = await asyncio.gather(*(http.post(path_of(e), body_of(e), e.token or "") for e in envs))
    return sum(accepted_http(s, b) for s, b in got)


async def _wave_ws(ws: SeatSockets, envs: list[CommandEnvelope]) -> int:
    got = await asyncio.gather(*(ws.send(e) for e in envs))
    return sum(accepted_ws(m) for m in got)


def _stream_of(pool: Pool, env: CommandEnvelope) -> str:
    return pool.encode([env])[0][0]


async def _send_http(http: HttpPool, env: CommandEnvelope) -> bool:
    return accepted_http(*await http.post(path_of(env), body_of(env), env.token or ""))


async def _send_ws(sockets: SeatSockets, env: CommandEnvelope) -> bool:
    return accepted_ws(await sockets.send(env))


async def throughput(
    pool: Pool, waves: int, send: Callable[[list[CommandEnvelope]], Awaitable[int]], gateway_pid: int | None
) -> dict[str, Any]:
    commands = accepted = 0
    elapsed = 0.0
    cpu0 = cpu_seconds(gateway_pid) if gateway_pid else None
    for _ in range(waves):
        envs = pool.wave()
        if not envs:
            raise BenchError("every game of the pool is over")
        t0 = time.perf_counter()
        accepted += await send(envs)
        elapsed += time.perf_counter() - t0
        commands += len(envs)
    cpu1 = cpu_seconds(gateway_pid) if gateway_pid else None
    return {
        "commands": commands,
        "accepted": accepted,
        "commands_per_s": commands / elapsed,
        "gateway_cpu_us_per_command": (cpu1 - cpu0) / commands * 1e6 if cpu0 is not None and cpu1 else None,
    }


async def latency(
    pool: Pool,
    rate: float,
    seconds: float,
    send: Callable[[CommandEnvelope], Awaitable[bool]],
) -> dict[str, Any]:
    """Paced sends, each its own task; a game's next move waits for its previous outcome."""
    n = int(rate * seconds)
    games = list(pool.games.values())
    busy: dict[str, asyncio.Task[None]] = {}
    lat: list[float] = []
    accepted = 0
    period = 1.0 / rate
    clock = time.perf_counter

    async def one(env: CommandEnvelope) -> None:
        nonlocal accepted
        t = clock()
        ok = await send(env)
        lat.append(clock() - t)
        accepted += ok

    start = clock() + 0.01
    i = sent = 0
    while sent < n:
        g = games[i % len(games)]
        i += 1
        if i > n * 4:
            raise BenchError(f"the pool ran out of moves after {sent}")
        previous = busy.get(g.game_id)
        if previous is not None and not previous.done():
            await previous
        env = pool.next_move(g)
        if env is None:
            continue
        delay = start + sent * period - clock()
        if delay > 0:
            await asyncio.sleep(delay)
        busy[g.game_id] = asyncio.ensure_future(one(env))
        sent += 1
    await asyncio.gather(*busy.values())
    return {
        "commands": sent,
        "accepted": accepted,
        "offered_per_s": sent / (clock() - start),
        "p50_ms": percentile(lat, 50) * 1e3,
        "p90_ms": percentile(lat, 90) * 1e3,
        "p99_ms": percentile(lat, 99) * 1e3,
    }


class FutureReplies:
    """A reply stream read by one task that resolves a future per command id (direct latency)."""

    def __init__(self, r: AnyRedis, stream: str) -> None:
        self.redis = r
        self.stream = stream
        self.waiting: dict[str, asyncio.Future[bool]] = {}
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        last = "0-0"
        while True:
            got: Any = await self.redis.xread({self.stream: last}, count=1000, block=1000)
            for _, entries in got or ():
                for entry_id, fields in entries:
                    last = entry_id
                    outcome = msgspec.json.decode(fields[b"data"])["outcome"]
                    future = self.waiting.pop(outcome["command_id"], None)
                    if future is not None and not future.done():
                        future.set_result(outcome["status"] == "accepted")

    async def send(self, env: CommandEnvelope) -> bool:
        """An awaited XADD of `env` (replying here), then its outcome."""
        env = msgspec.structs.replace(env, reply_to=self.stream)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiting[env.command_id] = future
        await self.redis.xadd(self.stream_of(env), {"data": msgspec.json.encode(env)})
        return await asyncio.wait_for(future, 60)

    stream_of: Callable[[CommandEnvelope], str]

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task


def _med(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


async def gateway_section(
    url: str, r: AnyRedis, keys: Keys, shards: int, sizes: GatewaySizes, repeats: int, say: Callable[[str], None]
) -> dict[str, Any]:
    # Seats are joined (and direct commands sent) with replies under the gateway's client name,
    # `gw`: the referee ties a seat to the client that joined it (GAME-REPLY-TO), and these seats
    # are also played through the gateway.
    replies = Replies(url, f"{keys.prefix}:reply:gw:bench-g")
    replies.start()
    workers: list[Worker] = []
    gateway: GatewayProcess | None = None
    opened: list[Any] = []
    try:
        workers = await start_workers(url, keys, shards, 1, r, replies)
        gateway = GatewayProcess(url, keys.prefix, shards)
        await gateway.wait_ready()
        http = await HttpPool.open(gateway.port, HTTP_CONNECTIONS)
        opened.append(http)
        gpid = gateway.pid

        async def fresh_pool(seed: int, with_sockets: bool) -> tuple[Pool, SeatSockets | None]:
            pool = Pool(r, keys, shards, replies, seed=seed)
            await pool.prepare(sizes.games, workers, players=(2,))
            # Untimed: each seat's view once, so the gateway has checked every token (it folds a
            # game's log the first time it sees it): the steady state of running games, as in (b).
            await asyncio.gather(
                *(
                    http.get(f"/v1/games/{g.game_id}/seats/{seat}", token)
                    for g in pool.games.values()
                    for seat, token in enumerate(g.tokens)
                )
            )
            sockets = None
            if with_sockets:
                sockets = SeatSockets()
                await sockets.open(gateway.port if gateway else 0, pool)
                opened.append(sockets)
            quiet_gc()
            return pool, sockets

        out: dict[str, Any] = {"sizes": sizes.__dict__, "http_connections": HTTP_CONNECTIONS}
        say(f"    throughput: {repeats} x {sizes.waves} waves over {sizes.games} games, direct / HTTP / WebSocket")
        runs: dict[str, list[dict[str, Any]]] = {"direct": [], "http": [], "ws": []}
        for k in range(repeats):
            pool, sockets = await fresh_pool(100 + k, with_sockets=True)
            assert sockets is not None
            await throughput(pool, 1, functools.partial(_wave_direct, pool, workers=workers), None)  # warm-up
            await throughput(pool, 1, functools.partial(_wave_http, http), gpid)
            await throughput(pool, 1, functools.partial(_wave_ws, sockets), gpid)
            # Interleaved, one wave each in turn, so that drift on the machine hits all three alike.
            parts: dict[str, list[dict[str, Any]]] = {"direct": [], "http": [], "ws": []}
            for _ in range(sizes.waves):
                parts["direct"].append(
                    await throughput(pool, 1, functools.partial(_wave_direct, pool, workers=workers), None)
                )
                parts["http"].append(await throughput(pool, 1, functools.partial(_wave_http, http), gpid))
                parts["ws"].append(await throughput(pool, 1, functools.partial(_wave_ws, sockets), gpid))
            for mode, waves in parts.items():
                commands = sum(w["commands"] for w in waves)
                seconds = sum(w["commands"] / w["commands_per_s"] for w in waves)
                cpu = [w["gateway_cpu_us_per_command"] for w in waves if w["gateway_cpu_us_per_command"] is not None]
                runs[mode].append(
                    {
                        "commands": commands,
                        "accepted": sum(w["accepted"] for w in waves),
                        "commands_per_s": commands / seconds,
                        "gateway_cpu_us_per_command": statistics.mean(cpu) if cpu else None,
                    }
                )
            await sockets.close()
            opened.remove(sockets)
        out["throughput"] = {
            mode: {"runs": rs, "commands_per_s": _med(rs, "commands_per_s")} for mode, rs in runs.items()
        }
        direct_tp = out["throughput"]["direct"]["commands_per_s"]

        say(f"    latency: {repeats} x {sizes.seconds:g} s at {sizes.rate:.0f} commands/s, direct / HTTP / WebSocket")
        lat: dict[str, list[dict[str, Any]]] = {"direct": [], "http": [], "ws": []}
        for k in range(repeats):
            for mode in ("direct", "http", "ws"):
                pool, sockets = await fresh_pool(200 + 10 * k + len(mode), with_sockets=mode == "ws")
                if mode == "direct":
                    direct = FutureReplies(r, f"{keys.prefix}:reply:gw:bench-g-direct")
                    direct.stream_of = functools.partial(_stream_of, pool)
                    opened.append(direct)

                    send: Callable[[CommandEnvelope], Awaitable[bool]] = direct.send
                elif mode == "http":
                    send = functools.partial(_send_http, http)
                else:
                    assert sockets is not None
                    send = functools.partial(_send_ws, sockets)

                lat[mode].append(await latency(pool, sizes.rate, sizes.seconds, send))
                if sockets is not None:
                    await sockets.close()
                    opened.remove(sockets)
                if mode == "direct":
                    await direct.close()
                    opened.remove(direct)
        out["latency"] = {
            mode: {"runs": rs, "p50_ms": _med(rs, "p50_ms"), "p99_ms": _med(rs, "p99_ms")} for mode, rs in lat.items()
        }
        d = out["latency"]["direct"]
        out["ratios"] = {
            "http_vs_direct_commands_per_s": out["throughput"]["http"]["commands_per_s"] / direct_tp,
            "ws_vs_direct_commands_per_s": out["throughput"]["ws"]["commands_per_s"] / direct_tp,
            **{
                f"{mode}_vs_direct_latency_{q}": out["latency"][mode][f"{q}_ms"] / d[f"{q}_ms"]
                for mode in ("http", "ws")
                for q in ("p50", "p99")
            },
            **{
                f"{mode}_added_latency_{q}_ms": out["latency"][mode][f"{q}_ms"] - d[f"{q}_ms"]
                for mode in ("http", "ws")
                for q in ("p50", "p99")
            },
        }
        refused = {
            f"{kind}:{mode}": sum(x["commands"] - x["accepted"] for x in rs)
            for kind, table in (("throughput", runs), ("latency", lat))
            for mode, rs in table.items()
        }
        out["not_accepted"] = refused
        return out
    finally:
        for thing in opened:
            await thing.close()
        if gateway is not None:
            gateway.stop()
        stop_workers(workers)
        await replies.close()


def report(g: dict[str, Any], console: Any, table: Any = None) -> None:
    """Rows for the bench table (or a table of its own)."""
    from rich.table import Table

    own = table is None
    if own:
        table = Table(title="(g) the gateway against direct Redis, same run (medians)")
        for col in ("figure", "median", "repeats", "ratio", "target", "met"):
            table.add_column(col, justify="left" if col == "figure" else "right")
    tp, lat, ratios = g["throughput"], g["latency"], g["ratios"]

    def runs(section: dict[str, Any], key: str) -> str:
        return " / ".join(f"{r[key]:,.0f}" if r[key] >= 100 else f"{r[key]:.2f}" for r in section["runs"])

    for mode, label in (
        ("direct", "direct XADD, pipelined wave"),
        ("http", "gateway HTTP"),
        ("ws", "gateway WebSocket"),
    ):
        ratio = "" if mode == "direct" else f"{ratios[f'{mode}_vs_direct_commands_per_s']:.2f}x direct"
        cpu = tp[mode]["runs"][0].get("gateway_cpu_us_per_command")
        extra = f"gateway CPU {cpu:.0f} µs/cmd" if cpu else ""
        table.add_row(
            f"(g) {label}, commands/s",
            f"{tp[mode]['commands_per_s']:,.0f}",
            runs(tp[mode], "commands_per_s"),
            ratio,
            extra,
            "",
        )
    rate = g["sizes"]["rate"]
    for mode, label in (("direct", "direct XADD"), ("http", "gateway HTTP"), ("ws", "gateway WebSocket")):
        p50, p99 = lat[mode]["p50_ms"], lat[mode]["p99_ms"]
        ratio = (
            ""
            if mode == "direct"
            else f"{ratios[f'{mode}_vs_direct_latency_p50']:.2f}x / {ratios[f'{mode}_vs_direct_latency_p99']:.2f}x"
        )
        added = (
            ""
            if mode == "direct"
            else f"+{ratios[f'{mode}_added_latency_p50_ms']:.2f} / +{ratios[f'{mode}_added_latency_p99_ms']:.2f} ms"
        )
        table.add_row(
            f"(g) {label} latency p50 / p99 at {rate:.0f}/s",
            f"{p50:.2f} / {p99:.2f} ms",
            runs(lat[mode], "p50_ms"),
            ratio,
            added,
            "",
        )
    if own:
        console.print(table)
    if any(g["not_accepted"].values()):
        console.print(f"[yellow](g) commands not accepted: {g['not_accepted']}[/]")


def main(argv: list[str] | None = None) -> int:
    import uuid

    from rich.console import Console

    from bench.harness import delete_prefix
    from dicestream.loop import run as run_loop
    from services.config import from_env
    from services.redis_conn import connect
    from services.redis_server import resolve_url

    args = sys.argv[1:] if argv is None else argv
    sizes = QUICK if "--quick" in args else FULL
    settings = from_env()
    url, _server = resolve_url(settings.redis_url)
    console = Console()
    started = time.monotonic()

    def say(text: str) -> None:
        console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {text}")

    async def go() -> dict[str, Any]:
        prefix = f"bench-{uuid.uuid4().hex[:8]}"
        r = connect(url)
        try:
            say(f"[bold](g)[/] the gateway on {url} (prefix {prefix})")
            return await gateway_section(url, r, Keys(prefix), settings.shards, sizes, 3, say)
        finally:
            say(f"deleted {await delete_prefix(r, prefix)} keys under {prefix}:")
            await r.aclose()

    result = run_loop(go())
    report(result, console)
    console.print(json.dumps(result["ratios"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
