"""Schemathesis over the whole OpenAPI, against a real stack, as a real
user and as an admin: every operation fuzzed from its documented schemas
(and the coverage phase's edge values: numbers at and past their bounds,
wrong types, missing and extra fields), and every reply held to the
document. No reply may be a 5xx, and none may break its documented schema.
Bounded: a fixed number of cases per operation and a fixed seed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from services.kit.tokens import Identity
from tools.stack import Stack

CASES_PER_OPERATION = 20
CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"


def schemathesis() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("st")
    assert found, "schemathesis is missing: make setup"
    return found


def test_no_server_error_and_no_reply_off_its_schema(tmp_path: Path) -> None:
    with Stack(tmp_path, games=["yatzy", "domino"]) as stack:
        base = stack.gateway()
        user = httpx.post(
            f"{base}/v1/auth/register", json={"username": "fuzzer", "password": "correct horse"}, timeout=30
        ).json()
        tokens = {
            "user": user["access_token"],
            "admin": stack.token(Identity(user["user"]["id"], "fuzzer", "admin")),
        }
        cases = 0
        for who, token in tokens.items():
            events = tmp_path / f"{who}.ndjson"
            done = subprocess.run(
                [
                    schemathesis(),
                    "run",
                    f"{base}/openapi.json",
                    "--checks",
                    CHECKS,
                    "--max-examples",
                    str(CASES_PER_OPERATION),
                    "--seed",
                    "21",
                    "--header",
                    f"Authorization: Bearer {token}",
                    "--request-timeout",
                    "30",
                    "--report",
                    "ndjson",
                    "--report-ndjson-path",
                    str(events),
                ],
                capture_output=True,
                text=True,
                timeout=1200,
                check=False,
                env={**os.environ, "NO_COLOR": "1"},
            )
            assert done.returncode == 0, f"{who}:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
            cases += count_cases(events)
        print(f"schemathesis: {cases} cases, no 5xx, no reply off its schema")
        assert cases >= 2 * 50 * 5, cases  # every operation, many cases each, both callers


def count_cases(events: Path) -> int:
    """Test cases run, from schemathesis's event stream (each scenario's
    recorded cases)."""
    total = 0
    for line in events.read_text().splitlines():
        event = json.loads(line)
        for name, body in event.items():
            if name == "ScenarioFinished":
                total += len(body.get("recorder", {}).get("cases", {}))
    return total
