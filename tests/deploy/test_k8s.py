"""The Kubernetes manifests, as `kubectl apply -k` renders them (tests/deploy/manifests.py), for
running at scale: Deployments at any replica count, probes on the health endpoints, resources,
graceful shutdown, disruption budgets, unique consumer names, per-service Redis users, Redis with
auth and persistence, and the Redis Cluster overlay. Validated against the Kubernetes API schemas
(kubernetes-validate, strict, pinned versions)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from services.config import from_env, parse_addr
from services.leases import Leases
from tests.deploy import manifests as m

# Replicas each service gets by default (any count works: shards are leased).
REPLICAS = {"referee": 3, "projector": 2, "turns": 2, "botrunner": 2, "gateway": 2}
FASTSTREAM_GRACEFUL_S = 10  # services/broker.py: graceful_timeout=10.0


def base() -> list[dict[str, Any]]:
    return m.render(m.DEPLOY)


def cluster() -> list[dict[str, Any]]:
    return m.render(m.CLUSTER_OVERLAY)


def every_rendering() -> list[tuple[str, list[dict[str, Any]]]]:
    out = [(str(d.relative_to(m.DEPLOY)), m.render(d)) for d in m.kustomization_dirs()]
    out += [(str(p.relative_to(m.DEPLOY)), m.load_docs(p)) for p in sorted(m.OPTIONAL.glob("*.yaml"))]
    return out


def quantity(text: str | int) -> float:
    """A Kubernetes quantity (250m, 1, 512Mi, 2Gi) as a number (cores or bytes)."""
    units = {"m": 1e-3, "": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text))
    assert match and match.group(2) in units, text
    return float(match.group(1)) * units[match.group(2)]


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) == {"matchLabels"}, selector
    return all(labels.get(k) == v for k, v in selector["matchLabels"].items())


# --- the API's schemas --------------------------------------------------------------------------


@pytest.mark.parametrize("version", m.K8S_VERSIONS)
def test_every_manifest_validates_strictly(version: str) -> None:
    checked = 0
    for where, docs in every_rendering():
        for doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{where}: {doc['kind']}/{doc['metadata']['name']} (k8s {version}): {exc}")
            checked += 1
    assert checked >= 20


def test_the_validator_refuses_what_the_api_refuses() -> None:
    (referee,) = [d for d in base() if d["kind"] == "Deployment" and d["metadata"]["name"] == "dicestream-referee"]
    m.containers(referee)[0]["livenessProbe"]["httpGet"]["paht"] = "/livez"  # typo: an unknown field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(referee, m.K8S_VERSIONS[0], strict=True)


# --- workloads ------------------------------------------------------------------------------------


def test_every_service_is_a_deployment_rolled_one_pod_at_a_time() -> None:
    docs = base()
    assert not [s for s in m.of_kind(docs, "StatefulSet") if any(m.is_dicestream(c) for c in m.containers(s))]
    for name in m.KNOWN_SERVICES:
        w = m.workload_for(docs, name)
        assert w["kind"] == "Deployment", name
        assert w["spec"]["replicas"] == REPLICAS[name], f"{name}: replicas {w['spec']['replicas']}"
        strategy = w["spec"].get("strategy", {})
        assert strategy.get("type") == "RollingUpdate", f"{name}: shards move by leases, no Recreate needed"
        assert strategy["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}, name
        assert selects(w["spec"]["selector"], w["spec"]["template"]["metadata"]["labels"]), name


def test_no_pod_is_given_shards_and_each_has_its_own_consumer_name() -> None:
    for _, docs in every_rendering():
        for d in m.of_kind(docs, "ConfigMap", "Secret"):
            values = m.secret_values(d) if d["kind"] == "Secret" else d.get("data", {})
            assert "DICESTREAM_OWN_SHARDS" not in values, d["metadata"]["name"]
        for w in m.dicestream_workloads(docs):
            for c in m.containers(w):
                env = m.container_env(docs, c)
                assert "DICESTREAM_OWN_SHARDS" not in env, f"{c['name']}: shards are shared by leases"
                (consumer,) = [e for e in c.get("env", []) if e["name"] == "DICESTREAM_CONSUMER"]
                assert consumer.get("valueFrom") == {"fieldRef": {"fieldPath": "metadata.name"}}, c["name"]
                # Two pods of a Deployment have two names, so two consumer names.
                a = from_env(m.dicestream_env(m.container_env(docs, c, pod_name="x-7d9f-abcde")))
                b = from_env(m.dicestream_env(m.container_env(docs, c, pod_name="x-7d9f-fghij")))
                assert a.consumer != b.consumer and a.own_shards == b.own_shards == ()


def test_replicas_never_outnumber_the_shards() -> None:
    docs = base()
    for name in m.KNOWN_SERVICES:
        c = m.service_container(docs, name)
        shards = from_env(m.dicestream_env(m.container_env(docs, c))).shards
        assert shards == 64, "the default installation's shard count"
        assert m.workload_for(docs, name)["spec"]["replicas"] <= shards


def health_port(docs: list[dict[str, Any]], name: str, c: dict[str, Any]) -> tuple[str, int]:
    """(port name, number) a service's /livez and /readyz are served on: DICESTREAM_HEALTH_ADDR, or
    for the gateway its HTTP address (where its branch serves them)."""
    env = m.container_env(docs, c)
    var = "DICESTREAM_HTTP_ADDR" if name == m.GATEWAY else "DICESTREAM_HEALTH_ADDR"
    host, port = parse_addr(var, env[var])
    assert host in ("0.0.0.0", "::"), f"{name}: {var}={env[var]} is not reachable by the kubelet"
    (named,) = [p["name"] for p in c.get("ports", []) if p["containerPort"] == port]
    return named, port


def test_probes_hit_the_health_endpoints_on_a_named_port() -> None:
    docs = base()
    for name in m.KNOWN_SERVICES:
        c = m.service_container(docs, name)
        port_name, _ = health_port(docs, name, c)
        for probe, path in (("startupProbe", "/livez"), ("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
            spec = c.get(probe)
            assert spec, f"{name}: no {probe}"
            assert spec["httpGet"] == {"path": path, "port": port_name}, f"{name}: {probe} {spec.get('httpGet')}"
        # Liveness must not kill a pod over a Redis outage the service waits out, nor during a
        # slow start: it only starts after the startup probe, and tolerates two misses.
        assert c["livenessProbe"].get("failureThreshold", 3) >= 3
        startup = c["startupProbe"]
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 30


def test_scrape_annotations_name_a_port_that_serves_metrics() -> None:
    docs = base()
    for name in m.KNOWN_SERVICES:
        w = m.workload_for(docs, name)
        notes = w["spec"]["template"]["metadata"].get("annotations", {})
        assert notes.get("prometheus.io/scrape") == "true" and notes.get("prometheus.io/path") == "/metrics", name
        _, port = health_port(docs, name, m.service_container(docs, name))
        assert int(notes["prometheus.io/port"]) == port, f"{name}: scrapes {notes['prometheus.io/port']}"


def test_resources_are_set_and_requests_fit_the_limits() -> None:
    for w in m.of_kind(base(), *m.WORKLOAD_KINDS):
        for c in m.containers(w):
            req, lim = c["resources"]["requests"], c["resources"]["limits"]
            for key in ("cpu", "memory"):
                assert quantity(req[key]) <= quantity(lim[key]), f"{c['name']}: {key} request over limit"
            if m.is_dicestream(c):
                # One event loop per process: more than a core buys nothing; RSS is ~74 MiB idle.
                assert quantity(lim["cpu"]) == 1, c["name"]
                assert quantity(req["memory"]) >= 128 * 2**20, c["name"]


def test_termination_grace_outlasts_a_drain() -> None:
    # A stop drains: release_all waits for the in-flight batch (up to its timeout), releases the
    # leases in one tick, then FastStream's subscribers stop (graceful timeout). The pod must not
    # be killed before that, or its shards wait a lease TTL for a new owner.
    release_s = inspect.signature(Leases.release_all).parameters["timeout_s"].default
    docs = base()
    for name in m.KNOWN_SERVICES:
        w = m.workload_for(docs, name)
        c = m.service_container(docs, name)
        grace = m.pod_spec(w)["terminationGracePeriodSeconds"]
        pre = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
        pre_s = int(pre[1]) if pre[:1] == ["sleep"] else 0
        if name == m.GATEWAY:
            assert pre_s >= 5, "gateway: preStop lets the Service stop routing before it stops listening"
            assert grace >= pre_s + 10 + 5, name
        else:
            assert not pre, f"{name}: no preStop needed (no Service routes to it)"
            assert grace >= release_s + FASTSTREAM_GRACEFUL_S + 5, f"{name}: terminationGracePeriodSeconds {grace}"
        ttl_s = from_env(m.dicestream_env(m.container_env(docs, c))).lease_ttl_ms / 1000
        assert grace > ttl_s


def test_pods_prefer_different_nodes() -> None:
    docs = base()
    for name in m.KNOWN_SERVICES:
        w = m.workload_for(docs, name)
        labels = w["spec"]["template"]["metadata"]["labels"]
        (term,) = m.pod_spec(w)["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname", name
        assert selects(term["podAffinityTerm"]["labelSelector"], labels), name
        assert "requiredDuringSchedulingIgnoredDuringExecution" not in m.pod_spec(w)["affinity"]["podAntiAffinity"]


def test_every_deployment_has_one_disruption_budget_of_one_pod() -> None:
    docs = base()
    deployments = m.of_kind(docs, "Deployment")
    covered: dict[str, str] = {}
    for pdb in m.of_kind(docs, "PodDisruptionBudget"):
        hits = [d for d in deployments if selects(pdb["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
        assert len(hits) == 1, f"PDB {pdb['metadata']['name']} selects {len(hits)} Deployments"
        (dep,) = hits
        assert dep["metadata"]["name"] not in covered, f"two PDBs for {dep['metadata']['name']}"
        covered[dep["metadata"]["name"]] = pdb["metadata"]["name"]
        # maxUnavailable 1: one graceful stop at a time at any replica count (minAvailable: 1 would
        # block every drain of a 1-replica Deployment and let 2 of 3 referees go at once).
        assert pdb["spec"].get("maxUnavailable") == 1 and "minAvailable" not in pdb["spec"], pdb["metadata"]["name"]
        assert pdb["spec"].get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
    for name in m.KNOWN_SERVICES:
        assert m.workload_for(docs, name)["metadata"]["name"] in covered, f"{name}: no PodDisruptionBudget"


PUBLIC_PATHS = ("/v1", "/openapi.json", "/", "/games", "/open", "/fairness", "/static", "/favicon.ico")


def test_the_gateway_is_behind_a_service_and_the_optional_ingress() -> None:
    docs = base()
    w = m.workload_for(docs, m.GATEWAY)
    (svc,) = [s for s in m.of_kind(docs, "Service") if s["metadata"]["name"] == "dicestream-gateway"]
    assert selects({"matchLabels": svc["spec"]["selector"]}, w["spec"]["template"]["metadata"]["labels"])
    port_names = {p["name"] for p in m.service_container(docs, m.GATEWAY)["ports"]}
    (port,) = svc["spec"]["ports"]
    assert port["targetPort"] in port_names
    (ingress,) = m.load_docs(m.OPTIONAL / "gateway-ingress.yaml")
    paths = [p for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    for p in paths:
        assert p["backend"]["service"] == {"name": "dicestream-gateway", "port": {"name": port["name"]}}
        # The API and the web page; never /livez, /readyz or /metrics (which stay inside).
        assert p["path"] in PUBLIC_PATHS, f"the ingress must not expose {p['path']} (/metrics stays inside)"
        assert p["path"] != "/" or p["pathType"] == "Exact", "/ as a prefix would expose /metrics"


# --- Redis: users, auth, persistence ------------------------------------------------------------


def acl_text(docs: list[dict[str, Any]]) -> str:
    return m.secret_values(m.named(docs, "Secret", "redis-acl"))["users.acl"]


def test_each_service_connects_as_its_own_acl_user() -> None:
    docs = base()
    users = m.acl_users((m.DEPLOY / "redis" / "users.acl").read_text())
    hosts = set()
    for name in m.KNOWN_SERVICES:
        c = m.service_container(docs, name)
        (url_env,) = [e for e in c["env"] if e["name"] == "REDIS_URL"]
        ref = url_env["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "dicestream-redis", "key": f"{name}-url"}, f"{name}: REDIS_URL from {ref}"
        user, password, host = m.url_credentials(m.container_env(docs, c)["REDIS_URL"])
        assert user == name, f"{name} connects as {user!r}"
        hosts.add(host)
        assert name in users and m.acl_accepts(users[name], password), f"{name}: users.acl does not accept its URL"
    svc = m.named(docs, "Service", "redis")
    assert hosts == {f"redis.{svc['metadata']['namespace']}.svc.cluster.local"}, hosts
    admin_user, admin_password, _ = m.url_credentials(
        m.secret_values(m.named(docs, "Secret", "dicestream-redis"))["admin-url"]
    )
    assert admin_user == "admin" and m.acl_accepts(users["admin"], admin_password)


def redis_statefulset(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    (sts,) = [w for w in m.of_kind(docs, "StatefulSet") if w["metadata"]["name"] == "redis"]
    (c,) = m.containers(sts)
    return sts, c


def mounted_files(docs: list[dict[str, Any]], sts: dict[str, Any], c: dict[str, Any]) -> dict[str, str]:
    """Path in the container -> text, for files the pod mounts from ConfigMaps and Secrets."""
    volumes = {v["name"]: v for v in m.pod_spec(sts)["volumes"]}
    out = {}
    for mount in c["volumeMounts"]:
        v = volumes.get(mount["name"])
        if v is None:
            continue
        for src in [*v.get("projected", {}).get("sources", []), v]:
            for kind, field in (("configMap", "ConfigMap"), ("secret", "Secret")):
                if kind in src:
                    ref = src[kind]
                    doc = m.named(docs, field, ref.get("name") or ref.get("secretName"))
                    values = doc.get("data", {}) if field == "ConfigMap" else m.secret_values(doc)
                    for item in ref.get("items") or [{"key": k, "path": k} for k in values]:
                        out[f"{mount['mountPath']}/{item['path']}"] = values[item["key"]]
    return out


def test_redis_enforces_the_acl_file_from_a_secret_and_persists() -> None:
    docs = base()
    sts, c = redis_statefulset(docs)
    files = mounted_files(docs, sts, c)
    conf_path = c["args"][1]
    conf = m.effective_redis_config(c["args"], files[conf_path])
    (aclfile,) = conf["aclfile"]
    assert files[aclfile] == (m.DEPLOY / "redis" / "users.acl").read_text(), "users.acl is not what Redis loads"
    # The ACL file reaches the pod from a Secret, never a ConfigMap (it holds every password).
    (acl_mount,) = [mt for mt in c["volumeMounts"] if aclfile.startswith(mt["mountPath"] + "/")]
    (vol,) = [v for v in m.pod_spec(sts)["volumes"] if v["name"] == acl_mount["name"]]
    sources = vol.get("projected", {}).get("sources", [vol])
    assert [s for s in sources if "secret" in s and s["secret"]["name"] == "redis-acl"], vol
    assert acl_mount.get("readOnly") is True
    users = m.acl_users(files[aclfile])
    assert "off" in users["default"] and "nopass" not in users["default"], "the default user must be off"
    assert conf["appendonly"] == ["yes"] and conf["appendfsync"] == ["everysec"]
    assert conf["maxmemory-policy"] == ["noeviction"]
    # /data is the volume claim (AOF and RDB survive the pod).
    (data,) = [mt for mt in c["volumeMounts"] if mt["mountPath"] == conf["dir"][0]]
    assert data["name"] in {t["metadata"]["name"] for t in sts["spec"]["volumeClaimTemplates"]}
    # The probe's password is the admin user's.
    env = m.container_env(docs, c)
    assert m.acl_accepts(users["admin"], env["REDISCLI_AUTH"])
    assert "--user admin" in " ".join(c["readinessProbe"]["exec"]["command"])


def test_redis_is_never_open_without_auth() -> None:
    # `bind *` with `protected-mode no` is only acceptable when every connection must log in.
    docs = base()
    sts, c = redis_statefulset(docs)
    files = mounted_files(docs, sts, c)
    conf = m.effective_redis_config(c["args"], files[c["args"][1]])
    open_bind = any(a in ("*", "0.0.0.0", "-::*", "::") for a in conf.get("bind", ["*"]))
    unprotected = conf.get("protected-mode", ["yes"]) == ["no"]
    authenticated = bool(conf.get("aclfile") or conf.get("requirepass"))
    assert authenticated, "Redis has no aclfile or requirepass"
    if open_bind and unprotected and conf.get("aclfile"):
        users = m.acl_users(files[conf["aclfile"][0]])
        assert "off" in users["default"] or not m.acl_accepts(users["default"], ""), "default user open"


# --- the Redis Cluster overlay ---------------------------------------------------------------------


def test_the_cluster_overlay_points_every_service_at_the_cluster() -> None:
    plain, docs = base(), cluster()
    assert not m.of_kind(docs, "StatefulSet"), "the overlay brings no Redis of its own"
    assert not [d for d in docs if d["metadata"]["name"].startswith("redis")]
    hosts = set()
    for name in m.KNOWN_SERVICES:
        c = m.service_container(docs, name)
        env = m.container_env(docs, c)
        settings = from_env(m.dicestream_env(env))
        assert env["DICESTREAM_REDIS_CLUSTER"] == "1", name
        user, password, host = m.url_credentials(env["REDIS_URL"])
        assert user == name and password, name
        assert env["REDIS_URL"].endswith("/0"), "a cluster has database 0 only"
        hosts.add(host)
        assert settings.shards == 64
    assert len(hosts) == 1 and hosts != {"redis.dicestream.svc.cluster.local"}, hosts
    # Everything but the patched ConfigMap and Secret is the same as the default installation.
    same = {(d["kind"], d["metadata"]["name"]) for d in plain} - {
        ("ConfigMap", "dicestream-env"),
        ("Secret", "dicestream-redis"),
    }
    for kind, name in same:
        if not name.startswith("redis"):
            assert m.named(docs, kind, name) == m.named(plain, kind, name), f"{kind}/{name} differs in the overlay"


def test_the_readme_documents_the_cluster_option_and_what_to_provide() -> None:
    text = (m.DEPLOY / "README.md").read_text()
    for needle in (
        "overlays/redis-cluster",
        "DICESTREAM_REDIS_CLUSTER=1",
        "3 masters",
        "every node",
        "cluster-announce",
    ):
        assert needle in text, f"deploy/README.md does not say {needle!r}"


def test_manifests_mention_no_file_that_does_not_exist() -> None:
    # Comments point operators at files: they must exist.
    for path in sorted(m.DEPLOY.rglob("*.yaml")):
        for ref in re.findall(r"deploy/[\w./-]+\.(?:yaml|md|conf|acl|sh)", path.read_text()):
            assert (m.ROOT / ref).exists(), f"{path}: mentions {ref}"
    assert Path(m.ROOT / "deploy" / "measure-rss.sh").stat().st_mode & 0o111
