"""The web client (clients/web): its TypeScript API client typed from the
gateway's OpenAPI, the site the gateway serves, and the site played in a real
browser."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
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


def run(
    command: list[str], cwd: Path = WEB, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


def admin_account(redis_url: str, gateway: str) -> tuple[str, str]:
    """An account with the admin role (tournaments), granted with the operator's tool."""
    username, password = f"boss_{secrets.token_hex(4)}", secrets.token_urlsafe(12)  # "admin…" reads as staff
    reply = httpx.post(
        f"{gateway}/v1/auth/register", json={"username": username, "password": password}, timeout=30
    )
    assert reply.status_code == 201, reply.text
    done = subprocess.run(
        [sys.executable, "-m", "tools.admin", "grant", username],
        env={**os.environ, "REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return username, password
