"""The TypeScript client against the live gateway: openapi-typescript types
every action, view and response (no ``unknown`` payload), the client and the
site compile with ``tsc --strict`` against those types, and the client's own
tests (clients/web/tests/api, node's test runner) use every operation of
/openapi.json and every feed of /v1/feeds/asyncapi.json through the client's
methods against the real stack: a method missing, or never exercised, fails
here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import TEST_PACKAGES
from tests.web import WEB, admin_account, node, run, tool
from tools.export_openapi import document
from tools.stack import Stack

CLIENT = WEB / "src" / "api" / "client.ts"
NODE_TESTS = WEB / "tests" / "api"
# Bundled where Node finds clients/web/node_modules (ws) from.
NODE_BUILD = WEB / "node_modules" / ".cache" / "api-tests"

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
    tool("openapi-typescript")
    # The package's own script, with its flags (request fields with defaults optional).
    done = subprocess.run(
        ["npm", "run", "--silent", "types"],
        cwd=WEB,
        env={**os.environ, "OPENAPI": str(source), "TYPES": str(out)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
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


# -- the client's own tests, against the stack --------------------------------------------


@pytest.fixture(scope="module")
def node_suite(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """The node tests, type-checked (strict), bundled and run once against the
    stack; their output and every request and socket the clients made."""
    if not (WEB / "src" / "api" / "schema.d.ts").exists():
        pytest.fail("clients/web/src/api/schema.d.ts is missing: run `make web`")
    stack.services()
    gateway = stack.gateway()
    username, password = admin_account(stack.redis_url, gateway)
    checked = run([tool("tsc"), "-p", str(NODE_TESTS)])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shutil.rmtree(NODE_BUILD, ignore_errors=True)
    tests = sorted(str(path.relative_to(WEB)) for path in NODE_TESTS.glob("*.test.ts"))
    bundled = run(
        [
            tool("esbuild"),
            *tests,
            "--bundle",
            "--platform=node",
            "--format=esm",
            "--target=node20",
            "--packages=external",
            f"--outdir={NODE_BUILD}",
            "--out-extension:.js=.mjs",
            "--log-level=warning",
        ]
    )
    assert bundled.returncode == 0, bundled.stdout + bundled.stderr
    calls = tmp_path_factory.mktemp("ts-client") / "calls.jsonl"
    calls.touch()
    done = subprocess.run(
        [
            node(),
            "--test",
            "--test-concurrency=1",
            "--test-timeout=180000",
            "--test-force-exit",
            "--test-reporter=spec",
            *sorted(str(path) for path in NODE_BUILD.glob("*.test.mjs")),
        ],
        cwd=WEB,
        env={
            **os.environ,
            "RODADA_GATEWAY": gateway,
            "RODADA_ADMIN": username,
            "RODADA_ADMIN_PASSWORD": password,
            "RODADA_CALLS": str(calls),
        },
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    return done, [json.loads(line) for line in calls.read_text().splitlines()]


def test_the_client_tests_pass_against_the_stack(
    node_suite: tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]],
) -> None:
    done, _ = node_suite
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    passed = re.search(r"^. pass (\d+)$", done.stdout, re.MULTILINE)
    failed = re.search(r"^. fail (\d+)$", done.stdout, re.MULTILINE)
    # Every test declared ran and passed (none skipped or left out).
    declared = sum(
        len(re.findall(r"^test\(", path.read_text(), re.MULTILINE)) for path in NODE_TESTS.glob("*.test.ts")
    )
    assert passed and failed and int(passed.group(1)) == declared and failed.group(1) == "0", done.stdout[
        -3000:
    ]
    print(f"\nTypeScript client: {passed.group(1)} node tests passed against the stack")


def _template(path: str) -> re.Pattern[str]:
    """The URLs of a path template: each ``{parameter}`` one segment."""
    return re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/?]+", re.escape(path)) + "$")


def _operations(openapi: dict[str, Any]) -> dict[tuple[str, str], re.Pattern[str]]:
    """Every HTTP operation (not the feeds) and the URLs that call it."""
    return {
        (method.upper(), path): _template(path)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if "101" not in operation["responses"]
    }


def test_every_operation_has_a_client_method_used_by_a_test(
    live_types: tuple[dict[str, Any], str],
    node_suite: tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]],
) -> None:
    """An operation the client has no method for (the client drifted from the
    API), or one no test calls successfully, fails here."""
    openapi, _ = live_types
    operations = _operations(openapi)
    source = CLIENT.read_text()
    missing = [
        f"{method} {path}"
        for method, path in operations
        if not re.search(rf'this\.send\(\s*"{method.lower()}",\s*"{re.escape(path)}"', source)
    ]
    assert missing == [], f"operations without a method in {CLIENT.relative_to(WEB.parents[1])}: {missing}"
    _, calls = node_suite
    succeeded: set[tuple[str, str]] = set()
    for call in calls:
        if "http" not in call or call["status"] >= 400:
            continue
        url = "/" + call["url"].split("/", 3)[3].split("?", 1)[0]
        matches = [op for op, pattern in operations.items() if op[0] == call["http"] and pattern.match(url)]
        # A literal path (/v1/tables/join) before a template (/v1/tables/{table_id}).
        if matches:
            succeeded.add(min(matches, key=lambda op: op[1].count("{")))
    untested = sorted(f"{method} {path}" for method, path in set(operations) - succeeded)
    assert untested == [], f"operations no client test called successfully: {untested}"


def test_every_feed_has_a_client_class_used_by_a_test(
    stack: Stack, node_suite: tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]
) -> None:
    """Each channel of the AsyncAPI document (and the tournament feed) was
    opened by the client's feeds and answered with a message that is not a
    refusal."""
    asyncapi = httpx.get(f"{stack.gateway()}/v1/feeds/asyncapi.json", timeout=30).json()
    addresses = {channel["address"] for channel in asyncapi["channels"].values()}
    addresses.add("/v1/tournaments/{tournament_id}/events")
    _, calls = node_suite
    answered = {"/" + c["ws"].split("/", 3)[3] for c in calls if "ws" in c and c["first"] != "error"}
    unused = sorted(
        address for address in addresses if not any(_template(address).match(url) for url in answered)
    )
    assert unused == [], f"feeds no client test followed: {unused}"
