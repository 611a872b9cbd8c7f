"""What the deployment files say, loaded the way their tools load them (no container engine, no
kubectl or kustomize on these machines).

`render(path)` builds a kustomization as `kubectl apply -k path` would, for the features this
repository uses: resources (files and kustomization directories), `namespace`, ConfigMap and
Secret generators (files, literals), `images`, and strategic-merge `patches` that only merge maps.
Anything else in a kustomization.yaml fails the render instead of being silently ignored, and a
file outside the kustomization's directory fails too (kustomize's default load restriction).
Generated names are not hash-suffixed (kustomize rewrites every reference along with the name).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from dicestream.runtime import SERVICES
from services.config import ENV_VARS

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
CLUSTER_OVERLAY = DEPLOY / "overlays" / "redis-cluster"
OPTIONAL = DEPLOY / "optional"
# The Kubernetes API versions the manifests are validated against (strict): the oldest supported
# and a recent one. Both ship with kubernetes-validate.
K8S_VERSIONS = ("1.30.0", "1.34.0")

GATEWAY = "gateway"
KNOWN_SERVICES: tuple[str, ...] = tuple(SERVICES)
KNOWN_ENV: set[str] = set(ENV_VARS)

# Variables of the Redis containers (not dicestream's): redis-cli's password for the probes.
REDIS_CONTAINER_ENV = {"REDISCLI_AUTH"}

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
KUSTOMIZATION_KEYS = {
    "apiVersion",
    "kind",
    "namespace",
    "resources",
    "configMapGenerator",
    "secretGenerator",
    "images",
    "patches",
}


# --- kustomize, the subset used here ---------------------------------------------------------


def load_docs(path: Path) -> list[dict[str, Any]]:
    docs = []
    for doc in yaml.safe_load_all(path.read_text()):
        if doc is not None:
            assert isinstance(doc, dict) and {"apiVersion", "kind", "metadata"} <= doc.keys(), path
            docs.append(doc)
    return docs


def _generate(kind: str, gen: dict[str, Any], root: Path) -> dict[str, Any]:
    assert set(gen) <= {"name", "files", "literals"}, f"{root}: unsupported generator keys {sorted(gen)}"
    data: dict[str, str] = {}
    for item in gen.get("files", []):
        key, _, rel = item.rpartition("=")
        path = (root / rel).resolve()
        assert root.resolve() in path.parents, f"{root}: generator file {rel} is outside the kustomization"
        data[key or path.name] = path.read_text()
    for item in gen.get("literals", []):
        key, _, value = item.partition("=")
        data[key] = value
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": {"name": gen["name"]}}
    if kind == "Secret":
        doc["type"] = "Opaque"
        doc["data"] = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    else:
        doc["data"] = data
    return doc


def _merge(base: dict[str, Any], patch: dict[str, Any], where: str) -> None:
    for key, value in patch.items():
        assert not isinstance(value, list), f"{where}: list patches are not supported here ({key})"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value, f"{where}.{key}")
        else:
            base[key] = copy.deepcopy(value)


def render(path: Path) -> list[dict[str, Any]]:
    """The objects `kubectl apply -k path` creates (see the module's docstring)."""
    kust = yaml.safe_load((path / "kustomization.yaml").read_text())
    unknown = set(kust) - KUSTOMIZATION_KEYS
    assert not unknown, f"{path}/kustomization.yaml: {sorted(unknown)} not supported by tests/deploy/manifests.py"
    assert kust.get("kind") == "Kustomization"
    docs: list[dict[str, Any]] = []
    for rel in kust.get("resources", []):
        target = (path / rel).resolve()
        if target.is_dir():
            assert (target / "kustomization.yaml").is_file(), f"{path}: {rel} has no kustomization.yaml"
            docs += render(target)
        else:
            assert path.resolve() in target.parents, f"{path}: resource file {rel} is outside the kustomization"
            docs += load_docs(target)
    for gen in kust.get("configMapGenerator", []):
        docs.append(_generate("ConfigMap", gen, path))
    for gen in kust.get("secretGenerator", []):
        docs.append(_generate("Secret", gen, path))
    for item in kust.get("patches", []):
        assert set(item) == {"path"}, f"{path}: only `patches: - path:` is supported"
        target_file = (path / item["path"]).resolve()
        assert path.resolve() in target_file.parents, f"{path}: patch {item['path']} is outside the kustomization"
        for patch in load_docs(target_file):
            found = [
                d for d in docs if d["kind"] == patch["kind"] and d["metadata"]["name"] == patch["metadata"]["name"]
            ]
            assert len(found) == 1, f"{path}: patch {patch['kind']}/{patch['metadata']['name']} matches {len(found)}"
            _merge(found[0], {k: v for k, v in patch.items() if k != "metadata"}, f"{item['path']}")
    if "namespace" in kust:
        for d in docs:
            if d["kind"] not in CLUSTER_SCOPED:
                d["metadata"]["namespace"] = kust["namespace"]
    for image in kust.get("images", []):
        for d in docs:
            for c in containers(d) if d["kind"] in WORKLOAD_KINDS else []:
                name, _, tag = c["image"].partition(":")
                if name == image["name"]:
                    c["image"] = f"{image.get('newName', name)}:{image.get('newTag', tag or 'latest')}"
    return docs


def kustomization_dirs() -> list[Path]:
    return sorted(p.parent for p in DEPLOY.rglob("kustomization.yaml"))


# --- objects ---------------------------------------------------------------------------------


def of_kind(docs: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in kinds]


def named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod_spec(workload)
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def is_dicestream(c: dict[str, Any]) -> bool:
    return str(c["image"]).split(":")[0].rsplit("/", 1)[-1] == "dicestream"


def dicestream_workloads(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [w for w in of_kind(docs, *WORKLOAD_KINDS) if any(is_dicestream(c) for c in containers(w))]


def runs_service(c: dict[str, Any]) -> str | None:
    """The service a container runs: `serve X` in its args (the image's ENTRYPOINT is `dicestream`)."""
    words = [str(w) for w in c.get("command", []) + c.get("args", [])]
    if c.get("command") is None and words[:1] == ["serve"] and len(words) > 1:
        return words[1]
    return None


def workload_for(docs: list[dict[str, Any]], service: str) -> dict[str, Any]:
    found = [w for w in dicestream_workloads(docs) if any(runs_service(c) == service for c in containers(w))]
    assert len(found) == 1, f"expected one workload running `serve {service}`, found {len(found)}"
    return found[0]


def service_container(docs: list[dict[str, Any]], service: str) -> dict[str, Any]:
    (c,) = [c for c in containers(workload_for(docs, service)) if runs_service(c) == service]
    return c


def secret_values(doc: dict[str, Any]) -> dict[str, str]:
    out = {k: base64.b64decode(v).decode() for k, v in (doc.get("data") or {}).items()}
    out.update({k: str(v) for k, v in (doc.get("stringData") or {}).items()})
    return out


def container_env(docs: list[dict[str, Any]], c: dict[str, Any], pod_name: str = "<pod-name>") -> dict[str, str]:
    """The environment a container gets: its envFrom ConfigMaps/Secrets, then its env list, with
    secretKeyRef / configMapKeyRef resolved and metadata.name standing for `pod_name`."""
    maps = {("configMap", d["metadata"]["name"]): d.get("data", {}) for d in of_kind(docs, "ConfigMap")}
    maps |= {("secret", d["metadata"]["name"]): secret_values(d) for d in of_kind(docs, "Secret")}
    env: dict[str, str] = {}
    for src in c.get("envFrom", []):
        ((ref, target),) = ((k, v) for k, v in src.items() if k in ("configMapRef", "secretRef"))
        key = (ref.removesuffix("Ref"), target["name"])
        assert key in maps, f"{c['name']}: {ref} {target['name']} does not exist"
        env.update({k: str(v) for k, v in maps[key].items()})
    for item in c.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
            continue
        source = item["valueFrom"]
        if "fieldRef" in source:
            assert source["fieldRef"]["fieldPath"] == "metadata.name", item
            env[item["name"]] = pod_name
        else:
            ((ref, sel),) = ((k, v) for k, v in source.items() if k in ("secretKeyRef", "configMapKeyRef"))
            key = (ref.removesuffix("KeyRef"), sel["name"])
            assert key in maps and sel["key"] in maps[key], f"{c['name']}: {item['name']} from missing {key} {sel}"
            env[item["name"]] = str(maps[key][sel["key"]])
    return env


def dicestream_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in ENV_VARS}


# --- Redis: configuration, users ---------------------------------------------------------------


def conf_directives(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, *args = shlex.split(line)
            out[key.lower()] = args
    return out


def effective_redis_config(argv: list[str], conf_text: str) -> dict[str, list[str]]:
    """redis-server's settings from `redis-server [CONF] [--name value ...]`: the file, then the
    command line (later wins)."""
    assert argv[:1] == ["redis-server"], argv
    rest = argv[1:]
    conf: dict[str, list[str]] = {}
    if rest and not rest[0].startswith("--"):
        conf = conf_directives(conf_text)
        rest = rest[1:]
    name: str | None = None
    for word in rest:
        if word.startswith("--"):
            name = word[2:].lower()
            conf[name] = []
        else:
            assert name is not None, argv
            conf[name].append(word)
    return conf


def acl_users(text: str) -> dict[str, list[str]]:
    """users.acl: user name -> its rules."""
    out = {}
    for line in text.splitlines():
        if line.strip():
            words = line.split()
            assert words[0] == "user", f"users.acl: not a user line: {line!r}"
            out[words[1]] = words[2:]
    return out


def acl_accepts(rules: list[str], password: str) -> bool:
    """Whether a user with these rules is on and logs in with `password` (`>plain` or `#sha256`)."""
    if "on" not in rules or "off" in rules[rules.index("on") :]:
        return False
    if "nopass" in rules:
        return True
    digest = hashlib.sha256(password.encode()).hexdigest()
    return any(r == f">{password}" or r.lower() == f"#{digest}" for r in rules)


def url_credentials(url: str) -> tuple[str, str, str]:
    """(user, password, host) of redis://user:password@host:port/db."""
    parts = urlsplit(url)
    assert parts.scheme in ("redis", "rediss"), url
    return unquote(parts.username or ""), unquote(parts.password or ""), parts.hostname or ""


INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


def interpolate(text: str, env: dict[str, str] | None = None) -> str:
    """Compose's ${VAR} / ${VAR:-default} with the defaults (as with an empty .env)."""
    env = env or {}
    parts = text.split("$$")  # `$$` is a literal `$`
    return "$".join(INTERPOLATION.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), p) for p in parts)
