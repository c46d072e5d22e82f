"""Several processes of one game service, or of the gateway, on one port
(WORKERS=N).

A game service (or the gateway) is one asyncio process, so it uses one core. With WORKERS>1
the process started by the container supervises N copies of itself: each
binds the same gRPC port (and the gateway's HTTP port) with SO_REUSEPORT (the kernel spreads connections
over them) and writes its metrics to a shared folder (prometheus_client's
multiprocess mode); the supervisor serves them summed on the one metrics
port the pod is scraped on, with rodada_build_info and the process_* metrics
of the supervisor and its workers together, as the dashboards read one pod.
SIGTERM and SIGINT are passed on to every worker, and each drains as a
single process would. If one worker dies, the others are stopped and the
supervisor exits with its code, so the container restarts whole: a pod is
never left serving with fewer processes than it says.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from types import FrameType

from prometheus_client import CollectorRegistry, ProcessCollector, start_http_server
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from services.core import metrics

# What a worker is told by its supervisor (not settings for operators).
WORKER_VARIABLE = "RODADA_WORKER"
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
# process_* metrics that add up over the pod's processes; the others
# (start time, max fds) are the supervisor's.
_SUMMED = {
    "process_cpu_seconds",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
}


class PoolProcessCollector:
    """process_* of the supervisor with its workers' CPU, memory and open
    files added, so CPU and memory by pod stay true."""

    def __init__(self, pids: Iterable[int]) -> None:
        self.own = ProcessCollector(registry=None)
        self.workers = [ProcessCollector(pid=lambda pid=pid: pid, registry=None) for pid in pids]  # type: ignore[misc]

    def collect(self) -> Iterable[Metric]:
        totals: dict[str, float] = {}
        for collector in self.workers:
            for metric in collector.collect():  # a worker that has just exited reports nothing
                if metric.name in _SUMMED:
                    totals[metric.name] = totals.get(metric.name, 0.0) + metric.samples[0].value
        for metric in self.own.collect():
            if metric.name in totals:
                sample = metric.samples[0]
                metric.samples[0] = sample._replace(value=sample.value + totals[metric.name])
            yield metric


def shared_socket(host: str, port: int) -> socket.socket:
    """A listening address that every worker binds (SO_REUSEPORT), for a
    server that does not set the option itself (uvicorn); the kernel spreads
    new connections over the workers' sockets."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def supervise(workers: int, metrics_port: int, metrics_host: str = "0.0.0.0") -> int:
    """Run ``workers`` copies of this process's command line until they have
    all exited; the exit code for the container. ``metrics_port`` 0: the
    pod's metrics are not served."""
    folder = tempfile.mkdtemp(prefix="rodada-metrics-")
    command = [sys.executable, *sys.orig_argv[1:]]
    children = [
        subprocess.Popen(command, env={**os.environ, WORKER_VARIABLE: str(i), MULTIPROCESS_VARIABLE: folder})
        for i in range(workers)
    ]
    stopping = False

    def stop(signum: int, _frame: FrameType | None = None) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=folder)  # type: ignore[no-untyped-call]
    registry.register(metrics.BUILD_INFO)
    registry.register(PoolProcessCollector(child.pid for child in children))
    if metrics_port:
        start_http_server(metrics_port, metrics_host, registry=registry)
    code = 0
    try:
        running = {child.pid for child in children}
        while running:
            pid, status = os.wait()
            if pid not in running:
                continue
            running.discard(pid)
            mark_process_dead(pid, folder)  # type: ignore[no-untyped-call]
            exited = os.waitstatus_to_exitcode(status)
            if stopping and exited in (-signal.SIGTERM, -signal.SIGINT):
                exited = 0  # stopped, as asked, before it was serving
            if not stopping:  # one gone unasked: restart the container whole
                code = code or exited or 1
                stop(signal.SIGTERM)
            code = code or (exited if exited >= 0 else 128 - exited)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return code
