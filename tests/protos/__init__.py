"""Tests of the protos as an API for other teams: buf's lint and breaking
checks, the package options, and the client stubs they generate."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROTOS = REPO / "protos"
# Ours: protos/google/api holds the vendored HTTP annotations (test_buf.py).
OURS = sorted((PROTOS / "rodada").rglob("*.proto"))
NODE_BIN = REPO / "node_modules" / ".bin"


def tool(name: str) -> str:
    """A program from node_modules (package.json), which `make test` installs."""
    path = NODE_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make client-stubs` (npm ci)")
    return str(path)


def run(command: list[str], cwd: Path = REPO, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def git(*args: str) -> str | None:
    """git's output in this checkout, or None when the command fails."""
    if shutil.which("git") is None:
        return None
    done = run(["git", *args])
    return done.stdout.strip() if done.returncode == 0 else None
