"""Tracing in the manifests: off in every overlay as shipped; an overlay
that lists components/tracing gets the collector endpoint in every process's
settings and egress to the collector, and nothing more."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.deploy import kustomize
from tests.deploy.test_k8s import (
    GAMES,
    K8S,
    K8S_VERSIONS,
    OVERLAYS,
    READ_BY_THE_CODE,
    Endpoint,
    allowed,
    build,
    by_kind,
    config,
    pods,
)

COMPONENT = K8S / "components" / "tracing"
COLLECTOR = Endpoint("observability", {"app.kubernetes.io/name": "otel-collector"})
OTLP_GRPC = 4317


def with_tracing(tmp_path: Path, overlay: str) -> list[dict[str, Any]]:
    """``overlay`` with the tracing component listed, as an operator would."""
    shipped = yaml.safe_load((K8S / "overlays" / overlay / "kustomization.yaml").read_text())
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": shipped["namespace"],
                # kustomize takes relative paths only
                "resources": [os.path.relpath(K8S / "overlays" / overlay, tmp_path)],
                "components": [os.path.relpath(COMPONENT, tmp_path)],
            }
        )
    )
    return kustomize(tmp_path)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_tracing_is_off_in_every_overlay_as_shipped(overlay: str) -> None:
    resources = build(overlay)
    assert not [key for key in config(resources) if key.startswith("OTEL_")]
    workloads = pods(resources)
    policies = list(by_kind(resources, "NetworkPolicy").values())
    assert not allowed(policies, workloads["gateway"], COLLECTOR, OTLP_GRPC)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_tracing_component_sets_the_endpoint_and_opens_the_way_to_the_collector(
    tmp_path: Path, overlay: str
) -> None:
    resources = with_tracing(tmp_path, overlay)
    for version in K8S_VERSIONS:
        for resource in resources:
            kubernetes_validate.validate(resource, version, strict=True)
    settings = config(resources)
    endpoint = settings["OTEL_EXPORTER_OTLP_ENDPOINT"]
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in READ_BY_THE_CODE
    assert endpoint == f"http://otel-collector.observability.svc:{OTLP_GRPC}"
    # Everything else is the overlay's, unchanged.
    shipped = config(build(overlay))
    assert {k: v for k, v in settings.items() if k != "OTEL_EXPORTER_OTLP_ENDPOINT"} == shipped
    policies = list(by_kind(resources, "NetworkPolicy").values())
    workloads = pods(resources)
    for name in ["gateway", *GAMES]:
        assert allowed(policies, workloads[name], COLLECTOR, OTLP_GRPC), name
        # Only the collector, only its OTLP port.
        assert not allowed(policies, workloads[name], COLLECTOR, 4318), name
        elsewhere = Endpoint("observability", {"app.kubernetes.io/name": "grafana"})
        assert not allowed(policies, workloads[name], elsewhere, OTLP_GRPC), name
        assert not allowed(policies, workloads[name], Endpoint(None, ip="93.184.216.34"), OTLP_GRPC), name
