"""The terminal client is a client like any other: it imports the stubs
generated from the protos, grpcio and protobuf, and its UI library, and
nothing of the server (services, gateway, tools), directly or not."""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "terminal"
ALLOWED = {"clients", "rodada", "grpc", "grpc_status", "google", "textual", "rich"}
SERVER = {"services", "gateway", "tools", "tests"}


def imported(path: Path) -> set[str]:
    names = set()
    # No collection while parsing: a finalizer run by the collector midway
    # (garbage the suite's async tests leave) trips CPython 3.11's check of
    # the AST builder's recursion depth (SystemError: "AST constructor
    # recursion depth mismatch"), a bug of the interpreter, not of the client.
    gc.collect()
    gc.disable()
    try:
        tree = ast.parse(path.read_text())
    finally:
        gc.enable()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_client_imports_only_stubs_grpc_and_its_ui_library() -> None:
    sources = sorted(CLIENT.rglob("*.py"))
    assert len(sources) >= 10
    for path in sources:
        outside = imported(path) - ALLOWED - set(sys.stdlib_module_names)
        assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"


def test_running_the_client_loads_nothing_of_the_server() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, clients.terminal.__main__; print(*sorted({m.split('.')[0] for m in sys.modules}))",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert "rodada" in loaded and "textual" in loaded and "grpc" in loaded
    assert not SERVER & set(loaded), sorted(SERVER & set(loaded))
