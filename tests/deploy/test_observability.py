"""deploy/observability: scrape config, alert rules and the Grafana dashboard.

Every PromQL expression (each alert, each dashboard target) parses with
promql-parser; every metric they use is exported by a real gateway or game
service — read from its /metrics after a short Yatzy game through the
platform (HTTP, and the gateway's gRPC face); the labels they group and match
on exist on those metrics; route, method, op and service values they match
exist in the scrape. Every alert links its runbook (a section of
deploy/README.md that exists) and every panel says how to read it."""

from __future__ import annotations

import json
import platform
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc
import httpx
import kubernetes_validate
import promql_parser
import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

import gateway.metrics
import services.core.metrics
from tests.deploy import DEPLOY, by_kind, kustomize
from tests.integration.http_client import ACTIVE, register
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
# Series Prometheus itself records for every target (target labels only).
PROMETHEUS_SERIES = ("up",)

# Grafana variables, replaced by sample values before parsing a target.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$namespace": "rodada", "$game": ".*"}

SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
    "summary": ("", "_count", "_sum", "_created"),
}

REQUIRED_ALERTS = {
    "RodadaGrpcErrorRatioHigh",  # high error ratio (gRPC: games, and the gateway's face for mobile)
    "RodadaHttpErrorRatioHigh",  # high error ratio (HTTP)
    "RodadaActionLatencyHigh",  # p99 action latency
    "RodadaRedisUnreachable",
    "RodadaMatchmakingWaitHigh",
    "RodadaTimersFallingBehind",
    "RodadaPodRestarting",
    "RodadaComponentDown",
}
REQUIRED_DASHBOARD_METRICS = {
    "rodada_active_matches", "rodada_actions_total", "rodada_grpc_request_seconds",
    "rodada_http_request_seconds", "rodada_grpc_requests_total", "rodada_http_requests_total",
    "rodada_matchmaking_queue_length", "rodada_matchmaking_wait_seconds", "rodada_websocket_connections",
    "rodada_timers_fired_total", "rodada_forfeits_total", "rodada_redis_seconds",
    "rodada_feeds_open", "rodada_feeds_refused_total", "rodada_watch_streams", "rodada_timer_lag_seconds",
    "rodada_matchmaking_matches_total", "rodada_matchmaking_cpu_tables_total",
}  # fmt: skip

# A server-side failure (refusals by the rules are normal play).
ERROR_CODES = {"INTERNAL", "UNKNOWN", "UNAVAILABLE", "DEADLINE_EXCEEDED", "DATA_LOSS"}
# The gateway's gRPC face records its calls as this service (mobile apps).
PLATFORM_SERVICE = "platform"
README = DEPLOY / "README.md"


def streaming_methods() -> set[str]:
    """Every streaming RPC of the game services and of the gateway's face:
    these end UNAVAILABLE "draining" whenever a pod stops."""
    found = set()
    for module, service in ((match_pb2, "MatchService"), (platform_pb2, "PlatformService")):
        for method in module.DESCRIPTOR.services_by_name[service].methods:
            if method.server_streaming or method.client_streaming:
                found.add(method.name)
    return found


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


def github_anchors(markdown: str) -> set[str]:
    """The fragments a Markdown file answers to on GitHub (and GitLab): each
    heading's slug (lower case, punctuation dropped, spaces to hyphens, -1,
    -2… for repeats) and explicit <a id/name> anchors."""
    anchors = set(re.findall(r'<a (?:id|name)="([^"]+)"', markdown))
    counts: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))  # [text](url) → text
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = counts.get(slug, 0)
        counts[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def runbook_base() -> str:
    """Where every runbook_url points: deploy/README.md of the repository
    named once in deploy/observability/kustomization.yaml."""
    kustomization = yaml.safe_load((OBSERVABILITY / "kustomization.yaml").read_text())
    (generator,) = [g for g in kustomization["configMapGenerator"] if g["name"] == "rodada-runbooks"]
    (literal,) = generator["literals"]
    key, _, value = literal.partition("=")
    assert key == "readme"
    return str(value)


def test_required_alerts_and_their_shape() -> None:
    rules = alert_rules()
    names = [r["alert"] for r in rules]
    assert set(names) >= REQUIRED_ALERTS, REQUIRED_ALERTS - set(names)
    assert len(names) == len(set(names))
    for rule in rules:
        assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"])


def test_every_alert_links_its_runbook_section() -> None:
    """runbook_url: an absolute URL (Alertmanager, Grafana and pagers show it
    as a link from their own pages, where a relative path would point at
    themselves) to the alert's own section of deploy/README.md, which exists.
    The file's URLs and the built rules' agree with the one base URL."""
    base = runbook_base()
    assert urlsplit(base).scheme == "https" and base.endswith("/deploy/README.md"), base
    anchors = github_anchors(README.read_text())
    (source,) = yaml.safe_load_all((OBSERVABILITY / "prometheusrule.yaml").read_text())
    written = [r for group in source["spec"]["groups"] for r in group["rules"]]
    for rules in (alert_rules(), written):
        for rule in rules:
            annotations = rule["annotations"]
            assert "runbook" not in annotations, f"{rule['alert']}: runbook_url, not a repository path"
            url, _, anchor = annotations["runbook_url"].partition("#")
            assert url == base, (rule["alert"], url)
            assert anchor == rule["alert"].lower(), (
                f"{rule['alert']}: its own section, #{rule['alert'].lower()}"
            )
            assert anchor in anchors, f"{rule['alert']}: deploy/README.md has no section #{anchor}"


def test_every_panel_says_what_it_shows() -> None:
    board = dashboard()
    assert board["description"]
    for panel in panels(board):
        if panel["type"] != "row":
            description = panel.get("description", "")
            assert len(description) >= 60, (
                f"panel {panel['title']!r}: describe what it shows and how to read it"
            )
            for target in panel["targets"]:
                assert target.get("legendFormat"), f"panel {panel['title']!r} target {target['refId']}"


def error_ratio_expressions() -> list[tuple[str, str]]:
    """Expressions that divide gRPC server errors by gRPC calls."""
    found = []
    for where, expr in all_expressions():
        for selector in usage(expr).selectors:
            codes = [v for label, op, v in selector.matchers if label == "code" and op == "Re"]
            if (
                selector.name == "rodada_grpc_requests_total"
                and codes
                and set(codes[0].split("|")) == ERROR_CODES
            ):
                found.append((where, expr))
                break
    return found


def test_error_ratios_cover_mobile_and_leave_out_streams() -> None:
    """The gRPC error ratios (alert and dashboard) count unary calls only —
    every stream ends UNAVAILABLE "draining" when its pod stops, which is a
    rollout, not an error — and the gateway's gRPC face (mobile apps) is in
    them: the alert groups by service without leaving "platform" out, the
    dashboard shows it on its own."""
    streams = streaming_methods()
    assert streams >= {"Watch", "FollowTable"}
    ratios = error_ratio_expressions()
    assert {where for where, _ in ratios} >= {"alert RodadaGrpcErrorRatioHigh"}
    assert any(where.startswith("panel 'Error ratio'") for where, _ in ratios)
    for where, expr in ratios:
        for selector in usage(expr).selectors:
            if selector.name != "rodada_grpc_requests_total":
                continue
            excluded = [v for label, op, v in selector.matchers if label == "method" and op == "NotRe"]
            assert excluded and set(excluded[0].split("|")) == streams, (
                f"{where}: leave out {sorted(streams)}"
            )
    (alert,) = [r for r in alert_rules() if r["alert"] == "RodadaGrpcErrorRatioHigh"]
    assert "service" in {label for by, _ in usage(alert["expr"]).groupings for label in by}
    assert PLATFORM_SERVICE not in alert["expr"], "the gateway's gRPC face is one of the services alerted on"
    platform_ratio = [
        where
        for where, expr in ratios
        if any(("service", "Equal", PLATFORM_SERVICE) in s.matchers for s in usage(expr).selectors)
    ]
    assert platform_ratio, "the dashboard's error ratio shows the gateway's gRPC face (mobile)"
    # HTTP error ratios leave out what probes and Prometheus call (a draining
    # gateway answers /healthz 503 on purpose).
    for where, expr in all_expressions():
        for selector in usage(expr).selectors:
            statuses = [v for label, op, v in selector.matchers if label == "status" and op == "Re"]
            if selector.name == "rodada_http_requests_total" and statuses == ["5.."]:
                left_out = [v for label, op, v in selector.matchers if label == "route" and op == "NotRe"]
                assert left_out and set(left_out[0].split("|")) >= {"/healthz", "/livez", "/metrics"}, where


def test_dashboard_shows_feeds_and_the_gateways_redis() -> None:
    by_title = {p["title"]: p for p in panels(dashboard()) if p["type"] != "row"}

    def metrics_of(panel: dict[str, Any]) -> list[Selector]:
        exprs = [e for where, e in dashboard_expressions() if where.startswith(f"panel {panel['title']!r}")]
        return [s for expr in exprs for s in usage(expr).selectors]

    def panels_using(name: str, *matcher: tuple[str, str, str]) -> list[str]:
        return [
            title
            for title, panel in by_title.items()
            if any(base_name(s.name) == name and set(matcher) <= set(s.matchers) for s in metrics_of(panel))
        ]

    assert panels_using("rodada_feeds_open"), "open feeds"
    assert panels_using("rodada_feeds_refused_total"), "refused feeds"
    gateway_redis = ("app_kubernetes_io_component", "Equal", "gateway")
    assert [t for t in panels_using("rodada_redis_seconds", gateway_redis) if "latency" in t.lower()]


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
async def exported(yatzy_stack: Stack) -> dict[str, Exported]:
    """The gateway's and the Yatzy service's /metrics after a solo Yatzy game
    played through the HTTP API (the gateway calls the game over gRPC), and a
    call to the gateway's gRPC face, as a mobile app makes."""
    stack = yatzy_stack
    stack.service("yatzy")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        assert (await http.get("/healthz")).status_code == 200
        player = await register(http, "metrics")
        table = await player.create_table("yatzy", 1, {"card": "CLASSIC"})
        snap = await player.start(table["id"])
        assert snap["status"] == ACTIVE
        while snap["status"] == ACTIVE:
            snap = await player.act(table["id"], snap["version"], {"roll": {}})
            best = max(snap["view"]["preview"], key=lambda p: p["points"])
            snap = await player.act(table["id"], snap["version"], {"score": {"box": best["box"]}})
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        games = await platform_pb2_grpc.PlatformServiceStub(channel).ListGames(
            platform_pb2.ListGamesRequest(), timeout=10
        )
        assert games.ByteSize()
    return {"gateway": scrape(stack.gateway_metrics_url()), "yatzy": scrape(stack.metrics_url("yatzy"))}


def base_name(sample_name: str) -> str:
    """The metric a sample name belongs to (rodada_x_seconds_bucket → rodada_x_seconds)."""
    for suffix in ("_bucket", "_count", "_sum", "_created"):
        if sample_name.endswith(suffix):
            return sample_name.removesuffix(suffix)
    return sample_name


def declared_labels() -> dict[str, tuple[str, ...]]:
    """Label names of every metric the code declares (prometheus_client objects)."""
    labels: dict[str, tuple[str, ...]] = {name: () for name in (*PROCESS_METRICS, *PROMETHEUS_SERIES)}
    for module in (services.core.metrics, gateway.metrics):
        for value in vars(module).values():
            if isinstance(value, MetricWrapperBase):
                name = value._name + ("_total" if value._type == "counter" else "")
                labels[name] = tuple(value._labelnames)
    return labels


async def test_every_metric_used_is_exported_by_a_running_process(exported: dict[str, Exported]) -> None:
    names_exported = set().union(*(e.sample_names() for e in exported.values())) | set(PROMETHEUS_SERIES)
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
    """route="...", method="...", op="..." and service="..." matchers name
    values the processes really use (service="platform": the gateway's gRPC
    face records its calls)."""
    seen: dict[str, set[str]] = {}
    for e in exported.values():
        for label_sets in e.samples.values():
            for labels in label_sets:
                for label, value in labels.items():
                    seen.setdefault(label, set()).add(value)
    for where, expr in all_expressions():
        for selector in usage(expr).selectors:
            for label, op, value in selector.matchers:
                if label in ("route", "method", "op", "service") and op in ("Equal", "NotEqual"):
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


async def test_every_process_says_what_build_it_runs(exported: dict[str, Exported]) -> None:
    with open(DEPLOY.parent / "pyproject.toml", "rb") as project:
        version = tomllib.load(project)["project"]["version"]
    for process, metrics in exported.items():
        assert metrics.types.get("rodada_build_info") == "gauge", process
        (labels,) = metrics.samples["rodada_build_info"]
        assert labels["version"] == version and labels["python"] == platform.python_version(), labels
        assert labels["commit"], labels
