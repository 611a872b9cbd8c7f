"""Operator commands: `dicestream status` and `dicestream dead list|show|retry|purge`.

`status` reads, without writing anything: the Redis mode and nodes, each role's shard lease table
(services/leases.py: holders, lease expiries, live members), the consumer groups of every shard's
streams (XINFO STREAM and XINFO GROUPS) and the dead-letter stream's length. It exits 1 when a
running role (one with a live lease-table member) leaves a shard without an owner, so a script can
use it as a check. Roles run with DICESTREAM_OWN_SHARDS take no leases and show as not running.

The dead-letter stream (`<prefix>:dead`, one key) holds what the referee could not judge, as
bounded records (services/referee/entries.dead_record): the reason, the intake stream and entry id,
the entry's field count and size, the SHA-256 of `data`, and the first 1024 bytes of each field
with seat tokens blanked. `retry` puts an entry back on the stream it came from, as a new entry,
only when the record provably holds the whole original: every field, every byte, the SHA-256 of
`data` matching and no token blanked. Otherwise it refuses and says why (the sender must send the
command again). Retry and purge work on a Redis Cluster: the dead letters are one key, and a
retried entry goes to its own shard's stream, whatever slot that is in.

JSON shapes: docs/cli.md.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

import msgspec
import redis.asyncio as aredis
import redis.exceptions
import typer
from redis.asyncio.cluster import RedisCluster
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from contracts.limits import CLIENT_PATTERN
from dicestream.errors import Code, InputError, NotFound, emit, fail, shown_url
from services.eventstore.keys import Keys
from services.redis_conn import AnyRedis, connect, is_cluster

Entries = list[tuple[bytes, dict[bytes, bytes]]]

# The roles that take shard leases (services/leases.py), in the order they are shown.
ROLES = ("referee", "projector", "turns", "botrunner")
# Per shard: (name in the report, key of the shard, consumer groups that read it).
STREAMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("intake", "intake", ("referee",)),
    ("timer", "timer", ("referee",)),
    ("bus", "bus", ("projector", "turns")),
    ("turn_notices", "turn_notices", ("botrunner",)),
)
JsonOption = Annotated[bool, typer.Option("--json", help="print the result as one JSON document (docs/cli.md)")]
console = Console()


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


async def _gather(client: AnyRedis, calls: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    """Run calls in one pipeline (split by slot on a cluster); a failed call's result is its error."""
    if not calls:
        return []
    pipe = client.pipeline(transaction=False) if not is_cluster(client) else client.pipeline()
    for name, args in calls:
        getattr(pipe, name)(*args)
    return list(await pipe.execute(raise_on_error=False))


# ---- status --------------------------------------------------------------------------------------


class GroupInfo(msgspec.Struct, kw_only=True):
    # Entries delivered to no consumer of the group yet: Redis's own figure (7.0+); 0 when the group
    # has delivered the stream's last entry; null when Redis cannot tell (6.2, or entries deleted).
    lag: int | None
    pending: int  # delivered, not acknowledged
    last_delivered_id: str


class StreamInfo(msgspec.Struct, kw_only=True):
    key: str
    length: int  # 0 when the stream does not exist
    last_id: str | None
    groups: dict[str, GroupInfo | None]  # null: no such group (yet)


class ShardStatus(msgspec.Struct, kw_only=True):
    shard: int
    owners: dict[str, str | None]  # role -> holder of the shard's lease (null: unowned)
    streams: dict[str, StreamInfo]  # intake, timer, bus, turn_notices


class Member(msgspec.Struct, kw_only=True):
    holder: str  # "<consumer>#<nonce>" (DICESTREAM_CONSUMER, default host-pid)
    leases: int  # shards whose lease it holds now
    expires_in_ms: int  # its membership lapses this long from now unless renewed


class RoleStatus(msgspec.Struct, kw_only=True):
    running: bool  # at least one live member
    members: list[Member]
    lapsed: list[str]  # members whose membership lapsed (dead, not yet cleaned up)
    owned: int
    unowned: list[int]


class Node(msgspec.Struct, kw_only=True):
    address: str
    id: str | None  # cluster node id
    role: str  # "master" | "replica"
    master: str | None  # a replica's master's node id
    slots: list[list[int]]  # [first, last] ranges (a cluster master's)
    flags: list[str]
    reachable: bool
    version: str | None
    error: str | None = None


class RedisStatus(msgspec.Struct, kw_only=True):
    url: str
    mode: str  # "standalone" | "cluster"
    version: str | None
    nodes: list[Node]


class Status(msgspec.Struct, kw_only=True):
    ok: bool  # every shard of every running (and required) role has an owner
    problems: list[str]  # why not ok
    warnings: list[str]  # worth a look, not failing the check: unreachable nodes, lapsed members
    prefix: str
    shard_count: int
    redis: RedisStatus
    roles: dict[str, RoleStatus]
    shards: list[ShardStatus]
    dead_letters: int


def _node_url(url: str, address: str) -> str:
    """`url` pointing at another node (same scheme, credentials and database)."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    tail = hostpart.partition("/")[2]
    return f"{scheme}{sep}{userinfo}{at}{address}/{tail}"


async def _probe(url: str, address: str) -> tuple[bool, str | None, str | None]:
    """(reachable, version, error) of one node, over a connection of its own (1 s timeouts)."""
    probe = aredis.Redis.from_url(_node_url(url, address), socket_connect_timeout=1.0, socket_timeout=1.0)
    try:
        info = await probe.info("server")
        return True, str(info.get("redis_version")), None
    except redis.exceptions.NoPermissionError:
        return True, None, None
    except (redis.exceptions.RedisError, OSError) as exc:
        return False, None, str(exc) or type(exc).__name__
    finally:
        await probe.aclose()


async def _redis_status(client: AnyRedis, url: str) -> RedisStatus:
    if not is_cluster(client):
        try:
            server = await client.info("server")
            repl = await client.info("replication")
            version, role = str(server.get("redis_version")), str(repl.get("role", "master"))
        except redis.exceptions.NoPermissionError:
            version, role = None, "master"
        parts = urlsplit(url)
        node = Node(
            address=f"{parts.hostname or '127.0.0.1'}:{parts.port or 6379}",
            id=None,
            role="replica" if role == "slave" else role,
            master=None,
            slots=[],
            flags=[],
            reachable=True,
            version=version,
        )
        return RedisStatus(url=shown_url(url), mode="standalone", version=version, nodes=[node])
    assert isinstance(client, RedisCluster)
    raw: dict[str, dict[str, Any]] = await client.cluster_nodes()
    nodes: list[Node] = []
    probes = await asyncio.gather(*(_probe(url, address) for address in raw))
    for (address, info), (reachable, version, error) in zip(raw.items(), probes, strict=True):
        flags = [f for f in str(info.get("flags", "")).split(",") if f]
        master = str(info.get("master_id") or "-")
        nodes.append(
            Node(
                address=address,
                id=str(info.get("node_id")),
                role="replica" if "slave" in flags else "master",
                master=None if master == "-" else master,
                slots=[[int(a), int(b)] for a, b in info.get("slots", [])],
                flags=[f for f in flags if f != "myself"],
                reachable=reachable,
                version=version,
                error=error,
            )
        )
    nodes.sort(key=lambda n: (n.role != "master", n.slots[0][0] if n.slots else 1 << 20, n.address))
    versions = {n.version for n in nodes if n.version}
    return RedisStatus(url=shown_url(url), mode="cluster", version=", ".join(sorted(versions)) or None, nodes=nodes)


def _stream_info(key: str, groups: tuple[str, ...], stream: Any, infos: Any) -> StreamInfo:
    if isinstance(stream, Exception):  # no such key
        return StreamInfo(key=key, length=0, last_id=None, groups=dict.fromkeys(groups))
    last_id = _text(stream.get("last-generated-id", "")) or None
    length = int(stream.get("length", 0))
    found: dict[str, GroupInfo | None] = dict.fromkeys(groups)
    for group in [] if isinstance(infos, Exception) else infos:
        name = _text(group["name"])
        if name not in found:
            continue
        delivered = _text(group.get("last-delivered-id", "0-0"))
        lag = group.get("lag")
        if lag is None and (length == 0 or delivered == last_id):
            lag = 0
        found[name] = GroupInfo(
            lag=None if lag is None else int(lag), pending=int(group.get("pending", 0)), last_delivered_id=delivered
        )
    return StreamInfo(key=key, length=length, last_id=last_id, groups=found)


async def _server_ms(client: AnyRedis, key: str) -> int:
    """The clock of the server holding `key` (the lease scripts' clock)."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        reply = await client.execute_command("TIME", target_nodes=node)
    else:
        reply = await client.time()
    seconds, micros = reply
    return int(seconds) * 1000 + int(micros) // 1000


async def collect_status(client: AnyRedis, url: str, keys: Keys, shards: int, require: tuple[str, ...]) -> Status:
    redis_status = await _redis_status(client, url)
    problems: list[str] = []
    roles: dict[str, RoleStatus] = {}
    owners: dict[str, list[str | None]] = {}
    for role in ROLES:
        holders_key, until_key, members_key = keys.leases(role)
        now = await _server_ms(client, holders_key)
        holders, until, members = await _gather(
            client,
            [
                ("hgetall", (holders_key,)),
                ("zrange", (until_key, 0, -1, False, True)),
                ("zrange", (members_key, 0, -1, False, True)),
            ],
        )
        for reply in (holders, until, members):
            if isinstance(reply, Exception):
                raise reply
        expiry = {_text(shard): int(ms) for shard, ms in until}
        live = {_text(holder): int(ms) for holder, ms in members if int(ms) > now}
        lapsed = sorted(_text(holder) for holder, ms in members if int(ms) <= now)
        owner: list[str | None] = []
        for shard in range(shards):
            holder = holders.get(str(shard).encode())
            owner.append(_text(holder) if holder is not None and expiry.get(str(shard), 0) > now else None)
        owners[role] = owner
        held = {h: sum(1 for o in owner if o == h) for h in live}
        unowned = [s for s, o in enumerate(owner) if o is None]
        beyond = sorted(int(s) for s in map(_text, holders) if s.isdigit() and int(s) >= shards)
        if beyond:
            problems.append(
                f"{role}: leases on shards {_ranges(beyond)} outside 0..{shards - 1}: "
                f"is DICESTREAM_SHARDS ({shards}) the services' value?"
            )
        running = bool(live)
        roles[role] = RoleStatus(
            running=running,
            members=[Member(holder=h, leases=held[h], expires_in_ms=ms - now) for h, ms in sorted(live.items())],
            lapsed=lapsed,
            owned=shards - len(unowned),
            unowned=unowned,
        )
        if running and unowned:
            problems.append(f"{role}: {len(unowned)} of {shards} shards have no owner: {_ranges(unowned)}")
        elif not running and role in require:
            problems.append(f"{role}: not running (no live member in its lease table)")
    calls: list[tuple[str, tuple[Any, ...]]] = []
    for shard in range(shards):
        for _, kind, _groups in STREAMS:
            key = getattr(keys, kind)(shard)
            calls += [("xinfo_stream", (key,)), ("xinfo_groups", (key,))]
    calls.append(("xlen", (keys.dead_letter,)))
    replies = await _gather(client, calls)
    dead = replies.pop()
    if isinstance(dead, Exception):
        raise dead
    shard_status: list[ShardStatus] = []
    at = 0
    for shard in range(shards):
        streams: dict[str, StreamInfo] = {}
        for name, kind, groups in STREAMS:
            streams[name] = _stream_info(getattr(keys, kind)(shard), groups, replies[at], replies[at + 1])
            at += 2
        shard_status.append(ShardStatus(shard=shard, owners={r: owners[r][shard] for r in ROLES}, streams=streams))
    warnings = [f"node {n.address} ({n.role}) unreachable: {n.error}" for n in redis_status.nodes if not n.reachable]
    warnings += [
        f"node {n.address} flagged {','.join(n.flags)}" for n in redis_status.nodes if set(n.flags) & _BAD_FLAGS
    ]
    for role, rs in roles.items():
        if rs.lapsed:
            warnings.append(f"{role}: {len(rs.lapsed)} member(s) lapsed (stopped renewing): {', '.join(rs.lapsed)}")
    return Status(
        ok=not problems,
        problems=problems,
        warnings=warnings,
        prefix=keys.prefix,
        shard_count=shards,
        redis=redis_status,
        roles=roles,
        shards=shard_status,
        dead_letters=int(dead),
    )


_BAD_FLAGS = {"fail", "fail?", "handshake", "noaddr"}


def _ranges(numbers: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _cell(info: StreamInfo, group: str) -> str:
    g = info.groups.get(group)
    if g is None:
        return "[dim]-[/]" if info.length == 0 else "[yellow]no group[/]"
    lag = "?" if g.lag is None else str(g.lag)
    text = f"{lag}/{g.pending}"
    return f"[yellow]{text}[/]" if g.lag or g.pending or g.lag is None else text


def render_status(status: Status) -> None:
    r = status.redis
    console.print(
        f"[bold]Redis[/] {r.mode} at {escape(r.url)}, version {r.version or '?'}, "
        f"{len(r.nodes)} node{'s' if len(r.nodes) != 1 else ''}",
        highlight=False,
    )
    if r.mode == "cluster":
        nodes = Table(box=None, pad_edge=False)
        for col in ("node", "role", "slots", "reachable", "flags"):
            nodes.add_column(col)
        for n in r.nodes:
            slots = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in n.slots)
            reach = "[green]yes[/]" if n.reachable else f"[red]no[/] {escape(n.error or '')}"
            role = n.role if n.role == "master" else f"replica of {(n.master or '?')[:8]}"
            flags = ",".join(f for f in n.flags if f not in ("master", "slave"))
            nodes.add_row(f"{n.address} {(n.id or '')[:8]}", role, slots, reach, escape(flags))
        console.print(nodes)
    labels: dict[str, dict[str, str]] = {}
    services = Table(title="Services (shard lease tables)", title_justify="left")
    for col in ("role", "member", "holder", "leases", "expires in"):
        services.add_column(col)
    for role, rs in status.roles.items():
        labels[role] = {}
        if not rs.members:
            services.add_row(role, "[dim]-[/]", "[dim]not running[/]", "", "")
        for k, mem in enumerate(rs.members, 1):
            label = f"{role[0].upper()}{k}"
            labels[role][mem.holder] = label
            services.add_row(
                role if k == 1 else "", label, escape(mem.holder), str(mem.leases), f"{mem.expires_in_ms / 1000:.1f} s"
            )
        for holder in rs.lapsed:
            services.add_row("", "[dim]lapsed[/]", f"[dim]{escape(holder)}[/]", "", "")
    console.print(services)
    shards = Table(title="Shards: owner, and lag/pending of each group", title_justify="left")
    for col in ("shard", *ROLES, "intake", "timer", "bus→projector", "bus→turns", "notices→bots"):
        shards.add_column(col, overflow="fold")
    for sh in status.shards:
        cells: list[str] = []
        for role in ROLES:
            owner = sh.owners[role]
            if owner is None:
                cells.append("[bold red]NONE[/]" if status.roles[role].running else "[dim]-[/]")
            else:
                cells.append(labels[role].get(owner, escape(owner)))
        s = sh.streams
        shards.add_row(
            str(sh.shard),
            *cells,
            _cell(s["intake"], "referee"),
            _cell(s["timer"], "referee"),
            _cell(s["bus"], "projector"),
            _cell(s["bus"], "turns"),
            _cell(s["turn_notices"], "botrunner"),
        )
    console.print(shards)
    colour = "yellow" if status.dead_letters else "green"
    console.print(f"dead letters: [{colour}]{status.dead_letters}[/] (dicestream dead list)")
    if status.ok:
        console.print("[green]OK[/]: every shard of every running role has an owner")
    for warning in status.warnings:
        console.print(f"[yellow]WARNING[/] {escape(warning)}", highlight=False)
    for problem in status.problems:
        console.print(f"[red]PROBLEM[/] {escape(problem)}", highlight=False)


def status(
    as_json: JsonOption = False,
    require: Annotated[
        str, typer.Option(help="roles that must be running, comma-separated, or 'all' (default: none)")
    ] = "",
) -> None:
    """Redis mode and nodes, services seen, lease owner per shard and role, lag per shard, dead letters.

    Exits 0 when every shard of every running role (and of every --require'd role) has an owner,
    1 otherwise: a check for scripts. A role run with DICESTREAM_OWN_SHARDS takes no leases and
    shows as not running."""
    from dicestream.cli import _run, _setup

    wanted = ROLES if require.strip() == "all" else tuple(r.strip() for r in require.split(",") if r.strip())
    unknown = [r for r in wanted if r not in ROLES]
    if unknown:
        raise InputError(f"--require: unknown role {', '.join(unknown)}; roles: {', '.join(ROLES)}")
    settings, url, _ = _setup(quiet=True)

    async def go() -> Status:
        client = connect(url)
        try:
            return await collect_status(client, url, Keys(settings.prefix), settings.shards, wanted)
        finally:
            await client.aclose()

    result = _run(go())
    if as_json:
        emit(result)
    else:
        render_status(result)
    if not result.ok:
        raise typer.Exit(int(Code.REFUSED))


# ---- dead letters --------------------------------------------------------------------------------

dead_app = typer.Typer(
    help="The dead-letter stream: what the referee could not judge (docs/cli.md).", no_args_is_help=True
)
ENTRY_ID = re.compile(r"\d{1,20}(-\d{1,20})?")
_BLANKED = re.compile(rb'"token"\s*:\s*"<redacted>')


class FieldCopy(msgspec.Struct, kw_only=True):
    name: str
    size: int  # bytes kept (at most 1024 of each field)
    text: str  # the bytes kept, as UTF-8 (bytes that are not show as U+FFFD)
    base64: str | None = None  # the bytes kept, when they are not UTF-8


class DeadLetter(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str  # its id in the dead-letter stream
    time: str  # when it was written (UTC, from the id)
    reason: str
    stream: str | None  # the intake stream the entry came from
    entry_id: str | None  # its id there
    field_count: int | None  # the entry's number of fields
    bytes: int | None  # the entry's size (field names and values)
    sha256: str | None  # of its `data` field
    retryable: bool  # the record holds the whole original entry
    why_not: str | None  # why it cannot be retried
    copy: list[FieldCopy] | None = None  # `dead show` only


def _when(entry_id: str) -> str:
    ms = int(entry_id.split("-")[0])
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _int(value: bytes | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def original(keys: Keys, shards: int, record: dict[bytes, bytes]) -> tuple[str, dict[bytes, bytes]] | str:
    """(stream, fields) of the entry a dead letter was made from, or why the record cannot be it."""
    stream = _text(record.get(b"stream", b""))
    # The shared intake, a client's own (`:<client>`) or the timer stream of a shard.
    p = re.escape(keys.prefix)
    intake = re.fullmatch(rf"{p}:cmd:\{{(\d+)\}}(?::{CLIENT_PATTERN})?|{p}:timer:\{{(\d+)\}}", stream)
    if intake is None:
        return f"it came from {stream!r}, not an intake stream of prefix {keys.prefix!r}"
    shard = intake[1] or intake[2]
    if int(shard) >= shards:
        return f"it came from shard {shard}, outside 0..{shards - 1}: is DICESTREAM_SHARDS ({shards}) right?"
    count, size = _int(record.get(b"fields")), _int(record.get(b"bytes"))
    copies = {k[len(b"field:") :]: v for k, v in record.items() if k.startswith(b"field:")}
    if count is None or size is None:
        return "the record kept only its reason (recording the entry failed)"
    if len(copies) != count:
        return f"the record kept {len(copies)} of the entry's {count} fields"
    sha = record.get(b"sha256")
    data = copies.get(b"data")
    whole_data = sha is not None and data is not None and hashlib.sha256(data).hexdigest() == _text(sha)
    for name, value in copies.items():
        if _BLANKED.search(value) and not (name == b"data" and whole_data):
            return "its seat token was blanked in the record: the sender must send the command again"
    kept = sum(len(k) + len(v) for k, v in copies.items())
    if kept != size or any("\ufffd" in _text(k) for k in copies):
        return (
            f"the record holds a bounded copy (the first 1024 bytes of each field) of a {size}-byte entry, "
            "not the entry itself: the sender must send it again"
        )
    if sha is not None and (data is None or hashlib.sha256(data).hexdigest() != _text(sha)):
        return "the copy of its data does not match the SHA-256 of the original"
    return stream, copies


def _letter(keys: Keys, shards: int, entry_id: bytes, record: dict[bytes, bytes], copy: bool) -> DeadLetter:
    verdict = original(keys, shards, record)
    copies = None
    if copy:
        copies = []
        for k, v in record.items():
            if not k.startswith(b"field:"):
                continue
            try:
                text, b64 = v.decode(), None
            except UnicodeDecodeError:
                text, b64 = v.decode(errors="replace"), base64.b64encode(v).decode()
            copies.append(FieldCopy(name=_text(k[len(b"field:") :]), size=len(v), text=text, base64=b64))
    sha = record.get(b"sha256")
    return DeadLetter(
        id=_text(entry_id),
        time=_when(_text(entry_id)),
        reason=_text(record.get(b"reason", b"")),
        stream=_text(record[b"stream"]) if b"stream" in record else None,
        entry_id=_text(record[b"entry_id"]) if b"entry_id" in record else None,
        field_count=_int(record.get(b"fields")),
        bytes=_int(record.get(b"bytes")),
        sha256=_text(sha) if sha is not None else None,
        retryable=not isinstance(verdict, str),
        why_not=verdict if isinstance(verdict, str) else None,
        copy=copies,
    )


def _ids(ids: list[str]) -> list[str]:
    bad = [i for i in ids if not ENTRY_ID.fullmatch(i)]
    if bad:
        raise InputError(f"not a stream entry id: {', '.join(map(repr, bad))} (e.g. 1718000000000-0)")
    return [i if "-" in i else f"{i}-0" for i in ids]


class _Dead:
    """The dead-letter commands' Redis client, settings and keys."""

    def __init__(self) -> None:
        from dicestream.cli import _setup

        settings, self.url, _ = _setup(quiet=True)
        self.keys = Keys(settings.prefix)
        self.shards = settings.shards

    def run(self, work: Any) -> Any:
        from dicestream.cli import _run

        async def go() -> Any:
            client = connect(self.url)
            try:
                return await work(client)
            finally:
                await client.aclose()

        return _run(go())

    async def get(self, client: AnyRedis, ids: list[str]) -> dict[str, dict[bytes, bytes] | None]:
        replies = await _gather(client, [("xrange", (self.keys.dead_letter, i, i, 1)) for i in ids])
        out: dict[str, dict[bytes, bytes] | None] = {}
        for i, reply in zip(ids, replies, strict=True):
            if isinstance(reply, Exception):
                raise reply
            out[i] = reply[0][1] if reply else None
        return out

    async def every(self, client: AnyRedis) -> list[tuple[bytes, dict[bytes, bytes]]]:
        out: list[tuple[bytes, dict[bytes, bytes]]] = []
        start = "-"
        while True:
            page: Entries = await client.xrange(self.keys.dead_letter, start, "+", count=500)  # type: ignore[assignment]
            out += page
            if len(page) < 500:
                return out
            ms, _, seq = _text(page[-1][0]).partition("-")
            start = f"{ms}-{int(seq) + 1}"


@dead_app.command("list")
def dead_list(
    limit: Annotated[int, typer.Option(min=1, help="show at most this many, newest first")] = 50,
    as_json: JsonOption = False,
) -> None:
    """The newest dead letters: when, where from, why, and whether `retry` can put them back."""
    dead = _Dead()

    async def go(client: AnyRedis) -> tuple[int, list[DeadLetter]]:
        total = await client.xlen(dead.keys.dead_letter)
        got: Entries = await client.xrevrange(dead.keys.dead_letter, "+", "-", count=limit)  # type: ignore[assignment]
        return int(total), [_letter(dead.keys, dead.shards, i, f, copy=False) for i, f in got]

    total, letters = dead.run(go)
    if as_json:
        emit({"total": total, "shown": len(letters), "dead_letters": letters})
        return
    if not letters:
        console.print(f"no dead letters in {escape(dead.keys.dead_letter)}")
        return
    table = Table(title=f"{total} dead letters in {dead.keys.dead_letter} (newest first)", title_justify="left")
    for col in ("id", "time (UTC)", "from", "reason", "bytes", "retry"):
        table.add_column(col, overflow="fold")
    for d in letters:
        table.add_row(
            d.id,
            d.time[:-1].replace("T", " "),
            escape(f"{d.stream} {d.entry_id}"),
            escape(d.reason),
            str(d.bytes),
            "[green]yes[/]" if d.retryable else "[red]no[/]",
        )
    console.print(table)
    if total > len(letters):
        console.print(f"[dim]{total - len(letters)} older ones not shown (--limit)[/]")


@dead_app.command("show")
def dead_show(
    entry_id: Annotated[str, typer.Argument(help="the dead letter's id")], as_json: JsonOption = False
) -> None:
    """One dead letter whole: reason, origin, size, SHA-256, the bounded copy of each field, retryable."""
    [wanted] = _ids([entry_id])
    dead = _Dead()

    async def go(client: AnyRedis) -> dict[bytes, bytes] | None:
        return (await dead.get(client, [wanted]))[wanted]

    record = dead.run(go)
    if record is None:
        raise NotFound(f"no dead letter {wanted} in {dead.keys.dead_letter}")
    letter = _letter(dead.keys, dead.shards, wanted.encode(), record, copy=True)
    if as_json:
        emit(letter)
        return
    console.print(f"[bold]dead letter {letter.id}[/] written {letter.time}", highlight=False)
    for name in ("reason", "stream", "entry_id", "field_count", "bytes", "sha256"):
        console.print(f"  {name}: {escape(str(getattr(letter, name)))}", highlight=False, soft_wrap=True)
    if letter.retryable:
        console.print("  retry: [green]yes[/], the record holds the whole entry")
    else:
        console.print(f"  retry: [red]no[/], {escape(letter.why_not or '')}")
    for field in letter.copy or []:
        console.print(f"  [bold]field {escape(field.name)}[/] ({field.size} bytes kept):", highlight=False)
        console.print(escape(field.text), highlight=False, markup=False, soft_wrap=True)


def _which(ids: list[str], every: bool) -> list[str]:
    if every and ids:
        raise InputError("give entry ids or --all, not both")
    if not every and not ids:
        raise InputError("give the ids of the dead letters, or --all")
    return _ids(ids)


@dead_app.command("retry")
def dead_retry(
    entry_ids: Annotated[list[str] | None, typer.Argument(help="dead letter ids (dicestream dead list)")] = None,
    every: Annotated[bool, typer.Option("--all", help="every dead letter that can be retried")] = False,
    keep: Annotated[bool, typer.Option(help="keep the dead letters retried (default: delete them)")] = False,
    as_json: JsonOption = False,
) -> None:
    """Put entries back on the intake stream they came from, as new entries, to be judged again.

    Refused (exit 1) for a dead letter that holds only a bounded copy of its entry (an oversized
    entry, a field cut at 1024 bytes, a seat token blanked): that copy is not the original, and the
    sender must send the command again. Unknown ids exit 4."""
    ids = _which(entry_ids or [], every)
    dead = _Dead()

    async def go(client: AnyRedis) -> dict[str, Any]:
        found: list[tuple[str, dict[bytes, bytes]]]
        missing: list[str] = []
        if every:
            found = [(_text(i), f) for i, f in await dead.every(client)]
        else:
            got = await dead.get(client, ids)
            found = [(i, f) for i, f in got.items() if f is not None]
            missing = [i for i, f in got.items() if f is None]
        retried: list[dict[str, str]] = []
        refused: list[dict[str, str]] = []
        for i, record in found:
            verdict = original(dead.keys, dead.shards, record)
            if isinstance(verdict, str):
                refused.append({"id": i, "why": verdict})
                continue
            stream, fields = verdict
            new_id = await client.xadd(stream, fields)  # type: ignore[arg-type]
            if not keep:
                await client.xdel(dead.keys.dead_letter, i)
            retried.append({"id": i, "stream": stream, "new_entry_id": _text(new_id)})
        return {"retried": retried, "refused": refused, "not_found": missing}

    result = dead.run(go)
    if as_json:
        emit(result)
    else:
        for r in result["retried"]:
            console.print(f"retried {r['id']}: now {escape(r['stream'])} {r['new_entry_id']}", highlight=False)
        if not (result["retried"] or result["refused"] or result["not_found"]):
            console.print("no dead letters")
    for r in result["refused"]:
        fail(f"not retried {r['id']}: {r['why']}")
    for i in result["not_found"]:
        fail(f"no dead letter {i} in {dead.keys.dead_letter}")
    if result["not_found"]:
        raise typer.Exit(int(Code.NOT_FOUND))
    if result["refused"]:
        raise typer.Exit(int(Code.REFUSED))


@dead_app.command("purge")
def dead_purge(
    entry_ids: Annotated[list[str] | None, typer.Argument(help="dead letter ids (dicestream dead list)")] = None,
    every: Annotated[bool, typer.Option("--all", help="every dead letter written so far (needs --yes)")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="confirm --all")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete dead letters for good: the given ids, or --all --yes.

    --all deletes those written before the purge started (one written meanwhile stays). Unknown
    ids exit 4."""
    ids = _which(entry_ids or [], every)
    if every and not yes:
        raise InputError("purge --all deletes every dead letter: confirm with --yes")
    dead = _Dead()

    async def go(client: AnyRedis) -> dict[str, Any]:
        if every:
            last = await client.xrevrange(dead.keys.dead_letter, "+", "-", count=1)
            if not last:
                return {"purged": 0, "ids": [], "not_found": []}
            ms, _, seq = _text(last[0][0]).partition("-")
            # Everything up to the newest one seen, in one call: what arrives meanwhile stays.
            n = await client.xtrim(dead.keys.dead_letter, minid=f"{ms}-{int(seq) + 1}", approximate=False)
            return {"purged": int(n), "up_to": _text(last[0][0]), "not_found": []}
        got = await dead.get(client, ids)
        present = [i for i, f in got.items() if f is not None]
        n = await client.xdel(dead.keys.dead_letter, *present) if present else 0
        return {"purged": int(n), "ids": present, "not_found": [i for i, f in got.items() if f is None]}

    result = dead.run(go)
    if as_json:
        emit(result)
    else:
        console.print(f"purged {result['purged']} dead letters from {escape(dead.keys.dead_letter)}", highlight=False)
    for i in result["not_found"]:
        fail(f"no dead letter {i} in {dead.keys.dead_letter}")
    if result["not_found"]:
        raise typer.Exit(int(Code.NOT_FOUND))
