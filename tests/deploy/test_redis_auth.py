"""The deployment's Redis and services for real, on this machine: redis-server started exactly as
the Kubernetes StatefulSet starts it (its args, the redis.conf and users.acl it mounts; only the
port, bind address and data directory moved to a scratch place), then each service started as its
Deployment starts it (`dicestream serve X` with the container's environment: its own ACL user from
the Secret, the pod name as consumer) until /readyz answers 200, and stopped with SIGTERM, as the
kubelet does: it exits 0 well within terminationGracePeriodSeconds and leaves no lease behind."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dicestream.runtime import SERVICES
from tests.deploy import manifests as m
from tests.deploy.test_k8s import mounted_files, redis_statefulset

pytestmark = pytest.mark.redis


def redis_server() -> str:
    for exe in ("/usr/bin/redis-server", shutil.which("redis-server")):
        if exe and Path(exe).exists():
            out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
            if "v=7." in out or "v=8." in out:
                return exe
    pytest.skip("needs redis-server >= 7 (the ACL file uses selectors)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def k8s_redis(tmp: Path) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    docs = m.render(m.DEPLOY)
    sts, c = redis_statefulset(docs)
    files = mounted_files(docs, sts, c)
    argv = list(c["args"])
    (tmp / "data").mkdir()
    for path, text in files.items():  # /usr/local/etc/redis/x -> tmp/etc/x
        local = tmp / "etc" / Path(path).name
        local.parent.mkdir(parents=True, exist_ok=True)
        if local.suffix == ".conf":  # redis-server changes to `dir` while reading the file
            text = re.sub(r"(?m)^dir .*$", f"dir {tmp / 'data'}", text)
        local.write_text(text)
        argv = [str(local) if a == path else a for a in argv]
    port = free_port()
    argv = [redis_server(), *argv[1:], "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp / "data")]
    argv += ["--logfile", str(tmp / "redis.log"), "--daemonize", "no"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (tmp / "redis.log").read_text() if (tmp / "redis.log").exists() else ""
                pytest.fail(f"redis-server did not start with the StatefulSet's config: {log[-800:]}")
            time.sleep(0.05)
        yield port, docs
    finally:
        proc.terminate()
        proc.wait(15)


def local_url(url: str, port: int) -> str:
    user, password, _ = m.url_credentials(url)
    return f"redis://{user}:{password}@127.0.0.1:{port}/0"


def test_the_k8s_redis_requires_a_user_and_knows_every_service(tmp_path: Path) -> None:
    import redis

    with k8s_redis(tmp_path) as (port, docs):
        anonymous = redis.Redis(port=port)
        with pytest.raises(redis.AuthenticationError):
            anonymous.ping()
        anonymous.close()
        urls = m.secret_values(m.named(docs, "Secret", "dicestream-redis"))
        users = m.acl_users((m.DEPLOY / "redis" / "users.acl").read_text())
        for key, url in sorted(urls.items()):
            user = key.removesuffix("-url")
            assert user in users, f"{key}: no user {user!r} in users.acl"
            assert m.url_credentials(url)[0] == user, key
            client = redis.Redis.from_url(local_url(url, port))
            assert client.ping(), key  # AUTH with that user's password was accepted
            client.close()
        # The readiness probe's command, as the probe runs it (REDISCLI_AUTH from the Secret).
        _, c = redis_statefulset(docs)
        env = {**os.environ, **m.container_env(docs, c)}
        cli = shutil.which("redis-cli") or pytest.skip("no redis-cli")
        out = subprocess.run(
            [cli, "-p", str(port), "--no-auth-warning", "--user", "admin", "ping"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.stdout.strip() == "PONG", out
        admin = redis.Redis.from_url(local_url(urls["admin-url"], port))
        assert admin.config_get("appendonly") == {"appendonly": "yes"}
        assert admin.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        admin.close()


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_each_service_starts_as_its_deployment_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    import redis

    with k8s_redis(tmp_path) as (port, docs):
        procs: dict[str, tuple[subprocess.Popen[bytes], int, dict[str, Any]]] = {}
        try:
            for name in SERVICES:
                if name == m.GATEWAY:
                    continue  # listens on its own port; its branch's tests cover it
                w = m.workload_for(docs, name)
                c = m.service_container(docs, name)
                env = m.container_env(docs, c, pod_name=f"dicestream-{name}-5d8f7-x{len(procs)}")
                health = free_port()
                env |= {
                    "REDIS_URL": local_url(env["REDIS_URL"], port),
                    "DICESTREAM_HEALTH_ADDR": f"127.0.0.1:{health}",
                    "DICESTREAM_LOG_LEVEL": "warning",
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": str(tmp_path),
                }
                argv = [sys.executable, "-m", "dicestream.cli", *c["args"]]
                with (tmp_path / f"{name}.log").open("wb") as out:
                    procs[name] = (subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT), health, w)
            for name, (proc, health, _) in procs.items():
                deadline = time.monotonic() + 60
                while not (_listening(health) and get(f"http://127.0.0.1:{health}/readyz") == 200):
                    assert proc.poll() is None, (
                        f"{name} exited {proc.returncode}: {(tmp_path / f'{name}.log').read_text()[-1500:]}"
                    )
                    assert time.monotonic() < deadline, f"{name}: not ready in 60 s"
                    time.sleep(0.2)
                assert get(f"http://127.0.0.1:{health}/livez") == 200
            admin = redis.Redis.from_url(
                local_url(m.secret_values(m.named(docs, "Secret", "dicestream-redis"))["admin-url"], port)
            )
            for name in procs:
                assert admin.hlen(f"ds:leases:{{{name}}}:holders") == 64, f"{name}: holds not every shard alone"
            for name, (proc, _, w) in procs.items():
                grace = m.pod_spec(w)["terminationGracePeriodSeconds"]
                started = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                code = proc.wait(grace)
                took = time.monotonic() - started
                assert code == 0, f"{name}: exit {code} on SIGTERM"
                assert took < grace / 2, f"{name}: took {took:.1f} s to stop"
                left = admin.hlen(f"ds:leases:{{{name}}}:holders")
                tail = (tmp_path / f"{name}.log").read_text()[-3000:]
                assert left == 0, f"{name}: {left} leases left after a clean stop ({took:.2f} s): {tail}"
            admin.close()
        finally:
            for proc, _, _ in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(10)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False
