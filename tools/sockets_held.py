"""Which process holds which TCP socket, read from /proc: how the WORKERS
tests see where the kernel put a connection (SO_REUSEPORT) without asking
the server."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

ESTABLISHED, LISTEN = "01", "0A"


def children(pid: int) -> list[int]:
    """A supervisor's workers."""
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(child) for child in found.split()]


def _inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _sockets(pid: int) -> Iterator[tuple[int, int, str]]:
    """(local port, remote port, state) of every TCP socket ``pid`` holds."""
    inodes = _inodes(pid)
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if inode in inodes:
                yield int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16), state


def connections(pid: int, port: int) -> int:
    """Established TCP connections on ``port`` that process ``pid`` holds."""
    return sum(local == port and state == ESTABLISHED for local, _, state in _sockets(pid))


def listens(pid: int, port: int) -> bool:
    """Whether ``pid`` holds a listening socket on ``port``."""
    return any(local == port and state == LISTEN for local, _, state in _sockets(pid))


def holder(pids: list[int], port: int, client_port: int) -> int | None:
    """Which of ``pids`` holds the server end, on ``port``, of the
    connection from local ``client_port``."""
    for pid in pids:
        if any(lp == port and rp == client_port and st == ESTABLISHED for lp, rp, st in _sockets(pid)):
            return pid
    return None
