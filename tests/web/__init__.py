"""The web client (clients/web): its TypeScript API client typed from the
gateway's OpenAPI, the site the gateway serves, and the site played in a real
browser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "clients" / "web"
NODE_BIN = WEB / "node_modules" / ".bin"
DIST = WEB / "dist"
CHROMIUM = Path("/usr/bin/chromium")


def tool(name: str) -> str:
    """A program from clients/web/node_modules, which `make test` installs."""
    path = NODE_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make web` (npm ci in clients/web)")
    return str(path)


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on the PATH")
    return found


def run(command: list[str], cwd: Path = WEB, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
