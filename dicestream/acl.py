"""Redis users for trusted direct-Redis clients: `dicestream acl add-client NAME`.

Every trusted bot (or tool) that talks to Redis directly gets a user of its own whose name is also
its reply-stream client name, so that it reads only `<prefix>:reply:NAME:*`: the streams where the
referee writes its outcomes and, once per JoinSeat, its seat token. It writes only its own intake
streams `<prefix>:cmd:{S}:NAME`, once registered in `<prefix>:clients` (the referee reads the
intakes of registered clients): whatever ids or trimming it chooses there harm only its own
commands, and the referee knows who sent each command it reads there. What such a user may do, and
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
    intake: str  # its own intake streams, `{S}` standing for the shard
    registry: str  # the set the client's name must be in for the referee to read that intake
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
    intake = " ".join(f"%W~{p}:cmd:{{{g}}}:{name}" for g in shard_globs(shards))
    return [
        "on",
        "resetkeys",
        "resetchannels",
        "-@all",
        *CONNECTION,
        # Commands go to its own intake streams, one per shard, write-only (they hold its seat
        # tokens). XADD lets it choose entry ids and MAXLEN there, which harms only its own
        # commands; the shared intake is for the services.
        f"(+xadd {intake})",
        # Whether it is registered, i.e. whether the referee reads that intake (the SDK asks).
        f"(+sismember %R~{p}:clients)",
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
        intake=f"{prefix}:cmd:{{S}}:{name}",
        registry=f"{prefix}:clients",
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


def _on_every_node(url: str, *command: str) -> list[str]:
    """Run `command` on the server at `url`, as whoever `url` authenticates (an admin), and on
    every other node of its cluster, primaries and replicas (ACLs are per node, not replicated);
    returns the nodes."""
    import redis

    from services.redis_conn import detect_cluster

    parts = urlsplit(url)
    nodes = cluster_nodes(url) if detect_cluster(url) else [f"{parts.hostname}:{parts.port or 6379}"]
    for node in nodes:
        client = redis.Redis.from_url(_node_url(url, node) if len(nodes) > 1 else url)
        try:
            client.execute_command(*command)  # type: ignore[no-untyped-call]
        finally:
            client.close()
    return nodes


def _registry(url: str, registry: str, name: str, *, add: bool) -> None:
    import redis
    from redis.cluster import RedisCluster

    from services.redis_conn import detect_cluster

    client = RedisCluster.from_url(url) if detect_cluster(url) else redis.Redis.from_url(url)
    try:
        if add:
            client.sadd(registry, name)
        else:
            client.srem(registry, name)
    finally:
        client.close()


def apply(url: str, user: ClientUser) -> list[str]:
    """ACL SETUSER on every node (`reset` first, so an existing user of that name ends with
    exactly these rules), then register the client so the referee reads its intake; returns the
    nodes changed."""
    nodes = _on_every_node(url, "ACL", "SETUSER", user.name, "reset", *user.rules)
    _registry(url, user.registry, user.name, add=True)
    return nodes


def remove(url: str, name: str, prefix: str = "ds") -> list[str]:
    """Unregister the client (the referee stops reading its intake within seconds; what it left
    there stays, and is read again if the name is registered again), then ACL DELUSER on every
    node (its open connections are closed by Redis)."""
    check_name(name)
    check_prefix(prefix)
    _registry(url, f"{prefix}:clients", name, add=False)
    return _on_every_node(url, "ACL", "DELUSER", name)


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
    typer.echo(f"# commands: XADD {user.intake} (its own intake; the SDK finds it by itself)")
    if applied:
        typer.echo(f"# applied with ACL SETUSER on {', '.join(applied)} and registered in {user.registry};")
        typer.echo("# add the line to the ACL file as well, or the user is gone at the next restart of Redis")
    else:
        typer.echo(f"# register it as admin, or the referee does not read its intake: SADD {user.registry} {name}")


@acl_app.command("remove-client")
def remove_client(
    name: Annotated[str, typer.Argument(help="the client's Redis user")],
    prefix: Annotated[str, typer.Option(envvar="DICESTREAM_PREFIX", help="key prefix of the installation")] = "ds",
    url: Annotated[str | None, typer.Option(envvar="REDIS_URL", help="the admin's Redis URL")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Unregister trusted client NAME and delete its Redis user on every node."""
    try:
        check_name(name)
        check_prefix(prefix)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if not url:
        raise typer.BadParameter("needs --url or REDIS_URL (an admin's URL)")
    try:
        nodes = remove(url, name, prefix)
    except Exception as exc:
        typer.echo(f"removing {name} failed: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(msgspec.json.encode({"name": name, "removed_on": nodes}).decode() + "\n")
        return
    typer.echo(f"# {name} unregistered and deleted on {', '.join(nodes)}; remove its line from the ACL file too")
