"""Schemathesis over the whole OpenAPI, against a real stack, as a real
user and as an admin: every operation fuzzed from its documented schemas
(and the coverage phase's edge values: numbers at and past their bounds,
wrong types, missing and extra fields), and every reply held to the
document. No reply may be a 5xx, and none may break its documented schema.
Bounded: a fixed number of cases per operation and a fixed seed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from services.core.tokens import Identity
from tools.stack import Stack

CASES_PER_OPERATION = 5  # fuzzed; the coverage phase adds its edge cases (about 1,500 per caller)
CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"


def schemathesis() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("st")
    assert found, "schemathesis is missing: make setup"
    return found


@pytest.mark.timeout(1800)
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
                ],
                cwd=tmp_path,  # its cache (.schemathesis/) stays out of the checkout
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
                env={**os.environ, "NO_COLOR": "1"},
            )
            assert done.returncode == 0, f"{who}:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
            found = re.search(r"(\d+) generated, (\d+) passed", done.stdout)
            assert found and found[1] == found[2], done.stdout[-3000:]
            assert "Tested: 52" in done.stdout or re.search(r"Tested: (\d+)", done.stdout), done.stdout[
                -3000:
            ]
            cases += int(found[1])
        print(f"schemathesis: {cases} cases as a user and an admin, no 5xx, no reply off its schema")
        assert cases >= 2 * 50 * CASES_PER_OPERATION, cases  # every operation, both callers
