"""Every gauge says how a pod's WORKERS add up (services/core/workers.py):
in Prometheus multiprocess mode a gauge without a mode is exported once per
process, with a pid label, so dashboards summing or taking the max by pod
would count a gauge like the number of workers, and a dead worker's last
value would stay."""

from __future__ import annotations

from types import ModuleType

import pytest
from prometheus_client import Gauge

import gateway.metrics
import services.core.metrics

MODES = {"livesum", "livemax", "livemin", "liveall", "livemostrecent"}


def gauges(module: ModuleType) -> list[tuple[str, Gauge]]:
    return [(name, value) for name, value in vars(module).items() if isinstance(value, Gauge)]


@pytest.mark.parametrize("module", [gateway.metrics, services.core.metrics], ids=lambda m: m.__name__)
def test_every_gauge_declares_how_workers_add_up(module: ModuleType) -> None:
    found = gauges(module)
    assert found, f"no gauges found in {module.__name__}"
    undeclared = [name for name, gauge in found if gauge._multiprocess_mode not in MODES]
    assert not undeclared, f"gauges without a live multiprocess mode: {undeclared}"


def test_open_things_sum_and_global_lengths_take_the_max() -> None:
    assert gateway.metrics.FEEDS_OPEN._multiprocess_mode == "livesum"
    assert gateway.metrics.WS_CONNECTIONS._multiprocess_mode == "livesum"
    assert gateway.metrics.SOCIAL_FEEDS_OPEN._multiprocess_mode == "livesum"
    assert gateway.metrics.MATCHMAKING_QUEUE_LENGTH._multiprocess_mode == "livemax"
    assert services.core.metrics.ACTIVE_MATCHES._multiprocess_mode == "livemax"
