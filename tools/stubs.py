"""The client stubs of buf.gen.yaml that this machine can generate: ``buf
generate`` with the template's plugins whose programs are installed, the
others named on stderr (Swift's plugins are built with a Swift toolchain,
which this project's machines do not have). buf.gen.yaml stays the one list
of plugins and options; a machine with all of them runs ``buf generate``.

``python -m tools.stubs`` (``make client-stubs``): plugins and buf are looked
for in node_modules/.bin (package.json), then on PATH; writes under gen/
(ts, java, kotlin, …), cleaned first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "buf.gen.yaml"
SEARCH_PATH = os.pathsep.join([str(ROOT / "node_modules" / ".bin"), os.environ.get("PATH", "")])


def program(plugin: dict[str, Any]) -> str:
    """The executable a plugin entry runs: protoc for protoc's built-in
    generators, else the local plugin's program."""
    if "protoc_builtin" in plugin:
        return str(plugin.get("protoc_path", "protoc"))
    local = plugin["local"]
    return str(local[0] if isinstance(local, list) else local)


def runnable(template: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The template with only the plugins whose program is on PATH, and the
    names of those left out."""
    kept: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    for plugin in template["plugins"]:
        (kept if shutil.which(program(plugin), path=SEARCH_PATH) else left_out).append(plugin)
    names = [str(p.get("local") or p.get("protoc_builtin")) for p in left_out]
    return {**template, "plugins": kept}, names


def main() -> int:
    template, left_out = runnable(yaml.safe_load(TEMPLATE.read_text()))
    for name in left_out:
        print(f"stubs: {name} is not installed here; its stubs are not generated", file=sys.stderr)
    if not template["plugins"]:
        print("stubs: no plugin of buf.gen.yaml is installed", file=sys.stderr)
        return 1
    buf = shutil.which("buf", path=SEARCH_PATH)
    if buf is None:
        print("stubs: buf is not installed (npm ci)", file=sys.stderr)
        return 1
    command = [buf, "generate", "--clean", "--template", json.dumps(template)]
    env = {**os.environ, "PATH": SEARCH_PATH}
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
