"""Redis users for trusted direct-Redis clients: `dicestream acl add-client NAME`.

Every trusted bot (or tool) that talks to Redis directly gets a user of its own whose name is also
its reply-stream client name, so that it reads only `<prefix>:reply:NAME:*`: the streams where the
referee writes its outcomes and, once per JoinSeat, its seat token. What such a user may do, and
what it may not, is the threat model's "trusted client" row (docs/security.md); the services'
users are in deploy/redis/users.acl. Untrusted clients never get a Redis user: they use the
gateway.

The rules are printed with the password's SHA-256 (`#<hex>`), so the line can be pasted into the
ACL file (or the Secret it is mounted from) without the password in clear; the password itself is
printed once, for the client's REDIS_URL.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sys
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import msgspec
import typer

from contracts.limits import CLIENT_PATTERN

# Connection set-up every redis-py client needs (RESP3 HELLO, health PING) and what a Redis
# Cluster client asks before its first command (the slot map, the command table for the keys of
# XREAD, ASKING while a slot migrates). Nothing here reads or writes a key.
CONNECTION = ("+hello", "+ping", "+asking", "+command", "+cluster|info", "+cluster|slots", "+cluster|shards")
# Users of deploy/redis/users.acl, and the reply-stream client names that services use: a trusted
# client may not take one of them (it would read the bot runner's or the gateway's replies).
RESERVED = frozenset({"default", "admin", "replica", "referee", "projector", "turns", "botrunner", "gateway", "gw"})
_CLIENT = re.compile(CLIENT_PATTERN)
# A key prefix goes into glob patterns: none of Redis's glob characters, no spaces, no hash tags.
_PREFIX = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

acl_app = typer.Typer(help="Redis ACL users (see docs/security.md).", no_args_is_help=True)


class ClientUser(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    password: str
    reply_prefix: str
    rules: list[str]  # ACL SETUSER arguments after the user name, password hash included
    acl_line: str  # the same, as a line of an ACL file


def check_name(name: str) -> None:
    if _CLIENT.fullmatch(name) is None:
        raise ValueError(f"client name {name!r}: 1-32 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit")
    if name.lower() in RESERVED:
        raise ValueError(f"client name {name!r} is reserved for a service user or its reply streams")


def check_prefix(prefix: str) -> None:
    if _PREFIX.fullmatch(prefix) is None:
        raise ValueError(f"prefix {prefix!r}: 1-64 characters of A-Z a-z 0-9 _ . : -")


def _same_length(lo: str, hi: str) -> list[str]:
    """Glob patterns matching exactly the decimal numbers lo..hi, both of the same length."""
    if lo == hi:
        return [lo]
    if len(lo) == 1:
        return [f"[{lo}-{hi}]"]
    if lo[0] == hi[0]:
        return [lo[0] + g for g in _same_length(lo[1:], hi[1:])]
    rest = len(lo) - 1
    out: list[str] = []
    first, last = int(lo[0]), int(hi[0])
    if lo[1:] != "0" * rest:
        out += [lo[0] + g for g in _same_length(lo[1:], "9" * rest)]
        first += 1
    tail = [] if hi[1:] == "9" * rest else [hi[0] + g for g in _same_length("0" * rest, hi[1:])]
    if tail:
        last -= 1
    if first <= last:
        out.append((str(first) if first == last else f"[{first}-{last}]") + "[0-9]" * rest)
    return out + tail


def shard_globs(shards: int) -> list[str]:
    """Glob patterns matching exactly the shard numbers 0..shards-1 (no leading zeros), so that a
    client may write the intake streams that exist and create no other `<prefix>:cmd:` key."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    out: list[str] = []
    for digits in range(1, len(str(shards - 1)) + 1):
        lo, hi = (0 if digits == 1 else 10 ** (digits - 1)), min(shards - 1, 10**digits - 1)
        out += _same_length(str(lo), str(hi))
    return out


def client_rules(name: str, prefix: str = "ds", shards: int = 64) -> list[str]:
    """What a trusted client may do, without its password: one root permission set (connection
    only) and one selector per kind of access, so that no command gets the union of the patterns
    (DEL reaches only its own reply streams, XADD only the intake, reads never the intake)."""
    check_name(name)
    check_prefix(prefix)
    p = prefix
    intake = " ".join(f"%W~{p}:cmd:{{{g}}}" for g in shard_globs(shards))
    return [
        "on",
        "resetkeys",
        "resetchannels",
        "-@all",
        *CONNECTION,
        # Commands go to the installation's intake streams, write-only: they hold every client's
        # seat tokens. (XADD still lets the client choose the entry id and MAXLEN: see
        # docs/security.md, why untrusted clients use the gateway.)
        f"(+xadd {intake})",
        # Its own reply streams: outcomes and seat tokens, for it alone; it deletes them when done.
        f"(+xread +xrange +xrevrange +xlen +del ~{p}:reply:{name}:*)",
        # What any audience or seat may see: public streams, and every seat's turn requests (a
        # trusted client can read any seat's view: hidden information is only hidden from
        # untrusted clients, who use the gateway).
        f"(+xread +xrange +xrevrange +xlen +exists %R~{p}:game:{{*}}:public %R~{p}:game:{{*}}:seat:*)",
    ]


def new_client(name: str, prefix: str = "ds", shards: int = 64, password: str | None = None) -> ClientUser:
    rules = client_rules(name, prefix, shards)
    password = password or secrets.token_urlsafe(32)
    digest = hashlib.sha256(password.encode()).hexdigest()
    rules = [rules[0], f"#{digest}", *rules[1:]]
    return ClientUser(
        name=name,
        password=password,
        reply_prefix=f"{prefix}:reply:{name}:",
        rules=rules,
        acl_line=" ".join(["user", name, *rules]),
    )


def cluster_nodes(url: str) -> list[str]:
    """Every node (`host:port`) of the cluster that the node at `url` knows, replicas included."""
    import redis

    probe = redis.Redis.from_url(url)
    try:
        known: dict[str, dict[str, object]] = probe.execute_command("CLUSTER NODES")  # type: ignore[no-untyped-call]
    finally:
        probe.close()
    return sorted(addr for addr, info in known.items() if "noaddr" not in str(info.get("flags", "")))


def _node_url(url: str, node: str) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{node}" if userinfo else node))


def apply(url: str, user: ClientUser) -> list[str]:
    """ACL SETUSER on the server at `url`, as whoever `url` authenticates (an admin), and on every
    other node of its cluster, primaries and replicas (ACLs are per node, not replicated); returns
    the nodes changed. `reset` first, so an existing user of that name ends with exactly these
    rules."""
    import redis

    from services.redis_conn import detect_cluster

    parts = urlsplit(url)
    nodes = cluster_nodes(url) if detect_cluster(url) else [f"{parts.hostname}:{parts.port or 6379}"]
    for node in nodes:
        client = redis.Redis.from_url(_node_url(url, node) if len(nodes) > 1 else url)
        try:
            client.execute_command("ACL", "SETUSER", user.name, "reset", *user.rules)  # type: ignore[no-untyped-call]
        finally:
            client.close()
    return nodes


@acl_app.command("add-client")
def add_client(
    name: Annotated[str, typer.Argument(help="the client's Redis user, also its reply-stream client name")],
    prefix: Annotated[str, typer.Option(envvar="DICESTREAM_PREFIX", help="key prefix of the installation")] = "ds",
    shards: Annotated[int, typer.Option(envvar="DICESTREAM_SHARDS", help="intake shards of the installation")] = 64,
    do_apply: Annotated[
        bool, typer.Option("--apply", help="also run ACL SETUSER on the Redis at --url (an admin's URL)")
    ] = False,
    url: Annotated[str | None, typer.Option(envvar="REDIS_URL", help="with --apply: the admin's Redis URL")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Print the ACL line of a new trusted client NAME and a freshly generated password."""
    try:
        user = new_client(name, prefix, shards)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    applied: list[str] = []
    if do_apply:
        if not url:
            raise typer.BadParameter("--apply needs --url or REDIS_URL (an admin's URL)")
        try:
            applied = apply(url, user)
        except Exception as exc:
            typer.echo(f"ACL SETUSER failed: {type(exc).__name__}: {exc}", err=True)
            raise typer.Exit(1) from None
    if as_json:
        doc = {**msgspec.to_builtins(user), "applied": applied}
        sys.stdout.write(msgspec.json.encode(doc).decode() + "\n")
        return
    typer.echo("# users.acl line (the password is stored as its SHA-256):")
    typer.echo(user.acl_line)
    typer.echo(f"# password (shown once): {user.password}")
    typer.echo(f"# REDIS_URL=redis://{name}:{user.password}@<host>:6379/0")
    typer.echo(
        f"# reply streams: {user.reply_prefix}<rest> (Client(name='{name}:...'), play_seat(client_name='{name}'))"
    )
    if applied:
        typer.echo(f"# applied with ACL SETUSER on {', '.join(applied)}; add the line to the ACL file as well,")
        typer.echo("# or the user is gone at the next restart of Redis")
