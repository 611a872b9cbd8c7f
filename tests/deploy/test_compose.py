"""docker-compose.yml for running at scale on one machine: valid against the compose-spec schema,
a healthcheck on every long-running service (and each one run here against a stand-in server),
start-up ordered on health, Redis with the ACL file and one user per service, the gateway on
loopback only."""

from __future__ import annotations

import http.server
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.config import from_env, parse_addr
from tests.deploy import manifests as m
from tests.deploy.test_deploy_static import compose, compose_command, compose_env, compose_redis_config

COMPOSE = m.ROOT / "docker-compose.yml"


def long_running() -> dict[str, dict[str, Any]]:
    return {n: s for n, s in compose()["services"].items() if s.get("restart", "no") != "no"}


def check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compose_is_valid_against_the_compose_spec(tmp_path: Path) -> None:
    ok = check_jsonschema(COMPOSE)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # ... and the validator does refuse a broken file (a misspelt healthcheck key).
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("start_period:", "start_perod:", 1))
    bad = check_jsonschema(broken)
    assert bad.returncode != 0 and "start_perod" in bad.stdout + bad.stderr


def test_every_long_running_service_has_a_healthcheck_and_a_grace_period() -> None:
    services = long_running()
    assert {"redis", "referee", "projector", "turns", "botrunner"} <= set(services)
    for name, svc in services.items():
        check = svc.get("healthcheck") or {}
        assert check.get("test") and not check.get("disable"), f"{name}: no healthcheck"
        assert check.get("start_period"), f"{name}: no start_period (a slow start is not unhealthy)"
        if name != "redis":
            grace = int(str(svc.get("stop_grace_period", "10s")).removesuffix("s"))
            assert grace >= 25 + 5, f"{name}: stop_grace_period {grace}s is shorter than a drain"


def livez_probe(name: str, svc: dict[str, Any]) -> tuple[list[str], int]:
    """The healthcheck's command and the port it asks, which must be the service's health port."""
    test = svc["healthcheck"]["test"]
    assert test[0] == "CMD", f"{name}: exec form, no shell needed: {test}"
    argv = [str(a) for a in test[1:]]
    assert argv[:2] == ["python", "-c"], f"{name}: the image has Python and no curl: {argv}"
    match = re.search(r"http://127\.0\.0\.1:(\d+)/livez", argv[2])
    assert match, f"{name}: the healthcheck must GET /livez: {argv[2]}"
    env = compose_env(svc)
    var = "DICESTREAM_HTTP_ADDR" if compose_command(svc)[1] == m.GATEWAY else "DICESTREAM_HEALTH_ADDR"
    host, port = parse_addr(var, env[var])
    assert int(match.group(1)) == port and host in ("0.0.0.0", "127.0.0.1"), f"{name}: {var}={env[var]}"
    return argv, port


class _Livez(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/livez" else 404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def livez_server() -> Iterator[tuple[int, type[_Livez]]]:
    handler = type("Handler", (_Livez,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler
    finally:
        server.shutdown()
        server.server_close()


def test_the_healthchecks_pass_on_200_and_fail_on_503(livez_server: tuple[int, type[_Livez]]) -> None:
    # Each dicestream healthcheck, run as the container would run it, against a stand-in /livez on
    # a free port: exit 0 while it answers 200, non-zero on 503 (a loop down) and when nothing listens.
    port, handler = livez_server
    for name, svc in long_running().items():
        if name == "redis":
            continue
        argv, own = livez_probe(name, svc)
        code = argv[2].replace(f"127.0.0.1:{own}", f"127.0.0.1:{port}")
        for status, ok in ((200, True), (503, False)):
            handler.status = status
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
            assert (run.returncode == 0) == ok, f"{name}: healthcheck exit {run.returncode} on {status}"
        closed = subprocess.run(
            [sys.executable, "-c", argv[2].replace(f":{own}/", ":9/")], capture_output=True, timeout=30
        )
        assert closed.returncode != 0


def test_start_up_waits_on_health() -> None:
    services = compose()["services"]
    for name, svc in services.items():
        if name == "redis":
            continue
        deps = svc.get("depends_on")
        assert isinstance(deps, dict) and deps, f"{name}: depends_on with conditions"
        for dep, cond in deps.items():
            assert cond.get("condition") == "service_healthy", f"{name} -> {dep}: {cond}"
            assert services[dep].get("healthcheck", {}).get("test"), f"{name} waits on {dep}, which has no healthcheck"


def test_redis_loads_the_acl_file_and_each_service_has_its_own_user() -> None:
    svc = compose()["services"]["redis"]
    conf = compose_redis_config()
    (aclfile,) = conf["aclfile"]
    mounts = {}
    for v in svc["volumes"]:
        src, dst, *mode = m.interpolate(str(v)).split(":")
        mounts[dst] = (src, mode)
    src, mode = mounts[aclfile]
    assert (m.ROOT / src).resolve() == (m.DEPLOY / "redis" / "users.acl").resolve() and mode == ["ro"]
    assert "${DICESTREAM_REDIS_ACL" in str(svc["volumes"]), "an operator's own ACL file must be a setting away"
    users = m.acl_users((m.ROOT / src).read_text())
    assert "off" in users["default"]
    assert m.acl_accepts(users["admin"], compose_env(svc)["REDISCLI_AUTH"]), "the healthcheck's password"
    assert "--user admin" in " ".join(svc["healthcheck"]["test"])
    for name, s in compose()["services"].items():
        if name == "redis":
            continue
        user, password, _ = m.url_credentials(compose_env(s)["REDIS_URL"])
        served = compose_command(s)[1] if compose_command(s)[:1] == ["serve"] else None
        assert user == (served or "admin"), f"{name} connects as {user!r}"
        assert m.acl_accepts(users[user], password), f"{name}: users.acl refuses {user}"


def test_published_ports_are_loopback_only() -> None:
    for name, svc in compose()["services"].items():
        for port in svc.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name}: {port} is published on every interface"
    gateway = [s for s in compose()["services"].values() if compose_command(s)[:2] == ["serve", m.GATEWAY]]
    (gw,) = gateway
    assert gw["ports"] == ["127.0.0.1:8080:8080"]


def test_every_interpolated_setting_is_documented() -> None:
    names = set(m.INTERPOLATION.findall(COMPOSE.read_text()))
    readme = (m.DEPLOY / "README.md").read_text()
    for var, _ in names:
        assert var in readme, f"docker-compose.yml reads ${{{var}}}: say what it is in deploy/README.md"


def test_compose_settings_match_kubernetes() -> None:
    # The same installation either way: shard count, prefix, lease TTL.
    docs = m.render(m.DEPLOY)
    k8s = from_env(m.dicestream_env(m.container_env(docs, m.service_container(docs, "referee"))))
    (referee,) = [s for s in compose()["services"].values() if compose_command(s) == ["serve", "referee"]]
    local = from_env(compose_env(referee))
    assert (local.shards, local.prefix, local.lease_ttl_ms) == (k8s.shards, k8s.prefix, k8s.lease_ttl_ms)
    assert (
        yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["image"]
        == m.named(docs, "StatefulSet", "redis")["spec"]["template"]["spec"]["containers"][0]["image"]
    )
