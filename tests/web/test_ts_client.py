"""The TypeScript client against the live gateway's OpenAPI: openapi-typescript
types every action, view and response (no ``unknown`` payload), and the client
and the site compile with ``tsc --strict`` against those types."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest

from tests.conftest import TEST_PACKAGES
from tests.web import WEB, run, tool
from tools.export_openapi import document
from tools.stack import Stack

# `unknown` where it is right: response headers' maps, and the feeds' pong,
# which echoes whatever the client put in its ping.
ALLOWED_UNKNOWN = [re.compile(r"^\s*\[name: string\]: unknown;$"), re.compile(r"^\s*pong: unknown;$")]


@pytest.fixture(scope="module")
def live_types(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], str]:
    """The running gateway's /openapi.json and openapi-typescript's output for it."""
    stack.services()
    gateway = stack.gateway()
    openapi = httpx.get(f"{gateway}/openapi.json", timeout=30).json()
    # Until every game has described itself the document is built anew; wait for all.
    names = {g["name"] for g in httpx.get(f"{gateway}/v1/games", timeout=30).json()["games"]}
    assert names >= {"bozo", "bozu_mekuri", "domino", "dudo", "yatzy"}
    folder = tmp_path_factory.mktemp("openapi")
    source = folder / "openapi.json"
    source.write_text(json.dumps(openapi))
    out = folder / "schema.d.ts"
    done = run([tool("openapi-typescript"), str(source), "-o", str(out)])
    assert done.returncode == 0, done.stderr
    return openapi, out.read_text()


def _block(types: str, name: str) -> str:
    """The text of one schema's type in the generated components."""
    start = types.index(f'        "{name}": ')
    end = types.index('\n        "', start + 1)
    return types[start:end]


def test_no_unknown_payloads(live_types: tuple[dict[str, object], str]) -> None:
    _, types = live_types
    unknown = [
        line.strip()
        for line in types.splitlines()
        if re.search(r"\bunknown\b", line)
        and not line.strip().startswith(("*", "/**"))
        and not any(p.match(line) for p in ALLOWED_UNKNOWN)
    ]
    assert unknown == [], f"untyped payloads in the generated client: {unknown[:10]}"
    # An object typed empty where data is sent would be as bad.
    empty = re.findall(r'"rodada\.([\w.@]+)": Record<string, never>;', types)
    assert empty, "the games' empty actions are missing"
    unexpected = [n for n in empty if n not in EMPTY_MESSAGES and n.rsplit(".", 1)[-1] not in EMPTY_MESSAGES]
    assert unexpected == [], f"messages typed as empty objects: {unexpected}"
    fields = re.findall(r"^\s*(\w+)\??: Record<string, never>;", types, re.MULTILINE)
    assert fields == [], f"fields typed as empty objects: {fields}"


# Messages that carry nothing by design: an action or a question whose
# presence is its meaning (the advice question has no fields, issue 17), and
# Dominó's options (one way to play, nothing to choose).
EMPTY_MESSAGES = {
    "ClaimInactivity",
    "Flip",
    "Stop",
    "TakeOver",
    "Dudo",
    "Calza",
    "AdviceRequest",
    "domino.v1.Options",
}


def test_actions_views_and_responses_are_typed(live_types: tuple[dict[str, object], str]) -> None:
    openapi, types = live_types
    # Each game's Action is a union of its kinds, each with its fields.
    yatzy_action = _block(types, "rodada.yatzy.v1.Action")
    assert 'roll: components["schemas"]["rodada.yatzy.v1.Roll"]' in yatzy_action
    assert 'score: components["schemas"]["rodada.yatzy.v1.Score"]' in yatzy_action
    assert "keep: number[];" in _block(types, "rodada.yatzy.v1.Roll")
    assert 'bid: components["schemas"]["rodada.dudo.v1.Bid"]' in _block(types, "rodada.dudo.v1.Action")
    # A snapshot's view is one of the games' views, told apart by @type.
    snapshot = _block(types, "rodada.common.v1.Snapshot")
    for game in ("bozo", "bozu_mekuri", "domino", "dudo", "yatzy"):
        assert f'components["schemas"]["rodada.{game}.v1.View@any"]' in snapshot
        assert f'"@type": "type.googleapis.com/rodada.{game}.v1.View";' in types
    # Every operation's success response is a typed message (or nothing).
    paths = openapi["paths"]
    assert isinstance(paths, dict)
    for path, operations in paths.items():
        for method, operation in operations.items():
            ok = next(code for code in operation["responses"] if code < "300")
            content = operation["responses"][ok].get("content", {}).get("application/json")
            if ok == "204":
                continue
            assert content and content.get("schema"), f"{method.upper()} {path} has an untyped {ok}"


def test_the_export_is_the_live_document(
    live_types: tuple[dict[str, object], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Makefile types the site from tools.export_openapi, which runs
    nothing: it must say what the running gateway says (with the same games:
    the stack also runs the tests' own)."""
    openapi, _ = live_types
    monkeypatch.setenv("GAME_PACKAGES", ",".join(TEST_PACKAGES))
    assert document() == openapi


def test_client_compiles_strict_against_the_live_types(
    live_types: tuple[dict[str, object], str], tmp_path: Path
) -> None:
    _, types = live_types
    shutil.copytree(WEB / "src", tmp_path / "src", ignore=shutil.ignore_patterns("schema.d.ts"))
    shutil.copy(WEB / "tsconfig.json", tmp_path / "tsconfig.json")
    (tmp_path / "node_modules").symlink_to(WEB / "node_modules")  # the page's libraries (Preact)
    (tmp_path / "src" / "api" / "schema.d.ts").write_text(types)
    config = json.loads((tmp_path / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    done = run([tool("tsc"), "-p", str(tmp_path)], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
