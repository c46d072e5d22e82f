"""deploy/observability: scrape config, alert rules and the Grafana dashboard.

Every PromQL expression (each alert, each dashboard target) parses with
promql-parser; every metric they use is exported by a real gateway or game
service — read from its /metrics after a short Yatzy game through the
platform; the labels they group and match
on exist on those metrics; route values they match exist in the scrape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import kubernetes_validate
import promql_parser
import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

import gateway.metrics
import services.kit.metrics
from tests.deploy import DEPLOY, by_kind, kustomize
from tests.integration.http_client import register
from tools.stack import Stack

OBSERVABILITY = DEPLOY / "observability"
DASHBOARD = OBSERVABILITY / "grafana" / "rodada-overview.json"


# Labels Prometheus attaches to every target (PodMonitors' podTargetLabels,
# or prometheus-scrape.yaml's relabelling), usable on any metric.
TARGET_LABELS = {
    "namespace", "pod", "container", "job", "instance", "endpoint",
    "app_kubernetes_io_name", "app_kubernetes_io_component", "app_kubernetes_io_part_of",
}  # fmt: skip
# The client library's process collector (same on every process), no labels.
PROCESS_METRICS = ("process_start_time_seconds", "process_cpu_seconds_total", "process_resident_memory_bytes")

# Grafana variables, replaced by sample values before parsing a target.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$namespace": "rodada", "$game": ".*"}

SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
    "summary": ("", "_count", "_sum", "_created"),
}

REQUIRED_ALERTS = {
    "RodadaGrpcErrorRatioHigh",  # high error ratio (gRPC)
    "RodadaHttpErrorRatioHigh",  # high error ratio (HTTP)
    "RodadaActionLatencyHigh",  # p99 action latency
    "RodadaRedisUnreachable",
    "RodadaMatchmakingWaitHigh",
    "RodadaTimersFallingBehind",
    "RodadaPodRestarting",
}
REQUIRED_DASHBOARD_METRICS = {
    "rodada_active_matches", "rodada_actions_total", "rodada_grpc_request_seconds",
    "rodada_http_request_seconds", "rodada_grpc_requests_total", "rodada_http_requests_total",
    "rodada_matchmaking_queue_length", "rodada_matchmaking_wait_seconds", "rodada_websocket_connections",
    "rodada_timers_fired_total", "rodada_forfeits_total", "rodada_redis_seconds",
}  # fmt: skip


# -- the expressions ------------------------------------------------------------------


def observability() -> list[dict[str, Any]]:
    return kustomize(OBSERVABILITY)


def alert_rules() -> list[dict[str, Any]]:
    (rule,) = by_kind(observability(), "PrometheusRule").values()
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_expressions() -> list[tuple[str, str]]:
    """(where, PromQL) for every dashboard target, Grafana variables filled in."""
    found = []
    for panel in panels(dashboard()):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            found.append((f"panel {panel['title']!r} target {target['refId']}", expr))
    return found


def variable_metrics() -> list[str]:
    """Metric names in the dashboard variables' label_values(metric{...}, label)."""
    names = []
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
            match = re.match(r"label_values\((\w+)", query)
            assert match, query
            names.append(match.group(1))
    return names


def all_expressions() -> list[tuple[str, str]]:
    return [(f"alert {r['alert']}", r["expr"]) for r in alert_rules()] + dashboard_expressions()


@dataclass
class Selector:
    name: str
    matchers: list[tuple[str, str, str]]  # (label, op, value)


@dataclass
class Usage:
    selectors: list[Selector]
    groupings: list[tuple[list[str], set[str]]]  # (by-labels, metric names beneath)


def usage(expr: str) -> Usage:
    ast = promql_parser.parse(expr)
    found = Usage([], [])

    def selectors_under(node: Any) -> list[Selector]:
        collected: list[Selector] = []

        def visit(inner: Any) -> bool:
            if isinstance(inner, promql_parser.VectorSelector):
                matchers = [(m.name, str(m.op).rsplit(".", 1)[-1], m.value) for m in inner.matchers.matchers]
                name = inner.name or next(v for label, _, v in matchers if label == "__name__")
                collected.append(Selector(name, [m for m in matchers if m[0] != "__name__"]))
            return True

        promql_parser.walk(node, visit)
        return collected

    def visit(node: Any) -> bool:
        modifier = getattr(node, "modifier", None)
        grouping = isinstance(node, promql_parser.AggregateExpr) and modifier is not None
        if grouping and modifier.type == promql_parser.AggModifierType.By:
            names = {s.name for s in selectors_under(node.expr)}
            found.groupings.append((list(modifier.labels), names))
        return True

    promql_parser.walk(ast, visit)
    found.selectors = selectors_under(ast)
    return found


@pytest.mark.parametrize("where,expr", [pytest.param(w, e, id=w) for w, e in all_expressions()])
def test_every_expression_parses(where: str, expr: str) -> None:
    assert "$" not in expr, f"{where}: unknown Grafana variable"
    promql_parser.parse(expr)


def test_required_alerts_and_their_shape() -> None:
    rules = alert_rules()
    names = [r["alert"] for r in rules]
    assert set(names) >= REQUIRED_ALERTS, REQUIRED_ALERTS - set(names)
    assert len(names) == len(set(names))
    for rule in rules:
        assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        assert rule["annotations"]["runbook"].startswith("deploy/README.md#")
        anchor = rule["annotations"]["runbook"].split("#", 1)[1]
        readme = (DEPLOY / "README.md").read_text()
        assert f'<a id="{anchor}"></a>' in readme, f"{rule['alert']}: no runbook section #{anchor}"
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"])


def test_dashboard_covers_the_operations_view() -> None:
    board = dashboard()
    used = {base_name(s.name) for _, expr in dashboard_expressions() for s in usage(expr).selectors}
    assert used >= REQUIRED_DASHBOARD_METRICS, REQUIRED_DASHBOARD_METRICS - used
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in board["templating"]["list"]}
    assert {"datasource", "namespace", "game"} <= variables
    for panel in panels(board):
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}" and panel["targets"]
            grid = panel["gridPos"]
            assert set(grid) >= {"h", "w", "x", "y"} and grid["x"] + grid["w"] <= 24


# -- the Kubernetes side ----------------------------------------------------------


def test_scrape_config_resources() -> None:
    resources = observability()
    for resource in resources:
        if resource["apiVersion"] == "v1":
            kubernetes_validate.validate(resource, kubernetes_validate.utils.latest_version(), strict=True)
    (configmap,) = by_kind(resources, "ConfigMap").values()
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"][DASHBOARD.name]) == dashboard()

    # The PodMonitors select the gateway and every game pod of the real
    # manifests, on a port those containers declare.
    deployments = by_kind(kustomize(DEPLOY / "k8s" / "overlays" / "prod"), "Deployment")
    monitors = by_kind(resources, "PodMonitor").values()
    for name, deployment in deployments.items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        ports = {p["name"] for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]}
        (monitor,) = [
            m
            for m in monitors
            if all(labels.get(k) == v for k, v in m["spec"]["selector"]["matchLabels"].items())
        ]
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        assert endpoint["port"] in ports and endpoint["path"] == "/metrics", name
        pod_labels = {
            label.replace(".", "_").replace("/", "_").replace("-", "_")
            for label in monitor["spec"]["podTargetLabels"]
        }
        assert pod_labels <= TARGET_LABELS

    (rule,) = by_kind(resources, "PrometheusRule").values()
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    for group in rule["spec"]["groups"]:
        assert group["name"] and group["rules"]

    plain = yaml.safe_load((OBSERVABILITY / "prometheus-scrape.yaml").read_text())
    (job,) = plain["scrape_configs"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    relabels = job["relabel_configs"]
    for relabel in relabels:
        re.compile(relabel.get("regex", "(.*)"))
    kept = {tuple(r["source_labels"]) for r in relabels if r.get("action") == "keep"}
    assert ("__meta_kubernetes_pod_annotation_prometheus_io_scrape",) in kept


# -- the metrics, from real processes ---------------------------------------------


@dataclass
class Exported:
    types: dict[str, str]  # family name as in "# TYPE <name> <type>" → type
    samples: dict[str, list[dict[str, str]]]  # sample name → label sets seen

    def sample_names(self) -> set[str]:
        names = set()
        for family, kind in self.types.items():
            base = family.removesuffix("_total") if kind == "counter" else family
            names |= {base + suffix for suffix in SUFFIXES.get(kind, ("",))}
            names.add(family)
        return names


def scrape(url: str) -> Exported:
    text = httpx.get(url, timeout=10).text
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    samples: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(dict(sample.labels))
    return Exported(types, samples)


@pytest.fixture(scope="module")
async def exported(stack: Stack) -> dict[str, Exported]:
    """The gateway's and the Yatzy service's /metrics after a solo Yatzy game
    played through the HTTP API (the gateway calls the game over gRPC)."""
    stack.service("yatzy")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        assert (await http.get("/healthz")).status_code == 200
        player = await register(http, "metrics")
        table = await player.create_table("yatzy", 1, {"card": "CLASSIC"})
        snap = await player.start(table["id"])
        while snap["status"] == "ACTIVE":
            snap = await player.act(table["id"], snap["version"], {"roll": {}})
            best = max(snap["view"]["preview"], key=lambda p: p["points"])
            snap = await player.act(table["id"], snap["version"], {"score": {"box": best["box"]}})
        await http.get("/metrics")  # so the next scrape counts a /metrics request
    return {"gateway": scrape(stack.gateway() + "/metrics"), "yatzy": scrape(stack.metrics_url("yatzy"))}


def base_name(sample_name: str) -> str:
    """The metric a sample name belongs to (rodada_x_seconds_bucket → rodada_x_seconds)."""
    for suffix in ("_bucket", "_count", "_sum", "_created"):
        if sample_name.endswith(suffix):
            return sample_name.removesuffix(suffix)
    return sample_name


def declared_labels() -> dict[str, tuple[str, ...]]:
    """Label names of every metric the code declares (prometheus_client objects)."""
    labels: dict[str, tuple[str, ...]] = {name: () for name in PROCESS_METRICS}
    for module in (services.kit.metrics, gateway.metrics):
        for value in vars(module).values():
            if isinstance(value, MetricWrapperBase):
                name = value._name + ("_total" if value._type == "counter" else "")
                labels[name] = tuple(value._labelnames)
    return labels


async def test_every_metric_used_is_exported_by_a_running_process(exported: dict[str, Exported]) -> None:
    names_exported = set().union(*(e.sample_names() for e in exported.values()))
    used = [(where, [s.name for s in usage(expr).selectors]) for where, expr in all_expressions()]
    used.append(("dashboard variables", variable_metrics()))
    missing = []
    for where, names in used:
        for name in names:
            if name not in names_exported:
                missing.append(f"{where}: {name}")
    assert not missing, "metrics used but not exported:\n" + "\n".join(missing)


async def test_labels_used_exist_on_the_metrics(exported: dict[str, Exported]) -> None:
    declared = declared_labels()
    problems = []

    def known(name: str) -> set[str]:
        base = base_name(name)
        labels = declared.get(base, declared.get(name))
        assert labels is not None, f"{name}: not declared by the code"
        extra = {"le"} if name.endswith("_bucket") else set()
        return set(labels) | TARGET_LABELS | extra

    for where, expr in all_expressions():
        found = usage(expr)
        for selector in found.selectors:
            for label, _, _ in selector.matchers:
                if label not in known(selector.name):
                    problems.append(f"{where}: {selector.name} has no label {label!r}")
        for by_labels, names in found.groupings:
            available = set().union(*(known(n) for n in names))
            problems += [f"{where}: grouping by {label!r}" for label in by_labels if label not in available]
    assert not problems, "\n".join(problems)


async def test_label_values_matched_exactly_exist(exported: dict[str, Exported]) -> None:
    """route="...", method="..." and op="..." matchers name values the processes really use."""
    seen: dict[str, set[str]] = {}
    for e in exported.values():
        for label_sets in e.samples.values():
            for labels in label_sets:
                for label, value in labels.items():
                    seen.setdefault(label, set()).add(value)
    for where, expr in all_expressions():
        for selector in usage(expr).selectors:
            for label, op, value in selector.matchers:
                if label in ("route", "method", "op") and op == "Equal":
                    assert value in seen.get(label, set()), f"{where}: {label}={value!r} never seen"
                if label in ("route", "method", "op") and op == "Re":
                    for alternative in value.split("|"):
                        if re.fullmatch(r"[\w/{}.-]+", alternative) and label != "method":
                            assert alternative in seen.get(label, set()), f"{where}: {label}~{alternative!r}"


def test_pods_carry_prometheus_annotations_matching_the_monitors() -> None:
    for overlay in ("dev", "prod"):
        for deployment in by_kind(kustomize(DEPLOY / "k8s" / "overlays" / overlay), "Deployment").values():
            template = deployment["spec"]["template"]
            annotations = template["metadata"]["annotations"]
            ports = {p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
            assert annotations["prometheus.io/scrape"] == "true"
            assert int(annotations["prometheus.io/port"]) in ports
